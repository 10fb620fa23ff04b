#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# install-rpm.sh RPM-DIR — the spec's scriptlets, run by rpm itself: `rpm -i`, `-U` and `-e
# --root` of the RPMs build-rpm.sh made (with the vendor list) into scratch roots.
#   - An image root (what an image builder has: no /proc): busybox-static as the scriptlets'
#     shell and tools (Debian's package, fetched once and cached outside the repository),
#     merged /usr, /dev/null. Everything installs, upgrades (a reinstall with --replacepkgs:
#     $1 is 2 as in an upgrade; a higher release would need a second build) and erases with
#     every scriptlet exiting 0, and leaves nothing behind.
#   - A live-like root (plain-file /proc that lists hfs as loaded and a minix mount, the
#     module tree, fsgatectl's libraries, systemd-detect-virt saying "not a chroot"): the
#     vendor list's %pre/%post exempt what is in use, so hfs and minix stay allowed (fsgatectl
#     --root says so afterwards) while the rest of the list is denied.
#   - A root without the vendor list: fsgate alone, nothing denied.
# systemctl in the roots is a STAND-IN that logs its arguments (the service macros are the
# stand-in's of opensuse-build-macros: preset on install, try-restart on upgrade, disable on
# erase, each only where /run/systemd/system exists, as on a booted system).
# Not here: openSUSE's real macros and systemd-update-helper, presets, file triggers.
set -euo pipefail
rpmdir=$(cd "${1:?usage: install-rpm.sh RPM-DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
[ "$(id -u)" = 0 ] || { echo "SKIP: rpm --root needs root"; exit 77; }

# busybox-static, once per Debian version of it.
cache=${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/fsgate/busybox-static
bbver=$(apt-cache policy busybox-static 2>/dev/null | sed -n 's/^ *Candidate: *//p')
[ -n "$bbver" ] && [ "$bbver" != "(none)" ] || { echo "SKIP: no busybox-static in the package lists"; exit 77; }
busybox=$cache/$bbver/bin/busybox
if [ ! -x "$busybox" ]; then
        mkdir -p "$cache/$bbver.tmp"
        (cd "$cache/$bbver.tmp" && apt-get download -q "busybox-static=$bbver" >/dev/null)
        dpkg-deb -x "$cache/$bbver.tmp"/busybox-static_*.deb "$cache/$bbver.tmp/x"
        mkdir -p "$cache/$bbver/bin"
        cp "$cache/$bbver.tmp/x/bin/busybox" "$busybox.new" && mv "$busybox.new" "$busybox"
        rm -rf "$cache/$bbver.tmp"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

rpms() {
        local p
        for p in "$@"; do
                find "$rpmdir" -name "$p-[0-9]*.rpm" | head -n1
        done
}
ALL=$(rpms fsgate fsgate-vendor-blacklist fsgate-notify cockpit-fsgate)
[ "$(echo "$ALL" | wc -w)" = 4 ] || { echo "FAIL: not every RPM is in $rpmdir: $ALL"; exit 1; }

# A root with what the scriptlets run: busybox's sh and tools, a logging systemctl stand-in.
make_root() {
        local r=$1 t
        mkdir -p "$r/usr/bin" "$r/usr/sbin" "$r/usr/lib64" "$r/dev" "$r/run/systemd/system" "$r/var/tmp" "$r/tmp"
        for t in lib bin sbin lib64; do [ -e "$r/$t" ] || ln -s "usr/$t" "$r/$t"; done
        cp "$busybox" "$r/usr/bin/busybox"
        for t in sh awk mkdir rm rmdir cat; do [ -e "$r/usr/bin/$t" ] || ln -s busybox "$r/usr/bin/$t"; done
        [ -e "$r/dev/null" ] || mknod -m 666 "$r/dev/null" c 1 3
        printf '#!/bin/sh\necho "$*" >>/var/log/systemctl-stand-in.log\n' >"$r/usr/bin/systemctl"
        chmod 755 "$r/usr/bin/systemctl"
        mkdir -p "$r/var/log"
        rpm --root "$r" --dbpath /usr/lib/sysimage/rpm --initdb
}

# rpm MODE ROOT RPM...: its output in $tmp/last.log; the exit status is rpm's.
rpm_in() {
        local mode=$1 r=$2; shift 2
        rpm "$mode" --root "$r" --dbpath /usr/lib/sysimage/rpm --nodeps --force-debian "$@" >"$tmp/last.log" 2>&1
}
scriptlet_errors() {
        grep -iE "scriptlet failed|failed to exec|warning: %|error:" "$tmp/last.log" || true
}

# ---- the image root: install, upgrade, erase ----
img=$tmp/image
make_root "$img"
if rpm_in -i "$img" $ALL && [ -z "$(scriptlet_errors)" ]; then
        ok "rpm -i of the four RPMs into an image root: every scriptlet exited 0"
else
        bad "rpm -i into an image root: $(cat "$tmp/last.log")"
fi
[ -f "$img/usr/lib/modprobe.d/60-blacklist_fs-hfs.conf" ] && [ -x "$img/usr/bin/fsgatectl" ] ||
        bad "the image root lacks the vendor list or fsgatectl"
# No /proc: no exemption, nothing in /etc; the units were preset (the stand-in's log).
[ -z "$(ls -A "$img/etc/modprobe.d" 2>/dev/null)" ] || bad "an image install wrote to /etc/modprobe.d: $(ls "$img/etc/modprobe.d")"
grep -qx "preset fsgated.service fsgate-boot-report.service fsgate-routes.service fsgate-routes.path" \
        "$img/var/log/systemctl-stand-in.log" && ok "%post presets fsgate's units" ||
        bad "%post did not preset the units: $(cat "$img/var/log/systemctl-stand-in.log" 2>/dev/null)"
: >"$img/var/log/systemctl-stand-in.log"
if rpm_in -U "$img" --replacepkgs $ALL && [ -z "$(scriptlet_errors)" ]; then
        ok "rpm -U --replacepkgs (an upgrade's scriptlets): every scriptlet exited 0"
else
        bad "rpm -U into the image root: $(cat "$tmp/last.log")"
fi
grep -q "^try-restart fsgated.service" "$img/var/log/systemctl-stand-in.log" && ok "%postun try-restarts fsgated on upgrade" ||
        bad "no try-restart on upgrade: $(cat "$img/var/log/systemctl-stand-in.log")"
grep -q "^preset" "$img/var/log/systemctl-stand-in.log" && bad "an upgrade presets the units again (only an install may)"
: >"$img/var/log/systemctl-stand-in.log"
if rpm_in -e "$img" fsgate-notify cockpit-fsgate fsgate-vendor-blacklist fsgate && [ -z "$(scriptlet_errors)" ]; then
        ok "rpm -e of the four: every scriptlet exited 0"
else
        bad "rpm -e: $(cat "$tmp/last.log")"
fi
grep -q "^--no-reload disable --now fsgated.service" "$img/var/log/systemctl-stand-in.log" &&
        ok "%preun disables fsgate's units on erase" || bad "no disable on erase: $(cat "$img/var/log/systemctl-stand-in.log")"
left=$(cd "$img" && find usr/bin/fsgatectl usr/lib/modprobe.d usr/share/fsgate var/lib/fsgate-vendor-blacklist \
        -mindepth 0 2>/dev/null | head -n 5 || true)
[ -z "$left" ] && ok "nothing of fsgate is left after the erase" || bad "left after rpm -e: $left"

# ---- a live-like root: the vendor list exempts what is in use ----
live=$tmp/live
"$src/tests/kernel/make-scratch-root.sh" "$live" --with-kmod >/dev/null
make_root "$live"
# Mounted (so loaded): hfs and minix; loaded only: jfs, which stays denied (a module loaded
# by anyone's mount in a user namespace must not pick what stays allowed).
printf '%s\n' 'hfs 110592 1 - Live 0x0' 'minix 45056 1 - Live 0x0' 'jfs 225280 0 - Live 0x0' >>"$live/proc/modules"
printf '%s\n' '/dev/sdb1 /media/mac hfs rw,relatime 0 0' '/dev/sdc1 /mnt/old minix rw,relatime 0 0' >>"$live/proc/mounts"
printf '#!/bin/sh\nexit 1\n' >"$live/usr/bin/systemd-detect-virt"   # "not a chroot": the live branch
chmod 755 "$live/usr/bin/systemd-detect-virt"
# fsgatectl's libraries (the RPMs are built against this machine's).
rpm2cpio "$(rpms fsgate)" | (cd "$tmp" && cpio -idm --quiet ./usr/bin/fsgatectl)
for lib in $(ldd "$tmp/usr/bin/fsgatectl" | grep -o '/[^ ]*'); do
        mkdir -p "$live$(dirname "$lib")"
        [ -e "$live$lib" ] || cp -L "$lib" "$live$lib"
done
if rpm_in -i "$live" $(rpms fsgate fsgate-vendor-blacklist) && [ -z "$(scriptlet_errors)" ]; then
        ok "rpm -i of fsgate and the vendor list into a live-like root: every scriptlet exited 0"
else
        bad "rpm -i into the live-like root: $(cat "$tmp/last.log")"
fi
for m in hfs minix; do
        st=$(chroot "$live" /usr/bin/fsgatectl --root=/ list | awk -v m=$m '$1 == m {print $3, $4}') || st="(fsgatectl failed)"
        [ "$st" = "allowed admin" ] && ok "$m, in use, stays allowed (exempted by the scriptlets)" ||
                bad "$m after the install: '$st' ($(cat "$tmp/last.log"))"
done
for m in jfs ufs; do
        st=$(chroot "$live" /usr/bin/fsgatectl --root=/ list | awk -v m=$m '$1 == m {print $3, $4}') || st="(fsgatectl failed)"
        [ "$st" = "denied vendor" ] && ok "$m, not mounted, is denied by the vendor list" || bad "$m after the install: '$st'"
done
[ ! -e "$live/var/lib/fsgate-vendor-blacklist" ] && ok "the exemption's state is gone after %post" ||
        bad "left: $(ls -R "$live/var/lib/fsgate-vendor-blacklist")"

# ---- without the vendor list ----
plain=$tmp/plain
make_root "$plain"
if rpm_in -i "$plain" $(rpms fsgate fsgate-notify cockpit-fsgate) && [ -z "$(scriptlet_errors)" ]; then
        ok "rpm -i without the vendor list: every scriptlet exited 0"
else
        bad "rpm -i without the vendor list: $(cat "$tmp/last.log")"
fi
[ -z "$(ls -A "$plain/usr/lib/modprobe.d" 2>/dev/null)" ] && ok "without the vendor list nothing is denied" ||
        bad "modprobe.d without the vendor list: $(ls "$plain/usr/lib/modprobe.d")"
exit $fail

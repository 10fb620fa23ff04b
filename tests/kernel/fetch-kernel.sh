#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# fetch-kernel.sh — fetch Debian's current kernel package (linux-image-amd64's
# dependency) without installing it, unpack it into a cache, and run depmod on it.
#
# Prints two lines on stdout:
#   KROOT=<dir whose lib/modules/KVER exists>
#   KVER=<kernel release>
#
# Cache: ${FSGATE_CACHE:-$HOME/.cache/fsgate}/kernel/<KVER>/ with only
# lib/modules/<KVER>/ and boot/vmlinuz-<KVER> kept. A second call is instant.
# Several callers may run at once: the fetch is serialized with flock(1), and a
# finished tree appears by rename(2) only, so a tree that exists is complete.
#
# Needs: apt-cache, apt-get, dpkg-deb, depmod, flock.

set -euo pipefail

me=${0##*/}
die() {
        echo "$me: error: $*" >&2
        exit 1
}
warn() {
        echo "$me: $*" >&2
}

for tool in apt-cache apt-get dpkg-deb flock; do
        command -v "$tool" >/dev/null 2>&1 || die "'$tool' not found (this script needs a Debian host)"
done
DEPMOD=$(command -v depmod 2>/dev/null || true)
[[ -z $DEPMOD && -x /usr/sbin/depmod ]] && DEPMOD=/usr/sbin/depmod
[[ -z $DEPMOD && -x /sbin/depmod ]] && DEPMOD=/sbin/depmod
[[ -n $DEPMOD ]] || die "'depmod' not found (install the kmod package)"

base=${FSGATE_CACHE:-${HOME:?HOME is not set and FSGATE_CACHE is not set}/.cache/fsgate}
cache=$base/kernel
mkdir -p "$cache" || die "cannot create cache directory $cache"

MARK=.fsgate-kernel-complete

# A cached tree is usable when the marker written just before the final rename exists.
complete() {
        local kver=$1
        [[ -f $cache/$kver/$MARK && -d $cache/$kver/lib/modules/$kver && -f $cache/$kver/boot/vmlinuz-$kver ]]
}

emit() {
        printf 'KROOT=%s\nKVER=%s\n' "$cache/$1" "$1"
}

# Which kernel is current, according to the local package lists. apt-cache takes about
# 0.5 s here (no pkgcache.bin), so its answer is remembered until the package lists or
# the apt configuration change.
apt_state() {
        {
                find /var/lib/apt/lists /etc/apt -maxdepth 2 -printf '%p %s %T@\n' 2>/dev/null | sort
        } | cksum
}
memo=$cache/.current-package
state=$(apt_state)
pkg=
if [[ -f $memo ]]; then
        { read -r memo_state; read -r memo_pkg; } <"$memo" || true
        [[ ${memo_state:-} == "$state" ]] && pkg=${memo_pkg:-}
fi
if [[ -z $pkg ]]; then
        pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
                awk '/Depends: linux-image-[0-9]/{print $2; exit}' || true)
        if [[ -n $pkg ]]; then
                if ! { printf '%s\n%s\n' "$state" "$pkg" >"$memo.$$" && mv -f -- "$memo.$$" "$memo"; }; then
                        rm -f -- "$memo.$$"
                fi
        fi
fi

if [[ -z $pkg ]]; then
        # No package lists (offline CI image?): fall back to the newest complete cache.
        newest=
        for d in "$cache"/*/; do
                d=${d%/}
                k=${d##*/}
                [[ $k == .* ]] && continue
                complete "$k" || continue
                if [[ -z $newest ]] || [[ $(printf '%s\n%s\n' "$newest" "$k" | sort -V | tail -n1) == "$k" ]]; then
                        newest=$k
                fi
        done
        [[ -n $newest ]] ||
                die "cannot find the kernel package: 'apt-cache depends linux-image-amd64' names no linux-image-<version> (run 'apt-get update'?)"
        warn "apt-cache names no kernel package; using the cached kernel $newest"
        emit "$newest"
        exit 0
fi

kver=${pkg#linux-image-}
[[ $kver =~ ^[0-9][A-Za-z0-9._+~-]*$ ]] || die "unexpected kernel package name '$pkg'"

# Fast path, no lock: a complete tree only ever appears by rename.
if complete "$kver"; then
        emit "$kver"
        exit 0
fi

exec 9>"$cache/.lock" || die "cannot open lock file $cache/.lock"
if ! flock -n 9; then
        warn "another process is fetching the kernel, waiting for it"
        flock 9 || die "cannot lock $cache/.lock"
fi

# Someone else may have finished while we waited.
if complete "$kver"; then
        emit "$kver"
        exit 0
fi

# Leftovers of interrupted runs (we hold the lock: no one else is working in there).
rm -rf -- "$cache"/.tmp.* "$cache/$kver.old"
if [[ -e $cache/$kver ]]; then
        warn "removing incomplete cached tree $cache/$kver"
        mv -- "$cache/$kver" "$cache/$kver.old"
        rm -rf -- "$cache/$kver.old"
fi

tmp=$(mktemp -d "$cache/.tmp.XXXXXX") || die "cannot create a temporary directory in $cache"
trap 'rm -rf -- "$tmp"' EXIT

warn "fetching $pkg (about 70 MB download, 400 MB unpacked)"
# apt-get download writes into the current directory. As root, apt would drop to the
# _apt user for the download, which cannot write to a 0700 directory under $HOME.
chmod 755 "$tmp"
(
        cd "$tmp"
        apt-get -q download -o APT::Sandbox::User=root "$pkg" >&2
) || die "apt-get download $pkg failed (stale package lists? try 'apt-get update')"

debs=("$tmp"/"$pkg"_*.deb)
[[ -f ${debs[0]} ]] || die "apt-get download left no ${pkg}_*.deb in $tmp"
deb=${debs[0]}

root=$tmp/root
mkdir "$root"
dpkg-deb -x "$deb" "$root" || die "dpkg-deb -x $deb failed"
rm -f -- "$deb"

# Debian 12 packages ship /lib/modules; newer ones may ship /usr/lib/modules.
if [[ ! -d $root/lib/modules/$kver && -d $root/usr/lib/modules/$kver ]]; then
        mkdir -p "$root/lib/modules"
        mv -- "$root/usr/lib/modules/$kver" "$root/lib/modules/$kver"
fi
[[ -d $root/lib/modules/$kver/kernel ]] || die "$deb contains no lib/modules/$kver/kernel"
[[ -f $root/boot/vmlinuz-$kver ]] || die "$deb contains no boot/vmlinuz-$kver"

# Keep only lib/modules/KVER and boot/vmlinuz-KVER.
keep=$tmp/keep
mkdir -p "$keep/lib/modules" "$keep/boot"
mv -- "$root/lib/modules/$kver" "$keep/lib/modules/$kver"
mv -- "$root/boot/vmlinuz-$kver" "$keep/boot/vmlinuz-$kver"
rm -rf -- "$root"
# The package's build/source symlinks point into linux-headers, which is not here.
rm -f -- "$keep/lib/modules/$kver/build" "$keep/lib/modules/$kver/source"

"$DEPMOD" -b "$keep" "$kver" || die "depmod -b $keep $kver failed"
[[ -s $keep/lib/modules/$kver/modules.dep ]] || die "depmod wrote no modules.dep"
grep -q '^alias fs-' "$keep/lib/modules/$kver/modules.alias" ||
        die "depmod wrote no fs-* aliases to modules.alias"

# Make the tree readable by everyone (mktemp -d is 0700) and mark it complete.
chmod 755 "$keep"
: >"$keep/$MARK"
mv -T -- "$keep" "$cache/$kver" || die "cannot move the tree into place at $cache/$kver"

warn "cached $pkg in $cache/$kver"
emit "$kver"

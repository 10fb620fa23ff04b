#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The life of fsgate's packages on a real Debian 12 system, through apt.
#   - `apt install ./...` of the previous build's packages (tests/system/build-prev-debs)
#   - hfs loaded by root although the vendor list denies it (nothing mounted with it),
#     minix mounted; an administrator's own files in /etc/modprobe.d (one of them at a path fsgate
#     would write); fsgated running
#   - `apt install ./...` of the current packages, an upgrade: minix exempted (README:
#     "Installing or upgrading the deny list first exempts every filesystem mounted at that
#     moment"), hfs not (loaded is not in use: named in apt's output instead),
#     everything else as before, fsgated restarted on the new binary; the routes' units
#     started, the hardening role's silent deny of udf routed and reported
#   - `apt remove` of the deny list, then of the rest, then `apt purge`: what stays (the
#     allows and denies written through fsgate: the administrator's configuration) and what
#     goes (the packages' files, the notifier's conffile, the exemption's state, the routes); a purge
#     never deletes a file fsgate did not write
#   - no journal line from fsgated at warning level or above
# system-boots: 1
# system-timeout: 900
# system-prev-debs: yes

set -eu
# shellcheck source=../guest/system-lib.sh
. "$FSGATE_SYSTEM_LIB"

V=/usr/lib/modprobe.d
E=/etc/modprobe.d
export DEBIAN_FRONTEND=noninteractive

# The packages of a directory as apt takes local files, and what each one's version is.
apt_install() {
        # shellcheck disable=SC2046
        run_logged "apt install $(debs_of "$1" | sed 's|.*/|./|' | paste -sd' ')" \
                apt-get install -y --no-install-recommends $(debs_of "$1")
}
expect_versions() {
        for deb in $(debs_of "$1"); do
                pkg=$(dpkg-deb -f "$deb" Package)
                assert_eq "$(installed_version "$pkg")" "$(dpkg-deb -f "$deb" Version)" "installed version of $pkg"
        done
}
packages_of() {
        for deb in $(debs_of "$1"); do
                dpkg-deb -f "$deb" Package
        done
}

step "apt install ./ of the previous build's packages"
[ -z "$(installed_version fsgate)" ] || fail "fsgate is installed already"
apt_install "$FSGATE_PREV_DEBS"
expect_versions "$FSGATE_PREV_DEBS"
expect_state hfs denied vendor "$V/60-blacklist_fs-hfs.conf"
expect_state minix denied vendor

step "Filesystems in use, an administrator's own files, fsgated running"
modprobe hfs
mkfs.minix "$FSGATE_SCRATCH_DISK" >/dev/null
mkdir -p /mnt/minix
modprobe minix
mount -t minix "$FSGATE_SCRATCH_DISK" /mnt/minix
pass "hfs loaded by root (denied by the vendor list), minix mounted"
# Foreign files: one at the very path fsgate would write for udf (not fsgate's format, so
# ForeignConfig), one of another name, one in /run.
printf '# Written by the site'"'"'s hardening role\nblacklist udf\n' >"$(conf_of $E udf)"
printf 'options loop max_loop=8\n' >$E/local.conf
mkdir -p /run/modprobe.d
printf '# not fsgate'"'"'s\nblacklist jfs\n' >/run/modprobe.d/50-site.conf
sha256sum "$(conf_of $E udf)" $E/local.conf /run/modprobe.d/50-site.conf >/tmp/foreign.sums
expect_state udf denied admin "$(conf_of $E udf)"
expect_error ForeignConfig Allow string:udf uint64:0
old_pid=$(fsgated_pid)
[ -n "$old_pid" ] || fail "fsgated is not running"
expect_unit_active fsgated.service active
info "fsgated $(busctl get-property org.fsgate.fsgate1 /org/fsgate/fsgate1 org.fsgate.fsgate1.Manager Version) runs as pid $old_pid"

step "apt install ./ of the current packages: an upgrade, with hfs loaded and minix mounted"
# A client that calls every 3 s keeps fsgated from its idle exit (30 s) while apt runs, so
# that the upgrade meets it running.
(while :; do busctl call org.fsgate.fsgate1 /org/fsgate/fsgate1 org.fsgate.fsgate1.Manager \
        GetFilesystem s ext4 >/dev/null 2>&1; sleep 3; done) &
keeper=$!
journal_mark
apt_install "$FSGATE_DEBS"
kill $keeper
cp /tmp/run.out "$FSGATE_RESULTS/apt-upgrade.out"
expect_versions "$FSGATE_DEBS"
assert_contains "$(cat "$FSGATE_RESULTS/apt-upgrade.out")" "Exempted minix" "apt's output"
assert_contains "$(cat "$FSGATE_RESULTS/apt-upgrade.out")" \
        "hfs is loaded but nothing is mounted with it: not exempted; if this system needs it, fsgatectl allow hfs" \
        "apt's output"
! grep -q "Exempted hfs" "$FSGATE_RESULTS/apt-upgrade.out" || fail "the upgrade exempted hfs, which is only loaded"
assert_absent "$(conf_of $E hfs)"
assert_mask "$(conf_of $E minix)"
expect_state hfs denied vendor "$V/60-blacklist_fs-hfs.conf"
expect_state minix allowed admin
expect_state ufs denied vendor "$V/60-blacklist_fs-ufs.conf"
sha256sum -c --quiet /tmp/foreign.sums || fail "the upgrade changed a file fsgate did not write"
pass "the administrator's files are untouched"
assert_absent /var/lib/fsgate-vendor-blacklist
# dh_installsystemd --restart-after-upgrade: a running fsgated is restarted on the new binary.
assert_contains "$(journal_since_mark -o cat UNIT=fsgated.service)" "Stopping fsgated.service" "systemd's journal for the upgrade"
new_pid=$(fsgated_pid)
[ -n "$new_pid" ] && [ "$new_pid" != "$old_pid" ] || fail "fsgated was not restarted by the upgrade (pid $old_pid, now '$new_pid')"
assert_eq "$(readlink /proc/$new_pid/exe)" /usr/libexec/fsgated "the running executable (not the deleted old one)"
expect_blocked ufs
# The new postinst starts the routes' units (dh_installsystemd only enables them), and
# the hardening role's plain deny of udf, silent in the old version, is reported.
assert_eq "$(systemctl is-active fsgate-routes.path || true)" active "fsgate-routes.path after the upgrade"
grep -qx 'alias fs-udf fsgate_routed_udf' /run/modprobe.d/fsgate-routes.conf ||
        fail "no route for udf after the upgrade: $(cat /run/modprobe.d/fsgate-routes.conf 2>&1)"
pass "udf, denied by the hardening role's file, is routed to fsgate's hook"
expect_blocked udf
assert_contains "$(dmesg | grep 'fsgate: ')" \
        "blocked autoload of filesystem udf (module udf, denied by $(conf_of $E udf)); see: fsgatectl why udf" "the kernel log"

step "apt remove fsgate-vendor-blacklist: the deny list goes, the exemptions stay"
run_logged "apt remove fsgate-vendor-blacklist" apt-get remove -y fsgate-vendor-blacklist
assert_eq "$(ls $V | grep -c '^60-blacklist_fs-' || true)" 0 "vendor files in $V"
assert_mask "$(conf_of $E minix)"
expect_state ufs allowed default
expect_state hfs allowed default
expect_state minix allowed admin
expect_autoloads ufs ufs

step "apt remove of the rest: fsgated stops, the configuration stays"
# shellcheck disable=SC2046
run_logged "apt remove" apt-get remove -y $(packages_of "$FSGATE_DEBS" | grep -vx fsgate-vendor-blacklist)
[ ! -e /usr/libexec/fsgated ] && [ ! -e /usr/bin/fsgatectl ] || fail "fsgate's programs are still there"
fsgated_running && fail "fsgated still owns org.fsgate.fsgate1 after the removal"
pass "fsgated is gone from the bus, its programs from the disk"
# The routes name the hook that went with the package: they go too, and nothing rebuilds them.
assert_absent /run/modprobe.d/fsgate-routes.conf
assert_eq "$(systemctl is-active fsgate-routes.path || true)" inactive "fsgate-routes.path after the removal"
assert_eq "$(package_status fsgate-notify)" config-files "fsgate-notify's status (its conffile stays until the purge)"
[ -f /etc/xdg/autostart/fsgate-notify.desktop ] || fail "fsgate-notify's conffile is gone after a remove"
assert_mask "$(conf_of $E minix)"
sha256sum -c --quiet /tmp/foreign.sums || fail "the removal changed a file fsgate did not write"
pass "the administrator's files are untouched"

step "apt purge: what stays and what goes"
# A removed package without conffiles or a postrm is gone already; the others wait for it.
left=$(for pkg in $(packages_of "$FSGATE_DEBS"); do
        [ "$(package_status "$pkg")" != config-files ] || echo "$pkg"
done | paste -sd' ')
info "left in state config-files: $left"
assert_contains " $left " " fsgate " "packages in state config-files"
# shellcheck disable=SC2086
run_logged "apt purge $left" apt-get purge -y $left
for pkg in $(packages_of "$FSGATE_DEBS"); do
        assert_eq "$(package_status "$pkg")" not-installed "dpkg's status of $pkg"
done
assert_absent /etc/xdg/autostart/fsgate-notify.desktop
assert_absent /var/lib/fsgate-vendor-blacklist
assert_absent /usr/lib/systemd/system/fsgated.service
assert_absent /lib/systemd/system/fsgated.service
assert_absent /usr/share/dbus-1/system-services/org.fsgate.fsgate1.service
sha256sum -c --quiet /tmp/foreign.sums || fail "the purge changed a file fsgate did not write"
pass "the administrator's files are untouched"
# What stays: the allows written through fsgate (the administrator's decisions, masks of
# files that are gone now), listed here so that a change of policy shows.
assert_mask "$(conf_of $E minix)"
assert_eq "$(ls -A $E | paste -sd' ')" \
        "60-blacklist_fs-minix.conf 60-blacklist_fs-udf.conf local.conf" "what stays in $E"
expect_autoloads ufs ufs

step "This boot's journal"
expect_no_fsgated_warnings "the whole life cycle" $MSG_BLOCKED $MSG_REFUSED
checks_done

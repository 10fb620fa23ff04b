#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Package upgrade: fsgate's Debian packages installed on a system that uses filesystems the vendor
# deny list is about to deny. Run through tests/vm/run-upgrade-scenario, which builds the
# .deb files and hands them to the guest unpacked (/fsgate-vm/data/PACKAGE/root, control/);
# the guest has no dpkg, so this script does what `dpkg -i` does, step by step:
#     preinst install, unpack, postinst configure ""
# Before: no vendor files; fsgated running; hfs mounted (the scratch disk), minix loaded,
# and qnx4 loaded by alice (unprivileged) with `unshare -Urm mount -t qnx4`: the kernel loads
# it before it refuses her the mount (loaded is not in use).
# Between unpack and configure hfs is unmounted and unloaded, as if the machine had rebooted
# there, and the scratch disk is mounted as minix instead.
# After: hfs (preinst saw it mounted) and minix (mounted at configure) are exempted
# (allowed, origin admin, a /dev/null mask each); qnx4, only loaded, is not: postinst names
# it and it stays denied; every other vendor-denied type is denied (a mount says "unknown
# filesystem type" and the hook reports it); the exempted types autoload; the service
# answers on the bus. Then the same version again as an upgrade: nothing changes.
# vm-boots: 1

set -eu
# shellcheck source=../guest/lib.sh
. "$FSGATE_VM_LIB"

DATA=/fsgate-vm/data
V=/usr/lib/modprobe.d
E=/etc/modprobe.d
STATE=/var/lib/fsgate-vendor-blacklist
VENDOR=fsgate-vendor-blacklist

[ -f "$DATA/VERSIONS" ] || fail "no packages in $DATA: run this scenario with tests/vm/run-upgrade-scenario"
version_of() {
        awk -v p="$1" '$1 == p {print $2}' "$DATA/VERSIONS"
}

# maint PACKAGE SCRIPT ARGS... — run a maintainer script the way dpkg does (if the package
# has it), failing the scenario if it fails. Its output is kept in /tmp/maint.out.
maint() {
        _p=$1 _s=$2
        shift 2
        if [ ! -f "$DATA/$_p/control/$_s" ]; then
                info "$_p has no $_s"
                : >/tmp/maint.out
                return 0
        fi
        _rc=0
        DPKG_MAINTSCRIPT_PACKAGE=$_p DPKG_MAINTSCRIPT_NAME=$_s DPKG_ROOT='' \
                "$DATA/$_p/control/$_s" "$@" >/tmp/maint.out 2>&1 || _rc=$?
        sed 's/^/    | /' /tmp/maint.out
        [ "$_rc" = 0 ] || fail "$_p $_s $*: exit status $_rc"
        pass "$_p $_s $*"
}

# unpack PACKAGE — what dpkg's unpack does to the files: directories merged, each file
# replaced by unlink-and-create (a running binary is not written into).
unpack() {
        cp -a --remove-destination "$DATA/$1/root/." / || fail "unpacking $1 failed"
        pass "unpacked $1 ($(find "$DATA/$1/root" ! -type d | wc -l) files)"
}

# dpkg -i of a package that is not installed.
install_new() {
        maint "$1" preinst install
        unpack "$1"
        maint "$1" postinst configure ''
}

step "A system without the vendor list: hfs mounted, minix loaded, qnx4 loaded by alice"
info "packages: $(paste -sd' ' "$DATA/VERSIONS")"
rm -f "$V"/60-blacklist_fs-*.conf
assert_eq "$(ls -A "$V" 2>/dev/null | grep -c '^60-blacklist_fs-' || true)" 0 "vendor files in $V"
[ -z "$(ls -A $E)" ] || fail "$E is not empty at the start: $(ls -A $E)"
assert_bus_activated # fsgated runs during the installation (it must not need to)
expect_state hfs allowed default
expect_state minix allowed default
expect_state qnx4 allowed default
expect_state ufs allowed default
modprobe minix
hformat -l "FSGATE HFS" "$FSGATE_SCRATCH_DISK" >/dev/null || fail "hformat $FSGATE_SCRATCH_DISK failed"
mkdir -p /mnt/hfs /mnt/minix /mnt/alice
mount -t hfs "$FSGATE_SCRATCH_DISK" /mnt/hfs || fail "cannot mount the HFS scratch disk"
is_loaded qnx4 && fail "qnx4 is loaded already"
_rc=0
_out=$(as_user alice unshare -Urm mount -t qnx4 "$FSGATE_BLANK_DISK" /mnt/alice 2>&1) || _rc=$?
[ "$_rc" != 0 ] || fail "alice mounted qnx4 in her namespace: $_out"
info "alice's unshare -Urm mount -t qnx4: $_out"
is_loaded hfs && is_loaded qnx4 && is_loaded minix || fail "hfs, qnx4 and minix should be loaded now"
[ -z "$(awk '$3 == "qnx4" || $3 == "minix"' /proc/mounts)" ] || fail "qnx4 or minix is mounted"
pass "hfs mounted on /mnt/hfs, minix loaded, qnx4 loaded by alice's namespace mount"
for t in ufs vxfs bfs; do
        for m in $(modules_of_type $t); do
                is_loaded "$m" && fail "$m is loaded already"
        done
done

step "dpkg -i fsgate_$(version_of fsgate)"
install_new fsgate
assert_contains "$(fsgatectl --version)" "fsgatectl" "the packaged fsgatectl"

step "dpkg -i ${VENDOR}_$(version_of $VENDOR): preinst install"
maint $VENDOR preinst install
info "mounted before the unpack ($STATE/in-use): $(paste -sd' ' "$STATE/in-use")"
grep -qx "type hfs" "$STATE/in-use" || fail "type hfs is not in $STATE/in-use"
! grep -Eq "(^| )(minix|qnx4)$" "$STATE/in-use" || fail "$STATE/in-use names a module that is only loaded"
pass "$STATE/in-use names type hfs, not minix or qnx4 (only loaded)"
[ -z "$(ls -A $E)" ] || fail "preinst changed $E: $(ls -A $E)"
pass "preinst changed no configuration"

step "unpack: the vendor files deny hfs now, and it stays mounted"
unpack $VENDOR
assert_eq "$(ls "$V" | grep -c '^60-blacklist_fs-')" 29 "vendor files in $V"
assert_contains "$(fsgatectl --root=/ status hfs)" "Decided by: vendor $V/60-blacklist_fs-hfs.conf" "fsgatectl --root=/ status hfs"
grep -q "^$FSGATE_SCRATCH_DISK /mnt/hfs hfs " /proc/mounts || fail "hfs got unmounted by the unpack"
info "the machine \"reboots\" between unpack and configure: hfs is gone, the disk is minix now:"
umount /mnt/hfs
unload hfs
is_loaded hfs && fail "hfs still loaded"
expect_state hfs denied vendor "$V/60-blacklist_fs-hfs.conf"
mkfs.minix -q "$FSGATE_SCRATCH_DISK" >/dev/null 2>&1 || mkfs.minix "$FSGATE_SCRATCH_DISK" >/dev/null
mount -t minix "$FSGATE_SCRATCH_DISK" /mnt/minix || fail "cannot mount the minix scratch disk (minix is loaded)"

step "postinst configure: exempt-loaded, then what preinst saw"
maint $VENDOR postinst configure ''
assert_contains "$(cat /tmp/maint.out)" "Exempted minix" "postinst's output"
assert_contains "$(cat /tmp/maint.out)" "Exempting hfs: it was mounted before the upgrade." "postinst's output"
assert_contains "$(cat /tmp/maint.out)" \
        "qnx4 is loaded but nothing is mounted with it: not exempted; if this system needs it, fsgatectl allow qnx4" \
        "postinst's output"
! grep -q "qnx4:\|Exempted qnx4\|Exempting qnx4" /tmp/maint.out || fail "postinst exempted qnx4, which alice loaded"
assert_absent "$STATE"

step "After: hfs, minix exempted; qnx4 and the rest denied"
for m in hfs minix; do
        expect_state $m allowed admin "$(conf_of $E $m)"
        assert_mask "$(conf_of $E $m)"
done
expect_state qnx4 denied vendor "$V/60-blacklist_fs-qnx4.conf"
assert_eq "$(ls -A $E | paste -sd' ')" \
        "60-blacklist_fs-hfs.conf 60-blacklist_fs-minix.conf" "files in $E"
st=$(fsgatectl status hfs) || fail "fsgatectl status hfs failed: $st"
assert_contains "$st" "State: allowed" "fsgatectl status hfs (over the bus)"
assert_contains "$st" "Decided by: admin $E/60-blacklist_fs-hfs.conf" "fsgatectl status hfs (over the bus)"
fs_list >/tmp/list.after
# Every module a vendor file names: exempted (allowed, admin), built into this kernel (a
# blacklist cannot touch it, e.g. pstore), or denied by its vendor file.
for f in "$V"/60-blacklist_fs-*.conf; do
        m=${f#"$V"/60-blacklist_fs-}
        echo "${m%.conf}"
done >/tmp/vendor-modules
awk 'NR == FNR {v[$1] = 1; next}
     ($1 in v) {seen[$1] = 1
                if ($1 == "hfs" || $1 == "minix") want = "allowed admin"
                else if ($6 == "true") want = $2 " " $3
                else want = "denied vendor"
                if ($2 " " $3 != want) print $1 ": " $2 " " $3 ", expected " want
                else if ($2 == "denied") n++}
     END {for (m in v) if (!(m in seen)) print m ": not listed"; print n > "/tmp/denied-count"}' \
        /tmp/vendor-modules /tmp/list.after >/tmp/odd
[ ! -s /tmp/odd ] || fail "vendor modules in the wrong state: $(cat /tmp/odd)"
awk '$2 == "denied" && $3 != "vendor"' /tmp/list.after >/tmp/odd
[ ! -s /tmp/odd ] || fail "denied by something other than the vendor files: $(cat /tmp/odd)"
pass "$(cat /tmp/denied-count) of the $(wc -l </tmp/vendor-modules) vendor modules denied by their vendor file; hfs, minix exempted; built-in ones: $(awk '$6 == "true" {printf "%s ", $1}' /tmp/list.after | grep -owFf /tmp/vendor-modules | paste -sd' ' || true)"
for m in ufs freevxfs bfs befs; do
        expect_state $m denied vendor "$V/60-blacklist_fs-$m.conf"
done
expect_blocked ufs
expect_blocked vxfs
expect_blocked bfs
assert_contains "$(dmesg | grep 'fsgate: ')" \
        "fsgate: blocked autoload of filesystem ufs (module ufs, denied by $V/60-blacklist_fs-ufs.conf); see: fsgatectl why ufs" \
        "the kernel log (the vendor file's route to the packaged hook)"
umount /mnt/minix
unload minix
unload qnx4
expect_autoloads hfs hfs
expect_autoloads minix minix
expect_blocked qnx4

step "The same version again, as an upgrade: nothing changes"
config_snapshot >/tmp/snap.before
old=$(version_of $VENDOR)
maint $VENDOR preinst upgrade "$old" "$old"
unpack $VENDOR
maint $VENDOR postrm upgrade "$old"
maint $VENDOR postinst configure "$old"
assert_config_unchanged /tmp/snap.before "reinstall of $VENDOR"
assert_absent "$STATE"

step "The service answers on the bus, from the packaged binary"
# On a systemd system fsgate's postinst try-restarts a running fsgated after an upgrade;
# here (no systemd) stop the old instance the same way, and let the next call activate.
pid=$(fsgated_pid)
[ -z "$pid" ] || stop_process "$pid" fsgated
assert_bus_activated
cmp -s /usr/libexec/fsgated "$DATA/fsgate/root/usr/libexec/fsgated" || fail "/usr/libexec/fsgated is not the packaged one"
pass "fsgated is the packaged binary"
expect_state hfs allowed admin
expect_state ufs denied vendor
checks_done

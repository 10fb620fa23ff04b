#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Check 3 of the VM suite (tests/vm/README.md): real polkitd with fsgate's .policy and no session (so every change
# needs an administrator's password, which nobody can give here).
#   - alice (unprivileged) can list and get; Allow, Deny, Reset, Load, ExemptLoaded are
#     refused: InteractiveAuthorizationRequired without the interactive flag, AccessDenied
#     with it (no agent to ask); nothing on disk changes and nothing gets loaded.
#     ExemptLoaded with a module only loaded (not mounted) has nothing to do: it answers
#     the empty list without asking polkit.
#   - with a rules file giving group fsadmin org.fsgate.fsgate1.allow for module hfsplus only
#     (action.lookup("module")), bob (in fsadmin) can allow hfsplus and nothing else; alice
#     still cannot.
#   - grants (fsgatectl allow --for): a site rule gives fsadmin org.fsgate.fsgate1.grant for
#     at most 60 s (action.lookup("seconds")): bob may load minix for 40 s, not longer and
#     not for good; alice not at all. The grant loads minix and writes no file; it outlives
#     fsgated's idle timeout (30 s) in the same process; at its end minix stays loaded while
#     it is mounted and is unloaded once it is not (how long that takes is printed: "GRANT
#     FIGURES"); then a mount of minix is blocked again. A grant for one medium (a loop
#     device over a minix image, the medium's diskseq): mounted read-only (a write fails),
#     and once the loop device is detached minix is unloaded (the time from the removal is
#     printed). Its end by time does not move when the wall clock is set back an hour. A
#     grant for a medium that holds no minix (/dev/vda) is refused. A grant of virtiofs with
#     fuse denied is refused (DependencyDenied); with fuse allowed, its end unloads virtiofs
#     and then fuse, which it loaded. Then fsgated exits when idle.
# vm-boots: 1

set -eu
# shellcheck source=../guest/lib.sh
. "$FSGATE_VM_LIB"

E=/etc/modprobe.d
IAR=org.freedesktop.DBus.Error.InteractiveAuthorizationRequired
DENIED=org.freedesktop.DBus.Error.AccessDenied

step "users"
assert_eq "$(as_user alice id -un)" alice "alice"
assert_eq "$(as_user bob id -Gn)" "bob fsadmin" "bob's groups"
assert_bus_activated

step "3: alice may read"
n=$(fs_list --as alice | wc -l)
[ "$n" -gt 40 ] || fail "ListFilesystems as alice gave $n entries"
pass "ListFilesystems as alice: $n entries"
fs_list --as alice | grep -q '^hfs denied vendor ' || fail "ListFilesystems as alice: hfs not denied by vendor"
_r=$(as_user alice busctl call "$FSG_DEST" "$FSG_OBJ" "$FSG_IFACE" GetFilesystem s vxfs) ||
        fail "GetFilesystem as alice failed"
assert_contains "$_r" '"freevxfs"' "GetFilesystem vxfs as alice"
_r=$(as_user alice busctl get-property "$FSG_DEST" "$FSG_OBJ" "$FSG_IFACE" KernelRelease) ||
        fail "KernelRelease as alice failed"
assert_eq "$_r" "s \"$(uname -r)\"" "KernelRelease as alice"

step "3: alice may change nothing"
config_snapshot >/tmp/config.before
# Each call, without and with allow-interactive-authorization.
refused() {
        expect_error $IAR --as alice "$@"
        expect_error $DENIED --as alice --interactive "$@"
}
refused Allow string:hfs uint64:0
refused Allow string:hfs uint64:1
refused Allow string:hfsplus uint64:0
refused Allow string:hfs uint64:2
refused Deny string:udf uint64:0
refused Deny string:udf uint64:1
refused Load string:hfs
refused Load string:udf
fsg_call_ok Allow st ufs 0 # root: never asks polkit; gives alice something to reset
config_snapshot >/tmp/config.before
refused Reset string:ufs uint64:0
fsg_call_ok Load s minix # root: loaded, denied, nothing mounted with it
config_snapshot >/tmp/config.before
# Loaded is not in use (anyone may make the kernel load a module): nothing to exempt, so
# nothing is asked of polkit and the answer is the empty list.
expect_success --as alice ExemptLoaded
_r=$(as_user alice busctl call "$FSG_DEST" "$FSG_OBJ" "$FSG_IFACE" ExemptLoaded) ||
        fail "ExemptLoaded with minix only loaded, as alice, failed"
assert_eq "$_r" "as 0" "ExemptLoaded as alice with minix loaded but not mounted"
# Mounted is in use: now ExemptLoaded would write an allow, and alice may not.
mkfs.minix "$FSGATE_SCRATCH_DISK" >/dev/null || fail "mkfs.minix $FSGATE_SCRATCH_DISK failed"
mkdir -p /mnt/minix
mount -t minix "$FSGATE_SCRATCH_DISK" /mnt/minix || fail "mount -t minix with minix loaded failed"
refused ExemptLoaded
umount /mnt/minix
assert_config_unchanged /tmp/config.before "after alice's refused calls"
for m in hfs hfsplus udf; do
        is_loaded $m && fail "$m got loaded"
done
pass "hfs, hfsplus, udf not loaded"
expect_state hfs denied vendor
expect_state udf allowed default
expect_state minix denied vendor
unload minix
assert_status 4 "fsgatectl --no-ask-password allow hfs as alice" \
        as_user alice fsgatectl --no-ask-password allow hfs
assert_status 4 "fsgatectl --no-ask-password load hfs as alice" \
        as_user alice fsgatectl --no-ask-password load hfs
assert_config_unchanged /tmp/config.before "after alice's fsgatectl"

step "3: a polkit rule lets group fsadmin allow hfsplus, and only that"
write_fsadmin_rule /etc/polkit-1/rules.d/50-fsgate-vm.rules
restart_polkitd
config_snapshot >/tmp/config.before
refused Allow string:hfsplus uint64:0 # alice is not in fsadmin
expect_error $IAR --as bob Allow string:hfs uint64:0
expect_error $DENIED --as bob --interactive Allow string:hfs uint64:0
expect_error $IAR --as bob Allow string:vxfs uint64:0
expect_error $IAR --as bob Deny string:udf uint64:0
expect_error $IAR --as bob Load string:hfsplus
expect_error $IAR --as bob Allow string:hfsplus uint64:2 # LOAD_NOW also needs load
assert_config_unchanged /tmp/config.before "after refused calls by bob"
is_loaded hfsplus && fail "hfsplus got loaded"
expect_success --as bob Allow string:hfsplus uint64:0
assert_mask "$(conf_of $E hfsplus)"
expect_state hfsplus allowed admin "$(conf_of $E hfsplus)"
expect_autoloads hfsplus hfsplus
unload hfsplus
# Now allowed: bob may not take it back (deny, or reset to the vendor's denial).
expect_error $IAR --as bob Deny string:hfsplus uint64:0
expect_error $IAR --as bob Reset string:hfsplus uint64:0
expect_state hfsplus allowed admin
# A runtime allow is the same action with the same detail.
expect_success --as bob Allow string:hfsplus uint64:0 # nothing to change: no question asked
fsg_call_ok Reset st hfsplus 0
expect_success --as bob Allow string:hfsplus uint64:1
assert_mask "$(conf_of /run/modprobe.d hfsplus)"
expect_state hfsplus allowed runtime "$(conf_of /run/modprobe.d hfsplus)"
assert_status 0 "fsgatectl --no-ask-password allow hfsplus as bob (already allowed)" \
        as_user bob fsgatectl --no-ask-password allow hfsplus
assert_status 4 "fsgatectl --no-ask-password allow hfs as bob" \
        as_user bob fsgatectl --no-ask-password allow hfs
expect_state hfs denied vendor

step "grant: a rule lets fsadmin load minix for at most 60 s, and nothing more"
cat >/etc/polkit-1/rules.d/60-fsgate-grant.rules <<'RULE'
// Members of fsadmin may load a filesystem for a minute at most; nothing for good.
polkit.addRule(function(action, subject) {
        if (action.id == "org.fsgate.fsgate1.grant" && subject.isInGroup("fsadmin") &&
            parseInt(action.lookup("seconds"), 10) <= 60) {
                return polkit.Result.YES;
        }
});
RULE
restart_polkitd
unload minix
expect_state minix denied vendor
config_snapshot >/tmp/config.grant
assert_status 4 "fsgatectl --no-ask-password allow --for=40s minix as alice" \
        as_user alice fsgatectl --no-ask-password allow --for=40s minix
assert_status 4 "fsgatectl --no-ask-password allow --for=2min minix as bob (longer than the rule)" \
        as_user bob fsgatectl --no-ask-password allow --for=2min minix
assert_status 4 "fsgatectl --no-ask-password allow minix as bob (for good)" \
        as_user bob fsgatectl --no-ask-password allow minix
is_loaded minix && fail "a refused grant loaded minix"
_out=$(as_user bob fsgatectl --no-ask-password allow --for=40s minix) || fail "bob's grant of minix failed: $_out"
_pid=$(fsgated_pid)
assert_contains "$_out" "minix: loaded until " "fsgatectl allow --for=40s minix"
is_loaded minix || fail "the grant did not load minix"
assert_config_unchanged /tmp/config.grant "after the grant"
expect_state minix denied vendor
assert_contains "$(fsgatectl status minix)" "Granted: until " "fsgatectl status minix"
assert_contains "$(busctl get-property "$FSG_DEST" "$FSG_OBJ" "$FSG_IFACE" Grants)" "\"minix\" $(id -u bob) " \
        "the Grants property (bob's uid)"
mkfs.minix "$FSGATE_SCRATCH_DISK" >/dev/null || fail "mkfs.minix failed"
mkdir -p /mnt/grant
mount -t minix "$FSGATE_SCRATCH_DISK" /mnt/grant || fail "mount -t minix during the grant failed"
pass "minix mounted during the grant"
# The wall clock set back an hour (anyone who may set the time, or NTP after a bad RTC) must
# not lengthen the grant: it ends by the boot clock (CLOCK_BOOTTIME).
date -s "@$(($(date +%s) - 3600))" >/dev/null || fail "date -s (an hour back) failed"
_i=0
until [ "$(busctl get-property "$FSG_DEST" "$FSG_OBJ" "$FSG_IFACE" Grants)" = "a(ssutts) 0" ]; do
        _i=$((_i + 1))
        [ $_i -gt 120 ] && fail "the grant did not end within 120 s (the clock set back an hour): $(fsgatectl status minix)"
        sleep 1
done
date -s "@$(($(date +%s) + 3600))" >/dev/null || fail "date -s (an hour forward again) failed"
pass "the grant ended in time, with the wall clock set back an hour meanwhile"
assert_eq "$(fsgated_pid)" "$_pid" "fsgated's pid at the end of the grant (it outlived its idle timeout)"
sleep 3
is_loaded minix || fail "minix was unloaded while it was mounted"
pass "minix stays loaded while it is mounted"
umount /mnt/grant
_t0=$(cut -d' ' -f1 /proc/uptime)
wait_while 300 "minix still loaded 30 s after the unmount" is_loaded minix
_t1=$(cut -d' ' -f1 /proc/uptime)
echo "GRANT FIGURES: minix unloaded $(echo "$_t1 $_t0" | awk '{printf "%.1f", $1 - $2}') s after the unmount" \
        "(the grant had ended while it was mounted)"
expect_state minix denied vendor
probe_mount minix "$FSGATE_SCRATCH_DISK"
assert_eq "$PROBE_RESULT" unknown "a mount of minix after the grant"
step "grant for one medium: minix while a loop device holds it, read-only"
modprobe loop 2>/dev/null || true
dd if=/dev/zero of=/tmp/minix.img bs=1024 count=2048 2>/dev/null || fail "dd failed"
mkfs.minix /tmp/minix.img >/dev/null || fail "mkfs.minix of an image failed"
# A grant for a medium is for what udev's probe found on it (ID_FS_TYPE): udevd runs.
start_udevd
_loop=$(losetup -f --show /tmp/minix.img) || fail "losetup failed"
udevadm settle --timeout=60 || fail "udevadm settle timed out"
[ -r "/sys/block/${_loop#/dev/}/diskseq" ] || fail "$_loop has no diskseq"
is_loaded minix && fail "minix is loaded before the grant"
# A typo that names another disk (here the system's own) loads nothing for a day.
_out=$(fsgatectl allow --device=/dev/vda minix 2>&1) && fail "a grant of minix for /dev/vda was made: $_out"
assert_contains "$_out" "nothing was granted" "fsgatectl allow --device=/dev/vda minix"
is_loaded minix && fail "a refused grant for /dev/vda loaded minix"
pass "a grant of minix for /dev/vda (no minix filesystem on it) is refused: $_out"
_out=$(fsgatectl allow --device="$_loop" minix) || fail "fsgatectl allow --device=$_loop minix failed: $_out"
assert_contains "$_out" "or until $_loop is removed" "fsgatectl allow --device=$_loop minix"
is_loaded minix || fail "the grant for $_loop did not load minix"
assert_contains "$(fsgatectl status minix)" "or until $_loop is removed" "fsgatectl status minix"
mount -o ro -t minix "$_loop" /mnt/grant || fail "mount -o ro of the granted medium failed"
touch /mnt/grant/x 2>/dev/null && fail "a write to the read-only mount succeeded"
pass "the granted medium is mounted read-only: a write fails"
umount /mnt/grant
_t0=$(cut -d' ' -f1 /proc/uptime)
losetup -d "$_loop"
wait_while 300 "minix still loaded 30 s after its medium went" is_loaded minix
_t1=$(cut -d' ' -f1 /proc/uptime)
echo "GRANT FIGURES: minix unloaded $(echo "$_t1 $_t0" | awk '{printf "%.1f", $1 - $2}') s after its medium was removed" \
        "(the medium is looked for every 2 s)"
assert_eq "$(busctl get-property "$FSG_DEST" "$FSG_OBJ" "$FSG_IFACE" Grants)" "a(ssutts) 0" "Grants after the medium went"
expect_state minix denied vendor
probe_mount minix "$FSGATE_SCRATCH_DISK"
assert_eq "$PROBE_RESULT" unknown "a mount of minix after the medium went"
step "grant and its dependencies: virtiofs needs fuse"
fsgatectl deny virtiofs >/dev/null || fail "fsgatectl deny virtiofs failed"
fsgatectl deny fuse >/dev/null || fail "fsgatectl deny fuse failed"
is_loaded fuse && fail "fuse is loaded before the grant (the scenario needs it out)"
_rc=0
_out=$(fsgatectl allow --for=20s virtiofs 2>&1) || _rc=$?
assert_eq "$_rc" 5 "the exit status of a grant of virtiofs with fuse denied"
assert_contains "$_out" "virtiofs needs fuse, which is denied" "fsgatectl allow --for=20s virtiofs"
is_loaded virtiofs && fail "a refused grant loaded virtiofs"
is_loaded fuse && fail "a refused grant loaded fuse"
fsgatectl reset fuse >/dev/null || fail "fsgatectl reset fuse failed"
_out=$(fsgatectl allow --for=6s virtiofs) || fail "fsgatectl allow --for=6s virtiofs failed: $_out"
is_loaded virtiofs || fail "the grant did not load virtiofs"
is_loaded fuse || fail "the grant did not load fuse with virtiofs"
wait_while 120 "virtiofs still loaded 2 min after its 6 s grant" is_loaded virtiofs
wait_while 30 "fuse, loaded with virtiofs's grant, still loaded after virtiofs went" is_loaded fuse
pass "the grant's end unloaded virtiofs, then fuse, which it had loaded with it"
fsgatectl reset virtiofs >/dev/null || fail "fsgatectl reset virtiofs failed"
wait_fsgated_exit 60

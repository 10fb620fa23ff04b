#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Checks 6, 1, 2 and 7 of the VM suite (tests/vm/README.md), in one boot (in that order: the exemption needs a boot
# where no other denied module has been loaded yet).
#   6  exempt-loaded with hfs loaded but not mounted: nothing changes (loaded is not in use:
#      any user's namespace mount loads a module); with hfs mounted: hfs becomes allowed
#      (admin), every other entry stays.
#   1  a vendor-denied type is refused by the kernel; Allow makes the same mount autoload
#      it; Deny blocks it again; the same for a second vendor-denied type, a default-allowed
#      type (explicit modprobe keeps working) and a module serving three types.
#   2  type != module: vxfs is freevxfs, in the reply and in the file name.
#   7  Deny of a loaded or mounted filesystem is InUse; with FORCE it is written and the
#      mount stays.
# Also: a refused mount reaches fsgate's hook through the real kernel and modprobe (Blocked
# signal, kernel log line).
# vm-boots: 1

set -eu
# shellcheck source=../guest/lib.sh
. "$FSGATE_VM_LIB"

E=/etc/modprobe.d
SCRATCH=$FSGATE_SCRATCH_DISK

step "fsgated is bus-activated and sees the vendor files"
assert_bus_activated
expect_state hfs denied vendor /usr/lib/modprobe.d/60-blacklist_fs-hfs.conf
[ -z "$(ls -A $E)" ] || fail "$E is not empty at the start: $(ls -A $E)"

step "6: exempt-loaded with hfs loaded, then mounted"
fs_list >/tmp/list.before
busy=$(awk '$2 == "denied" && ($7 == "true" || $8 == "true") {print $1}' /tmp/list.before)
[ -z "$busy" ] || fail "denied modules already loaded or mounted: $busy"
assert_status 0 "fsgatectl load hfs" fsgatectl load hfs
is_loaded hfs || fail "hfs is not loaded after fsgatectl load"
expect_state hfs denied vendor # load changes no configuration
assert_eq "$(fsgatectl --json exempt-loaded)" '[]' "fsgatectl --json exempt-loaded (hfs loaded, not mounted)"
expect_state hfs denied vendor
[ -z "$(ls -A $E)" ] || fail "exempt-loaded wrote $(ls -A $E) for a module that is only loaded"
hformat -l "FSGATE HFS" "$SCRATCH" >/dev/null || fail "hformat $SCRATCH failed"
mkdir -p /mnt/hfs
mount -t hfs "$SCRATCH" /mnt/hfs || fail "mount -t hfs of a fresh HFS filesystem failed (hfs is loaded)"
assert_eq "$(fsgatectl --json exempt-loaded)" '["hfs"]' "fsgatectl --json exempt-loaded (hfs mounted)"
expect_state hfs allowed admin "$(conf_of $E hfs)"
assert_mask "$(conf_of $E hfs)"
fs_list >/tmp/list.after
awk '$1 != "hfs" {print $1, $2, $3, $4}' /tmp/list.before >/tmp/a
awk '$1 != "hfs" {print $1, $2, $3, $4}' /tmp/list.after >/tmp/b
cmp -s /tmp/a /tmp/b || { diff /tmp/a /tmp/b; fail "exempt-loaded changed more than hfs"; }
pass "every other module keeps its state, origin and source ($(grep -c ' denied ' /tmp/b) still denied)"
assert_eq "$(ls -A $E)" 60-blacklist_fs-hfs.conf "files in $E"
assert_eq "$(fsgatectl --json exempt-loaded)" '[]' "a second exempt-loaded"
umount /mnt/hfs
unload hfs

step "1: a vendor-denied type, allowed and denied again"
fsg_call_ok Reset st hfs 0
assert_absent "$(conf_of $E hfs)"
expect_state hfs denied vendor
blocked_watch_start
expect_blocked hfs
expect_blocked_signal "'hfs', 'hfs', ''"
blocked_watch_stop
assert_eq "$BLOCKED_SIGNAL" \
        "Blocked ('hfs', 'hfs', '', {'source': <'/usr/lib/modprobe.d/60-blacklist_fs-hfs.conf'>, 'origin': <'vendor'>, 'cause': <'kernel'>})" \
        "the Blocked signal of the refused mount"
assert_contains "$(dmesg | grep 'fsgate: ')" \
        "fsgate: blocked autoload of filesystem hfs (module hfs, denied by /usr/lib/modprobe.d/60-blacklist_fs-hfs.conf); see: fsgatectl why hfs" \
        "the kernel log"
fsg_call_ok Allow st hfs 0
assert_mask "$(conf_of $E hfs)"
expect_state hfs allowed admin "$(conf_of $E hfs)"
expect_autoloads hfs hfs
expect_error InUse Deny string:hfs uint64:0 # loaded now
assert_mask "$(conf_of $E hfs)"
unload hfs
fsg_call_ok Deny st hfs 0
assert_deny_file "$(conf_of $E hfs)" hfs
expect_state hfs denied admin "$(conf_of $E hfs)"
expect_blocked hfs

step "1: another vendor-denied type (ufs)"
expect_blocked ufs
fsg_call_ok Allow st ufs 0
expect_autoloads ufs ufs
unload ufs
fsg_call_ok Deny st ufs 0
assert_deny_file "$(conf_of $E ufs)" ufs
expect_blocked ufs
expect_blocked hfs # still

step "1: a default-allowed type (udf): deny blocks autoload, explicit modprobe still loads"
expect_state udf allowed default
expect_autoloads udf udf
unload udf
fsg_call_ok Deny st udf 0
assert_deny_file "$(conf_of $E udf)" udf
expect_state udf denied admin "$(conf_of $E udf)"
expect_blocked udf
modprobe udf || fail "explicit modprobe udf failed after a deny"
is_loaded udf || fail "explicit modprobe udf loaded nothing"
pass "explicit modprobe udf still loads it"
unload udf
fsg_call_ok Reset st udf 0
assert_absent "$(conf_of $E udf)"
expect_state udf allowed default
expect_autoloads udf udf
unload udf

step "1: a deny covers every type of the module (fuse: fuse, fuseblk, fusectl)"
assert_eq "$(fs_field fuse types)" fuse,fuseblk,fusectl "types of fuse"
fsg_call_ok Deny st fuse 0
expect_blocked fuse
expect_blocked fuseblk
expect_blocked fusectl
fsg_call_ok Reset st fuse 0
expect_autoloads fuseblk fuse
unload fuse

step "2: type is not module (vxfs is freevxfs)"
assert_eq "$(fs_field vxfs module)" freevxfs "module for type vxfs"
assert_eq "$(fs_field vxfs types)" vxfs "types of freevxfs"
assert_eq "$(fs_field ext2 module)" ext4 "module for type ext2"
assert_eq "$(fs_field ext3 types)" ext2,ext3,ext4 "types of ext4"
assert_eq "$(fs_field v7 module)" sysv "module for type v7"
expect_blocked vxfs
fsg_call_ok Allow st vxfs 0
assert_mask "$(conf_of $E freevxfs)"
assert_absent "$(conf_of $E vxfs)"
expect_autoloads vxfs freevxfs
unload freevxfs
fsg_call_ok Deny st freevxfs 0
assert_deny_file "$(conf_of $E freevxfs)" freevxfs
expect_state vxfs denied admin "$(conf_of $E freevxfs)"
expect_blocked vxfs
_r=$(fsg_call GetFilesystem s vxfs)
assert_contains "$_r" '"freevxfs" 1 "vxfs" "denied"' "GetFilesystem vxfs"

step "7: deny of what is mounted or loaded"
assert_eq "$(fs_field ext4 mounted)" true "ext4 mounted (/etc)"
expect_error InUse Deny string:ext4 uint64:0
expect_error InUse Deny string:ext2 uint64:0
assert_absent "$(conf_of $E ext4)"
mkfs.minix "$SCRATCH" >/dev/null
fsg_call_ok Allow st minix 0
mkdir -p /mnt/minix
mount -t minix "$SCRATCH" /mnt/minix || fail "mount -t minix of a fresh minix filesystem failed"
echo "written before the deny" >/mnt/minix/file
_e=$(fs_get minix)
assert_eq "$(echo "$_e" | cut -d' ' -f2,7,8)" "allowed true true" "minix state, loaded, mounted"
expect_error InUse Deny string:minix uint64:0
assert_contains "$(cat "$LAST_ERROR_FILE")" mounted "the InUse message"
assert_mask "$(conf_of $E minix)"
expect_error Overridden Deny string:minix uint64:1 # /etc's mask would hide a /run deny
assert_absent "$(conf_of /run/modprobe.d minix)"
fsg_call_ok Deny st minix 4
assert_deny_file "$(conf_of $E minix)" minix
expect_state minix denied admin "$(conf_of $E minix)"
grep -q "^$SCRATCH /mnt/minix minix " /proc/mounts || fail "the minix mount went away"
is_loaded minix || fail "minix was unloaded by a deny"
assert_eq "$(cat /mnt/minix/file)" "written before the deny" "file on the mounted minix"
echo more >>/mnt/minix/file || fail "cannot write to the mounted minix after the deny"
pass "the mount stays and works after a forced deny"
assert_eq "$(fs_field minix mounted)" true "minix mounted"
umount /mnt/minix
unload minix
probe_mount minix "$SCRATCH"
[ "$PROBE_RESULT" = unknown ] && [ -z "$PROBE_NEW" ] ||
        fail "after unmount and unload, a minix filesystem still mounts: $PROBE_RESULT $PROBE_OUTPUT $PROBE_NEW"
pass "once unloaded, the real minix filesystem no longer mounts (unknown filesystem type)"

step "what is left in $E"
ls -l $E

#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A hard deny against the real kernel, in one boot:
#   a  Deny hfs with HARD (0x8): fsgate's file says "install hfs /bin/false"; Describe says hard.
#   b  root's "modprobe hfs" fails (kmod runs /bin/false) and hfs stays unloaded; Load fails with
#      org.fsgate.fsgate1.Error.HardDenied, naming the file, before polkit is asked.
#   c  mount -t hfs is still blocked and reported: the Blocked signal and fsgate's kernel line.
#   d  a foreign hard deny (a CIS role's "install minix /bin/true"): modprobe minix loads
#      nothing, Describe calls it hard and names that file, Load says HardDenied.
#   e  Allow lifts fsgate's hard deny: modprobe hfs loads it again.
#   f  a hard deny on a dependency: Deny fuse HARD; root's "modprobe virtiofs" fails (kmod runs
#      fuse's /bin/false), and Load virtiofs says HardDenied naming fuse and its file, for root
#      and for a user, with fuse and virtiofs left unloaded; Describe and status say why.
# vm-boots: 1
# vm-timeout: 400

set -eu
# shellcheck source=../guest/lib.sh
. "$FSGATE_VM_LIB"

E=/etc/modprobe.d
HFS_FILE=$E/60-blacklist_fs-hfs.conf

kmsg_lines() {
        dmesg | grep -cF -- "$1" || true
}

# describe_field MODULE KEY — one value of Describe, as busctl prints it ("b true", "s \"...\"").
describe_field() {
        busctl --json=short call "$FSG_DEST" "$FSG_OBJ" "$FSG_IFACE" Describe s "$1" |
                sed -n "s/.*\"$2\":{\"type\":\"[a-z]*\",\"data\":\([^}]*\)}.*/\1/p"
}

step "the starting point"
assert_bus_activated
unload hfs
unload minix
blocked_watch_start

step "a: Deny hfs HARD"
fsg_call_ok Deny st hfs 8
grep -qx 'install hfs /bin/false' "$HFS_FILE" || fail "$HFS_FILE has no hard deny line: $(cat "$HFS_FILE")"
grep -qx 'alias fs-hfs fsgate_blocked_hfs' "$HFS_FILE" || fail "$HFS_FILE lost the route to the hook"
pass "$HFS_FILE: $(grep -v '^#' "$HFS_FILE" | tr '\n' '|')"
assert_eq "$(describe_field hfs hard)" true "Describe(hfs) hard"
assert_eq "$(describe_field hfs explicit_load_possible)" false "Describe(hfs) explicit_load_possible"
assert_eq "$(describe_field hfs install_command)" '"/bin/false"' "Describe(hfs) install_command"
assert_contains "$(fsgatectl status hfs)" "Hard deny: yes" "fsgatectl status hfs"

step "b: modprobe hfs as root fails; Load says HardDenied"
if _out=$(modprobe hfs 2>&1); then
        fail "modprobe hfs succeeded under a hard deny"
fi
pass "modprobe hfs failed: $_out"
is_loaded hfs && fail "modprobe hfs failed, yet hfs is loaded"
pass "hfs is not loaded"
expect_error HardDenied Load string:hfs
assert_contains "$(last_error_message)" "$HFS_FILE" "the HardDenied message"
expect_error HardDenied --as 1000 Load string:hfs
is_loaded hfs && fail "Load refused, yet hfs is loaded"
_r=0
fsgatectl load hfs >/tmp/load.out 2>&1 || _r=$?
assert_eq "$_r" 5 "exit status of fsgatectl load hfs"

step "c: mount -t hfs is still blocked and reported"
expect_blocked hfs
expect_blocked_signal "('hfs', 'hfs', '',"
assert_eq "$(kmsg_lines "fsgate: blocked autoload of filesystem hfs (module hfs, denied by $HFS_FILE); see: fsgatectl why hfs")" 1 \
        "fsgate's kernel log line for the blocked mount"

step "d: a CIS role's install minix /bin/true is a hard deny too"
echo 'install minix /bin/true' >"$E/cis-filesystems.conf"
_r=0
modprobe minix >/tmp/modprobe.out 2>&1 || _r=$?
is_loaded minix && fail "modprobe minix loaded minix despite install minix /bin/true"
pass "modprobe minix (exit $_r) loaded nothing"
assert_eq "$(describe_field minix hard)" true "Describe(minix) hard"
assert_eq "$(describe_field minix deciding_file)" "\"$E/cis-filesystems.conf\"" "Describe(minix) deciding_file"
expect_error HardDenied Load string:minix
assert_contains "$(last_error_message)" "$E/cis-filesystems.conf" "the HardDenied message"
expect_error ForeignConfig Allow string:minix uint64:0
rm -f "$E/cis-filesystems.conf"

step "e: Allow lifts fsgate's hard deny"
fsg_call_ok Allow st hfs 0
assert_eq "$(describe_field hfs hard)" false "Describe(hfs) hard after Allow"
modprobe hfs || fail "modprobe hfs failed after Allow"
is_loaded hfs || fail "modprobe hfs did not load hfs after Allow"
pass "modprobe hfs loads hfs again"
unload hfs
fsg_call_ok Reset st hfs 0

step "f: a hard deny on fuse holds for virtiofs, which needs it"
FUSE_FILE=$E/60-blacklist_fs-fuse.conf
unload virtiofs
unload fuse
fsg_call_ok Deny st fuse 8
if _out=$(modprobe virtiofs 2>&1); then
        fail "modprobe virtiofs succeeded under a hard deny of fuse"
fi
pass "modprobe virtiofs failed: $_out"
is_loaded fuse && fail "modprobe virtiofs failed, yet fuse is loaded"
expect_error HardDenied Load string:virtiofs
assert_contains "$(last_error_message)" "fuse" "the HardDenied message"
assert_contains "$(last_error_message)" "$FUSE_FILE" "the HardDenied message"
expect_error HardDenied --as 1000 Load string:virtiofs
expect_error HardDenied Allow string:virtiofs uint64:2
is_loaded fuse && fail "Load virtiofs refused, yet fuse is loaded"
is_loaded virtiofs && fail "Load virtiofs refused, yet virtiofs is loaded"
pass "neither fuse nor virtiofs is loaded"
assert_eq "$(describe_field virtiofs hard_denied_dependency)" '"fuse"' "Describe(virtiofs) hard_denied_dependency"
assert_eq "$(describe_field virtiofs explicit_load_possible)" false "Describe(virtiofs) explicit_load_possible"
assert_contains "$(fsgatectl status virtiofs)" "Load refused: its dependency fuse is denied hard by $FUSE_FILE" \
        "fsgatectl status virtiofs"
fsg_call_ok Reset st fuse 0

blocked_watch_stop
checks_done

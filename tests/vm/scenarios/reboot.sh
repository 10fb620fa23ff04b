#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Checks 4 and 5 of the VM suite (tests/vm/README.md), over two boots sharing the persistent /etc disk.
#   4  Load ("allow once"): minix is loaded and a real minix filesystem mounts this boot;
#      no configuration changes; after the reboot the same filesystem is refused again.
#   5  An Allow (ufs) survives the reboot; a RUNTIME Allow (jfs) does not.
#   Grants: a grant of hfs for 10 minutes (fsgatectl allow --for) does not outlive the boot:
#      after the reboot hfs is not loaded, Grants is empty and an hfs mount is refused.
# vm-boots: 2

set -eu
# shellcheck source=../guest/lib.sh
. "$FSGATE_VM_LIB"

E=/etc/modprobe.d
R=/run/modprobe.d
SCRATCH=$FSGATE_SCRATCH_DISK
mkdir -p /mnt/minix

case $FSGATE_BOOT in
1)
        step "boot 1: Load minix, allow ufs for good and jfs until reboot"
        assert_bus_activated
        expect_state minix denied vendor
        mkfs.minix "$SCRATCH" >/dev/null
        probe_mount minix "$SCRATCH"
        [ "$PROBE_RESULT" = unknown ] && [ -z "$PROBE_NEW" ] ||
                fail "a minix filesystem mounts before Load: $PROBE_RESULT $PROBE_OUTPUT"
        pass "minix filesystem refused before Load (unknown filesystem type)"
        config_snapshot >/tmp/config.before
        fsg_call_ok Load s minix
        is_loaded minix || fail "Load did not load minix"
        assert_config_unchanged /tmp/config.before "after Load"
        expect_state minix denied vendor
        assert_eq "$(fs_field minix loaded)" true "minix loaded"
        mount -t minix "$SCRATCH" /mnt/minix || fail "mount -t minix after Load failed"
        echo "from boot 1" >/mnt/minix/proof
        umount /mnt/minix
        mount -t minix "$SCRATCH" /mnt/minix || fail "a second mount after Load failed"
        assert_eq "$(cat /mnt/minix/proof)" "from boot 1" "file on minix"
        umount /mnt/minix
        pass "minix mounts this boot"
        fsg_call_ok Load s minix # loaded already: fine
        assert_config_unchanged /tmp/config.before "after a second Load"

        fsg_call_ok Allow st ufs 0
        assert_mask "$(conf_of $E ufs)"
        expect_autoloads ufs ufs
        fsg_call_ok Allow st jfs 1
        assert_mask "$(conf_of $R jfs)"
        assert_absent "$(conf_of $E jfs)"
        expect_state jfs allowed runtime "$(conf_of $R jfs)"
        expect_autoloads jfs jfs

        _out=$(fsgatectl allow --for=10min hfs) || fail "fsgatectl allow --for=10min hfs failed: $_out"
        is_loaded hfs || fail "the grant did not load hfs"
        [ -n "$(ls -A /run/fsgate/grants)" ] || fail "no grant record in /run/fsgate/grants"
        pass "hfs granted for 10 minutes: $_out"
        ;;
2)
        step "boot 2: what persisted"
        assert_bus_activated
        assert_eq "$(ls -A $E)" 60-blacklist_fs-ufs.conf "files in $E"
        assert_eq "$(ls -A $R 2>/dev/null || true)" "" "files in $R"

        step "4: the Load did not outlive the boot"
        is_loaded minix && fail "minix is loaded at boot"
        expect_state minix denied vendor
        probe_mount minix "$SCRATCH"
        [ "$PROBE_RESULT" = unknown ] && [ -z "$PROBE_NEW" ] ||
                fail "the minix filesystem mounts after the reboot: $PROBE_RESULT $PROBE_OUTPUT $PROBE_NEW"
        pass "the minix filesystem is refused again (unknown filesystem type)"

        step "5: the Allow survived, the RUNTIME Allow did not"
        assert_mask "$(conf_of $E ufs)"
        expect_state ufs allowed admin "$(conf_of $E ufs)"
        expect_autoloads ufs ufs
        expect_state jfs denied vendor
        expect_blocked jfs

        step "the grant did not outlive the boot"
        is_loaded hfs && fail "hfs is loaded at boot"
        assert_eq "$(busctl get-property "$FSG_DEST" "$FSG_OBJ" "$FSG_IFACE" Grants)" "a(ssutts) 0" "Grants"
        expect_blocked hfs
        ;;
*)
        fail "unexpected FSGATE_BOOT=$FSGATE_BOOT"
        ;;
esac

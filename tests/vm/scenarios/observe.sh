#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Observe before enforcing (issue 39), on the real kernel, with the real systemd-journald (run
# here by hand: the guest has no systemd), over two boots sharing the persistent /etc disk.
#   boot 1  hfsplus is allowed by hand (the vendor files deny it); `fsgatectl apply --observe
#           cis` denies nothing. A mount of udf by root and one of
#           hfsplus by alice from a user namespace of her own both load their modules (the
#           hook loads them as kmod would have); the journal has one would-block each, with
#           the user who asked (uid, name, command) found in /proc. `audit cis` shows them;
#           `log --would-block` lists them; `apply cis` names them and refuses (exit 5),
#           writing nothing.
#   boot 2  The observation is still on (its file is in /etc). A mount of udf by root loads
#           it again and is recorded. `apply --force cis` enforces and ends the observation;
#           a mount of udf is then refused (unknown filesystem type), as without observing.
# vm-boots: 2
# vm-timeout: 400

set -eu
# shellcheck source=../guest/lib.sh
. "$FSGATE_VM_LIB"

WOULD_BLOCK=0d0f34f05bae466196f7be43c1b94579
OBSERVE_FILE=/etc/modprobe.d/fsgate-observe.conf
mkdir -p /mnt/observe

# The journal, volatile (/run/log/journal): what the hook sends goes there.
journald_start() {
        [ -s /etc/machine-id ] || echo 5c0b5e7a1f2d4c3b9a8e7d6c5b4a3f21 >/etc/machine-id
        mkdir -p /run/systemd/journal
        # journald stops without a cgroup hierarchy (it reads its own cgroup at start).
        mountpoint -q /sys/fs/cgroup || mount -t cgroup2 cgroup2 /sys/fs/cgroup
        /lib/systemd/systemd-journald >/dev/null 2>&1 &
        wait_while 200 "journald made no socket" test ! -S /run/systemd/journal/socket
        pass "systemd-journald runs (/run/systemd/journal/socket)"
}

# would_blocks MODULE FIELD — FIELD of each would-block entry of MODULE, one a line.
would_blocks() {
        journalctl --sync >/dev/null 2>&1 || sleep 1
        journalctl -q -o export "MESSAGE_ID=$WOULD_BLOCK" "FSGATE_MODULE=$1" | sed -n "s/^$2=//p"
}

case $FSGATE_BOOT in
1)
        step "boot 1: observe cis; root and alice mount what it would deny"
        journald_start
        assert_bus_activated
        expect_state udf allowed default
        # hfsplus is denied by the vendor's files here; an admin allowed it, as people use it.
        assert_status 0 "allow hfsplus" fsgatectl allow hfsplus
        assert_status 0 "apply --observe cis" fsgatectl apply --observe cis
        [ -s "$OBSERVE_FILE" ] || fail "no $OBSERVE_FILE"
        expect_state udf allowed default
        assert_contains "$(fsgatectl status udf)" "Observed: profile cis would deny it" "status udf"

        # root: the module loads, the mount gets past "unknown filesystem type".
        expect_autoloads udf udf
        assert_eq "$(would_blocks udf FSGATE_REQUEST_UID)" 0 "the would-block of udf names root"
        assert_eq "$(would_blocks udf FSGATE_REQUEST_COMM)" mount "... and mount as the command"
        assert_eq "$(would_blocks udf FSGATE_PROFILE)" cis "... and the profile"

        # alice, from a user namespace: the kernel asks before it checks anything, so the
        # module loads (the mount itself is then refused: hfsplus is no user-namespace type).
        unload hfsplus
        as_user alice unshare -Urm mount -t hfsplus "$FSGATE_BLANK_DISK" /mnt/observe 2>/dev/null || true
        is_loaded hfsplus || fail "alice's mount did not load hfsplus while observing"
        pass "alice's mount -t hfsplus in her user namespace loaded hfsplus"
        assert_eq "$(would_blocks hfsplus FSGATE_REQUEST_UID)" 1000 "the would-block of hfsplus names alice's uid"
        assert_eq "$(would_blocks hfsplus FSGATE_USER)" alice "... and her name"
        dmesg | grep -q "fsgate: profile cis would block autoload of filesystem hfsplus (module hfsplus); asked by uid 1000 alice" ||
                fail "no kernel log line for alice's would-block"
        pass "kernel log: profile cis would block hfsplus, asked by uid 1000 alice"

        out=$(fsgatectl audit cis) && fail "audit cis passed while only observing"
        info "$out"
        assert_contains "$out" "udf: 1 autoload observed" "audit cis: udf"
        assert_contains "$out" "hfsplus: 1 autoload observed" "audit cis: hfsplus"
        assert_contains "$out" "/dev/vdb, asked by alice (uid 1000, mount)" "audit cis: alice"
        assert_contains "$(fsgatectl log --would-block)" "hfsplus (module hfsplus) WOULD be blocked by profile cis" \
                "log --would-block"

        # Unmounted and unloaded: only what was observed stands in the way now.
        unload udf
        unload hfsplus
        config_snapshot >/tmp/observe-before
        out=$(fsgatectl apply cis 2>&1) && fail "apply cis enforced what was used while observed: $out"
        info "$out"
        assert_contains "$out" "udf: 1 autoload observed" "apply cis names udf"
        assert_contains "$out" "asked by alice (uid 1000, mount)" "apply cis names alice's use of hfsplus"
        assert_contains "$out" "To enforce it all the same: fsgatectl apply --force cis" "apply cis says how to go on"
        assert_status 5 "apply cis after observed use" fsgatectl apply cis
        assert_config_unchanged /tmp/observe-before "refused apply cis"
        expect_state udf allowed default
        ;;
2)
        step "boot 2: the observation survived; enforce with --force"
        journald_start
        assert_bus_activated
        [ -s "$OBSERVE_FILE" ] || fail "$OBSERVE_FILE did not survive the reboot"
        assert_eq "$(busctl call "$FSG_DEST" "$FSG_OBJ" "$FSG_IFACE" GetObservation | cut -d' ' -f2)" '"cis"' \
                "GetObservation after the reboot"
        expect_autoloads udf udf
        assert_eq "$(would_blocks udf FSGATE_REQUEST_UID)" 0 "after the reboot, root's mount of udf is recorded"
        unload udf
        assert_status 5 "apply cis after observed use" fsgatectl apply cis
        assert_status 0 "apply --force cis" fsgatectl apply --force cis
        [ ! -e "$OBSERVE_FILE" ] || fail "$OBSERVE_FILE still there after enforcing"
        pass "enforcing ended the observation"
        expect_state udf denied admin
        expect_blocked udf
        ;;
esac
checks_done

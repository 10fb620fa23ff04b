#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# ApplyProfile "unused" on a real kernel, over two boots sharing the persistent /etc disk:
# every filesystem mounted at the call (the /etc disk's ext4, a minix disk allowed and
# mounted for the purpose) and the root filesystem's type stay mountable after the reboot;
# the rest is denied (counted), and one of them (udf, kept as needed on demand unless
# --include-on-demand) really is refused.
# vm-boots: 2
# vm-timeout: 600

set -eu
# shellcheck source=../guest/lib.sh
. "$FSGATE_VM_LIB"

E=/etc/modprobe.d
SCRATCH=$FSGATE_SCRATCH_DISK
mkdir -p /mnt/minix

# entry_field NAME FIELD — like fs_field, but empty for a name that is no filesystem module
# (proc, sysfs, tmpfs: built in without a module).
entry_field() {
        _out=$(fsg_call GetFilesystem s "$1" 2>/dev/null) || return 0
        echo "$_out" | _fsg_entries | awk -v f="$2" '{
                split("module state origin source available builtin loaded mounted types", k, " ")
                for (i = 1; i <= 9; i++) if (k[i] == f) { print $i; exit }
        }'
}

case $FSGATE_BOOT in
1)
        step "boot 1: a minix disk in use, then apply unused"
        assert_bus_activated
        fsg_call_ok Allow st minix 0
        mkfs.minix "$SCRATCH" >/dev/null
        mount -t minix "$SCRATCH" /mnt/minix || fail "mount -t minix after Allow failed"
        echo "boot 1" >/mnt/minix/proof
        findmnt -rn -o FSTYPE | sort -u >/etc/fsgate-vm-mounted-types
        info "mounted types: $(tr '\n' ' ' </etc/fsgate-vm-mounted-types)"
        # What people need on demand (udf: DVDs) is kept and said apart, unless included.
        fsgatectl apply unused --dry-run >/tmp/dry-kept.out || fail "apply unused --dry-run failed"
        grep -q '^deny.* udf ' /tmp/dry-kept.out && fail "apply unused would deny udf, needed on demand"
        grep -qx '  udf: DVDs and Blu-ray discs would not mount' /tmp/dry-kept.out ||
                fail "the dry run does not say what denying udf costs: $(cat /tmp/dry-kept.out)"
        fsgatectl apply unused --include-on-demand --dry-run >/tmp/dry.out ||
                fail "apply unused --include-on-demand --dry-run failed"
        fsgatectl apply unused --include-on-demand >/tmp/apply.out ||
                fail "apply unused --include-on-demand failed: $(cat /tmp/apply.out)"
        diff /tmp/dry.out /tmp/apply.out | grep -v 'would be written\|written\.$' | grep '^[<>]' &&
                fail "the dry run did not list what apply wrote"
        n=$(grep -c '^deny' /tmp/apply.out || true)
        total=$(fs_list | wc -l)
        info "apply unused denied $n of $total filesystem modules"
        [ "$n" -gt 10 ] || fail "apply unused denied only $n modules"
        for t in $(cat /etc/fsgate-vm-mounted-types); do
                m=$(entry_field "$t" module)
                [ -n "$m" ] || continue
                grep -q " $m " /tmp/apply.out && fail "apply unused denied $m, mounted as $t"
        done
        grep -q ' minix ' /tmp/apply.out && fail "apply unused denied minix, which is mounted"
        grep -q ' udf ' /tmp/apply.out || fail "apply unused --include-on-demand did not deny udf"
        umount /mnt/minix
        pass "apply unused: $n denied, every mounted type kept"
        ;;
2)
        step "boot 2: what is mounted stays mountable, the rest is refused"
        assert_bus_activated
        n=$(ls $E | grep -c '^60-blacklist_fs-' || true)
        info "$n files in $E"
        rootfs=$(findmnt -n -o FSTYPE /)
        for t in $(cat /etc/fsgate-vm-mounted-types); do
                st=$(entry_field "$t" state)
                case $st in
                denied) fail "$t, mounted at the apply, is denied after the reboot" ;;
                esac
        done
        assert_eq "$(fs_field ext4 state)" allowed "ext4 (the /etc disk)"
        mount -t minix "$SCRATCH" /mnt/minix || fail "the minix disk no longer mounts after the reboot"
        assert_eq "$(cat /mnt/minix/proof)" "boot 1" "file on minix"
        umount /mnt/minix
        info "root filesystem: $rootfs ($(entry_field "$rootfs" state || true))"
        [ "$(entry_field "$rootfs" state)" != denied ] || fail "the root filesystem's type $rootfs is denied"
        info "denied now: $(fs_list | awk '$2 == "denied"' | wc -l) of $(fs_list | wc -l) filesystem modules"
        expect_blocked udf
        pass "after the reboot: mounted types mount, udf is refused; $n modules denied"
        ;;
esac

#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# DEV: Open safely under the shipped unit (moved into install.sh when done).
# system-boots: 1
# system-timeout: 900
# system-usb-stick-2: SQUASH
# system-usb-stick-2-type: squashfs

set -eu
# shellcheck source=../guest/system-lib.sh
. "$FSGATE_SYSTEM_LIB"

E=/etc/modprobe.d

# open_unit_of MOUNTPOINT — the transient unit serving it: fsgate-open-ID.service.
open_unit_of() {
        echo "fsgate-open-${1##*/}.service"
}

# Open safely under the shipped unit: fsgated may not mount (no CAP_SYS_ADMIN, a mount
# namespace of its own), so systemd runs each open as a transient unit whose privileged steps
# mount in the host's namespace and whose driver is a dynamic user in a sandbox.
open_safely_checks() {
        step "Open safely under the shipped unit: squashfs denied, its files read through squashfuse"
        fsgatectl deny squashfs >/dev/null
        is_loaded squashfs && fail "squashfs is loaded before the open"
        mkdir -p /tmp/src/"a dir"
        printf 'grüße aus dem Image\n' >"/tmp/src/a dir/Grüße é.txt"
        head -c 300000 /dev/urandom >/tmp/src/blob
        mksquashfs /tmp/src /home/alice/stick.sqfs -quiet -noappend >/dev/null
        chown alice: /home/alice/stick.sqfs
        chmod 600 /home/alice/stick.sqfs
        # alice without a session is "inactive" for polkit: a rule of the site lets her open.
        cat >/etc/polkit-1/rules.d/50-fsgate-open-test.rules <<'EOF'
polkit.addRule(function(action, subject) {
        if (action.id == "org.fsgate.fsgate1.open" && subject.user == "alice")
                return polkit.Result.YES;
});
EOF
        sleep 1
        mp=$(as_user alice fsgatectl open /home/alice/stick.sqfs) || fail "fsgatectl open as alice: $mp"
        info "opened at: $mp"
        case $mp in /run/fsgate-open/????????????????) ;; *) fail "fsgatectl open printed '$mp'" ;; esac
        unit=$(open_unit_of "$mp")
        expect_unit_active "$unit" active
        assert_eq "$(as_user alice cat "$mp/a dir/Grüße é.txt")" "grüße aus dem Image" "a file with a space and non-ASCII, read as alice"
        assert_eq "$(as_user alice sha256sum "$mp/blob" | cut -d' ' -f1)" \
                "$(sha256sum </tmp/src/blob | cut -d' ' -f1)" "300 kB read back byte for byte"
        is_loaded squashfs && fail "squashfs was loaded by the open"
        pass "squashfs is not in /proc/modules"
        assert_contains "$(findmnt -n -o FSTYPE,OPTIONS "$mp")" "fuse.squashfuse ro,nosuid,nodev,noexec" "findmnt $mp"
        # The driver: the unit's dynamic user, not root, not alice; no capabilities.
        pid=$(unit_prop "$unit" MainPID)
        uid=$(awk '/^Uid:/ {print $2}' /proc/"$pid"/status)
        [ "$uid" != 0 ] && [ "$uid" != 1000 ] || fail "the driver runs as uid $uid"
        assert_eq "$(awk '/^CapEff:/ {print $2}' /proc/"$pid"/status)" 0000000000000000 "the driver's effective capabilities"
        assert_eq "$(awk '/^CapBnd:/ {print $2}' /proc/"$pid"/status)" 0000000000000000 "the driver's bounding set"
        assert_eq "$(awk '/^NoNewPrivs:/ {print $2}' /proc/"$pid"/status)" 1 "the driver's no_new_privs"
        assert_eq "$(awk '/^Seccomp:/ {print $2}' /proc/"$pid"/status)" 2 "the driver's seccomp mode"
        assert_eq "$(readlink /proc/"$pid"/ns/net)" "$(readlink /proc/"$pid"/ns/net)" "sanity"
        [ "$(readlink /proc/"$pid"/ns/net)" != "$(readlink /proc/1/ns/net)" ] || fail "the driver shares the host's network namespace"
        pass "the driver: uid $uid, no capabilities, no_new_privs, seccomp, its own network namespace"
        systemd-analyze security --no-pager "$unit" >/tmp/open-security.txt 2>&1 || true
        cp /tmp/open-security.txt "$FSGATE_RESULTS/open-unit-security.txt"
        exposure=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' /tmp/open-security.txt)
        info "systemd-analyze security $unit: $exposure"
        [ -n "$exposure" ] || fail "no exposure level: $(tail -3 /tmp/open-security.txt)"
        awk -v e="$exposure" 'BEGIN { exit !(e <= 2.0) }' || fail "the open's unit has exposure $exposure > 2.0"
        pass "systemd-analyze security $unit: $exposure <= 2.0"
        assert_contains "$(busctl get-property org.fsgate.fsgate1 /org/fsgate/fsgate1 org.fsgate.fsgate1.Manager OpenMedia)" \
                "$mp" "OpenMedia"

        step "Close: unmounted, its unit and driver gone, when close returns"
        as_user alice fsgatectl close "$mp" || fail "fsgatectl close as alice"
        findmnt "$mp" >/dev/null && fail "$mp is still mounted after close returned"
        [ -e "$mp" ] && fail "$mp is still there after close"
        systemctl is-active -q "$unit" && fail "$unit is still active"
        kill -0 "$pid" 2>/dev/null && fail "the driver (pid $pid) still runs"
        pass "closed: nothing mounted, nothing running, no mountpoint"

        step "ext4 through fuse2fs (libfuse2, the stand-in fusermount) in a unit"
        mkdir -p /tmp/src4 && printf 'ext vier\n' >"/tmp/src4/Datei mit Ümlaut"
        mkfs.ext4 -q -F -d /tmp/src4 /home/alice/stick.ext4 8M
        chown alice: /home/alice/stick.ext4
        mp=$(as_user alice fsgatectl open /home/alice/stick.ext4) || fail "fsgatectl open (ext4): $mp"
        assert_eq "$(as_user alice cat "$mp/Datei mit Ümlaut")" "ext vier" "the ext4 file read as alice"
        assert_contains "$(findmnt -n -o FSTYPE,OPTIONS "$mp")" "fuse.fuse2fs ro,nosuid,nodev,noexec" "findmnt $mp"
        pid=$(unit_prop "$(open_unit_of "$mp")" MainPID)
        step "A driver killed: its unit ends, unmounted, fsgated says so"
        kill -9 "$pid"
        i=0
        while findmnt "$mp" >/dev/null || [ -e "$mp" ]; do
                i=$((i + 1)); [ $i -le 100 ] || fail "$mp still mounted 10 s after its driver died"; sleep 0.1
        done
        i=0
        while busctl get-property org.fsgate.fsgate1 /org/fsgate/fsgate1 org.fsgate.fsgate1.Manager OpenMedia | grep -q "$mp"; do
                i=$((i + 1)); [ $i -le 100 ] || fail "OpenMedia still lists $mp"; sleep 0.1
        done
        pass "the killed driver's mount is gone, and OpenMedia says so"

        step "A device (a read-only loop device) opened by root: the unit opens it after checking it"
        loop=$(losetup -r -f --show /home/alice/stick.sqfs)
        udevadm settle
        mp=$(fsgatectl open "$loop") || fail "fsgatectl open $loop: $mp"
        assert_eq "$(cat "$mp/a dir/Grüße é.txt")" "grüße aus dem Image" "the loop device's file, read as root"
        assert_contains "$(unit_prop "$(open_unit_of "$mp")" DeviceAllow)" "$loop r" "the unit's DeviceAllow"
        fsgatectl close "$loop" || fail "fsgatectl close $loop"
        findmnt "$mp" >/dev/null && fail "$mp is still mounted"
        losetup -d "$loop"
        pass "the loop device's open closed"

        step "A squashfs USB stick opened by alice, then unplugged: its unit stops, nothing is left"
        usb_plug 2
        mp=$(as_user alice fsgatectl open "$USB_DISK_2") || fail "fsgatectl open $USB_DISK_2 as alice: $mp"
        unit=$(open_unit_of "$mp")
        assert_eq "$(as_user alice cat "$mp/Fotos vom Urlaub/Grüße é.txt")" "Grüße vom Stick" "the stick's file, read as alice"
        assert_eq "$(as_user alice sha256sum "$mp/blob" | cut -d' ' -f1)" "$(as_user alice cat "$mp/blob.sha256")" \
                "the stick's 300 kB, byte for byte"
        assert_contains "$(unit_prop "$unit" BindsTo)" "$(systemd-escape --path --suffix=device "$USB_DISK_2")" "$unit BindsTo"
        usb_unplug 2
        i=0
        while findmnt "$mp" >/dev/null || [ -e "$mp" ] || systemctl is-active -q "$unit"; do
                i=$((i + 1)); [ $i -le 100 ] || fail "$unit still active or $mp still there 10 s after the unplug"; sleep 0.1
        done
        pass "the unplugged stick's open ended: unmounted, no mountpoint, no unit"
        is_loaded squashfs && fail "squashfs was loaded"
        rm /etc/polkit-1/rules.d/50-fsgate-open-test.rules
        pass "squashfs never loaded"
}

boot1() {
        step "install"
        # shellcheck disable=SC2046
        run_logged "dpkg -i" dpkg -i $(debs_of "$FSGATE_DEBS")
        open_safely_checks
        journalctl -b -o short-monotonic --no-pager -u fsgated.service -u 'fsgate-open-*' >"$FSGATE_RESULTS/open-journal.txt" 2>&1 || true
        checks_done
}

case $FSGATE_BOOT in
1) boot1 ;;
esac

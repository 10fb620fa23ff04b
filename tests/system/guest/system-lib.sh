# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Helpers for system scenarios (POSIX sh, dash, as root in the systemd-booted guest). Source
#     . "$FSGATE_SYSTEM_LIB"
# It sources tests/vm/guest/lib.sh first (step, pass, fail, check_failed, fs_get,
# expect_state, expect_blocked, blocked_watch_start, ...: see tests/vm/README.md), so the
# verdict conventions are the VM suite's. What differs here: systemd is PID 1, so fsgated
# is started by systemd (bus activation through SystemdService=), polkitd and udevd are
# systemd units, and fsgate comes from its .deb files.

. "$FSGATE_VM_LIB"

MSG_BLOCKED=f300f0bf231648efbb9c6d79d5d67564
MSG_CHANGED=efb905bbe1504e55b29815e87e6c0f5a
MSG_LOADED=8320ed33661a44c3985de4e3bbfdd10d
MSG_REFUSED=d97d19d74e8c4d338aeeb7ba7ea1c3f0

# --- The host ---------------------------------------------------------------------------

# host_request VERB — ask the host for something only it can do (see run-scenario):
#   usb-plug     device_add the USB stick (QEMU usb-storage on the xhci controller)
#   usb-unplug   device_del it
#   usb-plug-2, usb-unplug-2   the same for the second stick (# system-usb-stick-2: LABEL)
#   usb-plug-3, usb-unplug-3   and the third (# system-usb-stick-3: LABEL, squashfs)
# The request is a console line; the host acts within a second or two.
HOST_REQUESTS=0
host_request() {
        HOST_REQUESTS=$((HOST_REQUESTS + 1))
        echo "FSGATE-SYSTEM-REQUEST $FSGATE_NONCE boot=$FSGATE_BOOT seq=$HOST_REQUESTS $1"
}

# usb_plug [2|3] — plug the run's USB stick in (# system-usb-stick: LABEL), or the second or
# third one (# system-usb-stick-N: LABEL), and wait until udev has handled it; USB_DISK is its
# node (/dev/sdX), and so is USB_DISK_1, USB_DISK_2 or USB_DISK_3.
usb_plug() {
        _before=$(ls /dev/disk/by-id/ 2>/dev/null | grep '^usb-' | paste -sd' ' || true)
        host_request "usb-plug${1:+-$1}"
        USB_DISK=
        _i=0
        while [ -z "$USB_DISK" ]; do
                _i=$((_i + 1))
                [ $_i -gt 600 ] && fail "the USB stick did not appear within 60 s"
                sleep 0.1
                for _l in /dev/disk/by-id/usb-*; do
                        [ -e "$_l" ] || continue
                        case $_l in *-part*) continue ;; esac
                        case " $_before " in *" ${_l##*/} "*) continue ;; esac
                        USB_DISK=$(readlink -f "$_l")
                done
        done
        eval "USB_DISK_${1:-1}=\$USB_DISK"
        udevadm settle --timeout=60 || fail "udevadm settle timed out after the plug"
        pass "USB stick plugged in: $USB_DISK ($(udev_prop "$USB_DISK" ID_VENDOR) $(udev_prop "$USB_DISK" ID_MODEL), $(udev_prop "$USB_DISK" ID_FS_TYPE) \"$(udev_prop "$USB_DISK" ID_FS_LABEL)\")"
}

# usb_unplug [2|3] — unplug USB_DISK, or the second or third stick (USB_DISK_2, USB_DISK_3).
usb_unplug() {
        _d=$USB_DISK
        [ -z "${1:-}" ] || eval "_d=\$USB_DISK_$1"
        host_request "usb-unplug${1:+-$1}"
        wait_while 300 "the USB stick $_d did not go away within 30 s" test -b "$_d"
        udevadm settle --timeout=60 || true
        pass "USB stick $_d unplugged"
}

# --- Packages -------------------------------------------------------------------------------

# debs_of DIR — the .deb files in DIR, one per line (all of them: fsgate, fsgate-vendor-blacklist,
# fsgate-notify, cockpit-fsgate and the -dbgsym packages).
debs_of() {
        ls -1 "$1"/*.deb 2>/dev/null || fail "no .deb files in $1"
}

# installed_version PACKAGE — dpkg's version if the package is installed, else "".
installed_version() {
        dpkg-query -W -f='${db:Status-Abbrev} ${Version}\n' "$1" 2>/dev/null | awk '$1 == "ii" {print $2}'
}

# package_status PACKAGE — dpkg's state of it: installed, config-files, not-installed, ...
package_status() {
        _ps=$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null || true)
        echo "${_ps:-not-installed}"
}

# run_logged WHAT CMD... — run CMD, its output indented and kept in /tmp/run.out; fail on error.
run_logged() {
        _what=$1
        shift
        _t0=$(cut -d' ' -f1 /proc/uptime)
        _rc=0
        "$@" >/tmp/run.out 2>&1 || _rc=$?
        sed 's/^/    | /' /tmp/run.out
        [ "$_rc" = 0 ] || fail "$_what: exit status $_rc ($*)"
        pass "$_what ($(awk -v a="$_t0" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN {printf "%.1f", b - a}') s)"
}

# --- systemd and the journal ------------------------------------------------------------

# unit_prop UNIT PROPERTY — one property of a unit, as systemctl show prints it.
unit_prop() {
        systemctl show -P "$2" "$1"
}

# expect_unit_active UNIT STATE — systemctl is-active prints STATE (active, inactive, ...).
expect_unit_active() {
        _s=$(systemctl is-active "$1" 2>/dev/null || true)
        [ "$_s" = "$2" ] || fail "$1 is $_s, expected $2 ($(systemctl status --no-pager "$1" 2>&1 | head -n 12))"
        pass "$1 is $2"
}

# wait_unit_inactive UNIT SECONDS — until systemd says the unit is inactive (its idle exit).
wait_unit_inactive() {
        _i=0
        while [ "$(systemctl is-active "$1" 2>/dev/null || true)" != inactive ]; do
                _i=$((_i + 1))
                [ $_i -gt $(($2 * 2)) ] && fail "$1 still $(systemctl is-active "$1") after $2 s"
                sleep 0.5
        done
        pass "$1 inactive after about $((_i / 2)) s (result: $(unit_prop "$1" Result))"
}

# journal_mark — remember where the journal is now; journal_since_mark ARGS... prints the
# entries since then (journalctl ARGS, e.g. a match or -o json). By time, not by cursor:
# journalctl 252 prints nothing for --after-cursor with a match the cursor's entry does not
# satisfy.
JOURNAL_SINCE=
journal_mark() {
        _us=$(journalctl -n 1 -o export -q 2>/dev/null | sed -n 's/^__REALTIME_TIMESTAMP=//p')
        [ -n "$_us" ] || _us=$(($(date +%s) * 1000000))
        _us=$((_us + 1))
        JOURNAL_SINCE=@$((_us / 1000000)).$(printf %06d $((_us % 1000000)))
}
journal_since_mark() {
        journalctl --no-pager -q --since="$JOURNAL_SINCE" "$@"
}

# journal_wait SECONDS ARGS... — until journal_since_mark ARGS prints something (journald
# stores what it is sent a moment later); prints it. Fails the scenario after SECONDS.
journal_wait() {
        _sec=$1
        shift
        _i=0
        until journal_since_mark "$@" >/tmp/journal-wait.out 2>&1 && [ -s /tmp/journal-wait.out ]; do
                _i=$((_i + 1))
                [ $_i -gt $((_sec * 4)) ] && fail "nothing in the journal within $_sec s for: journalctl $*"
                sleep 0.25
        done
        cat /tmp/journal-wait.out
}

# fsgated_journal ARGS... — this boot's journal entries of fsgated (its unit, and what it logs
# under its own identifier), plus systemd's own lines about fsgated.service.
fsgated_journal() {
        journalctl --no-pager -q -b "$@" _SYSTEMD_UNIT=fsgated.service + SYSLOG_IDENTIFIER=fsgated + UNIT=fsgated.service
}

# fsgated_warnings [MESSAGE-ID...] — fsgated's entries at warning level or above this boot,
# one per line as "MESSAGE_ID PRIORITY MESSAGE" ("-" for no id), leaving out the given ids.
fsgated_warnings() {
        fsgated_journal -p warning -o verbose --output-fields=MESSAGE_ID,PRIORITY,MESSAGE |
                awk -v skip=" $* " '
                function flush() {
                        if (n && index(skip, " " id " ") == 0) print id, prio, msg
                        n = 0; id = "-"; prio = "?"; msg = ""
                }
                BEGIN { n = 0; id = "-" }
                /^[^ \t]/ { flush(); n = 1; next }
                { sub(/^[ \t]+/, "") }
                /^MESSAGE_ID=/ { id = substr($0, 12) }
                /^PRIORITY=/ { prio = substr($0, 10) }
                /^MESSAGE=/ { msg = substr($0, 9) }
                END { flush() }'
}

# expect_no_fsgated_warnings WHAT [MESSAGE-ID...] — nothing at warning level or above from
# fsgated this boot, except the given message ids (e.g. $MSG_BLOCKED where a block was
# provoked).
expect_no_fsgated_warnings() {
        _what=$1
        shift
        _w=$(fsgated_warnings "$@")
        [ -z "$_w" ] || fail "$_what: fsgated logged at warning level or above: $_w"
        pass "$_what: no journal line from fsgated at warning level or above${1:+ (other than ids $*)}"
}

# blocked_journal_count [FIELD=VALUE...] — how many of fsgated's Blocked entries this boot
# (journal matches, e.g. FSGATE_DEVICE=/dev/vdc).
blocked_journal_count() {
        journalctl --no-pager -q -b -o cat MESSAGE_ID=$MSG_BLOCKED "$@" | wc -l
}

# wait_blocked_journal SECONDS FIELD=VALUE... — until fsgated logged a Blocked entry
# matching; BLOCKED_JOURNAL is its message.
wait_blocked_journal() {
        _sec=$1
        shift
        _i=0
        while [ "$(blocked_journal_count "$@")" = 0 ]; do
                _i=$((_i + 1))
                [ $_i -gt $((_sec * 2)) ] && return 1
                sleep 0.5
        done
        BLOCKED_JOURNAL=$(journalctl --no-pager -q -b -o cat MESSAGE_ID=$MSG_BLOCKED "$@" | head -n1)
        return 0
}

# elapsed CMD... — run CMD (output discarded), print its wall time in seconds (3 decimals).
elapsed() {
        _a=$(date +%s%N)
        "$@" >/dev/null 2>&1 || true
        _b=$(date +%s%N)
        awk -v a="$_a" -v b="$_b" 'BEGIN {printf "%.3f\n", (b - a) / 1e9}'
}

# median_time N CMD... — the median wall time of N runs of CMD.
median_time() {
        _n=$1
        shift
        _k=0
        while [ $_k -lt "$_n" ]; do
                elapsed "$@"
                _k=$((_k + 1))
        done | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'
}

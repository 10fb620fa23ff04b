#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The attack "unprivileged users can make the hook spawn root processes without
# limit", in one boot. alice (unprivileged) mounts hfs (vendor-denied) from user namespaces
# of her own: `unshare -Urm mount -t hfs DEV DIR`. The kernel asks modprobe for fs-hfs before
# it checks anything about the device, and modprobe runs fsgate's hook as root each time.
#   a  one attempt: the block is seen as usual, a kernel log line and a Blocked signal.
#   b  the storm: STORM_ATTEMPTS attempts from STORM_LOOPS loops at once, or as many as
#      they make until STORM_SEC after a (under TCG, 1000 take over three minutes, and a
#      busy host slows TCG down several times; the deadline keeps the scenario near two
#      minutes and lets the storm outlast the first window). Each loop is one `unshare -Urm` of alice's running mount again and
#      again (what an attacker would do; the kernel's side of an attempt is the same as
#      with a fresh namespace each time, which costs twice as much here). Checked: at most
#      HOOK_BURST kernel log lines for hfs per window of 60 s (service/hook/hook-ratelimit.h), no
#      more Blocked signals than lines, never two reporting children (the hook's detached
#      fork) for hfs at once, and the storm's end in bounded time. The figures go to the
#      console ("STORM FIGURES:").
#   c  every attempt (a, the storm and c's own) is accounted for exactly once: logged, or
#      counted in the "N more ... suppressed" line that opens the next window. A window that
#      ends during the storm shows that line there; otherwise c waits for the window to end
#      and makes one more attempt, whose line comes right after the summary.
# vm-boots: 1
# vm-timeout: 300

set -eu
# shellcheck source=../guest/lib.sh
. "$FSGATE_VM_LIB"

STORM_ATTEMPTS=1000
STORM_LOOPS=4
HOOK_BURST=3            # service/hook/hook-ratelimit.h
HOOK_WINDOW_SEC=60
STORM_SEC=75            # after a: the loops stop then, if not done before
HFS_SRC=/usr/lib/modprobe.d/60-blacklist_fs-hfs.conf
KLINE="fsgate: blocked autoload of filesystem hfs (module hfs, denied by $HFS_SRC); see: fsgatectl why hfs"
SUMMARY="more blocked autoloads of filesystem hfs (module hfs) suppressed; at most $HOOK_BURST are logged per $HOOK_WINDOW_SEC s"
STATE=/run/fsgate/hook-hfs.state
MNT=/run/fsgate-storm-mnt
STOP=/run/fsgate-storm-stop
PEAKS=/run/fsgate-storm-peaks

uptime_s() {
        cut -d' ' -f1 /proc/uptime
}

kmsg_lines() {
        dmesg | grep -cF -- "$1" || true
}

# summed — the attempts the summary lines so far say were suppressed, in all.
summed() {
        dmesg | sed -n "s/.*fsgate: \([0-9][0-9]*\) $SUMMARY\$/\1/p" | awk '{ n += $1 } END { print n + 0 }'
}

# window_attempts — attempts counted in hfs's current window: the second and third fields of
# the hook's state (struct RateLimitCount: start in ms of CLOCK_BOOTTIME, attempts let
# through, attempts held back since; native u64s).
window_attempts() {
        od -An -t u8 -j 8 -N 16 "$STATE" | awk '{ n += $1 + $2 } END { print n + 0 }'
}

# attempts N [DEADLINE] — as alice, N mounts of hfs from one user and mount namespace of
# her own, or fewer if the uptime reaches DEADLINE (s). Prints how many were made and how
# many of them failed the way a blocked type fails ("unknown filesystem type").
attempts() {
        # shellcheck disable=SC2016 # expanded by the inner sh
        as_user alice unshare -Urm sh -c '
                n=0 i=0
                while [ $i -lt "$1" ]; do
                        read -r up _ </proc/uptime
                        [ "${up%.*}" -lt "$4" ] || break
                        i=$((i + 1))
                        case $(mount -t hfs "$2" "$3" 2>&1) in
                        *"unknown filesystem type"*) n=$((n + 1)) ;;
                        esac
                done
                echo $i $n' sh "$1" "$FSGATE_BLANK_DISK" "$MNT" "${2:-999999}"
}

# is_reporter PID — PID is a live reporting child: the hook's detached fork, which calls
# setsid() (the hook itself runs in modprobe's session, and modprobe in the kernel's).
is_reporter() {
        read -r _rl 2>/dev/null <"/proc/$1/stat" || return 1
        set -f
        # shellcheck disable=SC2086
        set -- $_rl
        set +f
        [ "$2" = "(fsgate-blocked)" ] && [ "$3" != Z ] && [ "$1" = "$6" ]
}

# sample_hooks — until $STOP exists, counts the hook's live processes and, among them, the
# reporting children alive at once. A sweep of /proc is not a snapshot (a reporter seen
# early in it may be gone when the next one is seen), so the reporters a sweep saw count
# only if each is still there after it: then all were alive together. Builtins only in a
# sweep, so that it costs no process of its own. Writes "PEAK_ALL PEAK_REPORTERS SAMPLES".
sample_hooks() {
        _pa=0 _pr=0 _ns=0
        while [ ! -e "$STOP" ]; do
                _a=0 _r=0 _seen=
                for _f in /proc/[0-9]*/stat; do
                        read -r _l 2>/dev/null <"$_f" || continue
                        case $_l in *" (fsgate-blocked) "*) ;; *) continue ;; esac
                        set -f
                        # shellcheck disable=SC2086
                        set -- $_l
                        set +f
                        [ "$3" != Z ] || continue
                        _a=$((_a + 1))
                        [ "$1" != "$6" ] || _seen="$_seen $1"
                done
                for _p in $_seen; do
                        ! is_reporter "$_p" || _r=$((_r + 1))
                done
                [ $_a -le $_pa ] || _pa=$_a
                [ $_r -le $_pr ] || _pr=$_r
                _ns=$((_ns + 1))
                # Not a busy loop: the storm gets the guest's CPUs.
                sleep 0.2
        done
        echo "$_pa $_pr $_ns" >"$PEAKS"
}

# reporters_left — reporting children alive now.
reporters_left() {
        _n=0
        for _f in /proc/[0-9]*; do
                ! is_reporter "${_f#/proc/}" || _n=$((_n + 1))
        done
        echo $_n
}

step "the starting point"
assert_bus_activated
expect_state hfs denied vendor "$HFS_SRC"
command -v unshare >/dev/null || fail "unshare is not in the image"
info "kernel.unprivileged_userns_clone = $(cat /proc/sys/kernel/unprivileged_userns_clone 2>/dev/null || echo 'n/a')," \
        "user.max_user_namespaces = $(cat /proc/sys/user/max_user_namespaces)"
assert_eq "$(as_user alice unshare -Urm id -u)" 0 "alice's uid in a user namespace of her own"
mkdir -p "$MNT"
assert_eq "$(kmsg_lines 'fsgate: ')" 0 "fsgate lines in the kernel log"
blocked_watch_start

step "a: one attempt, as alice: unshare -Urm mount -t hfs $FSGATE_BLANK_DISK $MNT"
T_A=$(uptime_s)
_rc=0
_out=$(as_user alice unshare -Urm mount -t hfs "$FSGATE_BLANK_DISK" "$MNT" 2>&1) || _rc=$?
[ "$_rc" != 0 ] || fail "alice mounted hfs"
assert_contains "$_out" "unknown filesystem type 'hfs'" "alice's mount"
is_loaded hfs && fail "hfs got loaded"
expect_blocked_signal "('hfs', 'hfs', '',"
assert_eq "$BLOCKED_SIGNAL" "Blocked ('hfs', 'hfs', '', {'source': <'$HFS_SRC'>, 'origin': <'vendor'>, 'cause': <'kernel'>})" \
        "the Blocked signal"
assert_eq "$(kmsg_lines "$KLINE")" 1 "kernel log lines for hfs"
info "$(ls -ld /run/fsgate); the hook's state: $(cd /run/fsgate && echo hook-*)"
[ -z "$(find /run/fsgate -maxdepth 1 -name 'hook-*' \( ! -perm 0600 -o ! -user root -o ! -type f \))" ] ||
        check_failed "a hook state file is not a 0600 file of root's: $(ls -l /run/fsgate)"

DEADLINE=$(echo "$T_A $STORM_SEC" | awk '{ printf "%d", $1 + $2 }')
step "b: the storm, $STORM_ATTEMPTS attempts from $STORM_LOOPS loops at once (until $DEADLINE s at most)"
rm -f "$STOP" "$PEAKS" /run/fsgate-storm-loop.*
sample_hooks &
SAMPLER=$!
t0=$(uptime_s)
l=0
while [ $l -lt $STORM_LOOPS ]; do
        l=$((l + 1))
        attempts $((STORM_ATTEMPTS / STORM_LOOPS)) "$DEADLINE" >/run/fsgate-storm-loop.$l &
done
# Each loop writes its one line when done: at the deadline, plus its last attempt.
while [ "$(cat /run/fsgate-storm-loop.* | wc -l)" -lt $STORM_LOOPS ]; do
        [ "$(uptime_s | cut -d. -f1)" -lt $((DEADLINE + 60)) ] || fail "the storm's loops did not stop at their deadline"
        sleep 0.5
done
t1=$(uptime_s)
MADE=$(cat /run/fsgate-storm-loop.* | awk '{ n += $1 } END { print n }')
REFUSED=$(cat /run/fsgate-storm-loop.* | awk '{ n += $2 } END { print n }')
# The last reporter finishes (it gives up after 15 s), still sampled.
i=0
while [ "$(reporters_left)" != 0 ]; do
        i=$((i + 1))
        [ $i -le 40 ] || fail "reporting children still alive 20 s after the storm"
        sleep 0.5
done
touch "$STOP"
wait "$SAMPLER"
read -r PEAK_ALL PEAK_REPORTERS SAMPLES <"$PEAKS"
sleep 1 # the last signal on its way to the subscriber
LINES=$(kmsg_lines "$KLINE")
SUMMARIES=$(kmsg_lines "$SUMMARY")
SIGNALS=$(blocked_count "('hfs', 'hfs', '',")
TOOK=$(echo "$t0 $t1" | awk '{ printf "%.1f", $2 - $1 }')
ROLLS_MAX=$(echo "$T_A $t1 $HOOK_WINDOW_SEC" | awk '{ printf "%d", ($2 - $1) / $3 }')
echo "STORM FIGURES: attempts=$MADE loops=$STORM_LOOPS refused=$REFUSED time=${TOOK}s" \
        "kmsg_lines=$LINES summary_lines=$SUMMARIES blocked_signals=$SIGNALS" \
        "peak_hook_processes=$PEAK_ALL peak_reporting_children=$PEAK_REPORTERS samples=$SAMPLES"
dmesg | grep -F "fsgate: " | sed 's/^/    dmesg: /'
# Enough to be a storm even on a host busy enough to slow TCG down tenfold.
[ "$MADE" -ge 30 ] || check_failed "only $MADE attempts in the storm"
assert_eq "$REFUSED" "$MADE" "storm attempts refused with 'unknown filesystem type'"
is_loaded hfs && fail "hfs got loaded"
[ "$SUMMARIES" -le "$ROLLS_MAX" ] ||
        check_failed "$SUMMARIES summary lines, yet only $ROLLS_MAX window(s) of $HOOK_WINDOW_SEC s can have ended"
[ "$LINES" -le $((HOOK_BURST * (SUMMARIES + 1))) ] ||
        check_failed "$LINES kernel log lines for hfs in $((SUMMARIES + 1)) window(s): more than $HOOK_BURST per window"
if [ "$SIGNALS" -lt 1 ] || [ "$SIGNALS" -gt "$LINES" ]; then
        check_failed "$SIGNALS Blocked signals for hfs, for $LINES kernel log lines"
fi
[ "$PEAK_REPORTERS" -le 1 ] || check_failed "$PEAK_REPORTERS reporting children for hfs alive at once"
[ "$SAMPLES" -ge 10 ] || check_failed "only $SAMPLES samples of the hook's processes"
[ "$PEAK_ALL" -le $((2 * STORM_LOOPS + 2)) ] ||
        check_failed "$PEAK_ALL hook processes at once, for $STORM_LOOPS loops (a sweep of /proc may count a few that only came one after the other)"
pass "the storm: $LINES kernel log lines, $SUMMARIES summaries, $SIGNALS Blocked signals, at most $PEAK_REPORTERS reporting child"

step "c: every attempt logged or summed up, once"
CUR=$(window_attempts)
info "this window has counted $CUR attempt(s) so far"
if [ "$SUMMARIES" = 0 ]; then
        # The next window's first attempt sums this one up: wait until it has ended.
        ends=$(od -An -t u8 -N 8 "$STATE" | awk '{ printf "%d", $1 / 1000 + '"$HOOK_WINDOW_SEC"' + 1 }')
        info "the storm fit in one window: waiting until it ends at $ends s of uptime"
        while [ "$(uptime_s | cut -d. -f1)" -lt "$ends" ]; do
                sleep 1
        done
        assert_eq "$(attempts 1)" "1 1" "attempts made and refused with 'unknown filesystem type'"
        assert_eq "$(dmesg | grep -F "fsgate: " | tail -n 2 | sed -n '1s/.*fsgate: \([0-9]*\) more.*/\1/p')" \
                "$((CUR - HOOK_BURST))" "the count in the line that opens the new window"
        assert_contains "$(dmesg | grep -F "fsgate: " | tail -n 1)" "$KLINE" "the line after it"
        assert_eq "$(window_attempts)" 1 "attempts counted in the new window"
        LINES=$(kmsg_lines "$KLINE")
        TOTAL=$((MADE + 2))
        CUR=1
else
        TOTAL=$((MADE + 1))
        # Each summary line opens a window: the attempt that opened it comes right after.
        [ "$(dmesg | grep -F "fsgate: " | grep -A1 -F -- "$SUMMARY" | grep -cF -- "$KLINE")" = "$SUMMARIES" ] ||
                check_failed "a summary line not followed by the line of the attempt that opened the window"
fi
SUPPRESSED_NOW=$((CUR > HOOK_BURST ? CUR - HOOK_BURST : 0))
echo "ACCOUNTING: $LINES logged + $(summed) summed up + $SUPPRESSED_NOW suppressed in the open window = $TOTAL attempts?"
assert_eq "$((LINES + $(summed) + SUPPRESSED_NOW))" "$TOTAL" "attempts logged, summed up or counted in the open window"
blocked_watch_stop
checks_done

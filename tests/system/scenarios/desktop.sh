#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A desktop user's minute, for real. An unprivileged user (alice, an admin for
# polkit through group sudo, as Debian's installer makes the first user) logs in on tty1 by
# autologin; her ~/.profile starts sway (headless backend, pixman: no GPU under QEMU), whose
# config starts lxpolkit (the session's polkit agent) and the user's graphical-session.target,
# which wants mako.service (the notification server; enabled globally by Debian's
# mako-notifier) and fsgate-notify.service (enabled globally by fsgate's package). Nothing here talks to fsgate-notify directly: the test plays the person
# with the tools a person's clicks and keys amount to (makoctl invoke, wtype) and looks
# with makoctl list and grim (the screenshots are kept in $FSGATE_RESULTS).
# Boot 1 (English):
#   - the session is active and local for logind and polkit; the agent is registered
#   - a USB stick with HFS (labelled) is hot-plugged: ONE notification, naming the stick,
#     also after a file manager's mount attempt and a second stick with the same filesystem
#   - Allow, a wrong password: lxpolkit says so, nothing changed; then the right password:
#     the mask in /etc/modprobe.d, the notifier mounts both sticks through udisks2 and says
#     where; a file written to the stick reads back
#   - the filesystem is allowed now: a stick plugged in again shows nothing
#   - Open safely: squashfs denied, a squashfs stick (a FUSE route: the VM route would take a
#     minute under TCG) offers it; the click, and alice reads its files through squashfuse
#     in its transient unit (her terminal lists them on screen), squashfs never loaded; the
#     unplug ends it
# Boot 2 (alice's session in German, de_DE.UTF-8; hfs back to the vendor's denial):
#   - the notification and the dialog in German; Allow once loads hfs for this boot, the
#     configuration unchanged, the stick mounted
# Boot 3 (English again): after the reboot hfs is denied again and not loaded; the stick, Allow,
#   and the person closes the dialog: nothing changes, the notifier says so and still offers
#   Allow, which asks again. Open read-only on it: the password, the stick mounted read-only
#   (a write fails), hfs loaded, the configuration unchanged; a second stick with hfs is hidden
#   from udisks2 (UDISKS_IGNORE) and asks instead of mounting; the first stick unplugged:
#   its grant ends and hfs is unloaded (GRANT FIGURES: how long after the unplug).
#   Then no notification server (mako gone): the second stick waits quietly, and is not shown
#   late when mako comes back more than a minute later.
# system-boots: 3
# system-timeout: 1800
# system-usb-stick: FSGATE STICK
# system-usb-stick-2: OTHER STICK
# system-usb-stick-3: SQUASH
# system-usb-stick-3-type: squashfs

set -eu
# shellcheck source=../guest/system-lib.sh
. "$FSGATE_SYSTEM_LIB"

E=/etc/modprobe.d
ALICE_UID=1000
RT=/run/user/$ALICE_UID
# Typed by wtype into lxpolkit's dialog: plain ASCII, nothing a keymap could change.
ALICE_PASSWORD=fsgate-desk-42
WRONG_PASSWORD=not-her-password
SHOTS=/tmp/fsgate-shots
# Polled state costs ~0.1 s a process under TCG: poll once a second.

# --- alice's session, seen from outside ------------------------------------------------------

# The session's variables as sway gave them to its children (mako's environment): sway sets
# them in its own process after it started, where /proc does not show them.
session_env() {
        _pid=$(pgrep -u "$ALICE_UID" -x mako | head -n1)
        [ -n "$_pid" ] || return 1
        _env=$(tr '\0' '\n' <"/proc/$_pid/environ")
        WAYLAND_DISPLAY_A=$(echo "$_env" | sed -n 's/^WAYLAND_DISPLAY=//p')
        SWAYSOCK_A=$(echo "$_env" | sed -n 's/^SWAYSOCK=//p')
        DISPLAY_A=$(echo "$_env" | sed -n 's/^DISPLAY=//p')
        [ -n "$WAYLAND_DISPLAY_A" ] && [ -n "$SWAYSOCK_A" ]
}

# as_alice CMD... — CMD as alice inside her session's environment (not in her logind
# session: what polkit makes of that is the notifier's case too, a user unit).
as_alice() {
        setpriv --reuid=$ALICE_UID --regid=$ALICE_UID --init-groups -- env -i \
                HOME=/home/alice USER=alice LOGNAME=alice PATH=/usr/local/bin:/usr/bin:/bin \
                LANG="${ALICE_LANG:-C.UTF-8}" XDG_RUNTIME_DIR=$RT DBUS_SESSION_BUS_ADDRESS=unix:path=$RT/bus \
                WAYLAND_DISPLAY="${WAYLAND_DISPLAY_A:-}" SWAYSOCK="${SWAYSOCK_A:-}" DISPLAY="${DISPLAY_A:-}" "$@"
}

# as_alice_unit CMD... — CMD as a transient unit of alice's user manager, output piped back:
# where a desktop's own helpers run (gvfs's udisks2 monitor is a user unit too). polkit counts
# a user unit as part of alice's active session; a process of this scenario's system service
# running as alice, it does not.
as_alice_unit() {
        as_alice systemd-run --user --quiet --wait --pipe --collect -- "$@"
}

# wait_for SECONDS CMD... — until CMD succeeds (once a second); 1 if it never did.
wait_for() {
        _wf=$1
        shift
        while ! "$@" >/dev/null 2>&1; do
                _wf=$((_wf - 1))
                [ "$_wf" -gt 0 ] || return 1
                sleep 1
        done
}

# mako_list — mako's notifications, one a line: ID <tab> APP <tab> SUMMARY <tab> BODY (lines
# joined by " | ") <tab> ACTION-KEYS (comma-separated). makoctl list is busctl's JSON of
# ListNotifications (aa{sv}); the raw text is kept in /tmp/mako-list.json.
mako_list() {
        as_alice makoctl list >/tmp/mako-list.json 2>&1 || return 1
        jq -r '(.data[0] // [])[] | [
                (.id.data | tostring), (.["app-name"].data // ""), (.summary.data // ""),
                ((.body.data // "") | gsub("\n"; " | ")),
                ((.actions.data // {}) | if type == "object" then (keys_unsorted | join(",")) else (map(tostring) | join(",")) end)
        ] | @tsv' /tmp/mako-list.json
}

# fsgate_notes — fsgate-notify's notifications in mako (app name "fsgate").
fsgate_notes() {
        mako_list | awk -F'\t' '$2 == "fsgate"'
}

# expect_notes N WHAT — fsgate shows exactly N notifications now: WHAT passes, or the check
# fails with the summaries shown.
expect_notes() {
        local n
        n=$(fsgate_notes | wc -l)
        if [ "$n" = "$1" ]; then
                pass "$2"
        else
                check_failed "$n notification(s), expected $1 ($2): $(fsgate_notes | paste -sd'|')"
        fi
}

# wait_note SECONDS TEXT [REGEX] — until one of fsgate's notifications has TEXT in its summary
# (or, given, a summary that REGEX, an awk ERE, matches);
# NOTE_ID, NOTE_SUMMARY, NOTE_BODY, NOTE_ACTIONS are the newest such one's. 1 if none came.
wait_note() {
        _wn=$1
        while :; do
                _line=$(fsgate_notes | awk -F'\t' -v t="$2" -v re="${3:-}" \
                        '(re != "" ? $3 ~ re : index($3, t)) && $1 + 0 > best { best = $1 + 0; l = $0 } END { print l }')
                [ -z "$_line" ] || break
                _wn=$((_wn - 1))
                [ "$_wn" -gt 0 ] || return 1
                sleep 1
        done
        NOTE_ID=$(echo "$_line" | cut -f1)
        NOTE_SUMMARY=$(echo "$_line" | cut -f3)
        NOTE_BODY=$(echo "$_line" | cut -f4)
        NOTE_ACTIONS=$(echo "$_line" | cut -f5)
        info "notification $NOTE_ID: $NOTE_SUMMARY"
        info "    body: $NOTE_BODY"
        info "    actions: $NOTE_ACTIONS"
}

# expect_note SECONDS TEXT WHAT — wait_note, failing the scenario if nothing came.
expect_note() {
        wait_note "$1" "$2" ||
                fail "$3: no notification from fsgate with \"$2\" within $1 s; mako shows: $(mako_list | paste -sd'|')"
        pass "$3: mako shows \"$NOTE_SUMMARY\""
}

# choices ID ACTION — "Other choices…" (the default action) on notification ID, then until
# fsgate's newest notification offers ACTION (issue 41: at most three buttons, Allow and Allow
# once behind it); NOTE_* are that one's.
choices() {
        as_alice makoctl invoke -n "$1" default || fail "makoctl invoke -n $1 default"
        _ch=30
        until wait_note 1 "" '.' && case ",$NOTE_ACTIONS," in *",$2,"*) true ;; *) false ;; esac; do
                _ch=$((_ch - 1))
                [ "$_ch" -gt 0 ] || fail "no notification offering $2 within 30 s of Other choices: $(fsgate_notes | paste -sd'|')"
                sleep 1
        done
        pass "Other choices… offers $2: $NOTE_SUMMARY ($NOTE_ACTIONS)"
}

# screenshot NAME — grim of the whole output, kept as $FSGATE_RESULTS/NAME.png. A second
# first: mako and Xwayland draw a frame after their state changed.
screenshot() {
        sleep 1
        if as_alice grim "$SHOTS/$1.png" 2>/tmp/grim.err; then
                cp "$SHOTS/$1.png" "$FSGATE_RESULTS/$1.png"
                pass "screenshot $1.png ($(wc -c <"$FSGATE_RESULTS/$1.png") bytes)"
        else
                check_failed "grim $1.png: $(cat /tmp/grim.err)"
        fi
}

# x_windows — sway's windows: CON-ID <tab> CLASS-OR-APP-ID <tab> TITLE <tab> FOCUSED
x_windows() {
        as_alice swaymsg -r -t get_tree | jq -r '.. | objects | select(.type? == "con" or .type? == "floating_con")
                | select(.pid? != null)
                | [(.id | tostring), (.window_properties.class // .app_id // ""), (.name // ""), (.focused | tostring)] | @tsv'
}

# agent_windows — how many of lxpolkit's windows are open (its dialog, its error box).
agent_windows() {
        x_windows | awk -F'\t' 'tolower($2) ~ /polkit/' | wc -l
}

# wait_agent_windows SECONDS N — until lxpolkit has N windows open.
wait_agent_windows() {
        _wa=$1
        while [ "$(agent_windows)" != "$2" ]; do
                _wa=$((_wa - 1))
                [ "$_wa" -gt 0 ] || return 1
                sleep 1
        done
}

# focus_agent — keyboard focus on lxpolkit's newest window (sway focuses a new window; a
# person would click it if not).
focus_agent() {
        _con=$(x_windows | awk -F'\t' 'tolower($2) ~ /polkit/ {id = $1} END {print id}')
        [ -z "$_con" ] || as_alice swaymsg "[con_id=$_con] focus" >/dev/null 2>&1 || true
}

# type_keys TEXT — what a person types, then Return: wtype (the Wayland virtual keyboard,
# which sway routes to the focused window, Xwayland's too). TYPED_WITH says which tool.
# xdotool (XTEST inside Xwayland) only if the dialog showed no reaction to wtype.
TYPED_WITH=wtype
type_keys() {
        focus_agent
        as_alice wtype -s 300 -d 20 "$1" -k Return -s 300
}

# press_key KEY — one key (Return, Escape) on lxpolkit's focused window. wtype's virtual
# keyboard brings its own keymap: a pause before the key gives Xwayland time to take it,
# one after keeps the keyboard until the key is delivered.
press_key() {
        focus_agent
        as_alice wtype -s 300 -k "$1" -s 300
}

# press_until KEY N WHAT — press KEY until lxpolkit has N windows; xdotool (XTEST inside
# Xwayland) if wtype's key showed no effect (recorded as a failure: a person's key would).
press_until() {
        press_key "$1"
        wait_agent_windows 15 "$2" && { pass "$3 ($1, wtype)"; return 0; }
        check_failed "$3: wtype's $1 had no effect within 15 s (windows: $(x_windows | paste -sd'|')); trying xdotool"
        focus_agent
        as_alice xdotool key "$1" || true
        wait_agent_windows 15 "$2" || fail "$3: xdotool's $1 had no effect either: $(x_windows | paste -sd'|')"
        pass "$3 ($1, xdotool)"
}

# plug_stick [2] — usb_plug, as a person plugs a stick: fsgated may have exited idle (after
# 30 s), and its bus activation under TCG (~4 s) is longer than the udev hook's budget, so
# the report may come through the hook's hand-over to fsgate-report-device@.service. The udev
# report itself is checked (the journal's Blocked entry for the device) before anything is
# asked of the notifier.
plug_stick() {
        usb_plug "$@"
        wait_blocked_journal 60 "FSGATE_DEVICE=$USB_DISK" ||
                fail "fsgated logged no Blocked for $USB_DISK within 60 s of the plug: udev's report did not arrive"
        pass "fsgated reported the stick: $BLOCKED_JOURNAL"
}

# --- The session, as a person's login makes it ----------------------------------------------

setup_session() {
        step "alice: an admin for polkit (group sudo) with a password; autologin on tty1 starting sway"
        echo "alice:$ALICE_PASSWORD" | chpasswd
        usermod -a -G sudo alice
        # Debian 12's polkitd 122: addAdminRule in 50-default.rules.
        grep -qs 'unix-group:sudo' /usr/share/polkit-1/rules.d/*.rules /etc/polkit-1/rules.d/*.rules ||
                fail "no polkit rule making group sudo the admins"
        pass "alice is in group sudo: $(id alice)"

        # A person who wants sway on the first VT puts this at the end of ~/.profile.
        cat >>/home/alice/.profile <<'PROFILE'

# The first VT's login starts the compositor: sway, headless (no GPU, no input devices),
# rendering in software. Its log stays in ~/sway.log.
if [ "$(tty)" = /dev/tty1 ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
        export WLR_BACKENDS=headless WLR_RENDERER=pixman WLR_LIBINPUT_NO_DEVICES=1
        export XDG_CURRENT_DESKTOP=sway XDG_SESSION_DESKTOP=sway
        exec sway >"$HOME/sway.log" 2>&1
fi
PROFILE
        mkdir -p /home/alice/.config/sway /home/alice/.config/mako /home/alice/.config/systemd/user
        cat >/home/alice/.config/sway/config <<'SWAY'
# One 1280x800 output; the session's services: lxpolkit (the polkit agent, an X11 client
# shown by Xwayland), then graphical-session.target for the user's systemd, which wants
# mako.service and fsgate-notify.service (their packages enable them for every user).
output HEADLESS-1 resolution 1280x800 background #2e3440 solid_color
font pango:DejaVu Sans 10
focus_on_window_activation focus
for_window [class="(?i)polkit"] floating enable
exec lxpolkit
exec "systemctl --user import-environment DISPLAY WAYLAND_DISPLAY SWAYSOCK XDG_CURRENT_DESKTOP && systemctl --user start sway-session.target"
SWAY
        # The sway wiki's way to have graphical-session.target (it refuses a manual start).
        cat >/home/alice/.config/systemd/user/sway-session.target <<'TARGET'
[Unit]
Description=sway session
BindsTo=graphical-session.target
Wants=graphical-session-pre.target
After=graphical-session-pre.target
TARGET
        cat >/home/alice/.config/mako/config <<'MAKO'
font=DejaVu Sans 11
width=520
height=300
margin=16
padding=12
default-timeout=0
MAKO
        chown -R alice:alice /home/alice

        # The image masks the console getty (no login prompt in the other scenarios); here a
        # real login: agetty's autologin, the way a kiosk or a single-user machine does it.
        mkdir -p /etc/systemd/system/getty@tty1.service.d
        cat >/etc/systemd/system/getty@tty1.service.d/autologin.conf <<'GETTY'
[Service]
ExecStart=
ExecStart=-/sbin/agetty --autologin alice --noclear %I $TERM
GETTY
        systemctl unmask getty@tty1.service >/dev/null 2>&1
        systemctl enable getty@tty1.service >/dev/null 2>&1
        systemctl daemon-reload
        systemctl start getty@tty1.service
        pass "getty@tty1 started with autologin for alice"
}

SESSION=
wait_session() {
        step "alice's graphical session"
        _t0=$(cut -d' ' -f1 /proc/uptime)
        wait_for 120 sh -c "loginctl list-sessions --no-legend | grep -qw alice" ||
                fail "no logind session for alice within 120 s: $(systemctl status --no-pager getty@tty1.service 2>&1 | tail -n 8)"
        SESSION=$(loginctl list-sessions --no-legend | awk '$3 == "alice" {print $1; exit}')
        # State is "opening" until pam_systemd's user manager is up.
        wait_for 60 sh -c "[ \"\$(loginctl show-session $SESSION -p State)\" = State=active ]" || true
        for p in Active=yes Remote=no Seat=seat0 TTY=tty1 Class=user State=active; do
                v=$(loginctl show-session "$SESSION" -p "${p%%=*}")
                [ "$v" = "$p" ] || fail "session $SESSION: $v, expected $p ($(loginctl show-session "$SESSION" 2>&1 | paste -sd' '))"
        done
        pass "logind session $SESSION of alice: active, local, seat0, tty1"

        wait_for 180 session_env ||
                fail "sway and mako did not come up within 180 s; sway.log: $(tail -n 30 /home/alice/sway.log 2>&1)"
        pass "sway runs (WAYLAND_DISPLAY=$WAYLAND_DISPLAY_A, DISPLAY=$DISPLAY_A), mako runs"
        wait_for 60 as_alice busctl --user status org.freedesktop.Notifications ||
                fail "nobody owns org.freedesktop.Notifications on alice's session bus"
        pass "mako owns org.freedesktop.Notifications ($(as_alice makoctl list >/dev/null 2>&1 && echo makoctl answers))"
        wait_for 90 sh -c "journalctl -b -q --no-pager -u polkit.service -g 'Registered Authentication Agent for unix-session:$SESSION' | grep -q ." ||
                fail "no polkit agent registered for session $SESSION within 90 s: $(journalctl -b -q --no-pager -u polkit.service | tail -n 5)"
        pass "$(journalctl -b -q --no-pager -o cat -u polkit.service -g "Registered Authentication Agent for unix-session:$SESSION" | tail -n1)"
        wait_for 90 sh -c "[ \"\$(setpriv --reuid=$ALICE_UID --regid=$ALICE_UID --init-groups env XDG_RUNTIME_DIR=$RT systemctl --user is-active fsgate-notify.service)\" = active ]" ||
                fail "fsgate-notify.service is not active: $(as_alice systemctl --user status --no-pager fsgate-notify.service 2>&1 | tail -n 12)"
        pass "fsgate-notify.service active in alice's user manager ($(as_alice systemctl --user is-enabled fsgate-notify.service 2>&1): enabled globally by the package; after $(awk -v a="$_t0" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN {printf "%.0f", b - a}') s)"
        failed=$(as_alice systemctl --user list-units --failed --plain --no-legend 2>&1)
        if [ -z "$failed" ]; then
                pass "no failed unit in alice's user manager"
        else
                check_failed "failed units in alice's user manager: $(echo "$failed" | paste -sd'|')"
        fi
        NOTIFY_PID=$(as_alice systemctl --user show -P MainPID fsgate-notify.service)
        SWAY_PID=$(pgrep -u "$ALICE_UID" -x sway | head -n1)

        # allow_active=yes: pkcheck says yes only for a subject in an active local session.
        # The notifier is a user unit, outside the session: polkit must still count it as
        # alice's active session (logind's "display" session), else it would ask for nothing.
        for who in "sway:$SWAY_PID" "fsgate-notify:$NOTIFY_PID"; do
                if out=$(pkcheck --action-id org.freedesktop.udisks2.filesystem-mount --process "${who#*:}" 2>&1); then
                        pass "polkit: ${who%%:*} (pid ${who#*:}) is in an active local session (filesystem-mount: allow_active)"
                else
                        fail "polkit does not see ${who%%:*} (pid ${who#*:}) in an active session: $out"
                fi
        done
        screenshot "${SHOT_PREFIX}00-desktop"
}

# --- Boot 1 -------------------------------------------------------------------------------------

boot1() {
        step "fsgate's packages"
        # shellcheck disable=SC2046
        run_logged "dpkg -i of every .deb" dpkg -i $(debs_of "$FSGATE_DEBS")
        [ -L /etc/systemd/user/graphical-session.target.wants/fsgate-notify.service ] ||
                fail "fsgate-notify.service is not enabled globally: $(ls -l /etc/systemd/user/*.wants/ 2>&1)"
        pass "fsgate-notify.service enabled for every user ($(readlink /etc/systemd/user/graphical-session.target.wants/fsgate-notify.service))"
        expect_state hfs denied vendor
        is_loaded hfs && fail "hfs is loaded already"

        setup_session
        SHOT_PREFIX=
        wait_session

        step "A USB stick with HFS: one notification, naming the stick"
        journal_mark
        plug_stick
        # A file on the stick, written with hfsutils (user space, no kernel module): what
        # the stick brings along, to be read back through the kernel's hfs after the Allow.
        printf 'Hello from the stick\n' >/tmp/hello.txt
        { hmount "$USB_DISK_1" && hcopy -r /tmp/hello.txt :hello.txt && humount; } >/tmp/hcopy.out 2>&1 ||
                fail "hcopy to the stick: $(cat /tmp/hcopy.out)"
        udevadm settle --timeout=60 || true
        pass "hello.txt written to the stick's HFS with hcopy"
        expect_note 90 "FSGATE STICK" "the stick's notification"
        FIRST_ID=$NOTE_ID
        assert_contains "$NOTE_SUMMARY" '“FSGATE STICK” was not mounted' "the summary"
        assert_contains "$NOTE_BODY" "hfs" "the body"
        # The kernel source's word on hfs (data/risk), as mako shows it.
        assert_contains "$NOTE_BODY" "hfs: orphaned upstream" "the body's risk phrase"
        for a in open-read-only choices; do
                case ",$NOTE_ACTIONS," in
                *",$a,"*) pass "the notification offers the action $a" ;;
                *) check_failed "the notification has no action $a: $NOTE_ACTIONS" ;;
                esac
        done
        screenshot 01-notification

        # What a file manager's automount does at the plug: the same stick, a failed mount
        # (Blocked for the type, no device): the same notification, not a second one.
        out=$(as_alice_unit udisksctl mount --no-user-interaction -b "$USB_DISK_1" 2>&1) &&
                fail "udisksctl mount of the blocked stick succeeded: $out"
        info "udisksctl mount as alice (a file manager's automount): $out"
        case $out in
        *NotAuthorized*) check_failed "udisks2 refused alice's mount as unauthorized (not the session's?): $out" ;;
        esac
        sleep 5
        expect_notes 1 "still one notification after the failed mount (the udev report and the mount are one item)"

        step "A second stick with the same filesystem while the question is open: no second notification"
        plug_stick 2
        sleep 8
        expect_notes 1 "still one notification with two sticks plugged in"
        info "fsgate-notify: $(journal_since_mark -t fsgate-notify -o cat -g 'joins|Already' | paste -sd'|')"

        step "Allow, then a wrong password: lxpolkit says so, nothing changes"
        config_snapshot >/tmp/snapshot.before
        journal_mark
        choices "$FIRST_ID" allow
        as_alice makoctl invoke -n "$NOTE_ID" allow || fail "makoctl invoke -n $NOTE_ID allow"
        wait_agent_windows 90 1 || fail "lxpolkit's dialog did not open within 90 s: windows: $(x_windows | paste -sd'|')"
        info "windows: $(x_windows | paste -sd'|')"
        pass "lxpolkit asks: $(x_windows | awk -F'\t' 'tolower($2) ~ /polkit/ {print $3}' | head -n1)"
        screenshot 02-password-dialog
        type_keys "$WRONG_PASSWORD"
        # PAM's delay after a failure, then lxpolkit's "Authentication failed" box over the dialog.
        if wait_agent_windows 30 2; then
                pass "lxpolkit says the password was wrong (typed with $TYPED_WITH)"
        else
                # No reaction: wtype's keys did not reach the X11 dialog. The same keys through
                # Xwayland's own XTEST.
                TYPED_WITH=xdotool
                check_failed "no reaction of lxpolkit to wtype within 30 s (windows: $(x_windows | paste -sd'|')); trying xdotool"
                as_alice xdotool type --delay 30 "$WRONG_PASSWORD" && as_alice xdotool key Return
                wait_agent_windows 30 2 || fail "lxpolkit showed no error for a wrong password typed with xdotool either"
                pass "lxpolkit says the password was wrong (typed with xdotool)"
        fi
        screenshot 03-wrong-password
        assert_config_unchanged /tmp/snapshot.before "after the wrong password"
        expect_state hfs denied vendor
        is_loaded hfs && fail "hfs is loaded after a wrong password"
        findmnt -n -S "$USB_DISK_1" >/dev/null && fail "the stick is mounted after a wrong password"
        pass "hfs not loaded, the stick not mounted"
        press_until Return 1 "OK on the error box: lxpolkit asks again"

        step "The right password: allowed, and the notifier mounts the sticks through udisks2"
        type_keys "$ALICE_PASSWORD"
        wait_agent_windows 60 0 || fail "lxpolkit's dialog still open 60 s after the right password: $(x_windows | paste -sd'|')"
        pass "the dialog closed after the password"
        wait_for 30 test -L "$(conf_of $E hfs)" || fail "no $(conf_of $E hfs) within 30 s of the password"
        assert_mask "$(conf_of $E hfs)"
        expect_state hfs allowed admin
        info "fsgated: $(fsgated_journal -o cat --since="$JOURNAL_SINCE" | tail -n 3 | paste -sd'|')"

        # The promise: no second step for the person. (Fails until fsgate-notify mounts
        # after an Allow; then there is no mount and no "is mounted" notification.)
        if wait_for 60 findmnt -n -S "$USB_DISK_1"; then
                WHERE1=$(findmnt -n -o TARGET -S "$USB_DISK_1")
                pass "the stick is mounted at $WHERE1 ($(findmnt -n -o FSTYPE,OPTIONS -S "$USB_DISK_1"))"
                case $WHERE1 in
                /media/alice/*) pass "mounted by udisks2 for alice" ;;
                *) check_failed "mounted at $WHERE1, not under /media/alice (udisks2 for alice)" ;;
                esac
                got=$(as_alice cat "$WHERE1/hello.txt" 2>&1) || true
                assert_eq "$got" "Hello from the stick" "hello.txt read back by alice"
        else
                check_failed "the stick $USB_DISK_1 was not mounted within 60 s of the Allow (fsgate-notify: $(journal_since_mark -t fsgate-notify -o cat | tail -n 6 | paste -sd'|'))"
        fi
        if wait_for 20 findmnt -n -S "$USB_DISK_2"; then
                pass "the second stick is mounted too, at $(findmnt -n -o TARGET -S "$USB_DISK_2")"
        else
                check_failed "the second stick $USB_DISK_2 was not mounted after the Allow"
        fi
        # Both sticks were mounted: the summary names both (issue 41 item 3).
        if wait_note 60 "are mounted"; then
                assert_contains "$NOTE_SUMMARY" '“FSGATE STICK” and “OTHER STICK” are mounted' "the outcome's summary"
                assert_contains "$NOTE_BODY" "is mounted at ${WHERE1:-/media/alice/FSGATE STICK}" "the outcome's body"
                case $NOTE_BODY in
                *'“OTHER STICK” is mounted at'*) pass "the outcome names the second stick's mount" ;;
                *) check_failed "the outcome does not say where the second stick is: $NOTE_BODY" ;;
                esac
        else
                check_failed "no notification saying where the stick is mounted within 60 s: $(fsgate_notes | paste -sd'|')"
        fi
        screenshot 05-mounted
        info "fsgate-notify: $(journal_since_mark -t fsgate-notify -o cat | tail -n 8 | paste -sd'|')"

        step "The filesystem is allowed now: a stick plugged in again shows nothing"
        for d in "$USB_DISK_1" "$USB_DISK_2"; do
                ! findmnt -n -S "$d" >/dev/null || as_alice_unit udisksctl unmount --no-user-interaction -b "$d" >/dev/null 2>&1 ||
                        check_failed "udisksctl unmount -b $d as alice failed"
        done
        as_alice makoctl dismiss -a || true
        usb_unplug 2
        n0=$(blocked_journal_count)
        usb_plug 2
        sleep 15
        expect_notes 0 "no notification for the allowed filesystem"
        assert_eq "$(blocked_journal_count)" "$n0" "Blocked entries in the journal after plugging an allowed stick"
        out=$(as_alice_unit udisksctl mount --no-user-interaction -b "$USB_DISK_2" 2>&1) || check_failed "udisksctl mount of the allowed stick: $out"
        info "$out"
        as_alice_unit udisksctl unmount --no-user-interaction -b "$USB_DISK_2" >/dev/null 2>&1 || true
        screenshot 06-allowed-nothing-shown

        step "Open safely: a squashfs stick offers it; the click shows its files, squashfs never loaded"
        out=$(fsgatectl deny squashfs 2>&1) || fail "fsgatectl deny squashfs: $out"
        as_alice makoctl dismiss -a || true
        journal_mark
        plug_stick 3
        wait_note 90 "" 'not mounted' ||
                fail "no notification for the squashfs stick within 90 s: $(fsgate_notes | paste -sd'|')"
        case ",$NOTE_ACTIONS," in
        *,open-safely,*) pass "the squashfs stick's notification offers Open safely: $NOTE_ACTIONS" ;;
        *) fail "no Open safely on the squashfs stick's notification: '$NOTE_ACTIONS'" ;;
        esac
        screenshot open-safely-1-offered
        # An active local session: org.fsgate.fsgate1.open is yes there, no password.
        as_alice makoctl invoke -n "$NOTE_ID" open-safely || fail "makoctl invoke -n $NOTE_ID open-safely"
        wait_note 90 "is open safely" ||
                fail "no notification saying the stick is open safely within 90 s (fsgate-notify: $(journal_since_mark -t fsgate-notify -o cat | tail -n 6 | paste -sd'|'))"
        SAFE_MP=$(findmnt -n -o TARGET -t fuse.squashfuse | head -n1)
        [ -n "$SAFE_MP" ] || fail "nothing is mounted through squashfuse after the click"
        assert_contains "$NOTE_BODY" "$SAFE_MP" "the outcome's body names where the files are"
        assert_eq "$(as_alice cat "$SAFE_MP/Fotos vom Urlaub/Grüße é.txt")" "Grüße vom Stick" "the stick's file, read by alice"
        assert_eq "$(as_alice sha256sum "$SAFE_MP/blob" | cut -d' ' -f1)" "$(as_alice cat "$SAFE_MP/blob.sha256")" \
                "the stick's 300 kB, byte for byte"
        SAFE_UNIT=fsgate-open-${SAFE_MP##*/}.service
        expect_unit_active "$SAFE_UNIT" active
        is_loaded squashfs && fail "squashfs was loaded by Open safely"
        pass "squashfs is not in /proc/modules"
        screenshot open-safely-2-open
        # What alice sees there: her terminal (foot) listing the files, on the desktop.
        as_alice swaymsg exec "env LC_ALL=C.UTF-8 foot --title=fsgate-files sh -c 'cd \"$SAFE_MP\" && ls -lR --color=never; sleep 600'" >/dev/null ||
                fail "swaymsg exec foot"
        wait_for 30 sh -c "pgrep -u $ALICE_UID -x foot >/dev/null" || fail "foot did not start"
        sleep 3
        screenshot open-safely-3-files
        pkill -u "$ALICE_UID" -x foot || true
        usb_unplug 3
        wait_while 100 "$SAFE_MP still mounted or $SAFE_UNIT active 10 s after the unplug" \
                sh -c "findmnt '$SAFE_MP' >/dev/null || systemctl is-active -q '$SAFE_UNIT'"
        pass "the unplug ended it: nothing mounted, no unit"
        is_loaded squashfs && fail "squashfs was loaded"
        out=$(fsgatectl reset squashfs 2>&1) || fail "fsgatectl reset squashfs: $out"
        as_alice makoctl dismiss -a || true

        step "For the next boot: hfs back to the vendor's denial; alice's session in German"
        out=$(fsgatectl reset hfs 2>&1) || fail "fsgatectl reset hfs: $out"
        info "$out"
        expect_state hfs denied vendor
        # Per user, as a person picks a language: the profile for the login's programs (sway,
        # mako, lxpolkit), environment.d for the user manager's (fsgate-notify).
        sed -i '1i export LANG=de_DE.UTF-8' /home/alice/.profile
        mkdir -p /home/alice/.config/environment.d
        echo 'LANG=de_DE.UTF-8' >/home/alice/.config/environment.d/90-lang.conf
        chown -R alice:alice /home/alice/.config
        locale -a | grep -qi '^de_DE.utf8$' || fail "the image has no de_DE.UTF-8 locale: $(locale -a | paste -sd' ')"
        pass "de_DE.UTF-8 is available; alice's next session is German"
        save_logs
}

# --- Boot 2: German, Allow once ----------------------------------------------------------------

boot2() {
        ALICE_LANG=de_DE.UTF-8
        SHOT_PREFIX=de-
        expect_state hfs denied vendor
        is_loaded hfs && fail "hfs is loaded at the start of boot 2"
        wait_session
        lang=$(tr '\0' '\n' <"/proc/$NOTIFY_PID/environ" | sed -n 's/^LANG=//p')
        assert_eq "$lang" de_DE.UTF-8 "fsgate-notify's LANG"

        step "Der USB-Stick: the notification in German"
        config_snapshot >/tmp/snapshot.before
        plug_stick
        expect_note 90 "FSGATE STICK" "the stick's notification"
        case $NOTE_SUMMARY in
        *'„FSGATE STICK“ wurde nicht eingehängt'*) pass "the summary is German, with German quotation marks: $NOTE_SUMMARY" ;;
        *) check_failed "the summary is not German (with German quotation marks around the label): $NOTE_SUMMARY" ;;
        esac
        screenshot de-01-notification

        step "Allow once (Einmal erlauben): hfs loaded for this boot, nothing written, the stick mounted"
        choices "$NOTE_ID" allow-once
        as_alice makoctl invoke -n "$NOTE_ID" allow-once || fail "makoctl invoke -n $NOTE_ID allow-once"
        wait_agent_windows 90 1 || fail "lxpolkit's dialog did not open within 90 s"
        info "the dialog: $(x_windows | awk -F'\t' 'tolower($2) ~ /polkit/ {print $3}' | head -n1)"
        screenshot de-02-password-dialog
        type_keys "$ALICE_PASSWORD"
        wait_agent_windows 60 0 || fail "lxpolkit's dialog still open 60 s after the password"
        wait_for 30 is_loaded hfs || fail "hfs not loaded within 30 s of Allow once"
        pass "hfs is loaded"
        assert_config_unchanged /tmp/snapshot.before "Allow once"
        expect_state hfs denied vendor
        if wait_for 60 findmnt -n -S "$USB_DISK_1"; then
                WHERE1=$(findmnt -n -o TARGET -S "$USB_DISK_1")
                pass "the stick is mounted at $WHERE1"
                got=$(as_alice cat "$WHERE1/hello.txt" 2>&1) || true
                assert_eq "$got" "Hello from the stick" "hello.txt read back"
        else
                check_failed "the stick was not mounted within 60 s of Allow once"
        fi
        # One stick or both: "ist eingehängt" or "sind eingehängt", never the block's "nicht eingehängt".
        if wait_note 60 "" '(ist|sind) eingehängt'; then
                pass "the outcome in German: $NOTE_SUMMARY — $NOTE_BODY"
        else
                check_failed "no German notification saying where the stick is: $(fsgate_notes | paste -sd'|')"
        fi
        screenshot de-03-mounted
        # The next boot is English again.
        sed -i '/^export LANG=de_DE.UTF-8$/d' /home/alice/.profile
        rm -f /home/alice/.config/environment.d/90-lang.conf
        ! findmnt -n -S "$USB_DISK_1" >/dev/null || as_alice_unit udisksctl unmount --no-user-interaction -b "$USB_DISK_1" >/dev/null 2>&1 || true
        save_logs
}

# --- Boot 3 -----------------------------------------------------------------------------------

boot3() {
        step "After the reboot, Allow once is gone: hfs denied and not loaded"
        expect_state hfs denied vendor
        is_loaded hfs && fail "hfs is loaded after the reboot"
        pass "hfs is not loaded"
        [ ! -e "$(conf_of $E hfs)" ] || fail "$(conf_of $E hfs) exists: $(ls -l "$(conf_of $E hfs)")"
        pass "no file for hfs in $E"

        # Back in English (boot 2 left it German), the session comes up again by itself.
        SHOT_PREFIX=after-reboot-
        wait_session

        step "The stick again; Allow, and the person closes the dialog: nothing changes, the notifier says so"
        config_snapshot >/tmp/snapshot.before
        plug_stick
        expect_note 90 "FSGATE STICK" "the stick's notification after the reboot"
        journal_mark
        choices "$NOTE_ID" allow
        as_alice makoctl invoke -n "$NOTE_ID" allow || fail "makoctl invoke -n $NOTE_ID allow"
        wait_agent_windows 90 1 || fail "lxpolkit's dialog did not open within 90 s"
        press_until Escape 0 "Cancel (Escape) on lxpolkit's dialog"
        # What fsgated heard from polkit decides what the notifier can say. polkit marks a
        # closed dialog (polkit.dismissed) only if the agent answers it as cancelled;
        # lxpolkit 0.5 (Debian 12) answers it as a finished authentication that did not
        # succeed, so fsgated sees a plain refusal and the notifier says "not allowed".
        # Either way: nothing changed, the notifier says so, and Allow is still offered.
        journal_wait 60 -t fsgated -o cat -g 'Refused org.fsgate.fsgate1.allow on hfs' >/tmp/refusal.out
        refusal=$(tail -n1 /tmp/refusal.out)
        info "fsgated: $refusal"
        case $refusal in
        *dismissed*) expected="Cancelled; nothing was changed" ;;
        *) expected="hfs not allowed" ;;
        esac
        # The outcome's summary: "Cancelled; nothing was changed" or "hfs not allowed".
        if wait_note 60 "$expected"; then
                pass "the notifier says: $NOTE_SUMMARY — $NOTE_BODY"
                assert_contains "$NOTE_SUMMARY $NOTE_BODY" "nothing was changed" "the outcome"
                assert_contains "$NOTE_SUMMARY" "$expected" "the outcome's summary, as polkit told fsgated"
                case ",$NOTE_ACTIONS," in
                *,allow,*) pass "the actions stay after a closed dialog: $NOTE_ACTIONS" ;;
                *) check_failed "after the closed dialog the notification offers no Allow any more: '$NOTE_ACTIONS'" ;;
                esac
        else
                check_failed "no notification about the closed dialog: $(fsgate_notes | paste -sd'|')"
        fi
        screenshot 07-cancelled
        case ",$NOTE_ACTIONS," in
        *,allow,*)
                # The second try a person makes: the same question again, from the outcome.
                journal_mark
                as_alice makoctl invoke -n "$NOTE_ID" allow || fail "makoctl invoke -n $NOTE_ID allow (the retry)"
                wait_agent_windows 90 1 || fail "Allow on the outcome: lxpolkit's dialog did not open within 90 s"
                pass "Allow on the outcome notification: lxpolkit asks again"
                press_until Escape 0 "Cancel (Escape) on lxpolkit's second dialog"
                journal_wait 60 -t fsgated -o cat -g 'Refused org.fsgate.fsgate1.allow on hfs' >/tmp/refusal.out
                info "fsgated: $(tail -n1 /tmp/refusal.out)"
                ;;
        esac
        assert_config_unchanged /tmp/snapshot.before "after the closed dialog"
        expect_state hfs denied vendor
        is_loaded hfs && fail "hfs is loaded after a closed dialog"
        findmnt -n -S "$USB_DISK_1" >/dev/null && fail "the stick is mounted after a closed dialog"
        pass "hfs not loaded, the stick not mounted"
        read_only_stick
        no_server
        save_logs
}

# Open read-only (a grant for this stick): the person's password, the stick mounted
# read-only, hfs loaded and the configuration unchanged; a second stick with hfs meanwhile is
# hidden from udisks2 and asks instead of mounting; unplugging the first stick ends the grant
# and hfs is unloaded (how long that takes is printed: GRANT FIGURES).
read_only_stick() {
        step "Open read-only: the stick for itself, read-only"
        wait_note 30 "" 'hfs|Cancelled' || fail "the outcome notification: none within 30 s: $(fsgate_notes | paste -sd'|')"
        case ",$NOTE_ACTIONS," in
        *,open-read-only,*) pass "the outcome offers Open read-only: $NOTE_ACTIONS" ;;
        *) fail "no Open read-only on the outcome notification: '$NOTE_ACTIONS'" ;;
        esac
        journal_mark
        as_alice makoctl invoke -n "$NOTE_ID" open-read-only || fail "makoctl invoke -n $NOTE_ID open-read-only"
        wait_agent_windows 90 1 || fail "Open read-only: lxpolkit's dialog did not open within 90 s"
        pass "lxpolkit asks: $(x_windows | awk -F'\t' 'tolower($2) ~ /polkit/ {print $3}' | head -n1)"
        type_keys "$ALICE_PASSWORD"
        wait_agent_windows 60 0 || fail "lxpolkit's dialog still open 60 s after the password: $(x_windows | paste -sd'|')"
        wait_for 60 findmnt -n -S "$USB_DISK_1" ||
                fail "the stick was not mounted within 60 s of Open read-only (fsgate-notify: $(journal_since_mark -t fsgate-notify -o cat | tail -n 6 | paste -sd'|'))"
        WHERE1=$(findmnt -n -o TARGET -S "$USB_DISK_1")
        opts=$(findmnt -n -o OPTIONS -S "$USB_DISK_1")
        case ",$opts," in
        *,ro,*) pass "the stick is mounted read-only at $WHERE1 ($opts)" ;;
        *) fail "the stick is mounted at $WHERE1 with $opts, not read-only" ;;
        esac
        got=$(as_alice cat "$WHERE1/hello.txt" 2>&1) || true
        assert_eq "$got" "Hello from the stick" "hello.txt read back by alice"
        as_alice sh -c "echo x >'$WHERE1/new.txt'" 2>/dev/null && fail "a write to the read-only stick succeeded"
        pass "a write to the stick fails"
        is_loaded hfs || fail "hfs is not loaded after Open read-only"
        expect_state hfs denied vendor
        assert_config_unchanged /tmp/snapshot.before "after Open read-only"
        grants=$(busctl get-property org.fsgate.fsgate1 /org/fsgate/fsgate1 org.fsgate.fsgate1.Manager Grants)
        assert_contains "$grants" "\"$USB_DISK_1\"" "the Grants property"
        assert_contains "$(fsgatectl status hfs)" "or until $USB_DISK_1 is removed" "fsgatectl status hfs"
        if wait_note 60 "read-only"; then
                assert_contains "$NOTE_SUMMARY" '“FSGATE STICK” is open, read-only' "the outcome's summary"
                assert_contains "$NOTE_BODY" "is mounted read-only at $WHERE1" "the outcome's body"
        else
                check_failed "no notification saying the stick is open read-only: $(fsgate_notes | paste -sd'|')"
        fi
        screenshot 09-open-read-only

        step "A second stick with hfs while the grant is for the first: not mounted, asked about"
        journal_mark
        plug_stick 2
        assert_eq "$(udev_prop "$USB_DISK_2" UDISKS_IGNORE)" 1 "udev's UDISKS_IGNORE for the second stick"
        if wait_note 60 "OTHER STICK"; then
                pass "the second stick asks: $NOTE_SUMMARY ($NOTE_ACTIONS)"
                for a in open-read-only choices; do
                        case ",$NOTE_ACTIONS," in
                        *,$a,*) pass "the second stick's notification offers $a" ;;
                        *) check_failed "the second stick's notification lacks $a: '$NOTE_ACTIONS'" ;;
                        esac
                done
        else
                check_failed "no notification for the second stick: $(fsgate_notes | paste -sd'|')"
        fi
        screenshot 10-second-stick
        findmnt -n -S "$USB_DISK_2" >/dev/null && fail "the second stick was mounted without a question"
        pass "the second stick is not mounted"

        step "The first stick unplugged: its grant ends, hfs is unloaded"
        as_alice_unit udisksctl unmount --no-user-interaction -b "$USB_DISK_1" >/dev/null 2>&1 ||
                fail "udisksctl unmount -b $USB_DISK_1 as alice failed"
        journal_mark
        _t0=$(cut -d' ' -f1 /proc/uptime)
        USB_DISK=$USB_DISK_1
        usb_unplug
        wait_while 300 "hfs still loaded 30 s after the first stick went" is_loaded hfs
        _t1=$(cut -d' ' -f1 /proc/uptime)
        echo "GRANT FIGURES: hfs unloaded $(echo "$_t1 $_t0" | awk '{printf "%.1f", $1 - $2}') s after the unplug request" \
                "(the host unplugs within a second or two; the medium is looked for every 2 s)"
        journal_wait 30 -t fsgated -o cat -g 'hfs unloaded: its grant ended' >/tmp/unload.out ||
                fail "no journal line of the unload: $(cat /tmp/unload.out)"
        pass "fsgated: $(tail -n1 /tmp/unload.out)"
        journal_since_mark -t fsgated -o verbose -g 'ended: device removed' | grep -q 'MESSAGE_ID=b08e2414b1a242c9832e0b4441b71541' ||
                check_failed "the grant's end has no journal line with its catalog id"
        assert_eq "$(busctl get-property org.fsgate.fsgate1 /org/fsgate/fsgate1 org.fsgate.fsgate1.Manager Grants)" \
                "a(ssutts) 0" "Grants after the unplug"
        expect_state hfs denied vendor
        findmnt -n -S "$USB_DISK_2" >/dev/null && fail "the second stick got mounted"
        usb_unplug 2
}

# notify_journal — fsgate-notify's journal since the mark (alice's user unit).
notify_journal() {
        journal_since_mark -o cat _SYSTEMD_USER_UNIT=fsgate-notify.service
}

# A session without a notification server: the second stick is plugged in while mako is gone
# (killed, and its D-Bus activation file set aside, as in a session that has none). The
# notifier waits quietly (a line or two in its journal, no restart) and, when mako comes back
# after more than a minute, does not show that old block: the person has long stopped
# waiting for that stick (--late-after, 60 s by default).
MAKO_ACTIVATION=/usr/share/dbus-1/services/fr.emersion.mako.service
no_server() {
        step "No notification server: the notifier waits quietly, and shows nothing late"
        mv "$MAKO_ACTIVATION" /root/
        as_alice busctl --user call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus ReloadConfig
        pkill -u "$ALICE_UID" -x mako || fail "no mako to stop"
        wait_for 20 sh -c "! pgrep -u $ALICE_UID -x mako" || fail "mako did not exit"
        as_alice busctl --user status org.freedesktop.Notifications >/dev/null 2>&1 &&
                fail "org.freedesktop.Notifications still has an owner"
        pass "mako is gone, and cannot be activated"
        pid_before=$(as_alice systemctl --user show -P MainPID fsgate-notify.service)
        journal_mark
        plug_stick 2
        t_block=$(date +%s)
        journal_wait 30 _SYSTEMD_USER_UNIT=fsgate-notify.service -o cat -g 'No notification server' >/tmp/ns.out ||
                fail "$(cat /tmp/ns.out)"
        pass "the notifier: $(tail -n1 /tmp/ns.out)"
        # Past the notifier's 60 s, and a little more for its timer.
        sleep $((t_block + 70 - $(date +%s)))
        n=$(notify_journal | wc -l)
        info "fsgate-notify's journal while no server ran:"
        notify_journal | sed 's/^/    /'
        if [ "$n" -le 4 ]; then
                pass "quiet while no server ran: $n journal lines in $(($(date +%s) - t_block)) s"
        else
                check_failed "fsgate-notify wrote $n journal lines while no server ran (at most 4 expected)"
        fi
        assert_eq "$(as_alice systemctl --user show -P MainPID fsgate-notify.service)" "$pid_before" \
                "fsgate-notify's pid (no restart while no server ran)"

        # The person's session gets its notification server back, as the session starts it.
        mv "/root/$(basename "$MAKO_ACTIVATION")" "$MAKO_ACTIVATION"
        as_alice busctl --user call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus ReloadConfig
        as_alice systemctl --user start mako.service || fail "systemctl --user start mako.service"
        wait_for 30 as_alice busctl --user status org.freedesktop.Notifications ||
                fail "mako did not come back on alice's session bus"
        session_env || fail "mako's environment"
        pass "mako is back"
        journal_wait 30 _SYSTEMD_USER_UNIT=fsgate-notify.service -o cat -g 'too late to be news' >/tmp/ns.out ||
                fail "$(cat /tmp/ns.out)"
        pass "the notifier: $(tail -n1 /tmp/ns.out)"
        sleep 5
        late=$(fsgate_notes | grep -F "OTHER STICK" || true)
        if [ -z "$late" ]; then
                pass "mako shows nothing of the block made while it was away: $(fsgate_notes | cut -f3 | paste -sd'|')"
        else
                check_failed "the old block was shown late: $late"
        fi
        screenshot 08-no-late-notification
}

# What a look at a failure needs besides the journal: sway's log, mako's last list.
save_logs() {
        cp /home/alice/sway.log "$FSGATE_RESULTS/sway.log" 2>/dev/null || true
        cp /tmp/mako-list.json "$FSGATE_RESULTS/mako-list.json" 2>/dev/null || true
}
trap save_logs EXIT
# grim runs as alice; /tmp is empty after each reboot.
install -d -o alice -g alice "$SHOTS"

case $FSGATE_BOOT in
1) boot1 ;;
2) boot2 ;;
3) boot3 ;;
esac
checks_done

# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Helpers for VM scenarios (POSIX sh, run by dash in the guest). Source with
#     . "$FSGATE_VM_LIB"
# Every assert_*/expect_* prints "ok: ..." or stops the scenario with "FAIL: ..." and exit 1.
# See tests/vm/README.md for the guest's environment.

FSG_DEST=org.fsgate.fsgate1
FSG_OBJ=/org/fsgate/fsgate1
FSG_IFACE=org.fsgate.fsgate1.Manager
FSG_ERR=org.fsgate.fsgate1.Error
PROBE_DIR=/run/fsgate-probe
mkdir -p "$PROBE_DIR"

step() {
        echo
        echo "=== $*   [$(cut -d' ' -f1 /proc/uptime) s]"
}
info() {
        echo "    $*"
}
pass() {
        echo "ok: $*"
}
fail() {
        echo "FAIL: $*"
        exit 1
}

# check_failed WHAT — record a failure but go on (so one bug does not hide the next);
# end the scenario with checks_done, which fails if anything was recorded.
CHECK_FAILURES=
check_failed() {
        echo "FAIL (going on): $*"
        CHECK_FAILURES="$CHECK_FAILURES
  $*"
}
checks_done() {
        [ -z "$CHECK_FAILURES" ] || fail "recorded failures:$CHECK_FAILURES"
        pass "all checks passed"
}

# assert_eq ACTUAL EXPECTED WHAT
assert_eq() {
        [ "$1" = "$2" ] || fail "$3: expected '$2', got '$1'"
        pass "$3 = '$2'"
}

# assert_contains HAYSTACK NEEDLE WHAT
assert_contains() {
        case $1 in
        *"$2"*) pass "$3 contains '$2'" ;;
        *) fail "$3: '$2' not in: $1" ;;
        esac
}

# assert_status EXPECTED WHAT CMD... — run CMD, compare its exit status.
assert_status() {
        _want=$1 _what=$2
        shift 2
        _rc=0
        "$@" || _rc=$?
        [ "$_rc" = "$_want" ] || fail "$_what: exit status $_rc, expected $_want (command: $*)"
        pass "$_what (exit status $_rc)"
}

# as_user USER CMD... — run CMD as USER (uid, gid and supplementary groups from /etc).
as_user() {
        _u=$1
        shift
        setpriv --reuid="$_u" --regid="$_u" --init-groups -- "$@"
}

# --- Calling the service ---------------------------------------------------------------------

# fsg_call METHOD SIGNATURE ARGS... — busctl call as root, prints busctl's reply.
fsg_call() {
        _m=$1
        shift
        busctl call "$FSG_DEST" "$FSG_OBJ" "$FSG_IFACE" "$_m" "$@"
}

# fsg_call_ok METHOD SIGNATURE ARGS... — the same, failing the scenario if the call fails.
fsg_call_ok() {
        _out=$(fsg_call "$@" 2>&1) || fail "busctl call $*: $_out"
        pass "$*"
        [ -z "$_out" ] || info "$_out"
}

# dbus_error_of [--as USER] [--interactive] METHOD ARG...
# ARGs as dbus-send takes them (string:hfs uint64:0). Prints the D-Bus error name the call
# got, or "none" if it succeeded. Without --interactive the call is made by dbus-send (no
# allow-interactive-authorization flag), with it by gdbus --interactive. The error's message
# is kept in $LAST_ERROR_FILE.
LAST_ERROR_FILE=/tmp/fsgate-last-error
dbus_error_of() {
        _as='' _inter=''
        while :; do
                case $1 in
                --as) _as=$2; shift 2 ;;
                --interactive) _inter=1; shift ;;
                *) break ;;
                esac
        done
        _m=$1
        shift
        if [ -n "$_inter" ]; then
                # gdbus takes GVariant text: 'hfs', uint64 0.
                _n=$#
                for _a in "$@"; do
                        case $_a in
                        string:*) set -- "$@" "'${_a#string:}'" ;;
                        uint64:*) set -- "$@" "uint64 ${_a#uint64:}" ;;
                        *) fail "dbus_error_of: unsupported argument $_a" ;;
                        esac
                done
                shift "$_n"
                set -- gdbus call --system --interactive --dest "$FSG_DEST" --object-path "$FSG_OBJ" \
                        --method "$FSG_IFACE.$_m" "$@"
        else
                set -- dbus-send --system --print-reply --dest="$FSG_DEST" "$FSG_OBJ" "$FSG_IFACE.$_m" "$@"
        fi
        [ -n "$_as" ] && set -- setpriv --reuid="$_as" --regid="$_as" --init-groups -- "$@"
        if "$@" >/tmp/fsgate-call.out 2>"$LAST_ERROR_FILE"; then
                echo none
                return 0
        fi
        # dbus-send: "Error NAME: MESSAGE"; gdbus: "Error: GDBus.Error:NAME: MESSAGE"
        _name=$(sed -n -e 's/^Error: GDBus\.Error:\([^:]*\):.*/\1/p' -e 's/^Error \([^: ]*\):.*/\1/p' \
                "$LAST_ERROR_FILE" | head -n1)
        echo "${_name:-unknown}"
}

# last_error_message — the message of the last error dbus_error_of saw.
last_error_message() {
        sed -e 's/^Error: GDBus\.Error:[^:]*: //' -e 's/^Error [^: ]*: //' "$LAST_ERROR_FILE" | head -n1
}

# expect_error ERROR-NAME [--as USER] [--interactive] METHOD ARG... — the call must fail
# with exactly this error (a short name like InUse means org.fsgate.fsgate1.Error.InUse).
expect_error() {
        _want=$1
        shift
        case $_want in *.*) ;; *) _want=$FSG_ERR.$_want ;; esac
        _got=$(dbus_error_of "$@")
        [ "$_got" = "$_want" ] || fail "$*: expected $_want, got $_got ($(cat "$LAST_ERROR_FILE"))"
        pass "$* -> ${_got##*.}: $(last_error_message)"
}

# expect_success [--as USER] [--interactive] METHOD ARG...
expect_success() {
        _got=$(dbus_error_of "$@")
        [ "$_got" = none ] || fail "$*: expected success, got $_got ($(cat "$LAST_ERROR_FILE"))"
        pass "$* succeeded"
}

# Entries as one line each:
#   MODULE STATE ORIGIN SOURCE AVAILABLE BUILTIN LOADED MOUNTED TYPES
# SOURCE is "-" when empty, TYPES comma-separated ("-" when none).
_fsg_entries() {
        awk 'function unq(s) { gsub(/^"|"$/, "", s); return s }
        {
                i = 2; n = 1
                if ($1 ~ /^a/) { n = $2; i = 3 }
                for (e = 0; e < n; e++) {
                        mod = unq($(i++)); nt = $(i++); types = ""
                        for (t = 0; t < nt; t++) types = types (t ? "," : "") unq($(i++))
                        state = unq($(i++)); origin = unq($(i++)); source = unq($(i++))
                        av = $(i++); bi = $(i++); lo = $(i++); mo = $(i++)
                        print mod, state, origin, (source == "" ? "-" : source), av, bi, lo, mo, (types == "" ? "-" : types)
                }
        }'
}

# fs_list [--as USER] — every entry of ListFilesystems.
fs_list() {
        if [ "${1:-}" = --as ]; then
                as_user "$2" busctl call "$FSG_DEST" "$FSG_OBJ" "$FSG_IFACE" ListFilesystems | _fsg_entries
        else
                fsg_call ListFilesystems | _fsg_entries
        fi
}

# fs_get NAME — the entry GetFilesystem returns for a module or type name.
fs_get() {
        _out=$(fsg_call GetFilesystem s "$1" 2>&1) || fail "GetFilesystem $1: $_out"
        echo "$_out" | _fsg_entries
}

# fs_field NAME FIELD — FIELD: module state origin source available builtin loaded mounted types
fs_field() {
        fs_get "$1" | awk -v f="$2" '{
                split("module state origin source available builtin loaded mounted types", k, " ")
                for (i = 1; i <= 9; i++) if (k[i] == f) { print $i; exit }
        }'
}

# expect_state NAME STATE ORIGIN [SOURCE] — what the service reports.
expect_state() {
        _e=$(fs_get "$1")
        set -- "$1" "$2" "$3" "${4:-}" $_e
        [ "$6" = "$2" ] && [ "$7" = "$3" ] && { [ -z "$4" ] || [ "$8" = "$4" ]; } ||
                fail "$1: expected $2/$3${4:+ ($4)}, service says: $_e"
        pass "$1 is $2 (origin $3${4:+, source $4})"
}

# --- Files ----------------------------------------------------------------------------------

conf_of() {
        echo "$1/60-blacklist_fs-$2.conf"
}

# assert_mask FILE — a symlink to /dev/null (an Allow over a vendor denial).
assert_mask() {
        [ -L "$1" ] && [ "$(readlink "$1")" = /dev/null ] || fail "$1 is not a symlink to /dev/null: $(ls -l "$1" 2>&1)"
        pass "$1 -> /dev/null"
}

# assert_deny_file FILE MODULE — fsgate's deny file.
assert_deny_file() {
        [ -f "$1" ] && [ ! -L "$1" ] || fail "$1 is not a regular file: $(ls -l "$1" 2>&1)"
        head -n1 "$1" | grep -q '^# Written by fsgate' || fail "$1 lacks fsgate's header: $(head -n1 "$1")"
        grep -qx "blacklist $2" "$1" || fail "$1 has no 'blacklist $2' line"
        pass "$1 is fsgate's deny file for $2"
}

assert_absent() {
        [ ! -e "$1" ] && [ ! -L "$1" ] || fail "$1 exists: $(ls -l "$1")"
        pass "$1 does not exist"
}

# config_snapshot — every modprobe.d entry fsgate could touch: type, mode, link target, and
# a checksum of each regular file. (Few processes: each one costs ~0.1 s under TCG.)
config_snapshot() {
        for _d in /etc/modprobe.d /run/modprobe.d /usr/local/lib/modprobe.d /usr/lib/modprobe.d; do
                if [ -d "$_d" ]; then
                        find "$_d" -mindepth 1 -printf '%y %m %p -> %l\n'
                        find "$_d" -mindepth 1 -type f -exec sha256sum {} +
                else
                        echo "no $_d"
                fi
        done | LC_ALL=C sort
}

# assert_config_unchanged SNAPSHOT-FILE WHAT
assert_config_unchanged() {
        config_snapshot >/tmp/fsgate-snapshot.now
        if ! cmp -s "$1" /tmp/fsgate-snapshot.now; then
                diff "$1" /tmp/fsgate-snapshot.now
                fail "$2: modprobe.d changed"
        fi
        pass "$2: modprobe.d unchanged"
}

# --- The kernel -----------------------------------------------------------------------------

# The kernel side uses shell builtins where it can: under TCG every process costs ~0.1 s.

# is_loaded MODULE — in /proc/modules.
is_loaded() {
        _want=$1
        case $_want in *-*) _want=$(echo "$_want" | tr - _) ;; esac
        while read -r _il_n _il_x; do
                [ "$_il_n" = "$_want" ] && return 0
        done </proc/modules
        return 1
}

# _modules_now — sets _MODS to " name name ... " from /proc/modules (newest first).
_modules_now() {
        _MODS=" "
        while read -r _mn_n _mn_x; do
                _MODS="$_MODS$_mn_n "
        done </proc/modules
}

loaded_modules() {
        cut -d' ' -f1 /proc/modules | LC_ALL=C sort
}

# unload MODULE — modprobe -r (with its unused dependencies).
unload() {
        is_loaded "$1" || return 0
        modprobe -r "$1" || fail "cannot unload $1: $(grep "^$1 " /proc/modules)"
}

# probe_mount TYPE [DEVICE] — one mount attempt of TYPE on the blank disk (no helpers), with
# the resulting mount undone. Sets PROBE_RESULT to "mounted", "unknown" (mount said "unknown
# filesystem type": no such type registered) or "error", PROBE_OUTPUT to mount's message and
# PROBE_NEW to the modules that appeared in /proc/modules meanwhile (newest first).
probe_mount() {
        _dev=${2:-$FSGATE_BLANK_DISK}
        _modules_now
        _before=$_MODS
        PROBE_RESULT=error
        if PROBE_OUTPUT=$(timeout -s KILL 60 mount -i -t "$1" "$_dev" "$PROBE_DIR" 2>&1); then
                PROBE_RESULT=mounted
                umount "$PROBE_DIR" || fail "cannot unmount $1 from $PROBE_DIR"
        else
                case $PROBE_OUTPUT in
                *"unknown filesystem type"*) PROBE_RESULT=unknown ;;
                esac
        fi
        _modules_now
        PROBE_NEW=
        for _pn in $_MODS; do
                case $_before in *" $_pn "*) ;; *) PROBE_NEW="$PROBE_NEW$_pn " ;; esac
        done
}

# modules_of_type TYPE — the modules the kernel tree's modules.alias names for fs-TYPE.
modules_of_type() {
        awk -v a="fs-$1" '$1 == "alias" && $2 == a {print $3}' "/lib/modules/$(uname -r)/modules.alias"
}

# expect_blocked TYPE — a kernel autoload for TYPE is refused: mount says "unknown filesystem
# type" and the type's module did not get loaded (kmod may still load its dependencies, e.g.
# when an install command stands in for the module). It must not be loaded beforehand.
expect_blocked() {
        _ms=$(modules_of_type "$1")
        [ -n "$_ms" ] || fail "expect_blocked $1: no fs-$1 alias in modules.alias"
        for _m in $_ms; do
                is_loaded "$_m" && fail "expect_blocked $1: $_m is loaded already; unload it first"
        done
        probe_mount "$1"
        [ "$PROBE_RESULT" = unknown ] || fail "mount -t $1 was not refused as unknown: $PROBE_RESULT: $PROBE_OUTPUT"
        for _m in $_ms; do
                is_loaded "$_m" && fail "mount -t $1 says unknown type, yet loaded $_m"
        done
        pass "mount -t $1: blocked (unknown filesystem type, $(echo $_ms) not loaded${PROBE_NEW:+; dependencies loaded: ${PROBE_NEW% }})"
}

# expect_autoloads TYPE MODULE — a mount of TYPE makes the kernel load MODULE (the blank disk
# then fails the mount with a superblock error, which is fine). MODULE is unloaded first.
expect_autoloads() {
        unload "$2"
        probe_mount "$1"
        is_loaded "$2" || fail "mount -t $1 did not load $2: $PROBE_RESULT: $PROBE_OUTPUT"
        [ "$PROBE_RESULT" != unknown ] || fail "mount -t $1 loaded $2 but still says: $PROBE_OUTPUT"
        pass "mount -t $1: $2 autoloaded (${PROBE_NEW% }; mount: $PROBE_RESULT)"
}

# --- The service's process ------------------------------------------------------------------

# fsgated_pid — pid of the bus name's owner ("" if none).
fsgated_pid() {
        dbus-send --system --print-reply=literal --dest=org.freedesktop.DBus /org/freedesktop/DBus \
                org.freedesktop.DBus.GetConnectionUnixProcessID "string:$FSG_DEST" 2>/dev/null |
                awk '{print $NF}'
}

# assert_bus_activated — org.fsgate.fsgate1 is owned by /usr/libexec/fsgated running as root,
# started by dbus-daemon's launch helper (which leaves DBUS_STARTER_BUS_TYPE=system in its
# environment); /init checked that nobody owned the name before the scenario started.
assert_bus_activated() {
        fsg_call GetFilesystem s ext4 >/dev/null || fail "the service does not answer"
        _pid=$(fsgated_pid)
        [ -n "$_pid" ] || fail "nobody owns $FSG_DEST"
        assert_eq "$(readlink "/proc/$_pid/exe")" /usr/libexec/fsgated "executable owning $FSG_DEST"
        assert_eq "$(awk '/^Uid:/ {print $3}' "/proc/$_pid/status")" 0 "fsgated's effective uid"
        assert_eq "$(tr '\0' '\n' <"/proc/$_pid/environ" | grep '^DBUS_STARTER_BUS_TYPE=')" \
                DBUS_STARTER_BUS_TYPE=system "fsgated's environment (set by the activation helper)"
}

# wait_while TENTHS WHAT CMD... — wait while CMD succeeds, looking every 0.1 s; fail with
# WHAT if it still does after TENTHS looks.
wait_while() {
        _ww_max=$1 _ww_what=$2 _ww_i=0
        shift 2
        while "$@"; do
                _ww_i=$((_ww_i + 1))
                [ $_ww_i -gt "$_ww_max" ] && fail "$_ww_what"
                sleep 0.1
        done
}

# stop_process PID WHAT — SIGTERM, then wait (10 s at most) until PID is gone.
stop_process() {
        kill "$1"
        wait_while 100 "$2 ($1) does not stop" test -d "/proc/$1"
}

# write_fsadmin_rule FILE — a polkit rule: members of group fsadmin may allow hfsplus, and
# nothing else (restart_polkitd, or wait for polkitd to notice it, before relying on it).
write_fsadmin_rule() {
        cat >"$1" <<'EOF'
// Members of fsadmin may allow the hfsplus filesystem; nothing else.
polkit.addRule(function(action, subject) {
        if (action.id == "org.fsgate.fsgate1.allow" &&
            action.lookup("module") == "hfsplus" &&
            subject.isInGroup("fsadmin")) {
                return polkit.Result.YES;
        }
});
EOF
}

# restart_polkitd — so that it reads rules files just written.
restart_polkitd() {
        _old=$(dbus-send --system --print-reply=literal --dest=org.freedesktop.DBus /org/freedesktop/DBus \
                org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.PolicyKit1 | awk '{print $NF}')
        stop_process "$_old" polkitd
        /usr/lib/polkit-1/polkitd --no-debug </dev/null &
        _i=0
        until dbus-send --system --print-reply=literal --dest=org.freedesktop.DBus /org/freedesktop/DBus \
                org.freedesktop.DBus.NameHasOwner string:org.freedesktop.PolicyKit1 | grep -q true; do
                _i=$((_i + 1))
                [ $_i -gt 200 ] && fail "polkitd did not come back"
                sleep 0.1
        done
        pass "polkitd restarted"
}

# fsgated_running — someone owns org.fsgate.fsgate1 (asks the bus; activates nothing).
fsgated_running() {
        dbus-send --system --print-reply=literal --dest=org.freedesktop.DBus /org/freedesktop/DBus \
                org.freedesktop.DBus.NameHasOwner "string:$FSG_DEST" 2>/dev/null | grep -q true
}

# wait_fsgated_exit SECONDS — wait until fsgated has left the bus (its idle exit); fails
# the scenario if it is still there after SECONDS.
wait_fsgated_exit() {
        _i=0
        while fsgated_running; do
                _i=$((_i + 1))
                [ $_i -gt $(($1 * 2)) ] && fail "fsgated still owns $FSG_DEST after $1 s"
                sleep 0.5
        done
        pass "fsgated left the bus (idle exit) after about $((_i / 2)) s"
}

# --- The Blocked signal ---------------------------------------------------------------------

# blocked_watch_start — subscribe to fsgated's signals with a match rule the bus applies:
# dbus-monitor with sender='org.fsgate.fsgate1' (as root it becomes a monitor; the rule is
# the same either way). dbus-daemon matches a well-known sender against the name's owner at
# the moment the signal is sent, so the first signal of a newly activated fsgated reaches
# it, and so does every signal across idle exits and re-activation. Not `gdbus monitor
# --dest`: that one watches the name and adds a match for the owner's unique name only after
# it has seen the new owner, so a Blocked sent right after activation (the very report that
# activated fsgated) went by before the match was in place (issue 40). Once subscribed
# it starts fsgated (StartServiceByName), as the gdbus monitor's watch did: the scenarios
# were written with fsgated up after this. The raw log is $BLOCKED_RAW; blocked_signals reads it, one line per
# signal in GVariant text as `gdbus monitor` printed it:
#   /org/fsgate/fsgate1: org.fsgate.fsgate1.Manager.Blocked ('hfs', 'hfs', '', {'source': <'...'>, 'origin': <'vendor'>, 'cause': <'kernel'>})
# Returns once the subscription is in place (a signal of our own has come through).
BLOCKED_RAW=/run/fsgate-signals.raw
BLOCKED_LOG=/run/fsgate-signals.log
BLOCKED_WATCH_PID=
blocked_watch_start() {
        : >"$BLOCKED_RAW"
        : >"$BLOCKED_LOG"
        # Two rules: fsgated's signals, and a marker of our own (dbus-send's, another
        # sender, another path), which shows when the rules are in place.
        dbus-monitor --system "type='signal',sender='$FSG_DEST',interface='$FSG_IFACE'" \
                "type='signal',path='/org/fsgate/test/marker'" >>"$BLOCKED_RAW" 2>&1 &
        BLOCKED_WATCH_PID=$!
        # dbus-monitor's BecomeMonitor (or AddMatch) is asynchronous: send markers until one
        # arrives. Then every later signal of fsgated is ours.
        _i=0
        until grep -q 'path=/org/fsgate/test/marker;' "$BLOCKED_RAW"; do
                _i=$((_i + 1))
                [ $_i -gt 100 ] && fail "dbus-monitor did not start: $(cat "$BLOCKED_RAW")"
                dbus-send --system --type=signal /org/fsgate/test/marker org.fsgate.test.Marker.Ready 2>/dev/null || true
                sleep 0.1
        done
        dbus-send --system --print-reply=literal --dest=org.freedesktop.DBus /org/freedesktop/DBus \
                org.freedesktop.DBus.StartServiceByName "string:$FSG_DEST" uint32:0 >/dev/null ||
                fail "cannot start $FSG_DEST"
        pass "subscribed to $FSG_IFACE signals from $FSG_DEST (dbus-monitor, a bus-side match; pid $BLOCKED_WATCH_PID)"
}

blocked_watch_stop() {
        [ -n "$BLOCKED_WATCH_PID" ] && kill "$BLOCKED_WATCH_PID" 2>/dev/null
        BLOCKED_WATCH_PID=
        _blocked_log_update
}

# _blocked_log_update — $BLOCKED_LOG from $BLOCKED_RAW: each signal of fsgated's interface
# as one line in GVariant text (strings, uint64, uint32, int32, booleans, arrays of
# strings and a{sv}: what fsgated sends). dbus-monitor writes a message with one fflush; a
# message still being written at the end of the file (its arguments open) is left for the
# next look.
_blocked_log_update() {
        awk -v iface="$FSG_IFACE" '
        function q(s) {
                gsub(/\\/, "\\\\", s)
                if (index(s, "\047") && !index(s, "\"")) return "\"" s "\""
                gsub(/\047/, "\\\047", s)
                return "\047" s "\047"
        }
        function val(line,   t, v) {
                sub(/^ *(variant +)?/, "", line)
                t = line; sub(/ .*/, "", t)
                v = line; sub(/^[^ ]+ /, "", v)
                if (t == "string" || t == "object_path" || t == "signature") {
                        sub(/^"/, "", v); sub(/"$/, "", v); return q(v)
                }
                if (t == "boolean" || t == "int32" || t == "double") return v
                return t " " v
        }
        # An element at the current depth: an argument (depth 0) or an array item.
        function put(s) {
                buf[depth] = buf[depth] (n[depth]++ ? ", " : "") s
        }
        function flush_msg() {
                if (head != "" && depth == 0)
                        print head " (" buf[0] (n[0] == 1 ? ",)" : ")")
                head = ""
        }
        /^signal / {
                flush_msg()
                depth = 0; buf[0] = ""; n[0] = 0
                if (index($0, "interface=" iface ";")) {
                        path = $0; sub(/.* path=/, "", path); sub(/;.*/, "", path)
                        member = $0; sub(/.* member=/, "", member)
                        head = path ": " iface "." member
                }
                next
        }
        head == "" { next }
        /^ *(variant +)?array \[$/ { depth++; buf[depth] = ""; n[depth] = 0; dict[depth] = 0; next }
        /^ *dict entry\($/ { dict[depth] = 1; key = ""; next }
        /^ *\)$/ { next }
        /^ *\]$/ {
                if (dict[depth]) s = n[depth] ? "{" buf[depth] "}" : "@a{sv} {}"
                else s = n[depth] ? "[" buf[depth] "]" : "@a{sv} {}"   # the only array fsgated sends
                depth--
                put(s)
                next
        }
        depth > 0 && dict[depth] && key == "" { key = val($0); next }
        depth > 0 && dict[depth] { put(key ": <" val($0) ">"); key = ""; next }
        { put(val($0)) }
        END { flush_msg() }
' "$BLOCKED_RAW" >"$BLOCKED_LOG.new" && mv "$BLOCKED_LOG.new" "$BLOCKED_LOG"
}

# blocked_signals [TEXT] — the Blocked signals received so far (those containing TEXT),
# each as "Blocked (ARGS)".
blocked_signals() {
        _blocked_log_update
        sed -n 's/^.*\.Manager\.\(Blocked (.*\)$/\1/p' "$BLOCKED_LOG" | grep -F -- "${1:-Blocked}" || true
}

# blocked_count [TEXT] — how many of them.
blocked_count() {
        blocked_signals "${1:-Blocked}" | wc -l
}

# expect_blocked_signal TEXT [SECONDS] — wait (default 10 s) until a Blocked signal
# containing TEXT has arrived; BLOCKED_SIGNAL is the first such signal.
expect_blocked_signal() {
        _i=0
        while [ "$(blocked_count "$1")" = 0 ]; do
                _i=$((_i + 1))
                [ $_i -gt $((${2:-10} * 10)) ] &&
                        fail "no Blocked signal containing \"$1\" within ${2:-10} s; received: $(blocked_signals)"
                sleep 0.1
        done
        BLOCKED_SIGNAL=$(blocked_signals "$1" | head -n1)
        pass "received $BLOCKED_SIGNAL"
}

# blocked_mark, then expect_no_blocked_since_mark SECONDS WHAT — nothing arrives in SECONDS.
BLOCKED_MARK=0
blocked_mark() {
        BLOCKED_MARK=$(blocked_count)
}
expect_no_blocked_since_mark() {
        sleep "$1"
        _now=$(blocked_count)
        [ "$_now" = "$BLOCKED_MARK" ] ||
                fail "$2: $((_now - BLOCKED_MARK)) Blocked signal(s) arrived: $(blocked_signals | tail -n +$((BLOCKED_MARK + 1)))"
        pass "$2: no Blocked signal within $1 s ($_now in all so far)"
}

# --- udev -----------------------------------------------------------------------------------

# start_udevd — systemd-udevd in the background (/init does not start it: without it the
# other scenarios see no udev events), then the cold-plug systemd-udev-trigger.service does:
# an "add" event for every block device, and settle. The image has 60-block.rules (write
# watch), 60-persistent-storage.rules (blkid builtin: ID_FS_*) and fsgate's
# 90-fsgate-blocked.rules. udevd's log: /run/fsgate-udevd.log.
start_udevd() {
        if ! udevadm control --ping 2>/dev/null; then
                /usr/lib/systemd/systemd-udevd </dev/null >/run/fsgate-udevd.log 2>&1 &
                _i=0
                until udevadm control --ping 2>/dev/null; do
                        _i=$((_i + 1))
                        [ $_i -gt 100 ] && fail "systemd-udevd did not start: $(tail -n 20 /run/fsgate-udevd.log)"
                        sleep 0.1
                done
        fi
        udevadm trigger --type=devices --action=add --subsystem-match=block ||
                fail "udevadm trigger (cold-plug) failed"
        udevadm settle --timeout=60 || fail "udevadm settle timed out: $(tail -n 20 /run/fsgate-udevd.log)"
        pass "systemd-udevd runs; block devices cold-plugged"
}

stop_udevd() {
        udevadm control --exit 2>/dev/null || true
}

# udev_add DEVICE — an "add" event for DEVICE (what plugging it in sends), waited for.
udev_add() {
        udevadm trigger --action=add --settle "$1" || fail "udevadm trigger --action=add $1 failed"
        udevadm settle --timeout=60 || fail "udevadm settle timed out"
}

# udev_prop DEVICE KEY — a property of DEVICE in udev's database ("" if none).
udev_prop() {
        udevadm info --query=property --property="$2" --value "$1" 2>/dev/null || true
}

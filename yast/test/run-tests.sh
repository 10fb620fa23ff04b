#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# run-tests.sh BUILD_DIR [RSPEC ARGS...]
#
# Runs the YaST module's rspec tests against the real fsgated: a private dbus-daemon
# configured like the system bus (tools/private-bus.conf.in plus the project's bus
# policy), BUILD_DIR/service/fsgated --root on a scratch root made from the Debian
# kernel's module tree, and a second scratch root for the offline mode
# (BUILD_DIR/clients/fsgatectl --root). A second, empty bus (no fsgated on it) tests the
# fallback when the service is unknown. Calls are made as root, which fsgated does not
# ask polkit about: there is no polkit here, mock or real.
#
# Exit status 77 (meson: skipped) when not root or when ruby, rspec (ruby-rspec),
# ruby-dbus or dbus-daemon is missing. Nothing outside a temporary directory is written.

set -euo pipefail

me=${0##*/}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
yast=$(dirname "$here")
src=$(dirname "$yast")

skip() {
        echo "$me: SKIP: $*" >&2
        exit 77
}
die() {
        echo "$me: error: $*" >&2
        exit 1
}

[[ $# -ge 1 ]] || { echo "usage: $me BUILD_DIR [RSPEC ARGS...]" >&2; exit 2; }
build=$(cd "$1" && pwd) || die "no build directory $1"
shift

[[ $(id -u) -eq 0 ]] || skip "must run as root (fsgated must own its bus name; scratch roots need root)"
command -v ruby >/dev/null 2>&1 || skip "ruby is missing (apt-get install ruby)"
command -v rspec >/dev/null 2>&1 || skip "rspec is missing (apt-get install ruby-rspec)"
ruby -e 'require "dbus"' >/dev/null 2>&1 || skip "ruby-dbus is missing (apt-get install ruby-dbus)"
command -v dbus-daemon >/dev/null 2>&1 || skip "dbus-daemon is missing (apt-get install dbus-daemon)"
fsgated=$build/service/fsgated
fsgatectl=$build/clients/fsgatectl
[[ -x $fsgated && -x $fsgatectl ]] || die "$fsgated or $fsgatectl is not built"

work=$(mktemp -d /tmp/fsgate-yast.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
        local p
        for p in "${pids[@]}"; do
                kill -CONT "$p" 2>/dev/null || true   # a test may have stopped fsgated
                kill "$p" 2>/dev/null || true
        done
        for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
        rm -rf -- "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The scratch roots (the kernel tree is fetched once and cached by fetch-kernel.sh).
make_root=${FSGATE_MAKE_SCRATCH_ROOT:-$src/tests/kernel/make-scratch-root.sh}
kver=$("$make_root" "$work/root" | sed -n 's/^KVER=//p')
"$make_root" "$work/offline" >/dev/null
[[ -n $kver ]] || die "make-scratch-root.sh printed no KVER="

start_bus() {
        local name=$1
        sed -e "s|@SOCKET@|$work/$name.sock|" -e "s|@POLICY@|$src/dbus/org.fsgate.fsgate1.conf|" \
                "$src/tools/private-bus.conf.in" >"$work/$name.conf"
        dbus-daemon --config-file="$work/$name.conf" --nofork --nopidfile 2>"$work/$name.log" &
        pids+=($!)
        for _ in $(seq 100); do
                [[ -S $work/$name.sock ]] && return 0
                sleep 0.05
        done
        cat "$work/$name.log" >&2
        die "dbus-daemon for $name did not start"
}
start_bus bus
start_bus empty-bus
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$work/bus.sock

"$fsgated" --root="$work/root" --idle-timeout=0 2>"$work/fsgated.log" &
daemon=$!
pids+=("$daemon")
for _ in $(seq 100); do
        busctl --system status org.fsgate.fsgate1 >/dev/null 2>&1 && break
        kill -0 "$daemon" 2>/dev/null || { cat "$work/fsgated.log" >&2; die "fsgated exited"; }
        sleep 0.05
done
busctl --system status org.fsgate.fsgate1 >/dev/null 2>&1 || {
        cat "$work/fsgated.log" >&2
        die "fsgated did not take its bus name"
}

export FSGATE_TEST_ROOT=$work/root
export FSGATE_TEST_OFFLINE_ROOT=$work/offline
export FSGATE_TEST_KVER=$kver
export FSGATE_TEST_DAEMON_PID=$daemon
export FSGATE_TEST_EMPTY_BUS=unix:path=$work/empty-bus.sock
export FSGATE_TEST_WORK=$work
export FSGATE_FSGATECTL=$fsgatectl

[[ $# -gt 0 ]] || set -- "$yast"/test/*_test.rb
status=0
rspec --format documentation "$@" || status=$?
if [[ $status -ne 0 ]]; then
        echo "--- fsgated's log" >&2
        cat "$work/fsgated.log" >&2
fi
exit "$status"

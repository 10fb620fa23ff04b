#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# run-tests.sh BUILD_DIR [RSPEC ARGS...]
#
# Runs the YaST module's rspec tests against the real fsgated: a private dbus-daemon
# configured like the system bus and BUILD_DIR/service/fsgated --root on a scratch root
# made from the Debian kernel's module tree (both started by tools/private-fsgated), and a
# second scratch root for the offline mode (BUILD_DIR/clients/fsgatectl --root). A second,
# empty bus (no fsgated on it) tests the fallback when the service is unknown. Calls are
# made as root, which fsgated does not ask polkit about: there is no polkit here, mock or
# real.
#
# Exit status 77 (meson: skipped) when not root or when ruby, rspec (ruby-rspec),
# ruby-dbus or dbus-daemon is missing. Nothing outside a temporary directory is written.

set -euo pipefail

me=${0##*/}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../../tests/lib/script-lib.sh
. "$here/../../tests/lib/script-lib.sh"
yast=$src/yast

[[ $# -ge 1 ]] || { echo "usage: $me BUILD_DIR [RSPEC ARGS...]" >&2; exit 2; }

[[ $(id -u) -eq 0 ]] || skip "must run as root (fsgated must own its bus name; scratch roots need root)"
command -v ruby >/dev/null 2>&1 || skip "ruby is missing (apt-get install ruby)"
command -v rspec >/dev/null 2>&1 || skip "rspec is missing (apt-get install ruby-rspec)"
ruby -e 'require "dbus"' >/dev/null 2>&1 || skip "ruby-dbus is missing (apt-get install ruby-dbus)"
command -v dbus-daemon >/dev/null 2>&1 || skip "dbus-daemon is missing (apt-get install dbus-daemon)"
use_build "$1"
shift

make_work yast

# The empty bus: nobody owns the name there. Started first: the bus with fsgated's
# environment, started next, replaces this one's.
start_private_fsgated "$work/empty" --no-fsgated
empty_bus=$DBUS_SYSTEM_BUS_ADDRESS

# The bus with fsgated over its scratch root (the kernel tree is fetched once and cached by
# fetch-kernel.sh), and a second scratch root for the offline mode.
start_private_fsgated "$work" --fsgated="$fsgated"
kver=$FSGATE_PRIVATE_KVER
[[ -n $kver ]] || die "make-scratch-root.sh printed no KVER="
"${FSGATE_MAKE_SCRATCH_ROOT:-$src/tests/kernel/make-scratch-root.sh}" "$work/offline" >/dev/null

export FSGATE_TEST_ROOT=$FSGATE_PRIVATE_ROOT
export FSGATE_TEST_OFFLINE_ROOT=$work/offline
export FSGATE_TEST_KVER=$kver
export FSGATE_TEST_DAEMON_PID=$FSGATE_PRIVATE_FSGATED_PID
export FSGATE_TEST_EMPTY_BUS=$empty_bus
export FSGATE_TEST_WORK=$work
export FSGATE_FSGATECTL=$fsgatectl

[[ $# -gt 0 ]] || set -- "$yast"/test/*_test.rb
run_test "$work" rspec --format documentation "$@"

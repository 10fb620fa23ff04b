#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# run-tests.sh BUILD_DIR ARTIFACTS_DIR
#
# fsgate's YaST module in YaST's real text UI (test-tui.py): builds YaST's text-mode stack
# once into a cached prefix (build-yast.sh), starts the built fsgated over a scratch root on
# a private bus (tools/private-fsgated), makes a second scratch root as the installation
# target, and drives `y2start fsgate ncurses` in tmux at 80x24, last in German with the
# build's catalogs (BUILD_DIR/po). Screens (text) and y2log are kept in ARTIFACTS_DIR.
#
# Exit status 77 (meson: skipped) when not root, when tmux, ruby-dbus or unshare is
# missing, or when build-yast.sh skips (no YaST sources, build dependencies missing).
# Nothing is written outside a temporary directory, the cache and ARTIFACTS_DIR: YaST runs
# in a private mount namespace where /var/log is the temporary directory's (in-namespace.sh).

set -euo pipefail

me=yast-tui
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib/script-lib.sh
. "$here/../lib/script-lib.sh"

[[ $# -eq 2 ]] || { echo "usage: $0 BUILD_DIR ARTIFACTS_DIR" >&2; exit 2; }
artifacts=$2

[[ $(id -u) -eq 0 ]] || skip "must run as root (fsgated's bus name, scratch roots, mount namespaces)"
command -v tmux >/dev/null || skip "tmux is missing (apt-get install tmux)"
command -v unshare >/dev/null || skip "unshare is missing (apt-get install util-linux)"
command -v ruby >/dev/null && ruby -e 'require "dbus"' 2>/dev/null || skip "ruby-dbus is missing (apt-get install ruby-dbus)"
# test-tui.py imports fsgatetest.yast (shared with tests/yast-qt).
use_harness_python
use_build "$1"

use_cached_build "$here/build-yast.sh" YaST

make_work yast-tui

make_root=${FSGATE_MAKE_SCRATCH_ROOT:-$src/tests/kernel/make-scratch-root.sh}
"$make_root" "$work/root" >/dev/null
# A grant (fsgatectl allow --for) as fsgated finds it when it starts, for End Grant: jfs,
# denied by a vendor file, loaded for another hour (as tests/cockpit/run-cockpit-test
# records one: on this host no grant that fsgated makes lasts, its load fails).
root=$work/root
printf '%s\n' 'blacklist jfs' >"$root/usr/lib/modprobe.d/60-blacklist_fs-jfs.conf"
mkdir -p "$root/run/fsgate/grants"
now_us=$(date +%s%6N)
printf 'module=jfs\nuid=0\nsince=%s\nuntil=%s\nboot=%s\n' "$now_us" "$((now_us + 3600000000))" \
        "$(tr -d '-' </proc/sys/kernel/random/boot_id)" >"$root/run/fsgate/grants/0123456789abcdef0123456789abcdef"
start_private_fsgated "$work/bus" --root="$root" --fsgated="$fsgated"
"$make_root" "$work/target" >/dev/null
mkdir -p "$work/bin" "$artifacts"
rm -f -- "$artifacts"/*.txt "$artifacts"/*-y2log "$artifacts"/*-stderr "$artifacts"/*-signal
cp "$fsgatectl" "$work/bin/fsgatectl"

run_test "$work/bus" "$python" "$here/test-tui.py" --prefix="$prefix" --y2dir="$src/yast/src" --bindir="$work/bin" \
        --root="$FSGATE_PRIVATE_ROOT" --target="$work/target" --work="$work" \
        --artifacts="$artifacts" --in-namespace="$here/in-namespace.sh" \
        --expected-texts="$here/expected-texts.rb" --yast-lib="$src/yast/src/lib" \
        --fake-yast="$src/yast/test/support/fake_yast" --locale-dir="$build/po" \
        --risk-facts="$src/data/risk/kernel-facts.tsv"

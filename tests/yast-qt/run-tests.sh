#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# run-tests.sh BUILD_DIR ARTIFACTS_DIR [--docs-screenshot PATH]
#
# fsgate's YaST module in YaST's real Qt UI (test-qt.py): builds libyui-qt and libyui's REST
# API once into a cached prefix on top of the text-mode stack (build-yast-qt.sh, which
# builds or reuses ../yast-tui's), starts the built fsgated over a scratch root on a private
# bus (tools/private-fsgated), an X server of its own (Xvfb on a free display) with openbox
# (popups centered and framed, as on a desktop), and drives `y2start fsgate qt` through the
# REST API. The screenshot and y2log are kept in ARTIFACTS_DIR; --docs-screenshot PATH
# copies the main dialog's screenshot to PATH too (docs/yast-qt.png, the README's).
#
# Exit status 77 (meson: skipped) when not root, when a tool is missing, or when
# build-yast-qt.sh skips. Nothing is written outside a temporary directory, the cache and
# ARTIFACTS_DIR (Xvfb's lock and socket aside, in /tmp): YaST runs in a private mount
# namespace where /var/log is the temporary directory's (../yast-tui/in-namespace.sh).

set -euo pipefail

me=yast-qt
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib/script-lib.sh
. "$here/../lib/script-lib.sh"

docs=()
if [[ $# -eq 4 && $3 == --docs-screenshot ]]; then
        docs=(--docs-screenshot="$(realpath -m "$4")")
elif [[ $# -ne 2 ]]; then
        echo "usage: $0 BUILD_DIR ARTIFACTS_DIR [--docs-screenshot PATH]" >&2
        exit 2
fi
artifacts=$2

[[ $(id -u) -eq 0 ]] || skip "must run as root (fsgated's bus name, scratch roots, mount namespaces)"
for tool in Xvfb:xvfb openbox:openbox import:imagemagick xwininfo:x11-utils unshare:util-linux; do
        command -v "${tool%%:*}" >/dev/null || skip "${tool%%:*} is missing (apt-get install ${tool#*:})"
done
command -v ruby >/dev/null && ruby -e 'require "dbus"' 2>/dev/null || skip "ruby-dbus is missing (apt-get install ruby-dbus)"
# test-qt.py imports fsgatetest.yast (shared with tests/yast-tui).
use_harness_python
use_build "$1"

use_cached_build "$here/build-yast-qt.sh" "YaST's Qt UI"

make_work yast-qt
start_private_fsgated "$work/bus" --fsgated="$fsgated"
mkdir -p "$work/bin" "$work/home" "$artifacts"
install -d -m 700 "$work/runtime"
rm -f -- "$artifacts"/*.png "$artifacts"/*.json "$artifacts"/*-y2log "$artifacts"/*-stderr
cp "$fsgatectl" "$work/bin/fsgatectl"

# A display of its own: Xvfb picks a free number and writes it to the descriptor given.
Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$work/display" 2>"$work/xvfb.log" &
pids+=($!)
for _ in $(seq 100); do
        [[ $(wc -l <"$work/display") -ge 1 ]] && break
        kill -0 "${pids[0]}" 2>/dev/null || { cat "$work/xvfb.log" >&2; die "Xvfb did not start"; }
        sleep 0.1
done
display=:$(head -n 1 "$work/display")
[[ $display != : ]] || die "Xvfb gave no display number"
HOME=$work/home XDG_RUNTIME_DIR=$work/runtime DISPLAY=$display openbox >"$work/openbox.log" 2>&1 &
pids+=($!)
echo "$me: Xvfb on $display, openbox"

run_test "$work/bus" "$python" "$here/test-qt.py" --qt-prefix="$prefix" --y2dir="$src/yast/src" --bindir="$work/bin" \
        --root="$FSGATE_PRIVATE_ROOT" --work="$work" --artifacts="$artifacts" \
        --in-namespace="$src/tests/yast-tui/in-namespace.sh" --display="$display" \
        --runtime-dir="$work/runtime" \
        --expected-texts="$src/tests/yast-tui/expected-texts.rb" --yast-lib="$src/yast/src/lib" \
        --fake-yast="$src/yast/test/support/fake_yast" "${docs[@]}"

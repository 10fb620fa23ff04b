#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# run-rspec-with-yast.sh BUILD_DIR
#
# The YaST module's rspec suite (yast/test/run-tests.sh) with the real YaST libraries on
# the load path: the ones build-yast.sh built (RUBYLIB, LD_LIBRARY_PATH from its env.sh),
# and yast2's Ruby libraries through Y2DIR. The dialog's examples on the fake UI are then
# skipped; CWM's own validation of the dialog's widgets runs instead.
#
# Loading the real "yast" as root logs to /var/log/YaST2/y2log: the suite runs in a
# private mount namespace in which /var/log is a temporary directory.
# Exit status 77 (skipped) where build-yast.sh skips or yast/test/run-tests.sh does.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/../.." && pwd)

[[ $# -eq 1 ]] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "yast-rspec: SKIP: must run as root" >&2; exit 77; }
command -v unshare >/dev/null || { echo "yast-rspec: SKIP: unshare is missing" >&2; exit 77; }

status=0
prefix=$("$here/build-yast.sh") || status=$?
[[ $status -eq 0 ]] || exit "$status"
# shellcheck source=/dev/null
source "$prefix/env.sh"
export Y2DIR=$src/yast/src

log=$(mktemp -d /tmp/fsgate-yast-rspec.XXXXXX)
trap 'rm -rf -- "$log"' EXIT
status=0
unshare --mount --propagation private -- bash -c 'mount --bind "$1" /var/log && shift && exec "$@"' \
        bash "$log" "$src/yast/test/run-tests.sh" "$1" || status=$?
if [[ $status -ne 0 && -f $log/YaST2/y2log ]]; then
        echo "--- y2log's errors" >&2
        grep ' <[345]> ' "$log/YaST2/y2log" >&2 || true
fi
exit "$status"

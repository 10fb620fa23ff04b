# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
#
# Sourced by the bash test runners (tests/yast-tui/run-tests.sh, tests/yast-tui/build-yast.sh,
# yast/test/run-tests.sh) so that meson's exit-status conventions and the layout of the
# tree are spelled once. The caller sets $me (its name in messages) before calling these.

# The source tree's root, whichever script sourced this file.
# shellcheck disable=SC2034 # used by the callers
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# Exit status 77 is meson's "skipped": a missing tool is not a failure of fsgate.
# shellcheck disable=SC2154 # $me is the caller's
skip() {
        echo "$me: SKIP: $*" >&2
        exit 77
}

# shellcheck disable=SC2154
die() {
        echo "$me: error: $*" >&2
        exit 1
}

# use_build DIR — sets build (absolute), fsgated and fsgatectl, which must be built.
use_build() {
        build=$(cd "$1" && pwd) || die "no build directory $1"
        fsgated=$build/service/fsgated
        fsgatectl=$build/clients/fsgatectl
        [[ -x $fsgated && -x $fsgatectl ]] || die "$fsgated or $fsgatectl is not built"
}

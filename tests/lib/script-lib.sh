# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
#
# Sourced by the bash test runners (tests/yast-tui, tests/yast-qt, yast/test, tests/ansible,
# tests/risk, tests/packaging) so that meson's exit-status conventions, the layout of the
# tree and a run's temporary directory with its private fsgated are spelled once. The
# caller sets $me (its name in messages) before calling these.

# The source tree's root, whichever script sourced this file.
# shellcheck disable=SC2034 # used by the callers
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# Exit status 77 is meson's "skipped": a missing tool is not a failure of fsgate.
# shellcheck disable=SC2154 # $me is the caller's
skip() {
        echo "$me: SKIP: $*" >&2
        exit 77
}

# die MESSAGE [STATUS] — exits with STATUS, 1 unless given (2: a usage error).
# shellcheck disable=SC2154
die() {
        echo "$me: error: $1" >&2
        exit "${2:-1}"
}

# A line of progress on stderr (stdout is the caller's answer).
# shellcheck disable=SC2154
note() {
        echo "$me: $*" >&2
}

# use_build DIR — sets build (absolute), fsgated and fsgatectl, which must be built.
use_build() {
        build=$(cd "$1" && pwd) || die "no build directory $1"
        fsgated=$build/service/fsgated
        fsgatectl=$build/clients/fsgatectl
        [[ -x $fsgated && -x $fsgatectl ]] || die "$fsgated or $fsgatectl is not built"
}

# use_harness_python — python: Debian's python3, with the test harness (tests/lib: the
# fsgatetest package) on its path, as meson sets it too. Skips without it.
use_harness_python() {
        python=/usr/bin/python3
        [[ -x $python ]] || skip "$python is missing"
        export PYTHONPATH=$src/tests/lib${PYTHONPATH:+:$PYTHONPATH} PYTHONDONTWRITEBYTECODE=1
}

# use_cached_build SCRIPT WHAT — sets prefix to what SCRIPT (a build kept in the cache:
# tests/yast-tui/build-yast.sh, tests/yast-qt/build-yast-qt.sh) prints; exits with its status
# when it fails (77: skipped, its reason on stderr).
use_cached_build() {
        local t=$SECONDS status=0
        prefix=$("$1") || status=$?
        [[ $status -eq 0 ]] || exit "$status"
        echo "$me: $2 from $prefix (ready after $((SECONDS - t)) s)"
}

# make_work NAME — work: a new /tmp/fsgate-NAME.XXXXXX that every user may enter (fsgated's
# callers run as others too), removed at exit with what was started in it: the private
# fsgateds of start_private_fsgated and the processes whose pids the caller adds to pids.
# An interrupt exits 130, after the same clean-up.
make_work() {
        work=$(mktemp -d "/tmp/fsgate-$1.XXXXXX")
        chmod 755 "$work"
        pids=()
        private_dirs=()
        trap cleanup_work EXIT
        trap 'exit 130' INT TERM
}

cleanup_work() {
        local p
        for p in "${pids[@]}"; do
                kill "$p" 2>/dev/null || true
        done
        for p in "${pids[@]}"; do
                wait "$p" 2>/dev/null || true
        done
        for p in "${private_dirs[@]}"; do
                "$src/tools/private-fsgated" stop "$p" 2>/dev/null || true
        done
        rm -rf -- "$work"
}

# start_private_fsgated DIR [ARG...] — tools/private-fsgated start --dir=DIR ARG..., its
# environment (DBUS_SYSTEM_BUS_ADDRESS, FSGATE_PRIVATE_*) set in this shell; stopped at exit
# (make_work first). Returns start's status when it fails.
start_private_fsgated() {
        local dir=$1 env
        shift
        private_dirs+=("$dir")
        env=$("$src/tools/private-fsgated" start --dir="$dir" --watch=$$ "$@") || return
        eval "$env"
}

# run_test DIR CMD [ARG...] — runs the test CMD and exits with its status; when it failed,
# after fsgated's log (DIR's, from start_private_fsgated) on stderr.
run_test() {
        local dir=$1 status=0
        shift
        "$@" || status=$?
        if [[ $status -ne 0 ]]; then
                echo "--- fsgated's log" >&2
                cat "$dir/fsgated.log" >&2 || true
        fi
        exit "$status"
}

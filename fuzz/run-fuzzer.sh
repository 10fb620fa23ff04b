#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# run-fuzzer.sh TARGET SEED_DIR SECONDS: fuzz for SECONDS; any crash, leak or sanitizer
# report fails the test and leaves the reproducer (crash-*) in the printed directory.
set -euo pipefail
target=$(realpath "$1") seeds=$(realpath "$2") seconds=$3
work=$(mktemp -d /tmp/fsgate-fuzz-run.XXXXXX)
cd "$work"
mkdir corpus
echo "fuzzing $(basename "$target") for ${seconds}s in $work"
"$target" -max_total_time="$seconds" -timeout=10 -error_exitcode=1 -rss_limit_mb=1024 -max_len=4096 \
        -print_final_stats=1 corpus "$seeds" 2>&1 | tail -25
status=${PIPESTATUS[0]}
if [ "$status" -eq 0 ]; then
        rm -rf "$work"
fi
exit "$status"

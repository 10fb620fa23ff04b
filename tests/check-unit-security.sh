#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Fails when the unit's exposure from `systemd-analyze security --offline=yes` is above
# 2.0, so a change that weakens the sandbox shows up in the packaging suite. Prints the
# figure either way. The verdict is systemd-analyze's own --threshold (0-100 scale), not
# a parse of the rounded figure.
set -u

unit=${1:?usage: check-unit-security.sh UNIT-FILE}
max=20   # exposure 2.0

if ! command -v systemd-analyze >/dev/null 2>&1; then
        echo "systemd-analyze not found: skipping"
        exit 77
fi

out=$(systemd-analyze security --offline=yes --no-pager --threshold="$max" "$unit" 2>&1)
rc=$?
figure=$(printf '%s\n' "$out" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
if [ -z "$figure" ]; then
        printf '%s\n' "$out"
        echo "FAIL: no exposure figure for $unit"
        exit 1
fi
echo "exposure of $(basename "$unit"): $figure (limit 2.0)"
if [ "$rc" -ne 0 ]; then
        # The settings that cost exposure, to see what changed.
        printf '%s\n' "$out" | grep '✗'
        echo "FAIL: exposure above 2.0"
        exit 1
fi

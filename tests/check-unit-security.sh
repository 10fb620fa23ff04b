#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Fails when the unit's capability bounding set is not exactly what the service needs, or
# when its exposure from `systemd-analyze security --offline=yes` is above 2.0, so a change
# that weakens the sandbox shows up in the packaging suite. Prints the figure either way.
# The verdict is systemd-analyze's own --threshold (0-100 scale), not a parse of the
# rounded figure.
#   check-unit-security.sh UNIT-FILE [ALLOWED [REQUIRED]]
# ALLOWED and REQUIRED: the capabilities the bounding set may and must hold, blank-separated;
# fsgated.service's by default. The report units pass two empty ones: no capability at all.
set -fu   # no globbing: capability names are split on blanks below

unit=${1:?usage: check-unit-security.sh UNIT-FILE [ALLOWED-CAPS [REQUIRED-CAPS]]}
# fsgated: only CAP_SYS_MODULE (loading) and CAP_DAC_READ_SEARCH (reading every file modprobe
# reads) may be in it, and the second must: without it one unreadable modprobe.d file breaks
# every method.
allowed=${2-CAP_SYS_MODULE CAP_DAC_READ_SEARCH}
required=${3-CAP_DAC_READ_SEARCH}
max=20   # exposure 2.0

# The bounding set as systemd builds it from an allow list: each CapabilityBoundingSet=
# line adds its names, an empty one starts over. No line (or an inverted "~" list) leaves
# capabilities the service must not have, so both fail.
caps='' seen=''
while IFS= read -r line; do
        line=${line#"${line%%[![:space:]]*}"}
        case $line in
        CapabilityBoundingSet=~*)
                echo "FAIL: $line: an inverted bounding set keeps every capability it does not name"
                exit 1 ;;
        CapabilityBoundingSet=*)
                seen=1
                value=${line#CapabilityBoundingSet=}
                if [ -z "$value" ]; then caps=; else caps="$caps $value"; fi ;;
        esac
done < "$unit"
if [ -z "$seen" ]; then
        echo "FAIL: no CapabilityBoundingSet= in $unit: the service would keep every capability"
        exit 1
fi
caps=$(printf '%s' "$caps" | tr -s '[:space:]' '\n' | tr '[:lower:]' '[:upper:]' | sed '/^$/d' | sort -u | tr '\n' ' ' | sed 's/ *$//')
echo "capability bounding set: ${caps:-(empty)}"
for cap in $caps; do
        case " $allowed " in
        *" $cap "*) ;;
        *) if [ -n "$allowed" ]; then echo "FAIL: $cap in the bounding set: only $allowed belong there"
           else echo "FAIL: $cap in the bounding set: the service needs no capability"; fi
           exit 1 ;;
        esac
done
for cap in $required; do
        case " $caps " in
        *" $cap "*) ;;
        *) echo "FAIL: $cap is not in the bounding set: the service needs it"
           exit 1 ;;
        esac
done

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

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# check-spec.sh — what can be checked of package/fsgate.spec without openSUSE.
#
# Usage: check-spec.sh [SPEC]      (default: package/fsgate.spec of this tree)
#
# 1. `rpmspec -P` parses it, with and without --with vendor_blacklist; any error, or any
#    warning, fails.
# 2. Every scriptlet of every subpackage passes `sh -n` (after rpm expanded it); the vendor
#    list's %pre and %post run fsgatectl exempt-loaded / list as designed.
# 3. Prints the macros that stayed unexpanded: they come from openSUSE's macro packages
#    (meson, systemd-rpm-macros) and are not checked here.
# Needs rpm (apt-get install rpm). Exit status: 0 fine, 1 a check failed, 2 usage error.

set -euo pipefail

me=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
spec=${1:-$here/../../package/fsgate.spec}

die() {
        echo "$me: error: $*" >&2
        exit "${2:-1}"
}
command -v rpmspec >/dev/null || die "rpmspec not found (apt-get install rpm)" 2
[ -f "$spec" ] || die "$spec does not exist" 2

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

for variant in default vendor_blacklist; do
        args=()
        [ "$variant" = default ] || args=(--with "$variant")
        rc=0
        rpmspec -P "${args[@]}" "$spec" >"$tmp/$variant.spec" 2>"$tmp/$variant.err" || rc=$?
        if [ "$rc" != 0 ] || grep -qiE '(^|: )(error|warning):' "$tmp/$variant.err"; then
                sed "s/^/rpmspec ($variant): /" "$tmp/$variant.err" >&2
                echo "FAIL: rpmspec -P ${args[*]} (exit status $rc)" >&2
                failed=1
                continue
        fi
        echo "ok: rpmspec -P ${args[*]:-(defaults)} parses ($(wc -l <"$tmp/$variant.spec") lines)"

        # Scriptlets: one file per package and kind, each checked with sh -n.
        rpmspec -q "${args[@]}" --qf '%{NAME}\n' "$spec" 2>/dev/null >"$tmp/$variant.names"
        for kind in PREIN POSTIN PREUN POSTUN POSTTRANS; do
                rpmspec -q "${args[@]}" --qf "%{NAME}\n%{$kind}\n@@end-of-scriptlet@@\n" "$spec" 2>/dev/null |
                        awk -v d="$tmp/$variant." -v k="$kind" 'BEGIN {RS = "\n@@end-of-scriptlet@@\n"}
                                {n = index($0, "\n"); name = substr($0, 1, n - 1); body = substr($0, n + 1)
                                 if (name != "" && body != "(none)") print body > (d name "." k)}'
        done
        for f in "$tmp/$variant".*.*; do
                case $f in *.spec | *.err | *.names) continue ;; esac
                if ! sh -n "$f" 2>"$tmp/sh.err"; then
                        echo "FAIL: ${f#"$tmp/"} does not parse as sh:" >&2
                        sed 's/^/    /' "$tmp/sh.err" >&2
                        failed=1
                fi
        done
        echo "ok: scriptlets of $(paste -sd' ' "$tmp/$variant.names") parse as sh"
done

# The vendor list's exemption, as designed: %pre remembers, %post exempts.
v=$tmp/vendor_blacklist.fsgate-vendor-blacklist
if [ -f "$v.PREIN" ] && grep -q 'fsgatectl --root=/ list' "$v.PREIN" &&
   [ -f "$v.POSTIN" ] && grep -q 'fsgatectl --root=/ exempt-loaded' "$v.POSTIN"; then
        echo "ok: fsgate-vendor-blacklist %pre lists what is in use, %post runs exempt-loaded"
else
        echo "FAIL: fsgate-vendor-blacklist lacks its %pre/%post exemption" >&2
        failed=1
fi
# In use is MOUNTED (column 6 of the list), never LOADED (5): any user's mount in a user
# namespace loads a module, and the exemption would keep it allowed.
if [ -f "$v.PREIN" ] && grep -qE '\$5 *== *"yes"' "$v.PREIN"; then
        echo "FAIL: fsgate-vendor-blacklist %pre counts a loaded module as in use" >&2
        failed=1
fi
if grep -q '^%files vendor-blacklist' "$tmp/default.spec" 2>/dev/null; then
        echo "FAIL: the default build has the vendor-blacklist subpackage (it is opt-in)" >&2
        failed=1
fi

# What stays unexpanded here needs openSUSE's macro packages.
grep -ohE '%\{?\??[a-z_][a-z0-9_]+' "$tmp"/*.spec | sed 's/[{?]//g' | sort -u |
        grep -vxE '%(package|description|prep|build|install|check|files|changelog|pre|post|preun|postun|posttrans|dir|doc|config|license)' \
        >"$tmp/unexpanded" || true
if [ -s "$tmp/unexpanded" ]; then
        echo "not checked here (macros of openSUSE's meson and systemd-rpm-macros packages): $(paste -sd' ' "$tmp/unexpanded")"
fi

exit "$failed"

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# build-debs.sh — build fsgate's Debian packages from this source tree and check them.
#
# Usage: build-debs.sh [--no-lintian] [--profiles P1,P2] OUTDIR
#
# Copies the tree (what git tracks plus untracked files that are not ignored; no .git, no
# build dirs) into a scratch directory, runs `dpkg-buildpackage -b -us -uc` there (it writes
# into the parent directory and into debian/, which the real tree must not get), runs lintian
# on the .changes (any error fails; warnings are printed) and puts the .deb files, the
# .changes, the .buildinfo, the build log and lintian's output into OUTDIR.
#
# Cache: OUTDIR/.source-key holds a checksum of the copied tree (names, modes, contents;
# not tests/vm/ and tests/packaging/) plus the options; when it matches and the .deb files
# are there, nothing is rebuilt.
# Delete OUTDIR (or the key) to force a build.
#
# Needs (Debian 12): dpkg-dev debhelper lintian fakeroot (git in a checkout), plus the
# Build-Depends of debian/control (dpkg-checkbuilddeps says what is missing).
# Exit status: 0 built (or cached), 1 build or lintian failure, 2 usage error.

set -euo pipefail

me=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)

die() {
        echo "$me: error: $*" >&2
        exit "${2:-1}"
}
note() {
        echo "$me: $*" >&2
}

lintian=1 profiles='' out=''
while [ $# -gt 0 ]; do
        case $1 in
        --no-lintian) lintian=''; shift ;;
        --profiles) profiles=${2:?--profiles needs a list}; shift 2 ;;
        --profiles=*) profiles=${1#*=}; shift ;;
        -h|--help) sed -n '4,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) die "unknown option '$1' (see --help)" 2 ;;
        *) [ -z "$out" ] || die "only one OUTDIR" 2; out=$1; shift ;;
        esac
done
[ -n "$out" ] || die "no OUTDIR given (see --help)" 2
for tool in dpkg-buildpackage dpkg-checkbuilddeps dh fakeroot tar sha256sum flock; do
        command -v "$tool" >/dev/null || die "'$tool' not found (apt-get install dpkg-dev debhelper fakeroot)"
done
[ -z "$lintian" ] || command -v lintian >/dev/null || die "'lintian' not found (apt-get install lintian)"
[ -f "$src/debian/control" ] || die "no debian/control in $src"

mkdir -p "$out"
out=$(cd "$out" && pwd)
# One build at a time per OUTDIR (meson runs tests in parallel).
exec 9>"$out/.lock"
flock 9 || die "cannot lock $out/.lock"

# --- What goes into the copy, and its key ------------------------------------------------
# In a git checkout: tracked and untracked-but-not-ignored files that exist (a tracked file
# may be deleted in the working tree). Build dirs are ignored by .gitignore; excluded anyway.
list=$(mktemp)
work=''
cleanup() {
        rm -f "$list" "$list.key"
        [ -z "$work" ] || rm -rf -- "$work"
}
trap cleanup EXIT
list_sources() {
        if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
                (cd "$src" && git ls-files -z --cached --others --exclude-standard)
        else
                # Not a git checkout (a release tarball): everything but build dirs.
                (cd "$src" && find . \( -name .git -o -path './build' -o -path './build-*' \) -prune -o \
                        ! -type d -printf '%P\0')
        fi
}
list_sources |
        while IFS= read -r -d '' f; do
                case $f in build/* | build-*/* | .git/*) continue ;; esac
                [ -e "$src/$f" ] || [ -L "$src/$f" ] || continue
                printf '%s\0' "$f"
        done | LC_ALL=C sort -zu >"$list"
[ -s "$list" ] || die "found no source files in $src"

# The key leaves out the VM and packaging test scripts (they do not go into a package, and
# editing a scenario should not cost a package build); this script itself counts.
tr '\0' '\n' <"$list" | grep -vE '^tests/(vm|packaging)/' | tr '\n' '\0' >"$list.key"
key=$(
        {
                echo "profiles=$profiles lintian=$lintian"
                sha256sum <"$0"
                (cd "$src" && xargs -0 stat -c '%n %a %F' <"$list.key")
                (cd "$src" && xargs -0 sha256sum <"$list.key" 2>/dev/null)
        } | sha256sum | cut -c1-32
)
if [ -f "$out/.source-key" ] && [ "$(cat "$out/.source-key")" = "$key" ] &&
   ls "$out"/*.deb >/dev/null 2>&1; then
        note "sources unchanged since the last build; the packages in $out are current"
        ls -1 "$out"/*.deb
        exit 0
fi

# --- Build in a copy ---------------------------------------------------------------------
t0=$(date +%s)
work=$(mktemp -d "${TMPDIR:-/tmp}/fsgate-debs.XXXXXX")
mkdir "$work/fsgate"
(cd "$src" && tar --null --no-recursion -T "$list" -cf -) | tar -C "$work/fsgate" -xf -
chmod -R u+w,go-w "$work/fsgate"

cd "$work/fsgate"
dpkg-checkbuilddeps ${profiles:+-P"$profiles"} ||
        die "build dependencies missing (the list above; apt-get install them)"
rm -f "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo "$out/.source-key"
# The Cockpit page's npm packages, from the cache install-deps filled (see debian/rules).
FSGATE_NODE_MODULES=$("$src/cockpit/node-modules") || die "the Cockpit page's npm packages are missing"
export FSGATE_NODE_MODULES
note "dpkg-buildpackage -b -us -uc${profiles:+ -P$profiles} in $work/fsgate (log: $out/build.log)"
if ! dpkg-buildpackage -b -us -uc ${profiles:+-P"$profiles"} >"$out/build.log" 2>&1; then
        tail -n 60 "$out/build.log" >&2
        die "dpkg-buildpackage failed (full log: $out/build.log)"
fi
cd "$work"
changes=$(ls -1 "$work"/*.changes | head -n1)
[ -f "$changes" ] || die "dpkg-buildpackage made no .changes"
note "built in $(($(date +%s) - t0)) s: $(cd "$work" && echo *.deb)"

# --- lintian -----------------------------------------------------------------------------
if [ -n "$lintian" ]; then
        # E: fails, W:/I:/N: are printed. --fail-on error is lintian's default; say it anyway.
        lrc=0
        lintian --fail-on error "$changes" >"$out/lintian.log" 2>&1 || lrc=$?
        if [ -s "$out/lintian.log" ]; then
                sed 's/^/lintian: /' "$out/lintian.log" >&2
        fi
        if [ "$lrc" != 0 ] || grep -q '^E: ' "$out/lintian.log"; then
                die "lintian reported errors (exit status $lrc; see $out/lintian.log)"
        fi
        note "lintian: $(grep -c '^E: ' "$out/lintian.log" || true) errors, $(grep -c '^W: ' "$out/lintian.log" || true) warnings, $(grep -c '^I: ' "$out/lintian.log" || true) info"
fi

cp -f "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo "$out/"
echo "$key" >"$out/.source-key"
ls -1 "$out"/*.deb

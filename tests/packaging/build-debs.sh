#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# build-debs.sh — build fsgate's Debian packages from the release tarball and check them.
#
# Usage: build-debs.sh [--no-lintian] [--profiles P1,P2] [--dist-dir DIR] OUTDIR
#
# The tarball comes from make-dist.sh into DIR (default: OUTDIR/../dist; the README's
# `meson dist`, shared with the RPM test). Then the README's Debian lines run as written
# (tests/packaging/readme-block.sh; all but the `apt install`) in a scratch directory that
# holds the tarball where they expect it: it is unpacked there and `dpkg-buildpackage -b -us
# -uc` runs in it, as a distribution builds: no network (a network namespace of its own,
# where unshare can make one), HOME an empty directory, npm_config_offline set, and node,
# nodejs, npm and npx first on PATH as stand-ins that note every call (any call fails the
# test). The cockpit-fsgate package must hold the whole page, its bundle byte for byte the
# tarball's cockpit/dist. Then lintian on the .changes (any error fails; warnings are
# printed); the .deb files, the .changes, the .buildinfo, the build log and lintian's output
# go into OUTDIR.
#
# Cache: OUTDIR/.source-key holds a checksum of the tarball's key (make-dist.sh: the tree's
# files) plus this script and the options; when it matches and the .deb files are there,
# nothing is rebuilt. Delete OUTDIR (or the key) to force a build.
#
# Needs (Debian 12): dpkg-dev debhelper lintian fakeroot (git in a checkout), plus the
# Build-Depends of debian/control (dpkg-buildpackage says what is missing), and what
# make-dist.sh needs.
# Exit status: 0 built (or cached), 1 build or lintian failure, 2 usage error.

set -euo pipefail

me=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/script-lib.sh
. "$here/../lib/script-lib.sh"

lintian=1 profiles='' out='' dist=''
while [ $# -gt 0 ]; do
        case $1 in
        --no-lintian) lintian=''; shift ;;
        --profiles) profiles=${2:?--profiles needs a list}; shift 2 ;;
        --profiles=*) profiles=${1#*=}; shift ;;
        --dist-dir) dist=${2:?--dist-dir needs a directory}; shift 2 ;;
        --dist-dir=*) dist=${1#*=}; shift ;;
        -h|--help) sed -n '4,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) die "unknown option '$1' (see --help)" 2 ;;
        *) [ -z "$out" ] || die "only one OUTDIR" 2; out=$1; shift ;;
        esac
done
[ -n "$out" ] || die "no OUTDIR given (see --help)" 2
for tool in dpkg-buildpackage dpkg-deb dh tar sha256sum flock; do
        command -v "$tool" >/dev/null || die "'$tool' not found (apt-get install dpkg-dev debhelper fakeroot)"
done
[ -z "$lintian" ] || command -v lintian >/dev/null || die "'lintian' not found (apt-get install lintian)"
[ -f "$src/debian/control" ] || die "no debian/control in $src"

mkdir -p "$out"
out=$(cd "$out" && pwd)
dist=${dist:-$(dirname "$out")/dist}

# --- The release tarball (make-dist.sh: the README's meson dist), and the key ----------
tarball=$("$here/make-dist.sh" "$dist") || die "no release tarball (make-dist.sh $dist)"
version=$(basename "$tarball" .tar.xz)
version=${version#fsgate-}

# One build at a time per OUTDIR (meson runs tests in parallel).
exec 9>"$out/.lock"
flock 9 || die "cannot lock $out/.lock"
work=''
cleanup() {
        [ -z "$work" ] || rm -rf -- "$work"
}
trap cleanup EXIT
key=$(
        {
                echo "profiles=$profiles lintian=$lintian"
                sha256sum <"$0"
                sha256sum <"$here/readme-block.sh"
                cat "$dist/.source-key"
        } | sha256sum | cut -c1-32
)
if [ -f "$out/.source-key" ] && [ "$(cat "$out/.source-key")" = "$key" ] &&
   ls "$out"/*.deb >/dev/null 2>&1; then
        note "sources unchanged since the last build; the packages in $out are current"
        ls -1 "$out"/*.deb
        exit 0
fi

# --- The README's lines, from the tarball, offline ---------------------------------------
t0=$(date +%s)
work=$(mktemp -d "${TMPDIR:-/tmp}/fsgate-debs.XXXXXX")
block=$("$here/readme-block.sh" dpkg-buildpackage)
# Where the README's lines find the tarball (they run where `meson dist` ran).
mkdir -p "$work/build-release/meson-dist" "$work/home" "$work/no-npm"
cp "$tarball" "$work/build-release/meson-dist/"
for p in node nodejs npm npx; do
        printf '#!/bin/sh\necho "%s $*" >>"%s/npm-calls"\nexit 127\n' "$p" "$work" >"$work/no-npm/$p"
        chmod +x "$work/no-npm/$p"
done
offline=()
if unshare -n true 2>/dev/null; then
        offline=(unshare -n)
else
        note "unshare -n is not possible here: the build runs with the network"
fi
rm -f "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo "$out/.source-key"
note "the README's lines, as written (not the apt line), in $work, offline, HOME empty, no npm (log: $out/build.log):"
grep -v '^apt ' <<<"$block" | sed 's/^/    /' >&2
if ! (cd "$work" && env -u FSGATE_NODE_MODULES -u FSGATE_CACHE HOME="$work/home" PATH="$work/no-npm:$PATH" \
        npm_config_offline=true ${profiles:+DEB_BUILD_PROFILES="${profiles//,/ }"} \
        "${offline[@]}" bash -euo pipefail -c "$(grep -v '^apt ' <<<"$block")") >"$out/build.log" 2>&1; then
        tail -n 60 "$out/build.log" >&2
        die "dpkg-buildpackage failed (full log: $out/build.log)"
fi
if [ -s "$work/npm-calls" ]; then
        sed 's/^/    called: /' "$work/npm-calls" >&2
        die "the build from the tarball called node or npm"
fi
changes=$(ls -1 "$work"/*.changes 2>/dev/null | head -n1)
[ -f "$changes" ] || die "dpkg-buildpackage made no .changes in the README's directory"
note "built in $(($(date +%s) - t0)) s: $(cd "$work" && echo *.deb)"

# --- The Cockpit page, whole, and the tarball's bundle -----------------------------------
page=$(ls -1 "$work"/cockpit-fsgate_*.deb | head -n1)
[ -f "$page" ] || die "no cockpit-fsgate package"
mkdir "$work/page"
dpkg-deb -x "$page" "$work/page"
for f in index.html manifest.json fsgate.js fsgate.css po.de.js; do
        [ -s "$work/page/usr/share/cockpit/fsgate/$f" ] || die "cockpit-fsgate lacks /usr/share/cockpit/fsgate/$f"
done
for f in fsgate.js fsgate.css; do
        cmp -s "$work/page/usr/share/cockpit/fsgate/$f" "$work/fsgate-$version/cockpit/dist/$f" ||
                die "cockpit-fsgate's $f is not the tarball's cockpit/dist/$f"
done
note "cockpit-fsgate: the page, its bundle the tarball's"
cd "$work"

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

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# make-dist.sh OUTDIR — the release tarball of this tree, made the README's way, into
# OUTDIR/fsgate-VERSION.tar.xz (its path on stdout). The Debian and RPM package tests
# (build-debs.sh, build-rpm.sh) build from it, as distributions do: one tarball for both.
#
# In a git checkout: the README's `meson dist` block (tests/packaging/readme-block.sh), run
# as written in a scratch git repository holding the tree as it is now (tracked files and
# untracked ones that are not ignored: `meson dist` takes only what is committed, and the
# tests are of the working tree). Not a checkout (a `git archive` of an older commit, as
# tests/system/build-prev-debs builds, or a release tree): a copy of the tree with the page
# bundled by cockpit/dist-page, as `meson dist` does.
#
# Cache: OUTDIR/.source-key, a checksum of the tree's files (names, modes, contents; not
# tests/vm/ and tests/packaging/ but this script; the npm lock among them); when it
# matches, the tarball there is current. One run at a time per OUTDIR (flock).
# Needs meson, git, node and the Cockpit page's npm packages (tools/install-deps).
set -euo pipefail

me=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/script-lib.sh
. "$here/../lib/script-lib.sh"
[ $# = 1 ] || { echo "usage: make-dist.sh OUTDIR" >&2; exit 2; }
mkdir -p "$1"
out=$(cd "$1" && pwd)
exec 8>"$out/.lock"
flock 8 || die "cannot lock $out/.lock"
version=$(sed -n "s/^ *version: *'\([^']*\)'.*/\1/p" "$src/meson.build" | head -n1)
[ -n "$version" ] || die "no version in $src/meson.build"
tarball=$out/fsgate-$version.tar.xz

list=$(mktemp)
work=''
cleanup() {
        rm -f "$list" "$list.key"
        [ -z "$work" ] || rm -rf -- "$work"
}
trap cleanup EXIT
git=''
git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1 && git=1
list_sources() {
        if [ -n "$git" ]; then
                (cd "$src" && git ls-files -z --cached --others --exclude-standard)
        else
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

# The VM and packaging test scripts do not go into a package: editing one costs no tarball.
tr '\0' '\n' <"$list" | grep -vE '^tests/(vm|packaging)/' | tr '\n' '\0' >"$list.key"
key=$(
        {
                echo "git=$git"
                sha256sum <"$0"
                (cd "$src" && xargs -0 stat -c '%n %a %F' <"$list.key")
                (cd "$src" && xargs -0 sha256sum <"$list.key" 2>/dev/null)
        } | sha256sum | cut -c1-32
)
if [ -f "$out/.source-key" ] && [ "$(cat "$out/.source-key")" = "$key" ] && [ -f "$tarball" ]; then
        note "sources unchanged: $tarball is current"
        echo "$tarball"
        exit 0
fi
rm -f "$out/.source-key" "$out"/fsgate-*.tar.xz

t0=$(date +%s)
work=$(mktemp -d "${TMPDIR:-/tmp}/fsgate-dist.XXXXXX")
mkdir "$work/fsgate"
(cd "$src" && tar --null --no-recursion -T "$list" -cf -) | tar -C "$work/fsgate" -xf -
chmod -R u+w,go-w "$work/fsgate"
cd "$work/fsgate"
if [ -n "$git" ]; then
        # A repository of its own: its one commit is the tree as it is now.
        git init -q
        git add -A
        git -c user.name=fsgate-test -c user.email=fsgate-test@localhost.invalid \
                commit -q --no-verify -m "the tree as it is now"
        block=$("$here/readme-block.sh" "meson dist")
        note "the README's lines, as written, in a copy of the tree:"
        sed 's/^/    /' <<<"$block" >&2
        bash -euo pipefail -c "$block" >"$out/dist.log" 2>&1 || {
                tail -n 30 "$out/dist.log" >&2
                die "the README's meson dist failed (log: $out/dist.log)"
        }
        made=$(find "$work/fsgate" -path '*/meson-dist/*.tar.xz' | head -n1)
        [ -f "$made" ] || die "the README's lines made no tarball (log: $out/dist.log)"
        [ "${made##*/}" = "fsgate-$version.tar.xz" ] || die "the README's lines made ${made##*/}, not fsgate-$version.tar.xz"
else
        note "not a git checkout: the tree itself, with the page bundled by cockpit/dist-page"
        rm -rf "$work/fsgate/cockpit/dist"
        cockpit/dist-page "$work/fsgate" >"$out/dist.log" 2>&1 || { cat "$out/dist.log" >&2; die "cockpit/dist-page failed"; }
        mv "$work/fsgate" "$work/fsgate-$version"
        made=$work/fsgate-$version.tar.xz
        tar -C "$work" -cJf "$made" "fsgate-$version"
fi
tar -tJf "$made" "fsgate-$version/cockpit/dist/fsgate.js" "fsgate-$version/cockpit/dist/fsgate.css" >/dev/null ||
        die "the tarball lacks the built Cockpit page (cockpit/dist)"
cp "$made" "$tarball"
echo "$key" >"$out/.source-key"
note "made in $(($(date +%s) - t0)) s: $tarball"
echo "$tarball"

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# check-risk-data.sh SOURCE_ROOT — data/risk/kernel-facts.tsv is what tools/gen-risk-data reads
# from the Debian kernel source its #source line names, the check can fail, and
# tools/risk-data-to-c turns the committed files into C that compiles.
#
# The package (linux-source-6.1_VERSION_all.deb, about 140 MB) is kept in
# ${FSGATE_CACHE:-$HOME/.cache/fsgate}/linux-source/ and downloaded pinned to that version when
# missing. Exit 77 (meson: skipped) when it can be had neither from the cache nor the mirror,
# as happens once Debian drops the version: then regenerate the data from a current one.

set -euo pipefail

me=${0##*/}
# shellcheck source=../lib/script-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/script-lib.sh"

[[ $# -eq 1 ]] || { echo "usage: $me SOURCE_ROOT" >&2; exit 2; }
root=$(cd "$1" && pwd)
facts=$root/data/risk/kernel-facts.tsv
curated=$root/data/risk/curated.tsv
gen=$root/tools/gen-risk-data
to_c=$root/tools/risk-data-to-c

for tool in dpkg-deb tar xz flock cc diff; do
        command -v "$tool" >/dev/null 2>&1 || skip "'$tool' not found"
done
[[ -x /usr/bin/python3 ]] || skip "/usr/bin/python3 not found"

# "#source KERNEL_VERSION PACKAGE DEBIAN_VERSION": the package the committed data was read from.
read -r kver pkg debver < <(awk -F'\t' '$1 == "#source" { print $2, $3, $4; exit }' "$facts") ||
        die "$facts has no #source line"
[[ $pkg =~ ^linux-source-[0-9.]+$ && $debver =~ ^[0-9][A-Za-z0-9.+~-]*$ ]] ||
        die "$facts: unexpected #source package '$pkg' version '$debver'"

cache=${FSGATE_CACHE:-${HOME:?HOME is not set and FSGATE_CACHE is not set}/.cache/fsgate}/linux-source
deb=$cache/${pkg}_${debver}_all.deb

if [[ ! -f $deb ]]; then
        command -v apt-get >/dev/null 2>&1 || skip "$deb is missing and apt-get is not here to download it"
        mkdir -p "$cache" || die "cannot create $cache"
        exec 9>"$cache/.lock" || die "cannot open $cache/.lock"
        flock 9 || die "cannot lock $cache/.lock"
        # Another run may have fetched it while this one waited.
        if [[ ! -f $deb ]]; then
                rm -rf -- "$cache"/.tmp.*
                dl=$(mktemp -d "$cache/.tmp.XXXXXX") || die "cannot create a directory in $cache"
                # As root, apt drops to _apt for the download, which cannot write to a 0700
                # directory under $HOME.
                chmod 755 "$dl"
                echo "$me: downloading $pkg=$debver (about 140 MB)" >&2
                if ! (cd "$dl" && apt-get -q download -o APT::Sandbox::User=root "$pkg=$debver" >&2); then
                        rm -rf -- "$dl"
                        skip "cannot download $pkg=$debver (gone from the mirror, or no mirror):" \
                                "regenerate data/risk/kernel-facts.tsv from a version the mirror has (data/risk/README.md)"
                fi
                got=("$dl"/"${pkg}"_*_all.deb)
                [[ -f ${got[0]} ]] || { rm -rf -- "$dl"; die "apt-get download left no ${pkg}_*_all.deb"; }
                mv -f -- "${got[0]}" "$deb" || { rm -rf -- "$dl"; die "cannot move the package to $deb"; }
                rm -rf -- "$dl"
        fi
        exec 9>&-
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-risk-data.XXXXXX")
trap 'rm -rf -- "$tmp"' EXIT

# (b) The committed data against what the generator reads from that source.
dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$pkg.tar.xz" | xz -dc |
        tar -x -C "$tmp" --wildcards "$pkg/MAINTAINERS" "$pkg/Makefile" "$pkg/fs/*" ||
        die "cannot extract $pkg/{MAINTAINERS,Makefile,fs} from $deb"
src=$tmp/$pkg

"$gen" "$src" "$pkg" "$debver" >"$tmp/kernel-facts.tsv" 2>"$tmp/gen.log" ||
        { cat "$tmp/gen.log" >&2; die "tools/gen-risk-data failed on $pkg $debver"; }
if ! diff -u "$facts" "$tmp/kernel-facts.tsv"; then
        cat >&2 <<EOF
$me: FAIL: data/risk/kernel-facts.tsv is not what tools/gen-risk-data reads from $pkg $debver
(a change of tools/gen-risk-data?). Regenerate it, from the source tree:
  d=\$(mktemp -d) && dpkg-deb --fsys-tarfile $deb | tar -xO ./usr/src/$pkg.tar.xz | tar -xJ -C "\$d" --wildcards $pkg/MAINTAINERS $pkg/Makefile '$pkg/fs/*' && tools/gen-risk-data "\$d/$pkg" $pkg $debver >data/risk/kernel-facts.tsv; rm -rf "\$d"
EOF
        exit 1
fi
rows=$(grep -vc '^#' "$facts")

# (c) The comparison notices a changed fact: HFS marked Maintained changes the hfs row.
mod=$tmp/modified
mkdir "$mod"
ln -s "$src/Makefile" "$mod/Makefile"
ln -s "$src/fs" "$mod/fs"
awk '/^HFS FILESYSTEM$/ { sec = 1 } /^$/ { sec = 0 }
     sec && /^S:/ { print "S:\tMaintained"; next } { print }' "$src/MAINTAINERS" >"$mod/MAINTAINERS"
cmp -s "$src/MAINTAINERS" "$mod/MAINTAINERS" && die "found no S: line of HFS FILESYSTEM to change"
"$gen" "$mod" "$pkg" "$debver" >"$tmp/modified.tsv" 2>/dev/null || die "tools/gen-risk-data failed on the modified MAINTAINERS"
old_hfs=$(awk -F'\t' '$1 == "hfs"' "$facts")
new_hfs=$(awk -F'\t' '$1 == "hfs"' "$tmp/modified.tsv")
[[ -n $old_hfs && $new_hfs != "$old_hfs" ]] || die "marking HFS Maintained did not change the hfs row"
[[ $(cut -f3 <<<"$new_hfs") == Maintained ]] || die "hfs row with HFS marked Maintained: $new_hfs"
diff -q "$facts" "$tmp/modified.tsv" >/dev/null && die "the regenerated file compares equal despite the change"

# ... and the generator refuses a tree that is not one.
nomake=$tmp/no-makefile
mkdir "$nomake"
ln -s "$src/MAINTAINERS" "$nomake/MAINTAINERS"
ln -s "$src/fs" "$nomake/fs"
if "$gen" "$nomake" "$pkg" "$debver" >/dev/null 2>&1; then
        die "tools/gen-risk-data accepted a SRC_DIR without Makefile"
fi

# (d) The committed files become C that compiles, holds every row, sorted for bsearch().
"$to_c" "$facts" "$curated" "$tmp/risk-data.c" || die "tools/risk-data-to-c failed on the committed files"
cc -std=gnu11 -Wall -Wextra -Werror -c -I "$root/core" -o "$tmp/risk-data.o" "$tmp/risk-data.c" ||
        die "the generated risk-data.c does not compile"
cat >"$tmp/walk.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include "risk.h"

int main(void) {
        size_t curated = 0;

        for (size_t i = 0; i < fsg_risk_table_n; i++) {
                if (i > 0 && strcmp(fsg_risk_table[i - 1].module, fsg_risk_table[i].module) >= 0) {
                        fprintf(stderr, "not sorted at %s\n", fsg_risk_table[i].module);
                        return 1;
                }
                if (fsg_risk_table[i].upstream[0] != '\0')
                        curated++;
        }
        printf("%zu %zu %s\n", fsg_risk_table_n, curated, fsg_risk_source);
        return 0;
}
EOF
cc -std=gnu11 -Wall -Wextra -Werror -I "$root/core" -o "$tmp/walk" "$tmp/walk.c" "$tmp/risk-data.o" ||
        die "a program using the table does not link"
read -r n_c n_curated c_source < <("$tmp/walk") || die "the table is not sorted"
n_curated_file=$(grep -vc '^#' "$curated")
[[ $n_c == "$rows" ]] || die "the C table has $n_c modules, kernel-facts.tsv $rows"
[[ $n_curated == "$n_curated_file" ]] || die "the C table has $n_curated curated facts, curated.tsv $n_curated_file"
[[ $c_source == "$kver (Debian $pkg $debver)" ]] || die "fsg_risk_source is '$c_source'"

# Malformed curated files stop the build.
{ cat "$curated"; grep -v '^#' "$curated" | head -n1; } >"$tmp/duplicate.tsv"
{ cat "$curated"; printf 'nosuchfs\tremoved in Linux 99.0\thttps://example.invalid/\n'; } >"$tmp/unknown.tsv"
for bad in duplicate unknown; do
        rc=0
        "$to_c" "$facts" "$tmp/$bad.tsv" "$tmp/$bad.c" 2>"$tmp/$bad.log" || rc=$?
        [[ $rc -eq 1 ]] || die "tools/risk-data-to-c exited $rc, not 1, on a curated file with a $bad module"
        [[ ! -e $tmp/$bad.c ]] || die "tools/risk-data-to-c left $bad.c behind"
done

echo "$me: kernel-facts.tsv: $rows modules, as tools/gen-risk-data reads them from $pkg $debver ($(tail -n1 "$tmp/gen.log" | sed 's/^gen-risk-data: //'))"
echo "$me: a changed MAINTAINERS status changes the hfs row; a SRC_DIR without Makefile is refused"
echo "$me: risk-data.c: $n_c modules sorted, $n_curated curated facts merged, compiles with -Wall -Wextra -Werror; duplicate and unknown curated modules refused"

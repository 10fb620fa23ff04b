#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# build-yast-qt.sh
#
# Builds YaST's Qt UI (libyui-qt) and libyui's REST API (libyui-rest-api,
# libyui-qt-rest-api) on top of the text-mode stack of ../yast-tui/build-yast.sh, and prints
# the prefix Q holding them on stdout. ../shared/facts/yast-qt.md has the steps and pitfalls.
#
# The text-mode prefix P (build-yast.sh, cached) is never written to: libyui has its plugin
# directory compiled in, and every lib/YaST2/plugin library must come from the prefix whose
# paths are compiled in (a copied prefix crashes y2start). So Q holds libyui itself, rebuilt
# from the same tarball with Q as its prefix (its plugin directory is Q/lib/yui), the three
# plugins, and a link to P's libyui-ncurses plugin; run with Q/lib ahead of P's libraries
# (Q/env.sh sets that up, for `y2start CLIENT qt` and `y2start CLIENT ncurses` alike).
#
# Q is ${FSGATE_CACHE:-~/.cache/fsgate}/yast-qt-KEY, KEY a hash of P's name (its own key),
# the libyui tarball's SHA-256 and this script's code (comment lines left out). Built once
# under a lock (the cache's yast-qt.lock), in a temporary directory renamed to Q at the end:
# a failed build leaves nothing under Q, its logs stay in Q.failed/logs. About 2¼ minutes on
# 2 cores; FSGATE_YAST_JOBS (default 2) sets make's -j. Prefixes unused for two days go.
# Exit status 77 (skipped) when build-yast.sh skips or Qt's build dependencies are missing.
set -euo pipefail

me="build-yast-qt.sh"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
self=$here/$me
# shellcheck source=../lib/script-lib.sh
. "$here/../lib/script-lib.sh"

case ${1:-} in
-h | --help) sed -n '3,/^set -euo/p' "$self" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
"") ;;
*) die "unknown argument '$1' (see --help)" ;;
esac

cache=${FSGATE_CACHE:-${HOME:-/root}/.cache/fsgate}
jobs=${FSGATE_YAST_JOBS:-2}

status=0
P=$("$src/tests/yast-tui/build-yast.sh") || status=$?
[[ $status -eq 0 ]] || exit "$status" # 77: skipped, with the reason on stderr

# The libyui tarball P was built from: build-yast.sh's pinned commit, from the first of its
# source directories holding it (it has found or fetched them all just now).
libyui_commit=$(sed -n 's/^[[:space:]]*"libyui libyui\/libyui \([0-9a-f]*\)"$/\1/p' "$src/tests/yast-tui/build-yast.sh")
[[ -n $libyui_commit ]] || die "no libyui commit in build-yast.sh's components"
tarball=
for d in ${FSGATE_YAST_SOURCES:+"$FSGATE_YAST_SOURCES"} "$(dirname "$src")/shared/third_party/yast" "$cache/yast-sources"; do
        if [[ -f $d/libyui-$libyui_commit.tar.gz ]]; then
                tarball=$d/libyui-$libyui_commit.tar.gz
                break
        fi
done
[[ -n $tarball ]] || skip "no libyui-$libyui_commit.tar.gz where build-yast.sh looks for sources"

# Debian package names (tools/install-deps installs them).
missing=()
[[ -f /usr/lib/x86_64-linux-gnu/cmake/Qt5Widgets/Qt5WidgetsConfig.cmake ||
   -n $(find /usr/lib -path '*/cmake/Qt5Widgets/Qt5WidgetsConfig.cmake' -print -quit 2>/dev/null) ]] || missing+=(qtbase5-dev)
[[ -n $(find /usr/lib -path '*/cmake/Qt5X11Extras/Qt5X11ExtrasConfig.cmake' -print -quit 2>/dev/null) ]] ||
        missing+=(libqt5x11extras5-dev)
[[ -f /usr/include/microhttpd.h ]] || missing+=(libmicrohttpd-dev)
[[ -f /usr/include/jsoncpp/json/json.h ]] || missing+=(libjsoncpp-dev)
[[ ${#missing[@]} -eq 0 ]] || skip "build dependencies missing: apt-get install ${missing[*]} (tools/install-deps)"

key=$( {
        echo "${P##*/}"
        sha256sum <"$tarball"
        grep -v '^[[:space:]]*#' "$self" | sha256sum
} | sha256sum | cut -c1-16)
Q=$cache/yast-qt-$key

if [[ ! -f $Q/.complete ]]; then
        exec 9>"$cache/yast-qt.lock"
        if ! flock -n 9; then
                echo "$me: another build holds $cache/yast-qt.lock: waiting" >&2
                flock 9
        fi
fi
if [[ -f $Q/.complete ]]; then
        touch "$Q" # last used: see the clean-up at the end
        echo "$Q"
        exit 0
fi

# Compiled for Q (its rpath, libyui's plugin directory), installed with DESTDIR into the
# temporary directory, whose copy of Q is renamed to Q once everything is there.
rm -rf "$Q" "$Q.failed"
tmp=$(mktemp -d "$cache/.yast-qt-$key.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
stage=$tmp/destdir
mkdir -p "$tmp/logs" "$tmp/src"
echo "$me: building libyui-qt and the REST API from $tarball into $Q (logs: $tmp/logs)" >&2
start=$SECONDS

export CFLAGS="-O1 -g0"
# Debian has json/json.h in /usr/include/jsoncpp, where the REST API's sources do not look.
export CXXFLAGS="-O1 -g0 -I/usr/include/jsoncpp"
tar -xzf "$tarball" -C "$tmp/src"
top=$tmp/src/libyui-$libyui_commit

# In place (SUB/build): upstream's combined layout, where libyui-qt and the REST API find
# the fresh libyui.so at ../../libyui/build/src.
for sub in libyui libyui-qt libyui-rest-api libyui-qt-rest-api; do
        t=$SECONDS
        echo "$me: $sub" >&2
        if ! (
                set -x
                cd "$top"
                # Their tests need boost-test, which Debian's libboost-dev lacks.
                sed -i '/add_subdirectory( *tests *)/d' "$sub/CMakeLists.txt"
                cmake -S "$sub" -B "$sub/build" -DCMAKE_INSTALL_PREFIX="$Q" -DLIB_DIR=lib \
                        -DCMAKE_INSTALL_LIBDIR=lib -DWERROR=OFF -DBUILD_EXAMPLES=OFF -DBUILD_DOC=OFF \
                        -DCMAKE_BUILD_TYPE=None -DCMAKE_INSTALL_RPATH="$Q/lib"
                make -C "$sub/build" -j"$jobs"
                make -C "$sub/build" install DESTDIR="$stage"
        ) >"$tmp/logs/$sub.log" 2>&1; then
                echo "$me: error: building $sub failed; the end of its log:" >&2
                tail -n 40 "$tmp/logs/$sub.log" >&2
                mkdir -p "$Q.failed"
                mv "$tmp/logs" "$Q.failed/logs"
                echo "$me: the whole log: $Q.failed/logs/$sub.log" >&2
                exit 1
        fi
        echo "$me: $sub done in $((SECONDS - t)) s" >&2
done

q=$stage$Q
for f in libyui-qt.so.16 libyui-rest-api.so.16 libyui-qt-rest-api.so.16; do
        [[ -e $q/lib/yui/$f ]] || die "$f was not installed into lib/yui"
done
# libyui looks for every plugin in its own plugin directory: ncurses too, from P.
for f in "$P"/lib/yui/libyui-ncurses.so*; do
        ln -s "$f" "$q/lib/yui/${f##*/}"
done
mv "$tmp/logs" "$q/logs"
cat >"$q/env.sh" <<EOF
# Source this to run YaST from $P with the UIs of $Q
# (written by tests/yast-qt/build-yast-qt.sh): \`y2start CLIENT qt\` with DISPLAY set, or
# \`y2start CLIENT ncurses\`; YUI_HTTP_PORT=N opens the REST API.
. $(printf '%q' "$P/env.sh")
export YAST_QT_PREFIX=$(printf '%q' "$Q")
# Q's libyui first: it is the one that looks for plugins in Q/lib/yui.
export LD_LIBRARY_PATH=\$YAST_QT_PREFIX/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
# Qt refuses a missing or shared runtime directory with a warning on every start.
if [[ -z \${XDG_RUNTIME_DIR:-} ]]; then
        XDG_RUNTIME_DIR=\$(mktemp -d "\${TMPDIR:-/tmp}/yast-qt-runtime.XXXXXX")
        export XDG_RUNTIME_DIR
fi
EOF
: >"$q/.complete"
mv "$q" "$Q"
echo "$me: built in $((SECONDS - start)) s" >&2
# Prefixes of other sources or versions of this script, unused for two days, go.
find "$cache" -mindepth 1 -maxdepth 1 -type d -name 'yast-qt-????????????????*' ! -path "$Q" \
        -mtime +2 -exec rm -rf {} + 2>/dev/null || true
echo "$Q"

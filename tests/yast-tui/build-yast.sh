#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# build-yast.sh [--prefix=DIR]
#
# Builds YaST's text-mode stack (yast-devtools, yast-core, libyui + libyui-ncurses,
# yast-ycp-ui-bindings, yast-ruby-bindings with y2start, the Ruby libraries of yast-yast2,
# abstract_method) from source into a private prefix, and prints that prefix on stdout.
# yast2 and libyui are not in Debian; ../shared/facts/yast.md has the steps and pitfalls.
#
# Sources, the first found:
#   1. $FSGATE_YAST_SOURCES: a directory of NAME-COMMIT12.tar.gz tarballs;
#   2. shared/third_party/yast/ next to the repository (../shared from its root);
#   3. git clones of the pinned commits from GitHub, archived into the cache as tarballs
#      (where the network allows; set FSGATE_YAST_NO_NETWORK=1 to never try).
# Neither: exit status 77 (skipped) and the reason on stderr.
#
# The prefix is ${FSGATE_CACHE:-~/.cache/fsgate}/yast-KEY, KEY a hash of the tarballs'
# SHA-256 sums and of this script's code (comment lines left out): it is built once and
# reused until either changes; prefixes unused for two days are removed. A lock
# (flock on the cache's yast.lock) makes a second caller wait for the first one's build
# instead of building again. A failed build leaves nothing under the final name; its logs
# stay in PREFIX.failed/logs. Builds never write outside the cache (no /usr, no /etc).
# About 12 minutes of CPU time (yast-core and libyui most of it): 23 minutes on a 2-core
# machine busy with other builds. FSGATE_YAST_JOBS (default 2) sets make's -j.
#
# --prefix=DIR builds into DIR without a key or lock, resuming after the last component
# that was finished there (for working on this script).
#
# The prefix holds env.sh, which sets PATH, LD_LIBRARY_PATH and RUBYLIB for running
# `y2start CLIENT ncurses`, and the variables YAST_PREFIX and YAST_RUBYLIB.
set -euo pipefail

me="build-yast.sh"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
self=$here/$me
# shellcheck source=../lib/script-lib.sh
. "$here/../lib/script-lib.sh"

# name (the tarball's and directory's), GitHub repository, pinned commit (12 digits: a
# full clone resolves it)
components=(
        "yast-devtools yast/yast-devtools fa19489a9f0c"
        "yast-core yast/yast-core a16fc0bb0271"
        "libyui libyui/libyui c2bd8423bd3e"
        "yast-ycp-ui-bindings yast/yast-ycp-ui-bindings a40f7591dbc6"
        "yast-ruby-bindings yast/yast-ruby-bindings 58f961325a04"
        "yast-yast2 yast/yast-yast2 a393fc9e0113"
        "abstract_method openSUSE/abstract_method a54511f43fcb"
)

prefix=
for arg; do
        case $arg in
        --prefix=*) prefix=${arg#*=} ;;
        -h | --help) sed -n '3,/^set -euo/p' "$self" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument '$arg' (see --help)" ;;
        esac
done

cache=${FSGATE_CACHE:-${HOME:-/root}/.cache/fsgate}
jobs=${FSGATE_YAST_JOBS:-2}

# ---- Sources ----------------------------------------------------------------------------
has_all_tarballs() { # DIR
        local c name commit
        for c in "${components[@]}"; do
                read -r name _ commit <<<"$c"
                [[ -f $1/$name-$commit.tar.gz ]] || return 1
        done
}

# Clones each repository and archives the pinned commit as NAME-COMMIT.tar.gz in DIR.
fetch_from_github() { # DIR
        local dir=$1 c name repo commit tmp
        command -v git >/dev/null || return 1
        mkdir -p "$dir"
        tmp=$(mktemp -d "$dir/.clone.XXXXXX")
        for c in "${components[@]}"; do
                read -r name repo commit <<<"$c"
                [[ -f $dir/$name-$commit.tar.gz ]] && continue
                echo "$me: cloning $repo for $commit" >&2
                GIT_TERMINAL_PROMPT=0 timeout 300 git clone -q --filter=blob:none \
                        "https://github.com/$repo.git" "$tmp/$name" >&2 || { rm -rf "$tmp"; return 1; }
                git -C "$tmp/$name" archive --format=tar.gz --prefix="$name-$commit/" \
                        -o "$dir/.$name-$commit.tar.gz" "$commit" || { rm -rf "$tmp"; return 1; }
                mv "$dir/.$name-$commit.tar.gz" "$dir/$name-$commit.tar.gz"
        done
        rm -rf "$tmp"
}

sources=
if [[ -n ${FSGATE_YAST_SOURCES:-} ]]; then
        has_all_tarballs "$FSGATE_YAST_SOURCES" ||
                die "FSGATE_YAST_SOURCES=$FSGATE_YAST_SOURCES lacks some of the tarballs ($(for c in "${components[@]}"; do set -- $c; printf '%s-%s.tar.gz ' "$1" "$3"; done))"
        sources=$(cd "$FSGATE_YAST_SOURCES" && pwd)
elif has_all_tarballs "$(dirname "$src")/shared/third_party/yast"; then
        sources=$(dirname "$src")/shared/third_party/yast
elif has_all_tarballs "$cache/yast-sources"; then
        sources=$cache/yast-sources
elif [[ ${FSGATE_YAST_NO_NETWORK:-0} != 1 ]] && fetch_from_github "$cache/yast-sources" 2>"$cache/yast-sources.log"; then
        sources=$cache/yast-sources
else
        skip "no YaST sources: neither \$FSGATE_YAST_SOURCES nor $(dirname "$src")/shared/third_party/yast holds the tarballs, and cloning from GitHub failed or was not allowed (see $cache/yast-sources.log)"
fi

# ---- Build dependencies -------------------------------------------------------------------
# Debian package names (tools/install-deps installs them); what is missing skips the suite.
need=(g++:g++ make:make cmake:cmake pkg-config:pkg-config autoreconf:autoconf automake:automake
      libtoolize:libtool msgfmt:gettext flex:flex bison:bison ruby:ruby xsltproc:xsltproc
      expect:expect runtest:dejagnu)
missing=()
for n in "${need[@]}"; do
        command -v "${n%%:*}" >/dev/null || missing+=("${n#*:}")
done
[[ -f /usr/include/FlexLexer.h ]] || missing+=(libfl-dev)
[[ -d /usr/include/boost ]] || missing+=(libboost-dev)
[[ -f /usr/include/ncursesw/ncurses.h || -f /usr/include/ncurses.h ]] || missing+=(libncurses-dev)
ruby -e 'require "mkmf"; exit(File.exist?(File.join(RbConfig::CONFIG["rubyhdrdir"], "ruby.h")))' 2>/dev/null ||
        missing+=(ruby-dev)
perl -MXML::Writer -e 1 2>/dev/null || missing+=(libxml-writer-perl)
[[ -d /usr/share/xml/docbook/stylesheet/docbook-xsl ]] || missing+=(docbook-xsl)
[[ ${#missing[@]} -eq 0 ]] || skip "build dependencies missing: apt-get install ${missing[*]} (tools/install-deps)"

# ---- Prefix and lock ----------------------------------------------------------------------
if [[ -z $prefix ]]; then
        mkdir -p "$cache"
        key=$( {
                for c in "${components[@]}"; do
                        read -r name _ commit <<<"$c"
                        sha256sum <"$sources/$name-$commit.tar.gz"
                done
                grep -v '^[[:space:]]*#' "$self" | sha256sum
        } | sha256sum | cut -c1-16)
        prefix=$cache/yast-$key
        if [[ ! -f $prefix/.complete ]]; then
                exec 9>"$cache/yast.lock"
                if ! flock -n 9; then
                        echo "$me: another build holds $cache/yast.lock: waiting" >&2
                        flock 9
                fi
        fi
        if [[ -f $prefix/.complete ]]; then
                touch "$prefix" # last used: see the clean-up at the end
                echo "$prefix"
                exit 0
        fi
        # Built under its final path (the rpaths and compiled-in paths point there), marked
        # complete last; a leftover from an interrupted build is started afresh.
        rm -rf "$prefix" "$prefix.failed"
        resume=0
else
        mkdir -p "$prefix"
        prefix=$(cd "$prefix" && pwd)
        resume=1
fi

P=$prefix
mkdir -p "$P/logs" "$P/src"
work=$P/src
echo "$me: building YaST's text-mode stack from $sources into $P (logs: $P/logs)" >&2
start=$SECONDS

fail() { # COMPONENT
        echo "$me: error: building $1 failed; the end of $P/logs/$1.log:" >&2
        tail -n 40 "$P/logs/$1.log" >&2
        if [[ $resume == 0 ]]; then
                rm -rf "$P.failed"
                mv "$P" "$P.failed"
                echo "$me: the whole log: $P.failed/logs/$1.log" >&2
        fi
        exit 1
}

export PATH=$P/bin:$P/sbin:$PATH
export PKG_CONFIG_PATH=$P/lib/pkgconfig:$P/share/pkgconfig
export CPPFLAGS="-I$P/include -I$P/include/yui"
export LDFLAGS="-L$P/lib -Wl,-rpath,$P/lib -Wl,-rpath,$P/lib/YaST2/plugin"
export LD_LIBRARY_PATH=$P/lib:$P/lib/YaST2/plugin
# No debug information and -O1: faster to compile than -O2 -g; the tests need no speed.
export CFLAGS="-O1 -g0" CXXFLAGS="-O1 -g0"
# Ruby's build paths, for yast-ruby-bindings.
ruby_archhdrdir=$(ruby -e 'print RbConfig::CONFIG["rubyarchhdrdir"]')
ruby_library=$(ruby -e 'print File.join(RbConfig::CONFIG["archlibdir"], RbConfig::CONFIG["LIBRUBY_SO"])')

unpack() { # NAME: the directory of the unpacked tarball
        local c name commit
        for c in "${components[@]}"; do
                read -r name _ commit <<<"$c"
                [[ $name == "$1" ]] || continue
                rm -rf "${work:?}/$name-$commit"
                tar -xzf "$sources/$name-$commit.tar.gz" -C "$work"
                echo "$work/$name-$commit"
                return 0
        done
        die "no component $1"
}

# Runs "build_NAME DIR" with its output in logs/NAME.log, once per prefix.
step() { # NAME
        local name=$1 dir t=$SECONDS
        [[ -f $P/.done-$name ]] && return 0
        echo "$me: $name" >&2
        dir=$(unpack "$name")
        (cd "$dir" && set -x && "build_${name//-/_}" "$dir") >"$P/logs/$name.log" 2>&1 || fail "$name"
        rm -rf "$dir"
        : >"$P/.done-$name"
        echo "$me: $name done in $((SECONDS - t)) s" >&2
}

autotools_install() { # EXTRA MAKE ARGS...
        ./configure --prefix="$P" --libdir="$P/lib" --disable-static
        make -j"$jobs" "$@"
        make install "$@"
}

build_yast_devtools() {
        make -f Makefile.cvs all
        ./configure --prefix="$P" --libdir="$P/lib"
        make -j"$jobs"
        # Its rpm macros go to /usr/lib/rpm/macros.d by default.
        make install rpmdir="$P/lib/rpm/macros.d"
}

build_yast_core() {
        y2tool y2autoconf
        y2tool y2automake
        autoreconf -fi
        autotools_install
}

build_libyui() {
        local sub
        for sub in libyui libyui-ncurses; do
                # Their tests need boost-test, which Debian's libboost-dev lacks.
                sed -i '/add_subdirectory( *tests *)/d' "$sub/CMakeLists.txt"
                cmake -S "$sub" -B "build-$sub" -DCMAKE_INSTALL_PREFIX="$P" -DLIB_DIR=lib \
                        -DCMAKE_INSTALL_LIBDIR=lib -DCMAKE_PREFIX_PATH="$P" -DWERROR=OFF \
                        -DBUILD_EXAMPLES=OFF -DBUILD_DOC=OFF -DCMAKE_BUILD_TYPE=None \
                        -DCMAKE_INSTALL_RPATH="$P/lib"
                make -C "build-$sub" -j"$jobs"
                make -C "build-$sub" install
        done
}

build_yast_ycp_ui_bindings() {
        y2tool y2autoconf
        y2tool y2automake
        autoreconf -fi
        autotools_install DEVTOOLSBINDIR="$P/share/YaST2/data/devtools/bin"
}

build_yast_ruby_bindings() {
        local d v
        cmake -S . -B build -DCMAKE_INSTALL_PREFIX="$P" -DLIB=lib -DBUILD_TESTING=OFF \
                -DCMAKE_MODULE_PATH="$P/share/cmake/Modules" -DCMAKE_PREFIX_PATH="$P" \
                -DRUBY_LIBRARY="$ruby_library" -DCMAKE_CXX_FLAGS="-I$ruby_archhdrdir" \
                -DCMAKE_INSTALL_RPATH="$P/lib;$P/lib/YaST2/plugin"
        make -C build -j"$jobs"
        # Its Ruby files go to Ruby's vendor directories (.../vendor_ruby/3.1.0, for .rb and
        # .so files): install aside, move them into PREFIX/ruby, the rest into the prefix.
        make -C build install DESTDIR="$PWD/destdir"
        mkdir -p "$P/ruby"
        while IFS= read -r d; do
                for v in "$d"/*; do
                        if [[ -d $v && ${v##*/} =~ ^[0-9.]+$ ]]; then
                                cp -a "$v/." "$P/ruby/"
                        else
                                cp -a "$v" "$P/ruby/"
                        fi
                done
                rm -rf "$d"
        done < <(find destdir -type d -name vendor_ruby -prune)
        [[ -f $P/ruby/yast.rb && -f $P/ruby/yastx.so ]] || { echo "no yast.rb or yastx.so installed" >&2; return 1; }
        cp -a "destdir$P/." "$P/"
}

build_yast_yast2() {
        local d sub
        mkdir -p "$P/share/YaST2"
        for d in library/*/src; do
                for sub in modules lib clients include scrconf; do
                        [[ -d $d/$sub ]] || continue
                        mkdir -p "$P/share/YaST2/$sub"
                        cp -a "$d/$sub/." "$P/share/YaST2/$sub/"
                done
        done
}

build_abstract_method() {
        # Used from its tree: its lib/ reads VERSION next to it.
        rm -rf "$P/abstract_method"
        mkdir -p "$P/abstract_method"
        cp -a . "$P/abstract_method/"
}

for c in "${components[@]}"; do
        read -r name _ _ <<<"$c"
        step "$name"
done

cat >"$P/env.sh" <<EOF
# Source this to run YaST from $P (written by tests/yast-tui/build-yast.sh).
export YAST_PREFIX=$(printf '%q' "$P")
export YAST_RUBYLIB=\$YAST_PREFIX/ruby:\$YAST_PREFIX/abstract_method/lib
export RUBYLIB=\$YAST_RUBYLIB\${RUBYLIB:+:\$RUBYLIB}
export LD_LIBRARY_PATH=\$YAST_PREFIX/lib:\$YAST_PREFIX/lib/YaST2/plugin\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
export PATH=\$YAST_PREFIX/lib/YaST2/bin:\$YAST_PREFIX/sbin:\$YAST_PREFIX/bin:\$PATH
EOF
rm -rf "$P/src"
: >"$P/.complete"
echo "$me: built in $((SECONDS - start)) s" >&2
# Prefixes of other sources or versions of this script, unused for two days, go.
if [[ $resume == 0 ]]; then
        find "$cache" -mindepth 1 -maxdepth 1 -type d -name 'yast-????????????????*' ! -path "$P" \
                -mtime +2 -exec rm -rf {} + 2>/dev/null || true
fi
echo "$P"

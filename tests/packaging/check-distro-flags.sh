#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# check-distro-flags.sh SOURCE-DIR — builds the C sources with openSUSE's optimization flags
# (its rpm optflags, _FORTIFY_SOURCE=3 among them) plus -Werror, as its build service would:
# the build must leave _FORTIFY_SOURCE to them (no "redefined" warning) and compile cleanly.
# Without them, the build's own -D_FORTIFY_SOURCE=2 must be there.
set -eu
src=${1:?usage: check-distro-flags.sh SOURCE-DIR}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags='-O2 -Wall -D_FORTIFY_SOURCE=3 -fstack-protector-strong -funwind-tables -fasynchronous-unwind-tables -fstack-clash-protection -Werror=return-type -flto=auto'

CFLAGS="$flags" LDFLAGS='-flto=auto' meson setup "$tmp/distro" "$src" -Dwerror=true -Dman=disabled \
        -Dkernel-tests=false -Dfuzzing=false >"$tmp/setup.log" 2>&1 || { cat "$tmp/setup.log"; exit 1; }
if ! ninja -C "$tmp/distro" >"$tmp/build.log" 2>&1; then
        grep -m 20 -E 'error|warning' "$tmp/build.log"
        echo "FAIL: the build with openSUSE's flags and -Werror failed"
        exit 1
fi
n=$(grep -c '_FORTIFY_SOURCE' "$tmp/distro/compile_commands.json" || true)
grep -q 'D_FORTIFY_SOURCE=2' "$tmp/distro/compile_commands.json" &&
        { echo "FAIL: the build added -D_FORTIFY_SOURCE=2 beside the distribution's 3"; exit 1; }
echo "ok: built with openSUSE's flags and -Werror; _FORTIFY_SOURCE=3 on $n compile commands, no =2"

meson setup "$tmp/plain" "$src" -Dman=disabled -Dkernel-tests=false -Dfuzzing=false >"$tmp/setup2.log" 2>&1 ||
        { cat "$tmp/setup2.log"; exit 1; }
grep -q 'D_FORTIFY_SOURCE=2' "$tmp/plain/compile_commands.json" ||
        { echo "FAIL: without a distribution's flags the build has no -D_FORTIFY_SOURCE=2"; exit 1; }
echo "ok: without them, the build's own -D_FORTIFY_SOURCE=2"

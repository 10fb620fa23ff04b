#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# readme-block.sh WORDS — prints the first ```sh block of the README's *Install* section that
# has a line containing WORDS (fixed string), as written: the packaging tests run the
# README's commands, not copies of them.
set -euo pipefail
readme=$(cd "$(dirname "$0")/../.." && pwd)/README.md
[ $# = 1 ] || { echo "usage: readme-block.sh WORDS" >&2; exit 2; }
awk -v want="$1" '
        /^## / { install = ($0 == "## Install") }
        install && /^```sh$/ { inblock = 1; block = ""; hit = 0; next }
        inblock && /^```$/ { inblock = 0; if (hit) { printf "%s", block; found = 1; exit } next }
        inblock { block = block $0 "\n"; if (index($0, want)) hit = 1 }
        END { exit !found }
' "$readme" || { echo "readme-block.sh: no sh block with '$1' under ## Install in $readme" >&2; exit 1; }

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# check-po.sh SOURCE_ROOT — every translation in po/ is complete and current: the texts
# extracted now from po/POTFILES (as `ninja fsgate-pot` would) merged into each LANG.po
# leave nothing untranslated or fuzzy, and msgfmt --check accepts the result (format
# strings agree with their msgids). Exit 77 (skipped) without gettext's tools.
set -euo pipefail

src=${1:?usage: check-po.sh SOURCE_ROOT}
for tool in xgettext msgmerge msgfmt; do
        command -v "$tool" >/dev/null || { echo "check-po: $tool not found (apt-get install gettext)"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The same extraction as meson's preset "glib" for these sources; the ITS rules for the
# polkit policy come from po/its.
cd "$src"
GETTEXTDATADIRS=po xgettext --package-name=fsgate --from-code=UTF-8 --add-comments=TRANSLATORS: \
        --keyword=_ --keyword=N_ --keyword=n_:1,2 -f po/POTFILES -o "$tmp/fsgate.pot"
failed=0

# The YaST module's .rb files go to rxgettext (ruby-gettext), which silently extracts no
# text of a file after a binary "|" (taken for a block's |arguments|, ruby-gettext 3.3).
# xgettext's Python scanner reads their plain _("...") calls too: each text it finds must
# be in the catalog.
mapfile -t rb < <(grep -E '^[^#].*\.rb$' po/POTFILES || true)
if [[ ${#rb[@]} -gt 0 ]]; then
        xgettext --language=Python --from-code=UTF-8 --keyword=_ --keyword=n_:1,2 \
                -o "$tmp/rb-check.pot" "${rb[@]}" 2>/dev/null
        ids() { msgcat --no-wrap --no-location "$1" | grep '^msgid ' | sort -u; }
        missed=$(comm -23 <(ids "$tmp/rb-check.pot") <(ids "$tmp/fsgate.pot"))
        if [[ -n $missed ]]; then
                printf 'FAIL: not extracted from the .rb files in po/POTFILES:\n%s\n' "$missed" >&2
                failed=1
        fi
fi
while read -r lang _; do
        case $lang in '' | '#'*) continue ;; esac
        msgmerge --quiet --no-fuzzy-matching "po/$lang.po" "$tmp/fsgate.pot" -o "$tmp/$lang.po"
        stats=$(msgfmt --check --statistics -o /dev/null "$tmp/$lang.po" 2>&1)
        echo "$lang: $stats"
        if grep -qE 'untranslated|fuzzy' <<<"$stats"; then
                echo "FAIL: po/$lang.po is not complete; run: ninja -C BUILD fsgate-pot fsgate-update-po" >&2
                failed=1
        fi
done <po/LINGUAS
exit "$failed"

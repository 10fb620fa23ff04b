#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# build-rpm.sh SOURCE-DIR [DIST-DIR] — the README's `rpmbuild -tb` of the release tarball
# (make-dist.sh into DIST-DIR, shared with the Debian test; default: a scratch directory) on
# this Debian machine, with the vendor deny list (FSGATE_RPM_VARIANTS="default
# vendor_blacklist" for both), then what rpm built against what `meson install` puts in place.
#   - the README's line runs as written, with what Debian's rpm needs appended:
#     openSUSE's build macros that Debian's rpm lacks come from a STAND-IN
#     (tests/packaging/opensuse-build-macros), with openSUSE Tumbleweed's optflags;
#     --nodeps, because openSUSE's BuildRequires have other names here (gettext-tools,
#     systemd-rpm-macros, pkgconfig(...) resolved by rpm's database, which Debian's packages
#     are not in); the build itself finds them all through pkg-config. Like a distribution's
#     build: no network (where unshare can make a namespace), HOME empty, node and npm on
#     PATH stand-ins that fail the test when called;
#   - every subpackage is built, %check runs the unit suite;
#   - cockpit-fsgate holds the whole page, its bundle the tarball's cockpit/dist;
#   - `rpm -qlp` of all packages together is exactly the files and directories below /usr and
#     /etc that `meson install` (the same options, DESTDIR) made: nothing missing, nothing
#     unowned (directories rpm owns that meson makes are listed; shared ones such as
#     /usr/share are not fsgate's).
#   - the scriptlets, by rpm -i/-U/-e --root into scratch roots: install-rpm.sh.
set -euo pipefail
src=$(cd "${1:?usage: build-rpm.sh SOURCE-DIR [DIST-DIR]}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
command -v rpmbuild >/dev/null || { echo "rpmbuild not found (apt-get install rpm)"; exit 77; }
tmp=$(mktemp -d)
# KEEP=1 keeps the work directory (and prints where it is).
if [ -n "${KEEP:-}" ]; then echo "work dir: $tmp" >&2; else trap 'rm -rf "$tmp"' EXIT; fi

# The release tarball, the README's way (its name is the spec's Source0).
tarball=$("$here/make-dist.sh" "${2:-$tmp/dist}") || { echo "FAIL: no release tarball (make-dist.sh)"; exit 1; }
name=$(basename "$tarball" .tar.xz)
line=$("$here/readme-block.sh" "rpmbuild -tb" | grep '^rpmbuild -tb ')
line=${line%%#*}
echo "the README's line: $line"

# No npm, no network, an empty HOME: node and npm stand-ins that note every call.
mkdir -p "$tmp/no-npm" "$tmp/home"
for p in node nodejs npm npx; do
        printf '#!/bin/sh\necho "%s $*" >>"%s/npm-calls"\nexit 127\n' "$p" "$tmp" >"$tmp/no-npm/$p"
        chmod +x "$tmp/no-npm/$p"
done
offline=()
if unshare -n true 2>/dev/null; then offline=(unshare -n); else echo "note: unshare -n is not possible here: rpmbuild runs with the network"; fi

fail=0
# With the vendor list: every subpackage (rpm-spec checks the spec without it parses; a
# second build would double the time for one subpackage less).
for variant in ${FSGATE_RPM_VARIANTS:-vendor_blacklist}; do
        args=()
        [ "$variant" = default ] || args=(--with "$variant")
        top=$tmp/$variant
        # Where the README's line finds the tarball (it runs where `meson dist` ran).
        mkdir -p "$top/build-release/meson-dist"
        cp "$tarball" "$top/build-release/meson-dist/"
        if ! (cd "$top" && env -u FSGATE_NODE_MODULES -u FSGATE_CACHE HOME="$tmp/home" \
                PATH="$tmp/no-npm:$PATH" npm_config_offline=true "${offline[@]}" \
                bash -c "$line \"\$@\"" rpmbuild --noclean --nodeps "${args[@]}" --define "_topdir $top" \
                --load "$here/opensuse-build-macros") >"$tmp/$variant.log" 2>&1; then
                tail -n 40 "$tmp/$variant.log"
                echo "FAIL: $line --nodeps ${args[*]}"
                fail=1
                continue
        fi
        if [ -s "$tmp/npm-calls" ]; then
                sed 's/^/    called: /' "$tmp/npm-calls"
                echo "FAIL: the build from the tarball called node or npm"
                fail=1
        fi
        rpms=$(find "$top/RPMS" -name '*.rpm' | sort)
        echo "ok: rpmbuild -tb ${args[*]}: $(for r in $rpms; do basename "$r"; done | paste -sd' ')"
        grep -q 'Ok: *[1-9]' "$tmp/$variant.log" || { echo "FAIL: %check ran no test"; fail=1; }

        # The Cockpit page, whole, its bundle the tarball's.
        page=$(find "$top/RPMS" -name 'cockpit-fsgate-*.rpm' | head -n1)
        mkdir -p "$tmp/$variant.page" "$tmp/$variant.dist"
        (cd "$tmp/$variant.page" && rpm2cpio "$page" | cpio -idm --quiet)
        tar -C "$tmp/$variant.dist" -xJf "$tarball" "$name/cockpit/dist"
        pagefail=0
        for f in index.html manifest.json fsgate.js fsgate.css po.de.js; do
                [ -s "$tmp/$variant.page/usr/share/cockpit/fsgate/$f" ] || { echo "FAIL: cockpit-fsgate lacks /usr/share/cockpit/fsgate/$f"; pagefail=1; }
        done
        for f in fsgate.js fsgate.css; do
                cmp -s "$tmp/$variant.page/usr/share/cockpit/fsgate/$f" "$tmp/$variant.dist/$name/cockpit/dist/$f" ||
                        { echo "FAIL: cockpit-fsgate's $f is not the tarball's cockpit/dist/$f"; pagefail=1; }
        done
        [ $pagefail = 1 ] && fail=1 || echo "ok: cockpit-fsgate holds the page, its bundle the tarball's ($variant)"

        # What meson install makes with the spec's options, from the build rpmbuild left.
        bdir=$(find "$top/BUILD" -maxdepth 2 -name build -type d | head -n1)
        DESTDIR="$tmp/$variant.inst" meson install -C "$bdir" --no-rebuild >/dev/null
        (cd "$tmp/$variant.inst" && find . -mindepth 1 \( -type f -o -type l \) | sed 's,^\.,,' | sed -E 's,(/share/man/.*\.[0-9])$,\1.gz,') |
                LC_ALL=C sort >"$tmp/$variant.meson"
        rpm -qlp $rpms 2>/dev/null | while read -r f; do
                [ -d "$tmp/$variant.inst$f" ] && [ ! -L "$tmp/$variant.inst$f" ] && continue
                echo "$f"
        done | grep -v '^/usr/share/doc/' | LC_ALL=C sort -u >"$tmp/$variant.rpm"
        grep -v '^/usr/share/doc/' "$tmp/$variant.meson" >"$tmp/$variant.meson.nodoc"
        if ! diff -u "$tmp/$variant.meson.nodoc" "$tmp/$variant.rpm" >"$tmp/$variant.diff"; then
                sed -n 's/^-\//missing from the packages: \//p; s/^+\//in the packages, not installed by meson: \//p' "$tmp/$variant.diff"
                echo "FAIL: rpm -qlp and meson install differ ($variant)"
                fail=1
        else
                echo "ok: rpm -qlp = meson install ($(wc -l <"$tmp/$variant.rpm") files, $variant)"
        fi
        if [ "$variant" = vendor_blacklist ]; then
                rc=0
                "$here/install-rpm.sh" "$top/RPMS" || rc=$?
                [ $rc = 0 ] || [ $rc = 77 ] || fail=1
        fi
done
exit $fail

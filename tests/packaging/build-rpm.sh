#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# build-rpm.sh SOURCE-DIR — `rpmbuild -bb` of package/fsgate.spec on this Debian machine,
# with the vendor deny list (FSGATE_RPM_VARIANTS="default vendor_blacklist" for both), then
# what rpm built against what `meson install` puts in place.
#   - openSUSE's build macros that Debian's rpm lacks come from a STAND-IN
#     (tests/packaging/opensuse-build-macros), with openSUSE Tumbleweed's optflags;
#     --nodeps, because openSUSE's BuildRequires have other names here (gettext-tools,
#     systemd-rpm-macros, pkgconfig(...) resolved by rpm's database, which Debian's packages
#     are not in); the build itself finds them all through pkg-config.
#   - every subpackage is built, %check runs the unit suite;
#   - `rpm -qlp` of all packages together is exactly the files and directories below /usr and
#     /etc that `meson install` (the same options, DESTDIR) made: nothing missing, nothing
#     unowned (directories rpm owns that meson makes are listed; shared ones such as
#     /usr/share are not fsgate's).
#   - the scriptlets, by rpm -i/-U/-e --root into scratch roots: install-rpm.sh.
set -euo pipefail
src=$(cd "${1:?usage: build-rpm.sh SOURCE-DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
command -v rpmbuild >/dev/null || { echo "rpmbuild not found (apt-get install rpm)"; exit 77; }
tmp=$(mktemp -d)
# KEEP=1 keeps the work directory (and prints where it is).
if [ -n "${KEEP:-}" ]; then echo "work dir: $tmp" >&2; else trap 'rm -rf "$tmp"' EXIT; fi
version=$(sed -n 's/^Version: *//p' "$src/package/fsgate.spec")

# The tarball the spec's Source0 names: the tracked files of the tree as they are now.
git -C "$src" ls-files -z | tar -C "$src" --null -T - --transform "s,^,fsgate-$version/," -cJf "$tmp/fsgate-$version.tar.xz"

# The Cockpit page's npm packages, from the cache install-deps filled (the spec's %build).
FSGATE_NODE_MODULES=$("$src/cockpit/node-modules") || { echo "FAIL: the Cockpit page's npm packages are missing"; exit 1; }
export FSGATE_NODE_MODULES

fail=0
# With the vendor list: every subpackage (rpm-spec checks the spec without it parses; a
# second build would double the time for one subpackage less).
for variant in ${FSGATE_RPM_VARIANTS:-vendor_blacklist}; do
        args=()
        [ "$variant" = default ] || args=(--with "$variant")
        top=$tmp/$variant
        mkdir -p "$top/SOURCES"
        cp "$tmp/fsgate-$version.tar.xz" "$top/SOURCES/"
        if ! rpmbuild -bb --noclean --nodeps "${args[@]}" --define "_topdir $top" \
                --load "$here/opensuse-build-macros" "$src/package/fsgate.spec" >"$tmp/$variant.log" 2>&1; then
                tail -n 40 "$tmp/$variant.log"
                echo "FAIL: rpmbuild -bb ${args[*]}"
                fail=1
                continue
        fi
        rpms=$(find "$top/RPMS" -name '*.rpm' | sort)
        echo "ok: rpmbuild -bb ${args[*]}: $(for r in $rpms; do basename "$r"; done | paste -sd' ')"
        grep -q 'Ok: *[1-9]' "$tmp/$variant.log" || { echo "FAIL: %check ran no test"; fail=1; }

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

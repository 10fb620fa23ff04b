#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-catalog.sh CATALOG: journalctl compiles it into a scratch root's catalog database
# and lists every message id fsgated logs with a subject.
set -euo pipefail
catalog=$1 log_h=$2
command -v journalctl >/dev/null || exit 77
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/usr/lib/systemd/catalog"
cp "$catalog" "$root/usr/lib/systemd/catalog/"
journalctl --root="$root" --update-catalog
listed=$(journalctl --root="$root" --list-catalog)
echo "$listed"
status=0
for id in $(sed -n 's/.*FSGATE_MESSAGE_[A-Z_]* *"\([0-9a-f]\{32\}\)".*/\1/p' "$log_h"); do
        if ! grep -q "^$id " <<<"$listed"; then
                echo "message id $id from $log_h has no catalog entry"
                status=1
        fi
done
n=$(grep -c . <<<"$listed")
[ "$n" -ge 4 ] || { echo "only $n catalog entries"; status=1; }
exit $status

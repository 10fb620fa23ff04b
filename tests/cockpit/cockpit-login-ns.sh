#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# cockpit-login-ns.sh WORK PORT ROOT FSGATED PAGE_DIR BIN_DIR — run by run-cockpit-test under
# `unshare -m`: cockpit-ws with its real login page, in a mount namespace of its own where
#   - /etc/passwd, shadow, group and gshadow are copies with two local users added, fsadmin
#     (in group sudo: Cockpit's administrative access through sudo, as on Debian) and fsuser
#     (no rights), both with the password in $FSGATE_TEST_PASSWORD: PAM (cockpit-session)
#     and sudo check them as on any system, and the host's files are never written;
#   - a private bus with FSGATED on ROOT (tools/private-fsgated, in WORK/login) is
#     /run/dbus/system_bus_socket: the bridge a login starts gets a clean environment and
#     talks to the system bus at its standard path, and the bus, in this namespace too,
#     knows the users by the same files (dbus-daemon refuses a uid it cannot look up);
#   - /usr/local/bin holds BIN_DIR (the fsgatectl wrapper: a login's PATH and sudo's
#     secure_path both have /usr/local/bin);
#   - each user's ~/.local/share/cockpit/fsgate is the page (PAGE_DIR), as Cockpit finds a
#     package a user installed.
# The mounts end with the namespace, when cockpit-ws exits.
set -euo pipefail
work=$1 port=$2 root=$3 fsgated=$4 page=$5 bin=$6
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
: "${FSGATE_TEST_PASSWORD:?}"

mount --make-rprivate /
etc=$work/login-etc
mkdir -p "$etc"
for f in passwd shadow group gshadow; do cp -p "/etc/$f" "$etc/$f"; done
hash=$(openssl passwd -6 -salt fsgatetest "$FSGATE_TEST_PASSWORD")
uid=1601
for user in fsadmin fsuser; do
        home=$work/home-$user
        mkdir -p "$home/.local/share/cockpit"
        ln -sfn "$page" "$home/.local/share/cockpit/fsgate"
        chown -R "$uid:$uid" "$home"
        echo "$user:x:$uid:$uid:fsgate test user:$home:/bin/bash" >>"$etc/passwd"
        echo "$user:$hash:20000:0:99999:7:::" >>"$etc/shadow"
        echo "$user:x:$uid:" >>"$etc/group"
        echo "$user:!::" >>"$etc/gshadow"
        uid=$((uid + 1))
done
# fsadmin into sudo (a member list that may be empty or not).
sed -i -E 's/^(sudo:[^:]*:[^:]*:)(.+)$/\1\2,fsadmin/; s/^(sudo:[^:]*:[^:]*:)$/\1fsadmin/' "$etc/group"
sed -i -E 's/^(sudo:[^:]*:[^:]*:)(.+)$/\1\2,fsadmin/; s/^(sudo:[^:]*:[^:]*:)$/\1fsadmin/' "$etc/gshadow"
for f in passwd shadow group gshadow; do mount --bind "$etc/$f" "/etc/$f"; done

mkdir -p "$work/login" "$work/login-run-dbus"
# Stopped with the namespace's processes (run-cockpit-test ends their process group).
eval "$("$src/tools/private-fsgated" start --dir="$work/login" --root="$root" --fsgated="$fsgated" --watch=$$)"
ln -sfn "${DBUS_SYSTEM_BUS_ADDRESS#unix:path=}" "$work/login-run-dbus/system_bus_socket"
unset DBUS_SYSTEM_BUS_ADDRESS
mkdir -p /run/dbus
mount --bind "$work/login-run-dbus" /run/dbus
mount --bind "$bin" /usr/local/bin

exec /usr/lib/cockpit/cockpit-ws --no-tls --port "$port" --address 127.0.0.1

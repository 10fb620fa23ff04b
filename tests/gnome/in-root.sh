#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The notify-gnome suite's desktop: run by test-notify-gnome.py as root, under
#   unshare --mount --propagation private -- in-root.sh ROOT MNT SHARE BUSDIR
# ROOT the cached GNOME root (tests/gnome/build-root), bound read-only at MNT, with /proc,
# /dev, /sys, a tmpfs on /run, /tmp and the user's home; BUSDIR (the suite's private system
# bus, fsgated's) at /run/dbus, SHARE (the suite's files: these scripts, the probe, the
# build's fsgate-notify, the logs and screenshots) at /run/fsgate-test. Then, chrooted, the
# session of `tester` (uid 1000): its session bus and GNOME Shell (user-session.sh). This
# process (its pid) stays in the chroot: the suite enters it with nsenter --root.
set -eu
root=$1 mnt=$2 share=$3 busdir=$4
mount --bind "$root" "$mnt"
mount -o remount,bind,ro "$mnt"
mount -t proc proc "$mnt/proc"
mount --rbind /dev "$mnt/dev"
mount -t tmpfs -o mode=1777 tmpfs "$mnt/dev/shm"
mount --rbind /sys "$mnt/sys"
mount -t tmpfs -o mode=0755 tmpfs "$mnt/run"
mount -t tmpfs -o mode=1777 tmpfs "$mnt/tmp"
mount -t tmpfs -o mode=0700,uid=1000,gid=1000 tmpfs "$mnt/home/tester"
mkdir -p "$mnt/run/dbus" "$mnt/run/fsgate-test" "$mnt/run/user/1000"
chown 1000:1000 "$mnt/run/user/1000"
chmod 0700 "$mnt/run/user/1000"
mount --bind "$busdir" "$mnt/run/dbus"
mount --bind "$share" "$mnt/run/fsgate-test"
exec chroot "$mnt" setpriv --reuid=1000 --regid=1000 --init-groups \
        env -i HOME=/home/tester USER=tester LOGNAME=tester SHELL=/bin/bash PATH=/usr/bin:/bin \
        XDG_RUNTIME_DIR=/run/user/1000 XDG_SESSION_TYPE=wayland NO_AT_BRIDGE=1 LANG=C.UTF-8 \
        dbus-run-session --config-file=/run/fsgate-test/session-bus.conf -- sh /run/fsgate-test/user-session.sh

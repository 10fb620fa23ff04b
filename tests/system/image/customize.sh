#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# mmdebstrap --customize-hook for tests/system/build-image: $1 is the image's root, $2 this
# directory. Runs on the host after every package is installed.
set -eu
root=$1
files=$2

echo fsgate-system >"$root/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 fsgate-system\n' >"$root/etc/hosts"
# Fixed, so that nothing regenerates it at first boot (firstboot is masked below).
echo 5f3a0c2e9d1b4e7fa6c8b0d2e4f61a3c >"$root/etc/machine-id"

# The root disk is the first virtio disk; a run's own disk (the .deb files, the scenario,
# the results) carries the label fsgate-payload and is mounted by fsgate-system.service.
cat >"$root/etc/fstab" <<'FSTAB'
/dev/vda / ext4 rw,errors=remount-ro 0 0
LABEL=fsgate-payload /fsgate ext4 rw,nofail,x-systemd.device-timeout=60s 0 0
FSTAB
mkdir -p "$root/fsgate"

# The users tests/vm's scenarios know: alice (1000, unprivileged), bob (1001, group
# fsadmin 1100). Root's password is "root" (for a person at the console with --keep).
chroot "$root" groupadd -g 1100 fsadmin
chroot "$root" useradd -u 1000 -m -s /bin/sh alice
chroot "$root" useradd -u 1001 -m -s /bin/sh -G fsadmin bob
echo root:root | chroot "$root" chpasswd

# A persistent journal: a scenario reads the previous boot's (journalctl -b -1).
mkdir -p "$root/var/log/journal"

# Only what the scenarios need runs: no login prompt on the console the scenario writes to,
# no timers that wake apt or e2scrub in the middle of a test, no first-boot questions.
chroot "$root" systemctl mask serial-getty@ttyS0.service getty@tty1.service \
        systemd-firstboot.service apt-daily.timer apt-daily-upgrade.timer \
        e2scrub_all.timer e2scrub_reap.service fstrim.timer >/dev/null

install -m 0644 "$files/fsgate-system.service" "$root/etc/systemd/system/fsgate-system.service"
chroot "$root" systemctl enable fsgate-system.service >/dev/null

# desktop.sh runs its session once in German: the locale is compiled here, once,
# not at every run (localedef takes a while under TCG).
sed -i 's/^# *\(de_DE.UTF-8 UTF-8\)/\1/' "$root/etc/locale.gen"
grep -q '^de_DE.UTF-8 UTF-8' "$root/etc/locale.gen" || echo 'de_DE.UTF-8 UTF-8' >>"$root/etc/locale.gen"
chroot "$root" locale-gen >/dev/null

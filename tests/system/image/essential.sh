#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# mmdebstrap --essential-hook for tests/system/build-image ($1: the image's root), before the
# kernel and initramfs-tools are installed: a small initramfs that only needs to find the
# root disk (virtio) and mount it (ext4), zstd-compressed. Files in conf.d/ and hooks/ are
# not conffiles of initramfs-tools, so dpkg leaves them alone.
set -eu
root=$1
mkdir -p "$root/etc/initramfs-tools/conf.d" "$root/etc/initramfs-tools/hooks"
cat >"$root/etc/initramfs-tools/conf.d/fsgate-system.conf" <<'CONF'
MODULES=list
COMPRESS=zstd
CONF
cat >"$root/etc/initramfs-tools/hooks/fsgate-system" <<'HOOK'
#!/bin/sh
[ "$1" = prereqs ] && exit 0
. /usr/share/initramfs-tools/hook-functions
manual_add_modules virtio_pci virtio_blk ext4 crc32c_generic
HOOK
chmod 0755 "$root/etc/initramfs-tools/hooks/fsgate-system"

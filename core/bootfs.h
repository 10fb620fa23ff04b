/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "context.h"
#include "state.h"

/* The filesystems the next boot cannot do without: those /, /usr, /boot, /efi and /boot/efi
 * are on. A deny of their module would reach a regenerated initramfs (or keep the module from
 * loading by alias at boot) and the system might not come up again: fsgate refuses it, with
 * or without --force. */

typedef struct FsgBootFs {
        char mount_point[16];   /* "/", "/usr", "/boot", "/efi", "/boot/efi" */
        char type[64];          /* as the table spells it: "ext4", "vfat" */
        char table[16];         /* where it was read: "/proc/mounts" or "/etc/fstab" */
} FsgBootFs;

/* Whether one of those mount points is on a filesystem x's module serves, by ROOT/proc/mounts
 * (what is mounted now) or ROOT/etc/fstab (what the next boot mounts; an image has only
 * that): 1 and *ret, 0, or a negative errno when a table cannot be read (then nothing can be
 * promised about the next boot), the running system's /proc/mounts missing included. */
int fsg_boot_filesystem_of(const FsgContext *c, const FsgState *s, const FsgEntry *x, FsgBootFs *ret);

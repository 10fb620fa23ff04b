/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "context.h"
#include "fsg-error.h"

/* Open safely: which userspace (FUSE) driver reads which filesystem type, so that a medium
 * whose kernel module is denied can be read without loading that module. One table, read by
 * fsgated (which starts the driver), `fsgatectl routes` and the man pages. */

typedef enum FsgOpenStart {
        /* libfuse3: takes a pre-mounted "/dev/fd/N" as its mountpoint, so fsgated mounts and the
         * driver, sandboxed, only serves (squashfuse). */
        FSG_OPEN_START_FD,
        /* libfuse2: mounts through fusermount, which hands back a connection over the socket in
         * _FUSE_COMMFD; in the sandbox fsgate's stand-in (service/open-fusermount.c) hands back
         * the one fsgated mounted (fuse2fs). The driver's mountpoint is an empty directory of
         * the sandbox's own, FSG_OPEN_SANDBOX_MNT. */
        FSG_OPEN_START_FUSERMOUNT,
        /* The kernel's own driver in a throwaway VM: guestmount (libguestfs, libfuse2, through
         * the stand-in fusermount as above) boots the appliance fsgate-vm-appliance built, with
         * the medium as its one disk. QEMU needs more room than a FUSE driver: open-sandbox.c
         * gives this kind, and only it, what that is. */
        FSG_OPEN_START_VM,
        /* Known, packaged, but not started: its own FUSE lite (ntfs-3g), a mtab of its own
         * (fuseiso) or allow_other forced (exfat-fuse) need more than the stand-in. */
        FSG_OPEN_START_NONE,
} FsgOpenStart;

typedef struct FsgOpenRoute {
        const char *type;       /* the kernel's name of the filesystem type */
        const char *driver;     /* the command, looked up in fixed directories only */
        const char *package;    /* the Debian package that ships it */
        FsgOpenStart start;
        /* Its command line: the medium is /dev/fd/3, the connection /dev/fd/4 (FD) or the
         * sandbox's mountpoint (FUSERMOUNT); read-only, foreground, one thread. */
        const char *argv[16];
} FsgOpenRoute;

/* The mountpoints: fsgated's own directory on /run (root's, 0755, nobody else can make a name
 * there), one per open, FSG_OPEN_DIR/ID; gone at reboot, apart from udisks2's /media/USER and
 * from any path a caller chose. Made by fsgated itself, or by fsgate-open-helper in an open's
 * unit. */
#define FSG_OPEN_DIR "/run/fsgate-open"

#define FSG_OPEN_SANDBOX_MNT "/tmp/mnt"
/* The VM route's medium: fd 3 again at 1000, above the VM route's soft RLIMIT_NOFILE, where
 * libguestfs, which closes every descriptor below that limit before it runs QEMU and
 * qemu-img, leaves it for them to open (the preloaded shim makes that open a dup). */
#define FSG_OPEN_VM_MEDIUM_FD 1000
#define FSG_OPEN_VM_MEDIUM "/dev/fd/1000"

/* The route kinds, as OpenSafely's route argument and `fsgatectl open --route=` name them. */
#define FSG_OPEN_ROUTE_FUSE "fuse"      /* a userspace driver */
#define FSG_OPEN_ROUTE_VM   "vm"        /* the kernel's driver in a throwaway VM */

/* The userspace driver's route for type, NULL when none is known for it. */
const FsgOpenRoute *fsg_open_route_find(const char *type);
/* The VM's route for type: only types no userspace driver reads and whose module the Debian
 * kernel the appliance boots has; NULL for any other. */
const FsgOpenRoute *fsg_open_route_find_vm(const char *type);
/* The route of kind ("fuse", "vm"; "" or NULL: the best, a startable userspace driver before
 * the VM) for type, NULL when none. */
const FsgOpenRoute *fsg_open_route_find_kind(const char *type, const char *kind);
static inline const char *fsg_open_route_kind(const FsgOpenRoute *r) {
        return r->start == FSG_OPEN_START_VM ? FSG_OPEN_ROUTE_VM : FSG_OPEN_ROUTE_FUSE;
}
/* Whether fsgated can start this route's driver with a handed-over FUSE connection. */
static inline bool fsg_open_route_usable(const FsgOpenRoute *r) {
        return r && r->start != FSG_OPEN_START_NONE;
}
/* Where r's driver is installed: /usr/bin, /usr/sbin, /bin, /sbin in turn (never $PATH), a
 * regular executable file owned by root and writable by nobody else; under c's root when c is
 * given, on the running system when c is NULL. 0 and ret filled, -ENOENT when not installed. */
int fsg_open_route_driver(const FsgContext *c, const FsgOpenRoute *r, char *ret, size_t size);
/* The filesystem type on the medium fd holds, by its superblock's magic ("squashfs", "ext4",
 * "iso9660", "ntfs", "exfat", and for the VM "hfs", "hfsplus", "minix", "udf", "f2fs", "erofs"): at most a few reads of a few bytes whatever the medium is.
 * 0 and ret filled, or an error (InvalidArgs: none that fsgate knows; a read error). */
int fsg_open_probe_type(int fd, char *ret, size_t size, FsgError *e);

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/* The VM route's address space: QEMU under TCG with 768 MB of guest memory mapped 2.4 GB
 * (measured here), guestmount 75 MB; 4 GiB leaves room for more threads' arenas. */
#define OPEN_VM_ADDRESS_SPACE (4ULL << 30)

/* The processes of Open safely (bus-open.c), each forked from fsgated. */

/* The driver: its own mount, network, IPC and UTS namespaces, nobody (no groups, no
 * capabilities, not even in its bounding set), no_new_privs, a seccomp filter, limits on memory,
 * tasks, files and file size; only the medium (as fd 3, /dev/fd/3) and the FUSE connection
 * (fd 4), stdin /dev/null, stdout and stderr into err_fd; an empty read-only tmpfs on /tmp
 * (but for its helpers), /home, /root, /run/user, /var/tmp, /dev/shm, /srv, /media and /mnt.
 * preload is the shim that lets it open /dev/fd/3 as nobody; fusermount, if not NULL, the
 * stand-in bound over every fusermount it could run, with FSG_OPEN_SANDBOX_MNT its mountpoint.
 * appliance, if not NULL, makes it the VM route's (guestmount): the appliance bound into its
 * view, a writable tmpfs for libguestfs, socket() for Unix sockets, room for QEMU (address
 * space, files, file size), libguestfs's environment; TCG unless vm_kvm.
 * The pid (its own session: its process group ends with it), or a negative errno. */
pid_t open_spawn_driver(const char *path, char * const argv[], const char *preload, const char *fusermount,
                        const char *appliance, bool vm_kvm, int medium_fd, int fuse_fd, int err_fd);
/* The probe: as uid and gid (no groups, no capabilities), lists the first entry of mountpoint
 * and exits 0; 10 + errno (1 without one) if it cannot, 2 if it could not become uid, 3 if
 * mountpoint is not a FUSE mount: when it
 * ends, the driver has answered or died. */
pid_t open_spawn_probe(const char *mountpoint, uid_t uid, gid_t gid);

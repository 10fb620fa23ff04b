/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include "context.h"

/* Takes the lock the writers of one root (the daemon and the offline CLI alike) share,
 * waiting at most timeout_usec (0: one try). On success *ret_fd holds it until closed. Fails
 * with FSG_ERR_BUSY when another writer keeps it longer.
 *
 * The lock file is outside any image, in a directory only its owner can enter (/run/fsgate
 * for root, else $XDG_RUNTIME_DIR/fsgate), and 0600: an unprivileged process can neither open
 * it nor hold it, so it cannot stall a writer; and an image gets no file it did not ask for.
 * The running system's is /run/fsgate/lock, whatever path names it ("/.", "//", a symlink to
 * "/"); an image's is named after its root directory's device and inode, so every writer of
 * that image finds the same one. */
int fsg_lock(const FsgContext *c, uint64_t timeout_usec, int *ret_fd, FsgError *e);

/* The two halves of fsg_lock(), for a caller that must not wait in place (fsgated, whose
 * loop answers everyone): the lock file opened and checked as above, not yet taken; then one
 * try to take it on that descriptor, failing with FSG_ERR_BUSY while another writer holds it. */
int fsg_lock_open(const FsgContext *c, int *ret_fd, FsgError *e);
/* *fd may be replaced: by the file that names the lock now, when the one opened was removed. */
int fsg_lock_try(const FsgContext *c, int *fd, FsgError *e);
/* Releases a lock taken above, the one way every writer does: an image's lock file is removed
 * (held, and only while its name still names it), the running system's stays. Returns -1,
 * for "fd = fsg_unlock(c, fd)". */
int fsg_unlock(const FsgContext *c, int fd);
/* For _cleanup_: a lock of c, released when it goes out of scope. */
typedef struct FsgLockHold {
        const FsgContext *c;
        int fd;
} FsgLockHold;
#define FSG_LOCK_HOLD(ctx) ((FsgLockHold) { .c = (ctx), .fd = -1 })
static inline void fsg_lock_holdp(FsgLockHold *h) {
        h->fd = fsg_unlock(h->c, h->fd);
}

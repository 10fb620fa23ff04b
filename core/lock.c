/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "lock.h"
#include "time-util.h"

/* Whoever could open the file or replace it could hold the lock: both must be ours alone. */
static bool private_to_us(const struct stat *st, mode_t type) {
        return (st->st_mode & S_IFMT) == type && st->st_uid == geteuid() && !(st->st_mode & 0077);
}

static int open_lock_dir(FsgError *e) {
        _cleanup_free_ char *dir = NULL;
        const char *base = geteuid() == 0 ? "/run" : secure_getenv("XDG_RUNTIME_DIR");
        struct stat st;
        int fd;

        if (!base || base[0] != '/')
                return fsg_error(e, FSG_ERR_FAILED, "Cannot lock: not root and XDG_RUNTIME_DIR is not set");
        if (asprintf(&dir, "%s/fsgate", base) < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        /* The service's RuntimeDirectory= makes it 0755; a first offline write makes it 0700. */
        if (mkdir(dir, 0700) < 0 && errno != EEXIST)
                return fsg_error_errno(e, errno, "Failed to create %s", dir);
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return fsg_error_errno(e, errno, "Failed to open %s", dir);
        if (fstat(fd, &st) < 0 || (st.st_mode & S_IFMT) != S_IFDIR || st.st_uid != geteuid() ||
            (st.st_mode & 0022)) {
                close(fd);
                return fsg_error(e, FSG_ERR_FAILED, "%s is not a directory only uid %u can write to",
                                 dir, (unsigned) geteuid());
        }
        return fd;
}

/* One lock per system, whatever path names it: "/.", "//" or a symlink to "/" is the running
 * system, whose writers (fsgated among them) share "lock"; an image's is named after the
 * directory the context opened, so that every path to it finds the same one. */
static int lock_name(const FsgContext *c, char **ret, FsgError *e) {
        struct stat st = {};

        if (*c->root && (c->root_fd >= 0 ? fstat(c->root_fd, &st) : stat(c->root, &st)) < 0)
                return fsg_error_errno(e, errno, "Failed to look at %s", c->root);
        if (!*c->root || fsg_stat_is_host_root(&st))
                *ret = strdup("lock");
        else if (asprintf(ret, "root-%llx-%llx.lock", (unsigned long long) st.st_dev,
                          (unsigned long long) st.st_ino) < 0)
                *ret = NULL;
        return *ret ? 0 : fsg_error(e, FSG_ERR_FAILED, "Out of memory");
}

int fsg_lock_open(const FsgContext *c, int *ret_fd, FsgError *e) {
        assert(c);
        assert(ret_fd);

        _cleanup_free_ char *name = NULL;
        _cleanup_close_ int dfd = -1, fd = -1;
        struct stat st;
        int r;

        r = lock_name(c, &name, e);
        if (r < 0)
                return r;
        dfd = open_lock_dir(e);
        if (dfd < 0)
                return dfd;
        /* Read-only is enough for flock, and opens on a read-only /run too. */
        fd = openat(dfd, name, O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0600);
        if (fd < 0)
                return fsg_error_errno(e, errno, "Failed to open the lock %s", name);
        if (fstat(fd, &st) < 0)
                return fsg_error_errno(e, errno, "Failed to check the lock %s", name);
        if (!private_to_us(&st, S_IFREG))
                return fsg_error(e, FSG_ERR_FAILED, "The lock %s is not a private regular file; remove it", name);
        *ret_fd = TAKE_FD(fd);
        return 0;
}

/* Taken, the file must still be the one its name names: a writer of an image removes the
 * lock file when done (fsg_unlock(), holding the lock), and a writer that opened it before
 * then holds a file nobody else will find. Then it opens the name again: bounded, as each
 * round means another writer came and went. */
int fsg_lock_try(const FsgContext *c, int *fd, FsgError *e) {
        assert(c);
        assert(fd && *fd >= 0);

        for (unsigned round = 0; round < 64; round++) {
                struct stat st;
                int r;

                if (flock(*fd, LOCK_EX | LOCK_NB) < 0) {
                        if (errno == EWOULDBLOCK || errno == EINTR)
                                return fsg_error(e, FSG_ERR_BUSY, "Another fsgate writer is changing the "
                                                 "configuration; nothing was changed, try again");
                        return fsg_error_errno(e, errno, "Failed to take the writers' lock");
                }
                if (fstat(*fd, &st) < 0)
                        return fsg_error_errno(e, errno, "Failed to check the writers' lock");
                if (st.st_nlink > 0)
                        return 0;
                *fd = safe_close(*fd);
                r = fsg_lock_open(c, fd, e);
                if (r < 0)
                        return r;
        }
        return fsg_error(e, FSG_ERR_BUSY, "Other fsgate writers keep changing the configuration; try again");
}

int fsg_unlock(const FsgContext *c, int fd) {
        _cleanup_free_ char *name = NULL;
        _cleanup_close_ int dfd = -1;
        struct stat held, named;

        assert(c);

        if (fd < 0)
                return -1;
        /* An image's lock file goes, so that one a root ever written does not stay behind in
         * /run/fsgate; the running system's stays (fsgated's RuntimeDirectory holds it).
         * Removed while held, and only if its name still names it: see fsg_lock_try(). */
        if (lock_name(c, &name, NULL) >= 0 && !streq(name, "lock") && (dfd = open_lock_dir(NULL)) >= 0 &&
            fstat(fd, &held) >= 0 && fstatat(dfd, name, &named, AT_SYMLINK_NOFOLLOW) >= 0 &&
            held.st_dev == named.st_dev && held.st_ino == named.st_ino)
                (void) unlinkat(dfd, name, 0);
        return safe_close(fd);
}

int fsg_lock(const FsgContext *c, uint64_t timeout_usec, int *ret_fd, FsgError *e) {
        assert(c);
        assert(ret_fd);

        _cleanup_close_ int fd = -1;
        uint64_t deadline = fsg_now_usec() + timeout_usec;
        int r;

        r = fsg_lock_open(c, &fd, e);
        if (r < 0)
                return r;
        for (;;) {
                FsgError why = {};

                r = fsg_lock_try(c, &fd, &why);
                if (r >= 0)
                        break;
                /* Polling keeps the wait bounded without a timer or a signal; only a client
                 * waits here: fsgated waits in its loop (service/lock-wait.c). */
                if (why.code != FSG_ERR_BUSY || fsg_now_usec() >= deadline) {
                        if (e)
                                *e = why;
                        return r;
                }
                (void) usleep(2000);
        }
        *ret_fd = TAKE_FD(fd);
        return 0;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The writers' lock is one per system, not one per spelling of its path: `fsgatectl
 * --root=/.` that took another lock than fsgated would write the host's modprobe.d beside
 * it, each planning against files the other is changing. The running system's lock is root's
 * /run/fsgate/lock (the test runs as root, as every writer of the host does); it is held for
 * milliseconds and never by a service in the build environment. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <unistd.h>

#include "context.h"
#include "lock.h"
#include "test-util.h"

/* root's writers' lock, or -1 with *e filled; timeout 0: one try. */
static int lock_root(const char *root, uint64_t timeout_usec, FsgError *e) {
        _cleanup_(fsg_context_freep) FsgContext *c = NULL;
        int fd = -1;

        ASSERT_OK_E(fsg_context_new(root, NULL, &c, e), e);
        if (fsg_lock(c, timeout_usec, &fd, e) < 0)
                return -1;
        return fd;
}

/* While a is held, b must be refused with Busy; and the other way round. */
static void assert_same_lock(const char *a, const char *b) {
        FsgError e = {};
        int fd, other;

        for (int round = 0; round < 2; round++) {
                const char *holder = round ? b : a, *asker = round ? a : b;

                /* A real writer of the same system may hold it for a moment: wait for it. */
                fd = lock_root(holder, FSG_LOCK_TIMEOUT_USEC, &e);
                if (fd < 0)
                        fprintf(stderr, "locking %s: %s\n", holder ?: "(host)", e.message);
                ASSERT(fd >= 0);
                e = (FsgError) {};
                other = lock_root(asker, 0, &e);
                if (other >= 0)
                        fprintf(stderr, "%s and %s took different locks\n", holder ?: "(host)", asker ?: "(host)");
                ASSERT(other < 0);
                ASSERT(e.code == FSG_ERR_BUSY);
                close(fd);
        }
}

TEST(host_spellings_share_fsgateds_lock) {
        char tmpl[] = "/tmp/fsgate-unit-lock-XXXXXX", *dir = mkdtemp(tmpl), *link = NULL;
        static const char * const spellings[] = { "/", "//", "/.", "/./", "/..", "/usr/..", "///./." };

        ASSERT(dir);
        ASSERT(asprintf(&link, "%s/host", dir) > 0);
        ASSERT(symlink("/", link) == 0);
        /* NULL: the running system, as fsgated and fsgatectl without --root open it. */
        for (size_t i = 0; i < ELEMENTSOF(spellings); i++)
                assert_same_lock(NULL, spellings[i]);
        assert_same_lock(NULL, link);
        ASSERT(unlink(link) == 0 && rmdir(dir) == 0);
        free(link);
}

TEST(image_spellings_share_its_lock) {
        char *root = scratch_root_new(false), *dot = NULL, *link = NULL;
        FsgError e = {};
        int host, image;

        ASSERT(asprintf(&dot, "%s/./etc/..//", root) > 0);
        ASSERT(asprintf(&link, "%s.link", root) > 0);
        ASSERT(symlink(root, link) == 0);
        assert_same_lock(root, dot);
        assert_same_lock(root, link);

        /* An image is not the host: both are held at once. */
        host = lock_root(NULL, FSG_LOCK_TIMEOUT_USEC, &e);
        ASSERT(host >= 0);
        image = lock_root(root, 0, &e);
        ASSERT(image >= 0);
        close(image);
        close(host);

        ASSERT(unlink(link) == 0);
        free(link);
        free(dot);
        scratch_root_free(root);
}

/* The path of c's lock file: root's /run/fsgate/root-DEV-INO.lock. */
static char *image_lock_path(const char *root) {
        struct stat st;
        char *p = NULL;

        ASSERT(stat(root, &st) == 0);
        ASSERT(asprintf(&p, "/run/fsgate/root-%llx-%llx.lock", (unsigned long long) st.st_dev,
                        (unsigned long long) st.st_ino) > 0);
        return p;
}

/* Regression: every image ever written left its root-DEV-INO.lock in /run/fsgate. */
TEST(image_lock_file_goes_when_released) {
        _cleanup_(fsg_context_freep) FsgContext *c = NULL, *host = NULL;
        char *root = scratch_root_new(false), *path = image_lock_path(root);
        FsgError e = {};
        int fd = -1, early = -1;

        ASSERT_OK_E(fsg_context_new(root, NULL, &c, &e), &e);
        ASSERT_OK_E(fsg_lock(c, FSG_LOCK_TIMEOUT_USEC, &fd, &e), &e);
        ASSERT(access(path, F_OK) == 0);
        /* A writer that opened the file before the holder removes it must not take a lock
         * nobody else can find: it takes the one its name names then. */
        ASSERT_OK_E(fsg_lock_open(c, &early, &e), &e);
        fd = fsg_unlock(c, fd);
        ASSERT(fd == -1);
        ASSERT(access(path, F_OK) < 0 && errno == ENOENT);
        ASSERT_OK_E(fsg_lock_try(c, &early, &e), &e);
        ASSERT(access(path, F_OK) == 0);
        ASSERT(fsg_lock(c, 0, &fd, &e) < 0 && e.code == FSG_ERR_BUSY);
        early = fsg_unlock(c, early);
        ASSERT(access(path, F_OK) < 0 && errno == ENOENT);

        /* The running system's stays: fsgated's RuntimeDirectory keeps it. */
        ASSERT_OK_E(fsg_context_new(NULL, NULL, &host, &e), &e);
        ASSERT_OK_E(fsg_lock(host, FSG_LOCK_TIMEOUT_USEC, &fd, &e), &e);
        (void) fsg_unlock(host, fd);
        ASSERT(access("/run/fsgate/lock", F_OK) == 0);
        free(path);
        scratch_root_free(root);
}

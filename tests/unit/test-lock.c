/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The writers' lock is one per system, not one per spelling of its path: `fsgatectl
 * --root=/.` that took another lock than fsgated would write the host's modprobe.d beside
 * it, each planning against files the other is changing. The running system's lock is root's
 * /run/fsgate/lock (the test runs as root, as every writer of the host does); it is held for
 * milliseconds and never by a service in the build environment. */
#define _GNU_SOURCE
#include <fcntl.h>
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

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
/* The hook's state lives in small root-only files in /run/fsgate, one set per boot:
 *
 *   hook-TYPE.state      TYPE's count (RateLimitCount, ratelimit.h), shared by every hook
 *                        through mmap(); flock()ed by the attempt that opens a window
 *   hook-TYPE.route      the count of TYPE's routed requests (fsgate-blocked --route)
 *   hook-TYPE.observe    the count of TYPE's observed requests (fsgate-blocked --observe)
 *   hook-TYPE.verdict    what the last state build decided for TYPE's route or observation (the
 *                        same words: denied, or loaded), and for what
 *   hook-TYPE.reporter   flock()ed by the one child reporting TYPE
 *   hook-reporter-N      N < HOOK_REPORTERS_MAX: flock()ed by any reporting child
 *
 * Locks are flock()s: the kernel drops them when their holder dies, so a killed hook leaves
 * nothing stuck behind, and a forked child shares its parent's, which is how a reporter
 * keeps its slot after the hook has returned to modprobe. Every lock is taken with
 * LOCK_NB: the hook runs inside the kernel's module request and must never wait. */
#include <fcntl.h>
#include <stdint.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hook-ratelimit.h"
#include "macro.h"
#include "name.h"
#include "ratelimit.h"
#include "time-util.h"

int hook_state_open(void) {
        const char *path = secure_getenv("FSGATE_RUNTIME_DIR") ?: "/run/fsgate";
        _cleanup_close_ int fd = -1;
        struct stat st;

        /* fsgated's RuntimeDirectory=, which exists only once the service has run. */
        (void) mkdir(path, 0755);
        fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
                return -EPERM;
        return TAKE_FD(fd);
}

/* Only root can create files in the directory; still, nothing but root's own plain,
 * private, singly linked file is believed (no FIFO to hang on, no hard link to another
 * file of root's to scribble on). */
static int open_state_file(int dir_fd, const char *name) {
        _cleanup_close_ int fd = -1;
        struct stat st;

        fd = openat(dir_fd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode) || st.st_uid != 0 || st.st_nlink != 1 || (st.st_mode & 0077))
                return -EPERM;
        return TAKE_FD(fd);
}

static uint64_t now_ms(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_BOOTTIME, &ts);
        return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

static void account(int dir_fd, const char *type, const char *counter, HookVerdict *ret) {
        _cleanup_close_ int fd = -1;
        char name[FSG_NAME_MAX + 32];
        RateLimitCount *c;
        RateLimit rl;
        struct stat st;

        *ret = (HookVerdict) { .log = true, .burst = HOOK_BURST, .window_sec = fsg_env_seconds("FSGATE_HOOK_WINDOW_SEC", HOOK_WINDOW_SEC) };
        rl = (RateLimit) { .interval = ret->window_sec * UINT64_C(1000), .burst = ret->burst };
        if (dir_fd < 0)
                return;
        (void) snprintf(name, sizeof(name), "hook-%s.%s", type, counter);
        fd = open_state_file(dir_fd, name);
        if (fd < 0 || fstat(fd, &st) < 0)
                return;
        /* Only ever grown, never shrunk: a mapping of it cannot fault. */
        if (st.st_size < (off_t) sizeof(RateLimitCount) && ftruncate(fd, sizeof(RateLimitCount)) < 0)
                return;
        c = mmap(NULL, sizeof(RateLimitCount), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (c == MAP_FAILED)
                return;
        ret->log = ret->report = ratelimit_below(&rl, c, fd, now_ms(), &ret->summary);
        (void) munmap(c, sizeof(RateLimitCount));
}

void hook_account(int dir_fd, const char *type, HookVerdict *ret) {
        account(dir_fd, type, "state", ret);
}

void hook_account_route(int dir_fd, const char *type, HookVerdict *ret) {
        account(dir_fd, type, "route", ret);
}

void hook_account_observe(int dir_fd, const char *type, HookVerdict *ret) {
        account(dir_fd, type, "observe", ret);
}

typedef struct RouteRecord {
        uint64_t key;
        uint32_t verdict;
        uint32_t magic;
        uint64_t check;         /* of the fields above: a torn record is no record */
} RouteRecord;

#define ROUTE_RECORD_MAGIC UINT32_C(0x66737276)

static uint64_t route_record_check(const RouteRecord *r) {
        uint64_t h = UINT64_C(1469598103934665603);     /* FNV-1a */

        for (const unsigned char *b = (const unsigned char *) r; b < (const unsigned char *) &r->check; b++)
                h = (h ^ *b) * UINT64_C(1099511628211);
        return h;
}

int hook_route_verdict_get(int dir_fd, const char *type, uint64_t key) {
        _cleanup_close_ int fd = -1;
        char name[FSG_NAME_MAX + 32];
        RouteRecord r;

        if (dir_fd < 0)
                return -ENOENT;
        (void) snprintf(name, sizeof(name), "hook-%s.verdict", type);
        fd = open_state_file(dir_fd, name);
        if (fd < 0)
                return fd;
        if (pread(fd, &r, sizeof(r), 0) != (ssize_t) sizeof(r) || r.magic != ROUTE_RECORD_MAGIC ||
            r.check != route_record_check(&r) || r.key != key)
                return -ENOENT;
        return (int) r.verdict;
}

void hook_route_verdict_put(int dir_fd, const char *type, uint64_t key, unsigned verdict) {
        _cleanup_close_ int fd = -1;
        char name[FSG_NAME_MAX + 32];
        RouteRecord r = { .key = key, .verdict = verdict, .magic = ROUTE_RECORD_MAGIC };

        if (dir_fd < 0)
                return;
        (void) snprintf(name, sizeof(name), "hook-%s.verdict", type);
        fd = open_state_file(dir_fd, name);
        if (fd < 0)
                return;
        r.check = route_record_check(&r);
        (void) !pwrite(fd, &r, sizeof(r), 0);
}

int hook_claim_reporter(int dir_fd, const char *type, int ret_fds[static 2]) {
        _cleanup_close_ int type_fd = -1;
        char name[FSG_NAME_MAX + 32];

        (void) snprintf(name, sizeof(name), "hook-%s.reporter", type);
        type_fd = open_state_file(dir_fd, name);
        if (type_fd < 0)
                return type_fd;
        /* Held: this type's report is still on its way, and a second one says nothing new. */
        if (flock(type_fd, LOCK_EX | LOCK_NB) < 0)
                return -errno;
        for (unsigned i = 0; i < HOOK_REPORTERS_MAX; i++) {
                int fd;

                (void) snprintf(name, sizeof(name), "hook-reporter-%u", i);
                fd = open_state_file(dir_fd, name);
                if (fd < 0)
                        return fd;
                if (flock(fd, LOCK_EX | LOCK_NB) >= 0) {
                        ret_fds[0] = TAKE_FD(type_fd);
                        ret_fds[1] = fd;
                        return 0;
                }
                close(fd);
        }
        return -EBUSY;
}

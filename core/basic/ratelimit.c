/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <limits.h>
#include <sys/file.h>

#include "ratelimit.h"

bool ratelimit_window_over(const RateLimit *rl, const RateLimitCount *c, uint64_t now) {
        uint64_t begin = __atomic_load_n(&c->begin, __ATOMIC_ACQUIRE);

        if (begin == 0)
                return true;
        /* A begin a little after now: another process opened the window after this event
         * read its clock (hooks race at a window's end): the window is current, and reopening
         * it would reset its count and let a second burst through. Further in the future: a
         * clock this one cannot be compared with. */
        if (now < begin)
                return begin - now > rl->interval;
        return now - begin >= rl->interval;
}

/* One event opens the next window; one that finds the lock taken counts itself in whichever
 * window is current when it adds. The count is reset before the new begin is stored, so an
 * event that still sees the old window over counts in the new one. */
static void open_window(const RateLimit *rl, RateLimitCount *c, int lock_fd, uint64_t now) {
        if (!ratelimit_window_over(rl, c, now))
                return;
        if (lock_fd >= 0 && flock(lock_fd, LOCK_EX | LOCK_NB) < 0)
                return;
        if (ratelimit_window_over(rl, c, now)) {
                __atomic_store_n(&c->num, 0, __ATOMIC_RELEASE);
                __atomic_store_n(&c->begin, now ?: 1, __ATOMIC_RELEASE);
        }
        if (lock_fd >= 0)
                (void) flock(lock_fd, LOCK_UN);
}

bool ratelimit_below(const RateLimit *rl, RateLimitCount *c, int lock_fd, uint64_t now, unsigned *ret_dropped) {
        uint64_t n, d;

        *ret_dropped = 0;
        open_window(rl, c, lock_fd, now);
        /* Every event adds to exactly one of num and dropped, and each dropped one is handed
         * to exactly one line: none is said twice or lost, however many count at once. */
        n = __atomic_load_n(&c->num, __ATOMIC_ACQUIRE);
        do
                if (n >= rl->burst) {
                        (void) __atomic_fetch_add(&c->dropped, 1, __ATOMIC_ACQ_REL);
                        return false;
                }
        while (!__atomic_compare_exchange_n(&c->num, &n, n + 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
        d = __atomic_exchange_n(&c->dropped, 0, __ATOMIC_ACQ_REL);
        *ret_dropped = d > UINT_MAX ? UINT_MAX : (unsigned) d;
        return true;
}

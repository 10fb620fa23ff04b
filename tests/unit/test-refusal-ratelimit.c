/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <time.h>

#include "ratelimit.h"
#include "refusal-ratelimit.h"
#include "test-util.h"

#define FIRST_UID 2000

static void sleep_past_window(void) {
        struct timespec ts = { .tv_sec = 1, .tv_nsec = 200 * 1000 * 1000 };

        (void) nanosleep(&ts, NULL);
}

/* n refusals of uid: how many were admitted; *ret_first (if given) the first admitted one's verdict. */
static unsigned admit_n(uid_t uid, unsigned n, RefusalVerdict *ret_first) {
        unsigned admitted = 0;
        RefusalVerdict v;

        for (unsigned i = 0; i < n; i++)
                if (refusal_log_admit(uid, &v)) {
                        if (admitted == 0 && ret_first)
                                *ret_first = v;
                        admitted++;
                }
        return admitted;
}

/* One program, one sequence: the counts are the module's own static state. */
TEST(burst_window_and_crowd) {
        RefusalVerdict v = { .unlogged = 99 };

        /* The table's users: each gets its burst, no more. */
        for (uid_t u = FIRST_UID; u < FIRST_UID + REFUSALS_USERS_TRACKED; u++)
                ASSERT(admit_n(u, REFUSALS_LOGGED_BURST + 5, NULL) == REFUSALS_LOGGED_BURST);
        /* Past the table, all others together get one burst: many uids buy no more lines. */
        ASSERT(admit_n(FIRST_UID + REFUSALS_USERS_TRACKED, 4, NULL) == 4);
        ASSERT(admit_n(FIRST_UID + REFUSALS_USERS_TRACKED + 1, REFUSALS_LOGGED_BURST, NULL) ==
               REFUSALS_LOGGED_BURST - 4);
        ASSERT(admit_n(FIRST_UID + REFUSALS_USERS_TRACKED + 2, 3, NULL) == 0);

        /* A new window: the first line says how many were not logged. */
        sleep_past_window();
        ASSERT(admit_n(FIRST_UID, 1, &v) == 1);
        ASSERT(v.unlogged == 5 && !v.shared);
        ASSERT(admit_n(FIRST_UID, 1, &v) == 1);
        ASSERT(v.unlogged == 0 && !v.shared);
        /* The others' count carries over too (4 + 3 not logged). */
        ASSERT(admit_n(FIRST_UID + REFUSALS_USERS_TRACKED + 2, 1, &v) == 1);
        ASSERT(v.unlogged == 7 && v.shared);

        /* The tests' override of the burst: FIRST_UID has 2 lines in this window, 2 more. */
        ASSERT(setenv("FSGATE_REFUSAL_LOG_BURST", "4", 1) == 0);
        ASSERT(admit_n(FIRST_UID, 5, NULL) == 2);
        /* A value out of range is ignored: the built-in burst again, 6 more. */
        ASSERT(setenv("FSGATE_REFUSAL_LOG_BURST", "0", 1) == 0);
        ASSERT(admit_n(FIRST_UID, 10, NULL) == REFUSALS_LOGGED_BURST - 4);
        ASSERT(unsetenv("FSGATE_REFUSAL_LOG_BURST") == 0);
}

TEST_SETUP(one_second_window) {
        ASSERT(setenv("FSGATE_REFUSAL_LOG_WINDOW_SEC", "1", 1) == 0);
}

/* The limiter under the refusal lines is the hook's too, where processes race at a window's
 * end: an event whose clock was read just before another opened the window counts in that
 * window (reopening it would let a second burst through); a begin far in the future is from a
 * clock that cannot be compared and gives way. */
TEST(event_read_before_the_window_opened) {
        const RateLimit rl = { .interval = 60, .burst = 3 };
        RateLimitCount c = {};
        unsigned dropped;

        ASSERT(ratelimit_below(&rl, &c, -1, 100, &dropped));
        ASSERT(c.begin == 100);
        ASSERT(ratelimit_below(&rl, &c, -1, 99, &dropped));
        ASSERT(ratelimit_below(&rl, &c, -1, 98, &dropped));
        ASSERT(!ratelimit_below(&rl, &c, -1, 99, &dropped));
        ASSERT(c.begin == 100 && c.num == 3 && c.dropped == 1);
        ASSERT(!ratelimit_window_over(&rl, &c, 41));
        ASSERT(ratelimit_window_over(&rl, &c, 39));
        ASSERT(ratelimit_window_over(&rl, &c, 160));
        /* The next window: the dropped one is handed to its first line. */
        ASSERT(ratelimit_below(&rl, &c, -1, 160, &dropped));
        ASSERT(dropped == 1 && c.begin == 160 && c.num == 1);
        c.begin = 100000;
        ASSERT(ratelimit_below(&rl, &c, -1, 200, &dropped));
        ASSERT(c.begin == 200 && c.num == 1);
}

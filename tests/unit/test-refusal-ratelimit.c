/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <time.h>

#include "refusal-ratelimit.h"
#include "test-util.h"

#define FIRST_UID 2000

static void sleep_past_window(void) {
        struct timespec ts = { .tv_sec = 1, .tv_nsec = 200 * 1000 * 1000 };

        (void) nanosleep(&ts, NULL);
}

/* Admits up to REFUSALS_LOGGED_BURST lines of uid; returns how many it admitted of n. */
static unsigned admit_n(uid_t uid, unsigned n, unsigned *ret_first_unlogged) {
        unsigned admitted = 0, unlogged;

        for (unsigned i = 0; i < n; i++)
                if (refusal_log_admit(uid, &unlogged)) {
                        if (admitted == 0 && ret_first_unlogged)
                                *ret_first_unlogged = unlogged;
                        admitted++;
                }
        return admitted;
}

/* One program, one sequence: the counts are the module's own static state. */
TEST(test_burst_window_and_crowd) {
        unsigned unlogged = 99;

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
        ASSERT(admit_n(FIRST_UID, 1, &unlogged) == 1);
        ASSERT(unlogged == 5);
        ASSERT(admit_n(FIRST_UID, 1, &unlogged) == 1);
        ASSERT(unlogged == 0);
        /* The others' count carries over too (4 + 3 not logged). */
        ASSERT(admit_n(FIRST_UID + REFUSALS_USERS_TRACKED + 2, 1, &unlogged) == 1);
        ASSERT(unlogged == 7);
}

int main(void) {
        if (setenv("FSGATE_REFUSAL_LOG_WINDOW_SEC", "1", 1) < 0)
                return EXIT_FAILURE;
        RUN(test_burst_window_and_crowd);
        return EXIT_SUCCESS;
}

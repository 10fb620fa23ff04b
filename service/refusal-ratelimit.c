/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>
#include <stdint.h>

#include "refusal-ratelimit.h"
#include "time-util.h"

typedef struct RefusalCount {
        bool used;
        uid_t uid;
        uint64_t window_start_usec;
        unsigned logged;        /* in the current window */
        unsigned unlogged;      /* since the last line */
} RefusalCount;

static RefusalCount counts[REFUSALS_USERS_TRACKED];
/* For users past the table, together: a crowd of uids cannot buy lines by being many. */
static RefusalCount others = { .used = true, .uid = (uid_t) -1 };

static bool window_over(const RefusalCount *c, uint64_t now, uint64_t window) {
        return now - c->window_start_usec >= window;
}

/* The user's own count; else a free slot, or one whose window is over and owes no count;
 * else the shared one. */
static RefusalCount *count_of(uid_t uid, uint64_t now, uint64_t window) {
        RefusalCount *spare = NULL;

        for (RefusalCount *c = counts; c < counts + REFUSALS_USERS_TRACKED; c++) {
                if (c->used && c->uid == uid)
                        return c;
                if (!spare && (!c->used || (window_over(c, now, window) && c->unlogged == 0)))
                        spare = c;
        }
        if (!spare)
                return &others;
        *spare = (RefusalCount) { .used = true, .uid = uid, .window_start_usec = now };
        return spare;
}

bool refusal_log_admit(uid_t uid, RefusalVerdict *ret) {
        uint64_t now = fsg_now_usec(),
                 window = fsg_env_seconds("FSGATE_REFUSAL_LOG_WINDOW_SEC", REFUSALS_LOGGED_WINDOW_SEC) * UINT64_C(1000000);
        unsigned burst = fsg_env_unsigned("FSGATE_REFUSAL_LOG_BURST", REFUSALS_LOGGED_BURST, 1000000);
        RefusalCount *c = count_of(uid, now, window);

        if (window_over(c, now, window)) {
                c->window_start_usec = now;
                c->logged = 0;
        }
        if (c->logged >= burst) {
                c->unlogged++;
                return false;
        }
        c->logged++;
        *ret = (RefusalVerdict) { .unlogged = c->unlogged, .shared = c == &others };
        c->unlogged = 0;
        return true;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>
#include <stdint.h>

#include "ratelimit.h"
#include "refusal-ratelimit.h"
#include "time-util.h"

typedef struct RefusalCount {
        bool used;
        uid_t uid;
        RateLimitCount lines;
} RefusalCount;

static RefusalCount counts[REFUSALS_USERS_TRACKED];
/* For users past the table, together: a crowd of uids cannot buy lines by being many. */
static RefusalCount others = { .used = true, .uid = (uid_t) -1 };

/* The user's own count; else a free slot, or one whose window is over and owes no count;
 * else the shared one. */
static RefusalCount *count_of(uid_t uid, const RateLimit *rl, uint64_t now) {
        RefusalCount *spare = NULL;

        for (RefusalCount *c = counts; c < counts + REFUSALS_USERS_TRACKED; c++) {
                if (c->used && c->uid == uid)
                        return c;
                if (!spare && (!c->used || (ratelimit_window_over(rl, &c->lines, now) && c->lines.dropped == 0)))
                        spare = c;
        }
        if (!spare)
                return &others;
        *spare = (RefusalCount) { .used = true, .uid = uid };
        return spare;
}

bool refusal_log_admit(uid_t uid, RefusalVerdict *ret) {
        const RateLimit rl = {
                .interval = fsg_env_seconds("FSGATE_REFUSAL_LOG_WINDOW_SEC", REFUSALS_LOGGED_WINDOW_SEC) * UINT64_C(1000000),
                .burst = fsg_env_unsigned("FSGATE_REFUSAL_LOG_BURST", REFUSALS_LOGGED_BURST, 1000000),
        };
        uint64_t now = fsg_now_usec();
        RefusalCount *c = count_of(uid, &rl, now);
        unsigned dropped;

        if (!ratelimit_below(&rl, &c->lines, -1, now, &dropped))
                return false;
        *ret = (RefusalVerdict) { .unlogged = dropped, .shared = c == &others };
        return true;
}

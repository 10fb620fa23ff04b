/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/* polkit's "no" comes back in milliseconds, so a user can be refused as fast as they can ask.
 * Each refusal is worth an audit line, but not without bound: */
#define REFUSALS_LOGGED_BURST 10        /* journal lines per user and window; FSGATE_REFUSAL_LOG_BURST overrides it */
#define REFUSALS_LOGGED_WINDOW_SEC 60   /* FSGATE_REFUSAL_LOG_WINDOW_SEC overrides it, for tests */
#define REFUSALS_USERS_TRACKED 32       /* users beyond these share one count */

typedef struct RefusalVerdict {
        unsigned unlogged;      /* refusals not logged before this one, to be said in its line */
        bool shared;            /* ... counted with other users' (past REFUSALS_USERS_TRACKED) */
} RefusalVerdict;

/* Counts one refusal of UID. True if it is to be logged, with *ret filled. A count still
 * waiting when the user stops asking is never said, as with journald's own rate limit. */
bool refusal_log_admit(uid_t uid, RefusalVerdict *ret);

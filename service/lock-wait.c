/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The writers' lock, taken from fsgated's loop. Another writer (fsgatectl --root=/ offline,
 * a package script) may hold it for a while; fsgated answers every client from one loop, so
 * it must not sleep until the lock is free: a change waits on a timer, retrying with a
 * growing delay, and every read, root's and everyone's, is answered meanwhile. flock() has
 * nothing to watch for its release, hence the timer. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lock-wait.h"
#include "list.h"
#include "lock.h"
#include "macro.h"
#include "time-util.h"

/* Only authorized changes wait here (polkit answered first), but an authorized caller could
 * still queue many: past this many, a change is refused with Busy at once. */
#define LOCK_WAITS_MAX 64
#define RETRY_FIRST_USEC 1000ULL
#define RETRY_MAX_USEC (50 * 1000ULL)

typedef struct LockWait {
        Manager *manager;
        sd_bus_message *call;
        sd_event_source *timer;
        int fd;                 /* the lock file, open, not yet held */
        uint64_t deadline;      /* CLOCK_MONOTONIC */
        uint64_t delay;
        LockedFn done;
        void *userdata;
        LIST_FIELDS(struct LockWait, waits);
} LockWait;

static unsigned n_waits(const Manager *m) {
        unsigned n = 0;

        LIST_FOREACH(waits, w, m->lock_waits)
                n++;
        return n;
}

/* Unlinks w and hands the outcome to its caller: the lock's descriptor (theirs now) or -1. */
static void wait_finish(LockWait *w, bool held, const FsgError *error) {
        Manager *m = w->manager;

        LIST_REMOVE(waits, m->lock_waits, w);
        m->n_pending--;
        sd_event_source_disable_unref(w->timer);
        w->done(m, w->call, held ? w->fd : -1, error, w->userdata);
        if (!held)
                close(w->fd);   /* not taken: only a holder removes the file */
        sd_bus_message_unref(w->call);
        free(w);
}

static int on_retry(sd_event_source *s, uint64_t usec, void *userdata) {
        LockWait *w = userdata;
        FsgError e = {};
        int r;

        if (fsg_lock_try(w->manager->ctx, &w->fd, &e) >= 0) {
                wait_finish(w, true, NULL);
                return 0;
        }
        if (e.code != FSG_ERR_BUSY || fsg_now_usec() >= w->deadline) {
                wait_finish(w, false, &e);
                return 0;
        }
        w->delay = w->delay * 2 < RETRY_MAX_USEC ? w->delay * 2 : RETRY_MAX_USEC;
        r = sd_event_source_set_time_relative(s, w->delay);
        if (r >= 0)
                r = sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        if (r < 0) {
                fsg_error(&e, FSG_ERR_FAILED, "Cannot wait for the writers' lock: %s", strerror(-r));
                wait_finish(w, false, &e);
        }
        return 0;
}

void manager_lock_async(Manager *m, sd_bus_message *call, LockedFn done, void *userdata) {
        _cleanup_close_ int fd = -1;
        LockWait *w;
        FsgError e = {};
        int r;

        if (fsg_lock_open(m->ctx, &fd, &e) < 0) {
                done(m, call, -1, &e, userdata);
                return;
        }
        if (fsg_lock_try(m->ctx, &fd, &e) >= 0) {
                done(m, call, TAKE_FD(fd), NULL, userdata);
                return;
        }
        if (e.code != FSG_ERR_BUSY || n_waits(m) >= LOCK_WAITS_MAX) {
                done(m, call, -1, &e, userdata);
                return;
        }
        w = malloc(sizeof(LockWait));
        if (!w) {
                fsg_error(&e, FSG_ERR_FAILED, "Out of memory");
                done(m, call, -1, &e, userdata);
                return;
        }
        *w = (LockWait) { .manager = m, .fd = -1, .deadline = fsg_now_usec() + m->ctx->lock_timeout_usec,
                          .delay = RETRY_FIRST_USEC, .done = done, .userdata = userdata };
        r = sd_event_add_time_relative(m->event, &w->timer, CLOCK_MONOTONIC, w->delay, 0, on_retry, w);
        if (r < 0) {
                free(w);
                fsg_error(&e, FSG_ERR_FAILED, "Cannot wait for the writers' lock: %s", strerror(-r));
                done(m, call, -1, &e, userdata);
                return;
        }
        w->fd = TAKE_FD(fd);
        w->call = sd_bus_message_ref(call);
        LIST_PREPEND(waits, m->lock_waits, w);
        m->n_pending++;
}

void manager_lock_cancel_all(Manager *m) {
        while (m->lock_waits) {
                FsgError e = {};

                fsg_error(&e, FSG_ERR_BUSY, "fsgated is stopping; nothing was changed, try again");
                wait_finish(m->lock_waits, false, &e);
        }
}

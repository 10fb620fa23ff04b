/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "context.h"

/* fsgated's one object: what every handler gets as userdata. Its life (new, connect, run,
 * free) is manager-loop.c's; the kept state is state-cache.h's, the bus object
 * bus-object.h's. */
typedef struct Manager {
        sd_event *event;
        sd_bus *bus;
        sd_bus_slot *vtable_slot;
        FsgContext *ctx;
        unsigned n_pending;     /* authorizations in flight: no idle exit while > 0 */
        struct PolkitQuery *polkit_queries; /* those of them waiting for an answer (polkit-bridge.c) */
        struct LockWait *lock_waits; /* authorized changes waiting for the writers' lock (lock-wait.c) */
        struct StateCache *state_cache; /* the kept answer and what tells it to re-read: state-cache.c */
        char **reported;        /* "SYSNAME!TYPE!DISKSEQ" of each medium signalled as Blocked, when
                                 * /run/fsgate/reported cannot be written (block-reports.c) */
        struct FsgGrant *grants; /* the active grants, sorted by end (grants.c) */
        size_t n_grants;
        sd_event_source *grant_timer;   /* at the next end */
        char **unload_pending;  /* modules whose last grant ended and that are still loaded */
        char **unload_announced; /* those of them said to be in use already (one line each) */
        char **unload_deps;     /* pairs: a module of an ended grant, what its grants loaded with it
                                 * ("fuse configfs"), unloaded once the module is gone */
        sd_event_source *watch_timer;    /* media of device grants, waiting unloads */
        struct OpenMedium *opens; /* what OpenSafely mounted, and those still starting (bus-open.c) */
        unsigned n_opens;
        struct OpenMedium *opens_closed; /* ended, their killed children not reaped yet */
        sd_event_source *opens_watch;   /* while a device is open: is it still there (an unplug ends it) */
        sd_bus_slot *opens_jobs;        /* systemd's JobRemoved, once an open ran in a unit (open-unit.c) */
        sd_bus_slot *opens_logout;      /* logind's UserRemoved, once anything was opened */
} Manager;

int manager_new(const char *root, const char *kver, Manager **ret);
Manager *manager_free(Manager *m);
int manager_connect(Manager *m);
int manager_run(Manager *m, uint64_t idle_usec);

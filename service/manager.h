/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "state.h"

#define FSGATE_BUS_NAME "org.fsgate.fsgate1"
#define FSGATE_BUS_PATH "/org/fsgate/fsgate1"
#define FSGATE_BUS_IFACE "org.fsgate.fsgate1.Manager"

typedef struct Manager {
        sd_event *event;
        sd_bus *bus;
        sd_bus_slot *vtable_slot;
        FsgContext *ctx;
        unsigned n_pending;     /* authorizations in flight: no idle exit while > 0 */
        struct PolkitQuery *polkit_queries; /* those of them waiting for an answer (polkit.c) */
        FsgState *cache;        /* see state-cache.c */
        int inotify_fd;
        struct StateCache *state_cache; /* what else tells the cache to re-read: state-cache.c */
        uint64_t n_rebuilds;
        char **reported;        /* "device\ttype" already signalled as Blocked */
} Manager;

int manager_new(const char *root, const char *kver, Manager **ret);
Manager *manager_free(Manager *m);
int manager_connect(Manager *m);
int manager_run(Manager *m, uint64_t idle_usec);
extern const sd_bus_vtable manager_vtable[];

int manager_cache_init(Manager *m);
void manager_cache_done(Manager *m);
/* The current state, rebuilt only when the configuration changed. Owned by the manager. */
int manager_state(Manager *m, const FsgState **ret, FsgError *e);

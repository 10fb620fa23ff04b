/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "state.h"
#include "store.h"


typedef struct Manager {
        sd_event *event;
        sd_bus *bus;
        sd_bus_slot *vtable_slot;
        FsgContext *ctx;
        unsigned n_pending;     /* authorizations in flight: no idle exit while > 0 */
        struct PolkitQuery *polkit_queries; /* those of them waiting for an answer (polkit-bridge.c) */
        struct StateCache *state_cache; /* the kept answer and what tells it to re-read: state-cache.c */
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
/* The one way an FsgError becomes a D-Bus error reply (its message made valid UTF-8). */
int manager_reply_error(sd_bus_message *call, const FsgError *e);
/* fsg_plan() against that state: what validating a request costs whoever sends it. */
int manager_plan(Manager *m, FsgOp op, const char *name, uint64_t flags, FsgPlan *ret, FsgError *e);

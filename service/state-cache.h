/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "manager.h"
#include "state.h"
#include "store.h"

/* Makes m->state_cache, the kept state and the watches that tell it to re-read. < 0 with
 * m->state_cache made: a watch is missing, and answers rebuild what it would have watched;
 * m->state_cache NULL: nothing made. */
int manager_cache_init(Manager *m);
void manager_cache_done(Manager *m);
/* The current state, rebuilt only when the configuration changed: a reference of the
 * caller's (hold it with _cleanup_(fsg_state_unrefp)); what it says stays as it was while it
 * is held, whatever later calls rebuild. */
int manager_state(Manager *m, FsgState **ret, FsgError *e);
/* A grant record was written or removed (grants.c): the kept state's granted_until again. */
void manager_cache_grants_changed(Manager *m);
/* fsg_plan() against that state: what validating a request costs whoever sends it. */
int manager_plan(Manager *m, FsgOp op, const char *name, uint64_t flags, FsgPlan *ret, FsgError *e);
/* After a change of fsgate's, under the same lock as its write: the routes as the
 * configuration now asks (routes.h), from the state asked for with the lock held. */
void manager_update_routes_locked(Manager *m);
/* Why an Allow and a Reset of x would be refused now (fsg_plan_refusals()) against that state. */
void manager_plan_refusals(Manager *m, const FsgEntry *x, FsgError *ret_allow, FsgError *ret_reset);

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "grant.h"
#include "manager.h"

/* fsgated's grants (grant.h): a load that ends by itself. Each is kept in memory and as a
 * record; at its end the record goes and, once nothing else grants the module, nothing uses it
 * and the configuration still denies it, the module is unloaded (never forced: a mounted one
 * stays until it is unmounted). fsgated does not exit while one is active or an unload is
 * waiting: the end is its job. */

/* At start, once on the bus: the records of this boot armed again (those whose end passed
 * meanwhile end now), those of another boot removed. */
void manager_grants_start(Manager *m);
void manager_grants_done(Manager *m);
/* Whether fsgated must stay up for them. */
bool manager_grants_hold(const Manager *m);
bool manager_module_granted(const Manager *m, const char *module);
unsigned manager_grants_of_uid(const Manager *m, uint32_t uid);
/* Recorded durably, then kept and armed. */
int manager_grant_add(Manager *m, const FsgGrant *g, FsgError *e);
/* Ends every grant of module: reason for the GrantEnded signal and the journal. Returns how
 * many ended. */
unsigned manager_grants_end_module(Manager *m, const char *module, const char *reason);
/* Ends the one grant id (if it is still active). */
void manager_grant_end_id(Manager *m, const char *id, const char *reason);
/* The Grants property: a(ssutts). */
int manager_append_grants(const Manager *m, sd_bus_message *reply);

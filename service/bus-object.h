/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "fsg-error.h"

/* org.fsgate.fsgate1.Manager: the properties and methods, one block each in bus-object.c. */
extern const sd_bus_vtable manager_vtable[];

/* The one way an FsgError becomes a D-Bus error reply (its message made valid UTF-8). */
int manager_reply_error(sd_bus_message *call, const FsgError *e);

struct Manager;
/* After a change of fsgate's, under the same lock as its write: the routes as the
 * configuration now asks (routes.h). */
void bus_update_routes_locked(struct Manager *m);

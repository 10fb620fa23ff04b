/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "fsg-error.h"
#include "manager.h"
#include "state.h"

/* The one way an FsgError becomes a D-Bus error reply (its message made valid UTF-8). */
int manager_reply_error(sd_bus_message *call, const FsgError *e);
/* The end of every method that builds its reply: sent if r says all went well, freed either way. */
int bus_send_reply(sd_bus_message *reply, int r);

/* An entry as List's (sassssbbbb); as Describe's a{sv}, every field under its name; as
 * DescribeAll's {sa{sv}}, that under the module's name. */
int bus_append_entry(sd_bus_message *reply, const FsgEntry *x);
int bus_append_description(sd_bus_message *reply, const FsgEntry *x);
int bus_append_named_description(sd_bus_message *reply, const FsgEntry *x);
/* The reply to call: every entry of the kept state, each appended by append into an array of
 * type (userdata is the Manager). */
int bus_reply_all_entries(sd_bus_message *call, void *userdata, const char *type,
                          int (*append)(sd_bus_message *reply, const FsgEntry *x));

/* FilesystemChanged for module, as the kept state says it is now. */
int manager_emit_changed(Manager *m, const char *module);

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "fsg-error.h"
#include "manager.h"
#include "open-medium.h"

/* OpenSafely's call read and checked before polkit is asked (bus-open.c asks): the medium (a
 * device fsgated opens, or under its unit leaves to the unit's step; an image its caller
 * opened), its type, whether it is removable or in use, the route and its driver, and which
 * way the driver will run (in fsgated's own sandbox, or in a systemd unit: open-unit.c).
 * 1, or a negative errno: with e filled, a refusal; without, a malformed call. */
int open_request_read(Manager *m, sd_bus_message *call, OpenRequest *q, FsgError *e);
void open_request_free(OpenRequest *q);

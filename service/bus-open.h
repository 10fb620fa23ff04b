/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "manager.h"

/* Open safely: OpenSafely, CloseSafely and the OpenMedia property (org.fsgate.fsgate1(5)). A
 * medium's files read-only for its caller through a sandboxed userspace FUSE driver
 * (core/open-route.h, open-sandbox.h); no kernel filesystem module is loaded. */

#define OPEN_MAX         16     /* mounts fsgated keeps at a time */
#define OPEN_PER_UID_MAX 4
#define OPEN_READY_USEC  (15 * 1000000ULL)      /* the driver's first answer, at most */

int method_open_safely(sd_bus_message *call, void *userdata, sd_bus_error *error);
int method_close_safely(sd_bus_message *call, void *userdata, sd_bus_error *error);
int property_open_media(sd_bus *bus, const char *path, const char *interface, const char *property,
                        sd_bus_message *reply, void *userdata, sd_bus_error *error);
/* Whether fsgated must stay up: a mount and its driver are its to end. */
bool manager_opens_hold(const Manager *m);
/* At start: what a crashed fsgated left in /run/fsgate-open (its drivers died with it:
 * PR_SET_PDEATHSIG) unmounted and removed. */
void manager_opens_start(Manager *m);
/* At exit: every mount unmounted, every driver killed, every mountpoint removed. */
void manager_opens_done(Manager *m);

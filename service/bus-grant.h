/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

/* Grant(s name, a{sv} scope, t flags) → s grant (bus-grant.c). */
int method_grant(sd_bus_message *call, void *userdata, sd_bus_error *error);

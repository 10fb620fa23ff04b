/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

/* org.fsgate.fsgate1.Manager: the properties and methods, one block each in bus-object.c. */
extern const sd_bus_vtable manager_vtable[];


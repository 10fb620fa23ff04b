/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "macro.h"

/* Journal catalog ids: one per kind of event, so `journalctl MESSAGE_ID=...` finds them all. */
#define FSGATE_MESSAGE_CONFIG_CHANGED "efb905bbe1504e55b29815e87e6c0f5a"
#define FSGATE_MESSAGE_MODULE_LOADED  "8320ed33661a44c3985de4e3bbfdd10d"
#define FSGATE_MESSAGE_REFUSED        "d97d19d74e8c4d338aeeb7ba7ea1c3f0"
#define FSGATE_MESSAGE_BLOCKED        "f300f0bf231648efbb9c6d79d5d67564"

/* Records who (uid, pid of the D-Bus caller) did what to which module (NULL or "": none). */
void log_request(sd_bus_message *call, const char *message_id, int priority, const char *module,
                 const char *fmt, ...) _printf_(5, 6);
void log_plain(int priority, const char *fmt, ...) _printf_(2, 3);
/* A refusal by polkit, as log_request(..., FSGATE_MESSAGE_REFUSED, LOG_INFO, ...), but at most
 * REFUSALS_LOGGED_BURST lines a user and window (refusal-ratelimit.h): the next line logged
 * says how many were not. */
void log_refusal(sd_bus_message *call, const char *module, const char *fmt, ...) _printf_(3, 4);

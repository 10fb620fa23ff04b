/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "journal-ids.h"
#include "macro.h"

/* Records who (uid, pid of the D-Bus caller) did what to which module (NULL or "": none). */
void log_request(sd_bus_message *call, const char *message_id, int priority, const char *module,
                 const char *fmt, ...) _printf_(5, 6);
void log_plain(int priority, const char *fmt, ...) _printf_(2, 3);
/* A refusal by polkit, as log_request(..., FSGATE_MESSAGE_REFUSED, LOG_INFO, ...), but at most
 * REFUSALS_LOGGED_BURST lines a user and window (refusal-ratelimit.h): the next line logged
 * says how many were not. */
void log_refusal(sd_bus_message *call, const char *module, const char *fmt, ...) _printf_(3, 4);
/* A line about a grant (grant.h) once its caller is gone: who asked is the grant's uid
 * (UINT32_MAX and grant_id NULL: a line about the module, not one grant). */
void log_grant(const char *message_id, int priority, const char *module, uint32_t uid, const char *grant_id,
               const char *fmt, ...) _printf_(6, 7);

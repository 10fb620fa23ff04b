/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "fsg-i18n.h"
#include "manager.h"

/* A message for the password dialog is sent untranslated: polkitd translates it in the
 * locale of the agent that shows it, with fsgate's gettext domain (po/, installed like any
 * .mo). N_() marks it for xgettext. "$(module)" is expanded by polkitd from the details. */
#define POLKIT_GETTEXT_DOMAIN "fsgate"

/* Called once with the verdict: granted > 0, or a filled error explaining the refusal. */
typedef void (*PolkitDone)(Manager *m, sd_bus_message *call, bool granted, const sd_bus_error *error, void *userdata);

/* Asks polkit, asynchronously, whether the sender of call may do action_id. details: what
 * it is about, key and value in turn, NULL-terminated ("module", "hfs", NULL): rules read
 * them (action.lookup()), message shows them ($(module)). Root callers are granted without
 * asking. Any failure to get an answer, running out of memory included, refuses (fail
 * closed): done runs exactly once, possibly before this returns, and answers the call. */
void polkit_check_async(Manager *m, sd_bus_message *call, const char *action_id, const char * const *details,
                        const char *message, PolkitDone done, void *userdata);

/* Refuses every query still waiting for polkit (the service is stopping). */
void polkit_cancel_all(Manager *m);

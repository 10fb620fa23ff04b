/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "fsg-error.h"
#include "manager.h"

/* Called once the writers' lock is held (lock_fd >= 0, the callee's to close) or could not be
 * (lock_fd < 0, *error says why: Busy after FSGATED_LOCK_TIMEOUT_USEC, or fsgated stopping). */
typedef void (*LockedFn)(Manager *m, sd_bus_message *call, int lock_fd, const FsgError *error, void *userdata);

/* Takes the writers' lock for call's change without waiting in the loop: at once if it is
 * free, else by a retry timer while every other client is answered. Counts as pending (no
 * idle exit) until done runs. */
void manager_lock_async(Manager *m, sd_bus_message *call, LockedFn done, void *userdata);

/* Every wait ends with an error now (fsgated is stopping). */
void manager_lock_cancel_all(Manager *m);

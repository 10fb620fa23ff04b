/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "fsg-error.h"
#include "open-medium.h"

/* Open safely under fsgated's shipped unit, which may not mount (no CAP_SYS_ADMIN, its own
 * mount namespace): systemd runs each opened medium as a transient unit,
 * fsgate-open-ID.service, whose privileged steps mount in the host's namespace and unmount
 * however it ends, and whose driver runs as a dynamic user with no capabilities, no network, a
 * system call filter and limits (fsgate-open-helper, open-helper.c). */

/* Whether systemd runs this system (sd_booted()): the way fsgated takes when it may not
 * mount itself. */
bool open_unit_possible(void);
/* Asks systemd for o's unit, the medium as its stdin and err_fd (the write end of the pipe
 * fsgated reads) as its output; the outcome comes later through open_medium_ready() or
 * open_medium_failed(). 0, or a negative errno with e filled. */
int open_unit_start(OpenMedium *o, const OpenRequest *q, int err_fd, FsgError *e);
/* Asks systemd to stop o's unit (its ExecStopPost= unmounts); o, already closed, is released
 * and its close_call answered once the stop is done. */
void open_unit_stop(OpenMedium *o);
/* At start: units a stopped fsgated left (their connection was its to watch) stopped. */
void open_unit_stop_leftovers(Manager *m);

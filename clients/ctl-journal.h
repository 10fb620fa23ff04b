/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-journal.h>

#include "fsg-error.h"

/* The journal fsgatectl reads: the system's, or FSGATE_JOURNAL_DIR's. */
int ctl_journal_open(sd_journal **ret, FsgError *e);
/* The value of FIELD in the current entry, "" when it has none; NULL only when out of memory. */
char *ctl_journal_field(sd_journal *j, const char *name);
/* A time for people, local: "2026-12-07 14:33" (with seconds: ":05"). */
void ctl_format_time(uint64_t usec, bool seconds, char buf[static 32]);

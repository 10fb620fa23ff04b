/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>

#include "macro.h"
#include "notify-text.h"

/* What notify-text.c and notify-outcome.c both build their texts with; not for the notifier's
 * other files, which take whole texts from notify-text.h. */

/* asprintf() that leaves *ret NULL on failure (_cleanup_free_ needs it): 0 or -ENOMEM. */
_printf_(2, 3) int notify_format(char **ret, const char *fmt, ...);
/* A body written to an open_memstream() f closed into *ret: open_memstream() sets *buf only at
 * fclose(), so its address is passed. r: the writer's status so far; if it is negative, or f
 * cannot be closed, nothing is handed out and that error (or -ENOMEM) returned. */
int notify_finish(FILE *f, char **buf, int r, char **ret);
/* A command for the person on a line of its own (copied whole), every word from the signal
 * quoted for the shell: fsgatectl VERB [OPTION=VALUE] [ARG]. 0 or -ENOMEM. */
int notify_put_command(FILE *f, const char *verb, const char *option, const char *value, const char *arg);
/* How a person knows the drive inside a sentence: its label, vendor or model, else its node. */
char *notify_device_name_inline(const NotifyBlocked *b);

#define OPEN_MEMSTREAM(f, buf, size)                    \
        FILE *f = open_memstream(&(buf), &(size));      \
        if (!(f))                                       \
                return -ENOMEM

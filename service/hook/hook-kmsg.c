/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "hook.h"

void hook_kmsg(const char *fmt, ...) {
        char line[512];
        va_list ap;
        int fd, n;

        va_start(ap, fmt);
        n = vsnprintf(line, sizeof(line), fmt, ap);
        va_end(ap);
        /* FSGATE_KMSG lets host tests capture the line instead of logging to the host kernel. */
        fd = open(secure_getenv("FSGATE_KMSG") ?: "/dev/kmsg", O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return;
        if (n > 0)
                (void) !write(fd, line, (size_t) n < sizeof(line) ? (size_t) n : sizeof(line) - 1);
        close(fd);
}

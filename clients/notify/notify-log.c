/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>

#include "notify.h"

static int log_max = LOG_INFO;

void log_full(int priority, const char *fmt, ...) {
        char buf[1024];
        va_list ap;

        if (priority > log_max)
                return;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        /* Under systemd stderr is the journal, which reads the <N> priority prefix. */
        if (getenv("JOURNAL_STREAM"))
                fprintf(stderr, "<%d>%s\n", priority, buf);
        else
                fprintf(stderr, "fsgate-notify: %s\n", buf);
}

void log_parse_environment(void) {
        const char *level = getenv("SYSTEMD_LOG_LEVEL");

        if (level && (streq(level, "debug") || streq(level, "7")))
                log_max = LOG_DEBUG;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "time-util.h"

uint64_t fsg_now_usec(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000ULL + (uint64_t) ts.tv_nsec / 1000ULL;
}

uint64_t fsg_realtime_usec(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t) ts.tv_sec * 1000000ULL + (uint64_t) ts.tv_nsec / 1000ULL;
}

uint64_t fsg_boottime_usec(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_BOOTTIME, &ts);
        return (uint64_t) ts.tv_sec * 1000000ULL + (uint64_t) ts.tv_nsec / 1000ULL;
}

unsigned fsg_env_unsigned(const char *name, unsigned fallback, unsigned max) {
        const char *e = secure_getenv(name);
        unsigned long v;
        char *end;

        if (!e)
                return fallback;
        errno = 0;
        v = strtoul(e, &end, 10);
        if (errno != 0 || end == e || *end || v < 1 || v > max)
                return fallback;
        return (unsigned) v;
}

unsigned fsg_env_seconds(const char *name, unsigned fallback) {
        return fsg_env_unsigned(name, fallback, 86400);
}

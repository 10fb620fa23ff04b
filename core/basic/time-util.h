/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

/* CLOCK_MONOTONIC in microseconds: for deadlines and windows inside one process. */
uint64_t fsg_now_usec(void);
/* CLOCK_REALTIME in microseconds: for times people read and records that outlive a process. */
uint64_t fsg_realtime_usec(void);
/* CLOCK_BOOTTIME in microseconds: for ends that must come after so long whatever is done to
 * the wall clock (it never goes back, and counts a suspend), within one boot. */
uint64_t fsg_boottime_usec(void);

/* A count from the environment variable NAME (a test's override), else FALLBACK: also when
 * the value is no whole number from 1 to MAX. */
unsigned fsg_env_unsigned(const char *name, unsigned fallback, unsigned max);

/* A window or timeout in seconds from the environment variable NAME (a test's override),
 * else FALLBACK: also when the value is no whole number from 1 to 86400. */
unsigned fsg_env_seconds(const char *name, unsigned fallback);

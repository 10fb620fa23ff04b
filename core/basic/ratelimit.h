/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* fsgated's and the hook's one rate limiter, as systemd's ratelimit_below(): at most burst
 * events are let through in a window of interval, which opens with the first event after
 * the last window is over. Times are in the unit of the caller's clock (fsgated counts µs
 * of CLOCK_MONOTONIC, the hook ms of CLOCK_BOOTTIME). */
typedef struct RateLimit {
        uint64_t interval;
        unsigned burst;
} RateLimit;

/* What one limited thing has counted, apart from the limit: the hook keeps it in a file
 * that every hook maps (this is that file's layout, native u64s), so only atomic operations
 * touch it, and a storm neither waits for a lock nor loses count. */
typedef struct RateLimitCount {
        uint64_t begin;         /* when the window opened; 0: none yet */
        uint64_t num;           /* events let through in the window */
        uint64_t dropped;       /* events held back since the last one let through */
} RateLimitCount;

/* Counts one event at now. True if it is let through, with *ret_dropped the events held
 * back before it (its line is to say so); false with *ret_dropped 0. lock_fd: a file
 * flock()ed, never waited for, while a window is opened, if processes share c; else -1. */
bool ratelimit_below(const RateLimit *rl, RateLimitCount *c, int lock_fd, uint64_t now, unsigned *ret_dropped);

/* Whether c's window is over at now (or none was opened). */
bool ratelimit_window_over(const RateLimit *rl, const RateLimitCount *c, uint64_t now);

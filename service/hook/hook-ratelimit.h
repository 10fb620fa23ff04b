/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* Any user who may create a user namespace can make the kernel run the hook as root, as
 * often as it likes (`unshare -Urm mount -t hfs ...`). What one attempt may cost therefore
 * has to be bounded per type, whatever the rate: */
#define HOOK_BURST 3            /* kernel log lines (and reports) per type and window */
#define HOOK_WINDOW_SEC 60      /* FSGATE_HOOK_WINDOW_SEC overrides it, for tests */
#define HOOK_REPORTERS_MAX 4    /* detached reporting children, all types together */

typedef struct HookVerdict {
        bool log;               /* write the kernel log line */
        bool report;            /* and report, if a reporter is free: only when counted */
        unsigned summary;       /* attempts kept quiet about since the last line: say so first */
        unsigned burst;
        unsigned window_sec;
} HookVerdict;

/* The directory of the hook's state: /run/fsgate (FSGATE_RUNTIME_DIR in tests), created
 * 0755 if missing and trusted only if root's and writable by nobody else. A file
 * descriptor, or -errno. */
int hook_state_open(void);

/* Counts one attempt for TYPE in its window. Without a state it can trust, every attempt
 * is logged (a block never goes unseen) and none is reported (what costs a process and a
 * bus connection is never unbounded). */
void hook_account(int dir_fd, const char *type, HookVerdict *ret);

/* The same count for a request the routes file sent (fsgate-blocked --route), kept apart
 * (hook-TYPE.route): where a deny of fsgate's and a route a moment older than it both run for
 * one request, each counts it once in its own window. It is taken before anything is built:
 * past the burst a route costs what the verdict below costs. */
void hook_account_route(int dir_fd, const char *type, HookVerdict *ret);

/* The same, for a request an observation sent (fsgate-blocked --observe), in hook-TYPE.observe. */
void hook_account_observe(int dir_fd, const char *type, HookVerdict *ret);

/* What the last state build decided for TYPE's route (fsgate-blocked.c's RouteVerdict), kept
 * in hook-TYPE.verdict with the key it was decided for (the configuration's fingerprint, the
 * module, the kernel). A route past its burst acts on it instead of building the state. A
 * record that is missing, torn (two writers at once) or for another key: -ENOENT. */
int hook_route_verdict_get(int dir_fd, const char *type, uint64_t key);
void hook_route_verdict_put(int dir_fd, const char *type, uint64_t key, unsigned verdict);

/* Claims the right to report TYPE: one reporter per type, HOOK_REPORTERS_MAX in all. On
 * success ret_fds[] hold the two locks; a child forked before they are closed keeps them
 * until it exits. -EBUSY (or -errno) otherwise. */
int hook_claim_reporter(int dir_fd, const char *type, int ret_fds[static 2]);

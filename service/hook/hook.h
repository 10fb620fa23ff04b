/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>
#include <systemd/sd-bus.h>

#include "hook-line.h"
#include "hook-ratelimit.h"
#include "macro.h"

/* What fsgate-blocked's modes share. The kernel's paths (a deny's install line, a route, the
 * routes file's rebuild) live in fsgate-blocked.c with the table of modes; the device paths
 * (udev's --device and --udev-import, the unit's --report, --boot, the hand-over to systemd)
 * in hook-device.c. */

/* A mode's run: args are the arguments after the mode's option; line is the parsed install
 * line, for the modes an install line runs (hook-line.h), else NULL. */
typedef int (*HookModeRun)(char **args, const FsgHookArgs *line);

/* When main() armed the mode's time budget (CLOCK_MONOTONIC, µs). */
extern uint64_t hook_start_usec;

/* The device path's whole budget, in a udev worker, bus calls included. */
#define HOOK_DEVICE_BUDGET_USEC 2500000ULL

/* A connection to the system bus, or to ADDRESS, whose calls give up after timeout_usec. */
int hook_bus_open(const char *address, uint64_t timeout_usec, sd_bus **ret);
/* fsgated's METHOD(a, b), waited for at most timeout_usec. */
int hook_call(const char *method, const char *a, const char *b, uint64_t timeout_usec);

/* hook-device.c */
int hook_device_mode(char **args, const FsgHookArgs *line);
int hook_udev_import_mode(char **args, const FsgHookArgs *line);
int hook_report_mode(char **args, const FsgHookArgs *line);
int hook_boot_mode(char **args, const FsgHookArgs *line);

/* A line in the kernel log (FSGATE_KMSG: a file instead, for tests). */
void hook_kmsg(const char *fmt, ...) _printf_(1, 2);

/* hook-observe.c: who waits for a request of the kernel for a filesystem type. */
typedef struct HookRequester {
        pid_t pid;              /* 0: nobody found */
        uid_t uid;              /* its real uid, as the initial namespace sees it */
        char comm[32];
        char source[256];       /* mount(2)'s source, "" when none or unreadable */
        unsigned n_more;        /* others asking for the same type at that moment */
} HookRequester;
int hook_requester_find(const char *type, HookRequester *ret);
/* An observed request the profile would block: the summary of what the window kept quiet
 * (v->summary), then, when v->log, the kernel log line and the journal entry
 * (FSGATE_MESSAGE_WOULD_BLOCK) with who asked. */
void hook_observe_record(const char *type, const char *module, const char *profile, const HookVerdict *v);

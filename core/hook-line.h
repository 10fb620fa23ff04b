/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdio.h>

/* The lines of modprobe.d that send the kernel's request for a type to fsgate's hook
 * (fsgate-blocked), defined once for the writers (a deny file: conffile.c; the routes
 * file: routes.c; the vendor files data/modprobe.d/meson.build makes spell the same line)
 * and the hook's parser of its arguments. Each type gets two lines:
 *
 *   alias fs-TYPE PREFIXTYPE
 *   install PREFIXTYPE HOOK ARGS
 *
 * and ARGS is one of
 *
 *   TYPE MODULE SOURCE       a deny (FSG_BLOCKED_PREFIX): SOURCE the deny file's path
 *   --route TYPE MODULE      a route (FSG_ROUTED_PREFIX; the first routes files had
 *                            FSG_BLOCKED_PREFIX, with the same arguments)
 *   --observe TYPE MODULE PROFILE
 *                            an observation (FSG_OBSERVED_PREFIX, observe.h): PROFILE would
 *                            deny MODULE; the hook records that and loads it
 *
 * The line runs through /bin/sh, so every word is a name that needs no quoting (name.h) or
 * a path fsgate writes; kmod appends nothing to an install command but $CMDLINE_OPTS,
 * which the kernel's request leaves empty. Files already on disk keep their lines: the
 * parser accepts every form a version wrote, tests/unit/test-hook-line.c checks that. */

/* The name a type's request is routed to in a deny file. */
#define FSG_BLOCKED_PREFIX "fsgate_blocked_"

/* The name a route sends a type's request to: not FSG_BLOCKED_PREFIX, so that where a deny
 * of fsgate's and a route (a moment older than it) both alias a type, kmod runs each one's
 * own install line, and the route's run can stay quiet. */
#define FSG_ROUTED_PREFIX "fsgate_routed_"
/* The hook's option that marks a route's arguments. */
#define FSG_HOOK_ROUTE_OPTION "--route"

/* The name an observation sends a type's request to: a third one, so that where a deny or a
 * route also aliases the type, kmod runs each install line and each hook run knows its job. */
#define FSG_OBSERVED_PREFIX "fsgate_observed_"
#define FSG_HOOK_OBSERVE_OPTION "--observe"

typedef enum FsgHookLineKind {
        FSG_HOOK_LINE_BLOCKED,  /* a deny's: TYPE MODULE SOURCE */
        FSG_HOOK_LINE_ROUTE,    /* a route's: --route TYPE MODULE */
        FSG_HOOK_LINE_OBSERVE,  /* an observation's: --observe TYPE MODULE PROFILE */
} FsgHookLineKind;

typedef struct FsgHookArgs {
        FsgHookLineKind kind;
        const char *type;
        const char *module;
        const char *source;     /* a deny's file; NULL for a route */
        const char *profile;    /* an observation's profile; else NULL */
} FsgHookArgs;

/* Writes the two lines for a (the alias, then the install line running hook) to f; the
 * caller passes only names that need no quoting. Returns -EIO when f fails. */
int fsg_hook_lines_write(FILE *f, const char *hook, const FsgHookArgs *a);

/* Reads the hook's arguments after its name (argv[0] is the first argument) as an install
 * line wrote them; the strings point into argv. -EINVAL when they are no install line's,
 * or a type or module is not a valid name. */
int fsg_hook_args_parse(int argc, char * const *argv, FsgHookArgs *ret);

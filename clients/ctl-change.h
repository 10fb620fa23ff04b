/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "ctl.h"
#include "store.h"

/* What one invocation works with, handed to every verb instead of globals. */
typedef struct Ctl {
        CtlOptions o;
        const CtlBackend *be;
        uint64_t flags;                 /* FSG_FLAG_*: --runtime, --force, --load, --hard, --soft, --dry-run */
        char *root_abs;                 /* a relative --root made absolute */
        uint64_t since_usec;            /* log --since */
        unsigned lines;                 /* log --lines */
        bool log_options;               /* --since, --lines or --would-block given: log's only */
        bool only_would_block;          /* log --would-block */
        uint64_t grant_usec;            /* allow --for */
        const char *grant_device;       /* allow --device */
        const char *route;              /* open --route */
        CtlFilter filter;               /* list --state, --origin, PATTERN... */
} Ctl;

/* Names one change verb takes at once: a command line's worth, bounded like any input. */
#define MAX_NAMES 64

/* allow, deny, reset of names: all planned (dry runs) first, so that one that would be
 * refused changes nothing of the others; then each, and what changed is said. The exit
 * status. */
int ctl_change_names(Ctl *c, FsgOp op, char **names, size_t n);
/* allow --for/--device of names: a grant each. The exit status. */
int ctl_grant_names(Ctl *c, char **names, size_t n);

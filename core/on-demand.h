/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

/* The filesystems people need now and then without any file naming them first: a stick or a
 * DVD plugged in, a container started, a share or an automount reached. A system that uses none
 * of them today needs them tomorrow, so the "unused" profile keeps them unless asked
 * (FSG_FLAG_INCLUDE_ON_DEMAND), and a dry run says what including them would cost. */
typedef struct FsgOnDemand {
        const char *module;     /* as modules.dep names it */
        const char *type;       /* the type people give mount(8) */
        const char *refused;    /* who would be refused were it denied; marked N_(): _() it to show */
} FsgOnDemand;

extern const FsgOnDemand fsg_on_demand_table[];
extern const size_t fsg_on_demand_table_n;

/* The row of module (either spelling of '-'/'_'), NULL for one people do not need on demand. */
const FsgOnDemand *fsg_on_demand_find(const char *module);

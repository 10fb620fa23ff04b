/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "context.h"

/* The filesystem part of a kernel's module tree: which module serves which type. */
typedef struct FsgModTree {
        char **types;        /* filesystem type, from "alias fs-TYPE MODULE" */
        char **modules;      /* the module serving types[i] (normalized) */
        size_t n;
        char **builtin;      /* modules compiled into the kernel (modules.builtin) */
        char **builtin_fs;   /* those of them whose source is under fs/ */
} FsgModTree;

int fsg_modtree_load(const FsgContext *c, FsgModTree **ret, FsgError *e);
FsgModTree *fsg_modtree_free(FsgModTree *t);
static inline void fsg_modtree_freep(FsgModTree **t) {
        fsg_modtree_free(*t);
}

/* Facts about the running system under the root: loaded modules and mounted types. */
int fsg_read_loaded_modules(const FsgContext *c, char ***ret);
int fsg_read_mounted_types(const FsgContext *c, char ***ret);

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
        size_t n_builtin;    /* both sorted once loaded */
        size_t n_builtin_fs;
} FsgModTree;

int fsg_modtree_load(const FsgContext *c, FsgModTree **ret, FsgError *e);
FsgModTree *fsg_modtree_free(FsgModTree *t);
bool fsg_modtree_is_builtin(const FsgModTree *t, const char *module);
bool fsg_modtree_is_builtin_fs(const FsgModTree *t, const char *module);
static inline void fsg_modtree_freep(FsgModTree **t) {
        fsg_modtree_free(*t);
}

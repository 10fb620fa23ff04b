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

/* Facts about the running system under the root: loaded modules and mounted types, each a
 * sorted set. */
int fsg_read_loaded_modules(const FsgContext *c, char ***ret);
int fsg_read_mounted_types(const FsgContext *c, char ***ret);

/* Calls fn for each whitespace-separated word of ROOT/abs (a /proc table), with its column
 * (from 0, per line); word may be modified in place. Allocates nothing, so that it can run
 * for every answer. A missing file has no words; one that is no regular file, or holds more
 * than FSG_TABLE_MAX bytes, is an error (fsg_open_regular()'s). */
typedef void (*FsgWordFn)(void *userdata, unsigned column, char *word);
int fsg_read_table(const FsgContext *c, const char *abs, FsgWordFn fn, void *userdata);

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "fsg-error.h"

/* Where fsgate looks: a system root ("/" or an image) and one kernel release in it. */
typedef struct FsgContext {
        char *root;     /* "" for the running system, else an absolute path without trailing '/' */
        char *kver;     /* NULL when the root has no module tree */
        char *moddir;   /* root-prefixed lib/modules/KVER, NULL with kver */
} FsgContext;

int fsg_context_new(const char *root, const char *kver, FsgContext **ret, FsgError *e);
FsgContext *fsg_context_free(FsgContext *c);
static inline void fsg_context_freep(FsgContext **c) {
        fsg_context_free(*c);
}

/* abs as a path on the host: below the root, with symlinks resolved inside the root.
 * abs must start with '/'. Returns NULL on OOM or a symlink loop. The _nofollow variant
 * leaves a final symlink alone (for classifying our own files, masks included). */
char *fsg_path(const FsgContext *c, const char *abs);
char *fsg_path_nofollow(const FsgContext *c, const char *abs);

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

/* root + abs; abs must start with '/'. Returns NULL on OOM. */
char *fsg_path(const FsgContext *c, const char *abs);

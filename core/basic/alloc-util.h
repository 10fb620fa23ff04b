/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <malloc.h>
#include <stdlib.h>

#include "macro.h"

/* Room for one more element of an array grown by doubling (the allocator knows its capacity),
 * so that adding n elements one at a time copies O(n) bytes in all, not O(n²). */
static inline void *fsg_grow_one(void *p, size_t n, size_t size) {
        if (p && size * (n + 1) <= malloc_usable_size(p))
                return p;
        return realloc(p, size * (n < 4 ? 8 : 2 * (n + 1)));
}

/* An object that owns many strings frees them in one statement, as systemd's free_many_charp():
 * its destructor then lists what it owns instead of repeating free() once per field. */
static inline void free_array(void * const *p, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(p[i]);
}
#define free_many(...) \
        free_array((void * const[]) { __VA_ARGS__ }, ELEMENTSOF(((void * const[]) { __VA_ARGS__ })))

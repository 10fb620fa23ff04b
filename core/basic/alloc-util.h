/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <malloc.h>
#include <stdlib.h>

/* Room for one more element of an array grown by doubling (the allocator knows its capacity),
 * so that adding n elements one at a time copies O(n) bytes in all, not O(n²). */
static inline void *fsg_grow_one(void *p, size_t n, size_t size) {
        if (p && size * (n + 1) <= malloc_usable_size(p))
                return p;
        return realloc(p, size * (n < 4 ? 8 : 2 * (n + 1)));
}

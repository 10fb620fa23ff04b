/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "strv.h"

char **strv_free(char **l) {
        if (!l)
                return NULL;
        for (char **i = l; *i; i++)
                free(*i);
        free(l);
        return NULL;
}

size_t strv_length(char * const *l) {
        size_t n = 0;
        if (l)
                while (l[n])
                        n++;
        return n;
}

bool strv_contains(char * const *l, const char *s) {
        if (l)
                for (char * const *i = l; *i; i++)
                        if (strcmp(*i, s) == 0)
                                return true;
        return false;
}

void strv_remove(char **l, const char *s) {
        char **w = l;

        if (!l)
                return;
        for (char **r = l; *r; r++)
                if (strcmp(*r, s) == 0)
                        free(*r);
                else
                        *w++ = *r;
        *w = NULL;
}

int strv_push(char ***l, char *s) {
        size_t n = strv_length(*l);
        char **t = *l;

        if (!s)
                return -ENOMEM;
        /* Grown by doubling, so that a list built one element at a time is copied O(log n)
         * times, not n times. The allocator knows the capacity, so lists made elsewhere (an
         * exact calloc) work as well. */
        if (!t || sizeof(char *) * (n + 2) > malloc_usable_size(t)) {
                t = realloc(t, sizeof(char *) * (n < 2 ? 4 : 2 * (n + 2)));
                if (!t) {
                        free(s);
                        return -ENOMEM;
                }
        }
        t[n] = s;
        t[n + 1] = NULL;
        *l = t;
        return 0;
}

int strv_extend(char ***l, const char *s) {
        return strv_push(l, strdup(s));
}

int strv_extend_unique(char ***l, const char *s) {
        if (strv_contains(*l, s))
                return 0;
        return strv_extend(l, s);
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char * const *) a, *(char * const *) b);
}

void strv_sort(char **l) {
        if (l)
                qsort(l, strv_length(l), sizeof(char *), cmp_str);
}

void strv_sort_unique(char **l) {
        size_t n = 0;

        strv_sort(l);
        for (char **i = l; i && *i; i++) {
                if (n > 0 && strcmp(l[n - 1], *i) == 0)
                        free(*i);
                else
                        l[n++] = *i;
        }
        if (l)
                l[n] = NULL;
}

bool strv_sorted_contains(char * const *l, size_t n, const char *s) {
        return l && bsearch(&s, l, n, sizeof(char *), cmp_str);
}

char **strv_split_spaces(const char *s) {
        _cleanup_free_ char *copy = strdup(s);
        _cleanup_strv_free_ char **l = NULL;
        char *save = NULL;

        if (!copy)
                return NULL;
        for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save))
                if (strv_extend(&l, w) < 0)
                        return NULL;
        return l ? TAKE_PTR(l) : calloc(1, sizeof(char *));
}

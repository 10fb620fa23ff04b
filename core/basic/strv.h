/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* NULL-terminated string arrays, as in systemd. */
char **strv_free(char **l);
size_t strv_length(char * const *l);
bool strv_contains(char * const *l, const char *s);
static inline bool strv_isempty(char * const *l) {
        return !l || !l[0];
}
/* Drops (and frees) every element equal to s. */
void strv_remove(char **l, const char *s);
int strv_push(char ***l, char *s);          /* takes ownership of s, even on failure */
int strv_extend(char ***l, const char *s);  /* copies s */
int strv_extend_unique(char ***l, const char *s);
/* The words of s between spaces, as a new list (empty, not NULL, for none); NULL: out of memory. */
char **strv_split_spaces(const char *s);
void strv_sort(char **l);
/* Sorts and drops duplicates: a set in O(n log n), where strv_extend_unique() is O(n²). */
void strv_sort_unique(char **l);
/* For a list sorted by strv_sort(): n is its length. */
bool strv_sorted_contains(char * const *l, size_t n, const char *s);

/* Several lists freed in one statement (free_many() of alloc-util.h, for lists). */
static inline void strv_free_array(char ** const *l, size_t n) {
        for (size_t i = 0; i < n; i++)
                strv_free(l[i]);
}
#define strv_free_many(...) \
        strv_free_array((char ** const[]) { __VA_ARGS__ }, sizeof((char ** const[]) { __VA_ARGS__ }) / sizeof(char **))

static inline void strv_freep(char ***l) {
        strv_free(*l);
}
#define _cleanup_strv_free_ __attribute__((cleanup(strv_freep)))

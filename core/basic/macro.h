/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>

/* libsystemd does not export its cleanup helpers, so we carry our own. */
#define _cleanup_(f) __attribute__((cleanup(f)))
#define _printf_(a, b) __attribute__((format(printf, a, b)))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

static inline void freep(void *p) {
        free(*(void **) p);
}
static inline void fclosep(FILE **f) {
        if (*f)
                fclose(*f);
}
static inline void closep(int *fd) {
        if (*fd >= 0)
                close(*fd);
}
static inline void closedirp(DIR **d) {
        if (*d)
                closedir(*d);
}

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_fclose_ _cleanup_(fclosep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_closedir_ _cleanup_(closedirp)

static inline bool streq(const char *a, const char *b) {
        return strcmp(a, b) == 0;
}
static inline bool streq_ptr(const char *a, const char *b) {
        if (!a || !b)
                return a == b;
        return streq(a, b);
}
static inline bool endswith(const char *s, const char *suffix) {
        size_t a = strlen(s), b = strlen(suffix);
        return a >= b && streq(s + a - b, suffix);
}
/* s without its leading and trailing blanks (a line's end included): cut in place. */
static inline char *strstrip(char *s) {
        char *end;

        s += strspn(s, " \t");
        end = s + strlen(s);
        while (end > s && strchr(" \t\r\n", end[-1]))
                *--end = 0;
        return s;
}

/* Hands ownership out of a _cleanup_ variable. */
#define TAKE_PTR(p) ({ __typeof__(p) _t = (p); (p) = NULL; _t; })
#define TAKE_FD(fd) ({ int _t = (fd); (fd) = -1; _t; })

/* Closes fd if open; returns -1, for "fd = safe_close(fd)". */
static inline int safe_close(int fd) {
        if (fd >= 0)
                (void) close(fd);
        return -1;
}

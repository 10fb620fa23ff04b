/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "alloc-util.h"
#include "macro.h"
#include "shell-quote.h"

#define ALNUM "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

bool fsg_shell_word_is_plain(const char *w) {
        return *w && strspn(w, ALNUM "/._+-@=:,") == strlen(w);
}

char *fsg_shell_quote(const char *w) {
        size_t n = 3;
        char *q, *t;

        if (fsg_shell_word_is_plain(w))
                return strdup(w);
        for (const char *p = w; *p; p++)
                n += *p == '\'' ? 4 : 1;
        q = t = malloc(n);
        if (!q)
                return NULL;
        *t++ = '\'';
        for (const char *p = w; *p; p++)
                if (*p == '\'')
                        t = stpcpy(t, "'\\''");  /* end the quote, a quoted ', quote again */
                else
                        *t++ = *p;
        *t++ = '\'';
        *t = 0;
        return q;
}

char *fsg_shell_join(const char * const *words) {
        _cleanup_free_ char *line = NULL;
        size_t len = 0;

        for (const char * const *w = words; *w; w++) {
                _cleanup_free_ char *q = fsg_shell_quote(*w);
                char *l;

                if (!q)
                        return NULL;
                l = realloc(line, len + strlen(q) + 2);
                if (!l)
                        return NULL;
                line = l;
                if (len)
                        line[len++] = ' ';
                strcpy(line + len, q);
                len += strlen(q);
        }
        return line ? TAKE_PTR(line) : strdup("");
}

bool fsg_kernel_release_is_valid(const char *s) {
        size_t l = s ? strlen(s) : 0;

        return l > 0 && l <= 64 && strspn(s, ALNUM "._+-") == l && !streq(s, ".") && !streq(s, "..");
}

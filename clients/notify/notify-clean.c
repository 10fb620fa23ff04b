/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a stick or the bus hands the notifier, made fit for a notification: one inert line of
 * valid UTF-8, a size in words, markup escaped. No wording here: that is notify-text.c's. */
#define _GNU_SOURCE
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>

#include "macro.h"
#include "notify-clean.h"
#include "utf8.h"

/* Unicode's format characters (category Cf, Unicode 15.0): invisible, among them the bidi
 * controls that reorder what follows them and the zero-width ones that hide a difference. A
 * label has no honest use for them on one line of a notification. */
static const struct {
        uint32_t first, last;
} format_chars[] = {
        { 0x00ad, 0x00ad },   { 0x0600, 0x0605 },   { 0x061c, 0x061c },   { 0x06dd, 0x06dd },
        { 0x070f, 0x070f },   { 0x0890, 0x0891 },   { 0x08e2, 0x08e2 },   { 0x180e, 0x180e },
        { 0x200b, 0x200f },   { 0x202a, 0x202e },   { 0x2060, 0x2064 },   { 0x2066, 0x206f },
        { 0xfeff, 0xfeff },   { 0xfff9, 0xfffb },   { 0x110bd, 0x110bd }, { 0x110cd, 0x110cd },
        { 0x13430, 0x1343f }, { 0x1bca0, 0x1bca3 }, { 0x1d173, 0x1d17a }, { 0xe0001, 0xe0001 },
        { 0xe0020, 0xe007f },
};

static bool is_format(uint32_t cp) {
        for (size_t i = 0; i < ELEMENTSOF(format_chars); i++)
                if (cp >= format_chars[i].first && cp <= format_chars[i].last)
                        return true;
        return false;
}

/* What ends a line somewhere: C0 and C1 controls (tab, newline, NEL), DEL, and Unicode's
 * line and paragraph separators. */
static bool is_break(uint32_t cp) {
        return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029;
}

/* Leading and trailing blanks only make the line look odd. */
static size_t trim_end(const char *t, size_t n) {
        while (n > 0 && t[n - 1] == ' ')
                n--;
        return n;
}

char *notify_clean(const char *s, size_t max) {
        static const char ellipsis[] = "…", replacement[] = "\xef\xbf\xbd"; /* U+FFFD */
        size_t o = 0, chars = 0, keep = 0;
        char *t;

        assert(max > 0);
        s = s ?: "";
        /* An invalid byte grows to the three of U+FFFD; nothing else grows. */
        t = malloc(strlen(s) * 3 + sizeof(ellipsis));
        if (!t)
                return NULL;
        /* A label read from a stick is the stick's to choose: it may break the line, reorder
         * it, hide characters or not be UTF-8 at all. What is left is one inert line. */
        while (*s) {
                uint32_t cp;
                size_t n = fsg_utf8_decode(s, &cp);
                const char *ch = s;
                size_t len = n;

                if (n == 0) {
                        ch = replacement;
                        len = strlen(replacement);
                        n = 1;
                } else if (is_format(cp)) {
                        s += n;
                        continue;
                } else if (is_break(cp)) {
                        ch = " ";
                        len = 1;
                }
                s += n;
                if (o == 0 && *ch == ' ')
                        continue;
                memcpy(t + o, ch, len);
                o += len;
        }
        o = trim_end(t, o);

        /* Past max characters, keep max - 1 and end with the ellipsis; cut only where a
         * character starts (t is valid UTF-8 by now). */
        for (size_t i = 0; i < o; i++)
                if (((unsigned char) t[i] & 0xc0) != 0x80 && chars++ == max - 1)
                        keep = i;
        if (chars > max) {
                o = trim_end(t, keep);
                memcpy(t + o, ellipsis, strlen(ellipsis));
                o += strlen(ellipsis);
        }
        t[o] = 0;
        return t;
}

const char *notify_format_size(uint64_t bytes, char buf[static 32]) {
        static const char * const units[] = { "kB", "MB", "GB", "TB", "PB", "EB" };
        double v = (double) bytes;
        size_t u = 0;

        if (bytes < 1000) {
                snprintf(buf, 32, "%" PRIu64 " B", bytes);
                return buf;
        }
        v /= 1000;
        while (v >= 999.95 && u + 1 < ELEMENTSOF(units)) {
                v /= 1000;
                u++;
        }
        snprintf(buf, 32, "%.1f %s", v, units[u]);
        return buf;
}

char *notify_markup_escape(const char *body) {
        char *out = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&out, &size);

        if (!f)
                return NULL;
        for (const char *p = body; *p; p++)
                switch (*p) {
                case '&': fputs("&amp;", f); break;
                case '<': fputs("&lt;", f); break;
                case '>': fputs("&gt;", f); break;
                default: fputc(*p, f);
                }
        if (fclose(f) != 0) {
                free(out);
                return NULL;
        }
        return out;
}

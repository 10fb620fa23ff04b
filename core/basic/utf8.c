/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

size_t fsg_utf8_decode(const char *str, uint32_t *ret_cp) {
        const unsigned char *s = (const unsigned char *) str;
        uint32_t cp;
        size_t n;

        if (s[0] < 0x80) {
                if (ret_cp)
                        *ret_cp = s[0];
                return 1;
        }
        if ((s[0] & 0xe0) == 0xc0)
                n = 2, cp = s[0] & 0x1f;
        else if ((s[0] & 0xf0) == 0xe0)
                n = 3, cp = s[0] & 0x0f;
        else if ((s[0] & 0xf8) == 0xf0)
                n = 4, cp = s[0] & 0x07;
        else
                return 0;
        for (size_t i = 1; i < n; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                cp = (cp << 6) | (s[i] & 0x3f);
        }
        if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
            (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        if (ret_cp)
                *ret_cp = cp;
        return n;
}

bool fsg_utf8_is_valid(const char *s) {
        for (const char *p = s; *p;) {
                size_t n = fsg_utf8_decode(p, NULL);
                if (n == 0)
                        return false;
                p += n;
        }
        return true;
}

char *fsg_utf8_escape(const char *s) {
        size_t len = strlen(s), o = 0;
        char *out = malloc(len * 4 + 1);

        if (!out)
                return NULL;
        for (const unsigned char *p = (const unsigned char *) s; *p;) {
                size_t n = fsg_utf8_decode((const char *) p, NULL);
                if (n == 0) {
                        o += sprintf(out + o, "\\x%02x", *p);
                        p++;
                } else {
                        memcpy(out + o, p, n);
                        o += n;
                        p += n;
                }
        }
        out[o] = 0;
        return out;
}

/* Those a terminal acts on: C0 and C1 controls, DEL, and the marks that reorder text on
 * screen (bidirectional overrides and isolates). */
static bool is_control(uint32_t cp) {
        return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
               (cp >= 0x2066 && cp <= 0x2069);
}

char *fsg_cescape(const char *s) {
        static const char named[] = { ['\a'] = 'a', ['\b'] = 'b', ['\t'] = 't', ['\n'] = 'n',
                                      ['\v'] = 'v', ['\f'] = 'f', ['\r'] = 'r' };
        size_t len = strlen(s), o = 0;
        /* The longest: a 3-byte mark as "\uNNNN" (6) or any byte as "\xNN" (4): 4 a byte. */
        char *out = malloc(len * 4 + 1);

        if (!out)
                return NULL;
        for (const unsigned char *p = (const unsigned char *) s; *p;) {
                uint32_t cp;
                size_t n = fsg_utf8_decode((const char *) p, &cp);

                if (n == 0)
                        o += sprintf(out + o, "\\x%02x", *p++);
                else if (cp < sizeof(named) && named[cp])
                        o += sprintf(out + o, "\\%c", named[cp]), p++;
                else if (cp < 0x80 && is_control(cp))
                        o += sprintf(out + o, "\\x%02x", *p++);
                else if (is_control(cp))
                        o += sprintf(out + o, "\\u%04x", (unsigned) cp), p += n;
                else {
                        memcpy(out + o, p, n);
                        o += n;
                        p += n;
                }
        }
        out[o] = 0;
        return out;
}

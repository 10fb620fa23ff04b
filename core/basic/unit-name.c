/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "unit-name.h"

static bool char_is_plain(char c, bool first) {
        /* A leading '.' would make a hidden-looking name; systemd escapes it. */
        if (c == '.')
                return !first;
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ':' || c == '_';
}

/* No empty, "." or ".." component: what the unit's %f gives back is PATH itself. */
static bool path_is_canonical(const char *path) {
        for (const char *seg = path + 1;;) {
                size_t l = strcspn(seg, "/");

                if (l == 0 || (l == 1 && seg[0] == '.') || (l == 2 && seg[0] == '.' && seg[1] == '.'))
                        return false;
                if (seg[l] == '\0')
                        return true;
                seg += l + 1;
        }
}

int fsg_unit_name_from_path(const char *template, const char *path, char *buf, size_t size) {
        static const char hex[] = "0123456789abcdef";
        const char *at, *p;
        size_t n = 0;

        if (!template || !path || path[0] != '/' || path[1] == '\0')
                return -EINVAL;
        at = strchr(template, '@');
        if (!at || at == template || at[1] != '.' || strchr(at + 1, '@'))
                return -EINVAL;
        /* systemd would simplify these first; a device node never has them. */
        if (!path_is_canonical(path))
                return -EINVAL;

#define PUT(c)                                  \
        do {                                    \
                if (n + 1 >= size)              \
                        return -ENOBUFS;        \
                buf[n++] = (c);                 \
        } while (0)

        for (p = template; p <= at; p++)
                PUT(*p);
        for (p = path + 1; *p; p++) {
                if (*p == '/')
                        PUT('-');
                else if (char_is_plain(*p, p == path + 1))
                        PUT(*p);
                else {
                        PUT('\\');
                        PUT('x');
                        PUT(hex[(unsigned char) *p >> 4]);
                        PUT(hex[(unsigned char) *p & 15]);
                }
        }
        for (p = at + 1; *p; p++)
                PUT(*p);
#undef PUT
        buf[n] = '\0';
        return n > FSG_UNIT_NAME_MAX ? -EINVAL : 0;
}

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

/* prefix, path escaped, suffix: what systemd-escape --path writes between them. */
static int escape_path(const char *prefix, size_t prefix_len, const char *path, const char *suffix, char *buf,
                       size_t size) {
        static const char hex[] = "0123456789abcdef";
        const char *p;
        size_t n = 0;

        /* systemd would simplify these first; a device node never has them. */
        if (path[0] != '/' || path[1] == '\0' || !path_is_canonical(path))
                return -EINVAL;

#define PUT(c)                                  \
        do {                                    \
                if (n + 1 >= size)              \
                        return -ENOBUFS;        \
                buf[n++] = (c);                 \
        } while (0)

        for (p = prefix; p < prefix + prefix_len; p++)
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
        for (p = suffix; *p; p++)
                PUT(*p);
#undef PUT
        buf[n] = '\0';
        return n > FSG_UNIT_NAME_MAX ? -EINVAL : 0;
}

int fsg_unit_name_from_path(const char *template, const char *path, char *buf, size_t size) {
        const char *at;

        if (!template || !path)
                return -EINVAL;
        at = strchr(template, '@');
        if (!at || at == template || at[1] != '.' || strchr(at + 1, '@'))
                return -EINVAL;
        return escape_path(template, at - template + 1, path, at + 1, buf, size);
}

int fsg_unit_name_of_path(const char *path, const char *suffix, char *buf, size_t size) {
        if (!path || !suffix || suffix[0] != '.' || strchr(suffix, '/'))
                return -EINVAL;
        return escape_path("", 0, path, suffix, buf, size);
}

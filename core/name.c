/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "name.h"

bool fsg_name_is_valid(const char *s) {
        size_t n = 0;

        if (!s || !*s)
                return false;
        for (; s[n]; n++) {
                char c = s[n];
                if (n >= FSG_NAME_MAX)
                        return false;
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '-'))
                        return false;
        }
        return true;
}

void fsg_name_normalize(char *s) {
        for (; *s; s++)
                if (*s == '-')
                        *s = '_';
}

bool fsg_name_normalize_into(const char *s, char buf[static FSG_NAME_MAX + 1]) {
        size_t l = s ? strlen(s) : SIZE_MAX;

        if (l > FSG_NAME_MAX)
                return false;
        memcpy(buf, s, l + 1);
        fsg_name_normalize(buf);
        return true;
}

int fsg_name_foreach_type_in_field(const char *field, int (*fn)(const char *type, void *userdata), void *userdata) {
        char *copy = strdup(field);
        int r = 0;

        if (!copy)
                return -ENOMEM;
        for (char *save = NULL, *t = strtok_r(copy, ",", &save); t && r == 0; t = strtok_r(NULL, ",", &save)) {
                char *dot = strchr(t, '.');

                if (dot && dot != t)
                        *dot = 0;
                if (fsg_name_is_valid(t))
                        r = fn(t, userdata);
        }
        free(copy);
        return r;
}

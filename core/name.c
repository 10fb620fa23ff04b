/* SPDX-License-Identifier: LGPL-2.1-or-later */
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

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile-mark.h"
#include "sha256.h"

char *fsg_profile_mark_append(const char *content, const char *profile) {
        char hex[FSG_SHA256_HEX_SIZE];
        char *s;

        fsg_sha256_hex(content, strlen(content), hex);
        if (asprintf(&s, "%s" FSG_PROFILE_MARK "%s sha256=%s\n", content, profile, hex) < 0)
                return NULL;
        return s;
}

FsgMark fsg_profile_mark_check(const char *content, size_t len, char ret_profile[static 64]) {
        char hex[FSG_SHA256_HEX_SIZE], name[64], sum[FSG_SHA256_HEX_SIZE], line[160];
        const char *mark = NULL, *end;
        size_t ml = strlen(FSG_PROFILE_MARK);
        int n = 0;

        *ret_profile = 0;
        /* The last line that begins with the mark: one an admin copied into the middle of a
         * file is not the one fsgate wrote. */
        for (const char *l = content; l < content + len;) {
                const char *nl = memchr(l, '\n', content + len - l);

                if ((size_t) (content + len - l) >= ml && memcmp(l, FSG_PROFILE_MARK, ml) == 0)
                        mark = l;
                if (!nl)
                        break;
                l = nl + 1;
        }
        if (!mark)
                return FSG_MARK_NONE;
        end = memchr(mark, '\n', content + len - mark);
        if (!end || (size_t) (end - mark) >= sizeof(line))
                return FSG_MARK_CHANGED;
        memcpy(line, mark, end - mark);
        line[end - mark] = 0;
        if (sscanf(line + ml, "%63s sha256=%64s%n", name, sum, &n) != 2 || line[ml + n] != 0)
                return FSG_MARK_CHANGED;
        snprintf(ret_profile, 64, "%s", name);
        /* Anything after the mark, or any byte before it changed: not as the profile wrote it. */
        if (end + 1 != content + len || strcmp(fsg_sha256_hex(content, mark - content, hex), sum) != 0)
                return FSG_MARK_CHANGED;
        return FSG_MARK_INTACT;
}

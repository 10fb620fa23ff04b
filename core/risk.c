/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "name.h"
#include "risk.h"

static int compare_module(const void *key, const void *member) {
        return strcmp(key, ((const FsgRisk *) member)->module);
}

const FsgRisk *fsg_risk_find(const char *module) {
        char name[64];

        if (!module || strlen(module) >= sizeof(name))
                return NULL;
        snprintf(name, sizeof(name), "%s", module);
        fsg_name_normalize(name);
        return bsearch(name, fsg_risk_table, fsg_risk_table_n, sizeof(FsgRisk), compare_module);
}

/* MAINTAINERS' words as people read them: "Orphan" says nobody looks after the code. */
static const char *maintainers_phrase(const char *status) {
        if (!*status)
                return "no maintainer of its own";
        if (strstr(status, "Orphan"))
                return "orphaned upstream";
        if (strstr(status, "Obsolete"))
                return "obsolete upstream";
        if (strstr(status, "Odd Fixes"))
                return "little maintained (odd fixes)";
        return NULL;
}

bool fsg_risk_is_notable(const FsgRisk *r) {
        return r && (maintainers_phrase(r->maintainers) || *r->deprecated || *r->upstream || r->userns_mount);
}

void fsg_risk_phrase(const FsgRisk *r, char *buf, size_t size) {
        const char *parts[4];
        size_t n = 0, used = 0;

        if (size == 0)
                return;
        buf[0] = 0;
        if (!r)
                return;
        if (maintainers_phrase(r->maintainers))
                parts[n++] = maintainers_phrase(r->maintainers);
        if (*r->deprecated)
                parts[n++] = "deprecated";
        if (*r->upstream)
                parts[n++] = r->upstream;
        if (r->userns_mount)
                parts[n++] = "any user can mount it in a user namespace";
        for (size_t i = 0; i < n && used < size; i++) {
                int k = snprintf(buf + used, size - used, "%s%s", i ? "; " : "", parts[i]);
                if (k < 0)
                        break;
                used += (size_t) k;
        }
}

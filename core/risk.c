/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsg-i18n.h"
#include "macro.h"
#include "name.h"
#include "risk.h"

static int compare_module(const void *key, const void *member) {
        return strcmp(key, ((const FsgRisk *) member)->module);
}

const FsgRisk *fsg_risk_find(const char *module) {
        char name[FSG_NAME_MAX + 1];

        if (!fsg_name_normalize_into(module, name))
                return NULL;
        return bsearch(name, fsg_risk_table, fsg_risk_table_n, sizeof(FsgRisk), compare_module);
}

/* MAINTAINERS' words as people read them: "Orphan" says nobody looks after the code. */
static const char *maintainers_phrase(const char *status) {
        if (!*status)
                return N_("no maintainer of its own");
        if (strstr(status, "Orphan"))
                return N_("orphaned upstream");
        if (strstr(status, "Obsolete"))
                return N_("obsolete upstream");
        if (strstr(status, "Odd Fixes"))
                return N_("little maintained (odd fixes)");
        return NULL;
}

/* curated.tsv's upstream column, spelled here once more so that xgettext finds the words
 * (the table is generated at build time, out of po/POTFILES' reach). */
static const char * const upstream_phrases[] = {
        N_("removal proposed, then withdrawn (2025)"),
        N_("removed in Linux 6.13"),
        N_("removed in Linux 6.15"),
};

bool fsg_risk_upstream_translatable(const char *upstream) {
        for (size_t i = 0; i < ELEMENTSOF(upstream_phrases); i++)
                if (strcmp(upstream_phrases[i], upstream) == 0)
                        return true;
        return false;
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
        /* In the reader's language once a program bound the domain (fsg_i18n_init()); fsgated
         * and --json, in the C locale, keep the English. */
        if (maintainers_phrase(r->maintainers))
                parts[n++] = _(maintainers_phrase(r->maintainers));
        if (*r->deprecated)
                parts[n++] = _("deprecated");
        if (*r->upstream)
                parts[n++] = _(r->upstream);
        if (r->userns_mount)
                parts[n++] = _("any user can mount it in a user namespace");
        for (size_t i = 0; i < n && used < size; i++) {
                int k = snprintf(buf + used, size - used, "%s%s", i ? "; " : "", parts[i]);
                if (k < 0)
                        break;
                used += (size_t) k;
        }
}

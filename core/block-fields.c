/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "block-fields.h"
#include "macro.h"

#define ROW(k, j, t, member) { .key = k, .journal = j, .type = t, .offset = offsetof(FsgBlockReport, member) }

/* In the order fsgated has always sent the details and written the fields. */
const FsgBlockField fsg_block_fields[] = {
        ROW(NULL,     "FSGATE_TYPE",        's', type),
        ROW(NULL,     "FSGATE_MODULE",      's', module),
        ROW(NULL,     "FSGATE_DEVICE",      's', device),
        ROW("source", "FSGATE_SOURCE",      's', source),
        ROW("origin", "FSGATE_ORIGIN",      's', origin),
        ROW("cause",  "FSGATE_CAUSE",       's', cause),
        ROW("seat",   "FSGATE_SEAT",        's', seat),
        ROW("loaded", NULL,                 'b', loaded),
        ROW("label",  "FSGATE_LABEL",       's', label),
        ROW("uuid",   NULL,                 's', uuid),
        ROW("vendor", NULL,                 's', vendor),
        ROW("model",  NULL,                 's', model),
        ROW("size",   NULL,                 't', size),
        ROW(NULL,     "FSGATE_SESSION",     's', session),
        ROW(NULL,     "FSGATE_SESSION_UID", 'i', session_uid),
};

const FsgBlockField *fsg_block_field_by_key(const char *key) {
        for (size_t i = 0; i < FSG_BLOCK_FIELDS_N; i++)
                if (fsg_block_fields[i].key && streq(fsg_block_fields[i].key, key))
                        return &fsg_block_fields[i];
        return NULL;
}

int fsg_block_field_parse(FsgBlockReport *r, const FsgBlockField *f, const char *value) {
        void *p = fsg_block_field_ptr(r, f);
        char *end = NULL;

        switch (f->type) {
        case 's': {
                char *copy = strdup(value);
                if (!copy)
                        return -ENOMEM;
                free(*(char **) p);
                *(char **) p = copy;
                return 0;
        }
        case 'i': {
                long n = *value ? strtol(value, &end, 10) : 0;
                /* A uid, or -1 for none: anything else is not ours. */
                *(int *) p = !*value || *end || n < -1 || n > INT32_MAX ? -1 : (int) n;
                return 0;
        }
        case 't': {
                unsigned long long n = *value ? strtoull(value, &end, 10) : 0;
                *(uint64_t *) p = *value && !*end ? (uint64_t) n : 0;
                return 0;
        }
        case 'b':
                *(bool *) p = streq(value, "1") || streq(value, "true");
                return 0;
        }
        return 0;
}

int fsg_block_report_fill_empty(FsgBlockReport *r) {
        for (size_t i = 0; i < FSG_BLOCK_FIELDS_N; i++) {
                char **s = fsg_block_field_ptr(r, &fsg_block_fields[i]);
                if (fsg_block_fields[i].type == 's' && !*s && !(*s = strdup("")))
                        return -ENOMEM;
        }
        return 0;
}

void fsg_block_report_clear(FsgBlockReport *r) {
        for (size_t i = 0; i < FSG_BLOCK_FIELDS_N; i++)
                if (fsg_block_fields[i].type == 's')
                        free(*(char **) fsg_block_field_ptr(r, &fsg_block_fields[i]));
        *r = (FsgBlockReport) {};
}

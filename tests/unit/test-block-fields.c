/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The table of what a block report carries (core/block-fields.c): each name once, and the
 * journal's text read back as fsgatectl log reads it. */
#include "block-fields.h"
#include "test-util.h"

TEST(names_are_unique_and_typed) {
        for (size_t i = 0; i < FSG_BLOCK_FIELDS_N; i++) {
                const FsgBlockField *f = &fsg_block_fields[i];

                ASSERT(f->key || f->journal);
                ASSERT(strchr("stbi", f->type));
                /* An int is the journal's only: the signal has no such detail. */
                ASSERT(f->type != 'i' || !f->key);
                if (f->key)
                        ASSERT(fsg_block_field_by_key(f->key) == f);
                for (size_t k = 0; k < i; k++) {
                        ASSERT(!f->key || !fsg_block_fields[k].key || !streq(f->key, fsg_block_fields[k].key));
                        ASSERT(!f->journal || !fsg_block_fields[k].journal ||
                               !streq(f->journal, fsg_block_fields[k].journal));
                        ASSERT(f->offset != fsg_block_fields[k].offset);
                }
        }
        ASSERT(!fsg_block_field_by_key("no-such-key"));
        ASSERT(!fsg_block_field_by_key("type"));        /* an argument of the signal, not a detail */
}

static const FsgBlockField *by_journal(const char *name) {
        for (size_t i = 0; i < FSG_BLOCK_FIELDS_N; i++)
                if (fsg_block_fields[i].journal && streq(fsg_block_fields[i].journal, name))
                        return &fsg_block_fields[i];
        return NULL;
}

TEST(journal_text_parses) {
        FsgBlockReport r = {};
        const FsgBlockField *uid = by_journal("FSGATE_SESSION_UID"), *seat = by_journal("FSGATE_SEAT");

        ASSERT(uid && seat);
        ASSERT(fsg_block_field_parse(&r, seat, "seat0") == 0);
        ASSERT_STREQ(r.seat, "seat0");
        ASSERT(fsg_block_field_parse(&r, uid, "1000") == 0);
        ASSERT(r.session_uid == 1000);
        /* Nobody at the seat, or a value that is no uid: -1. */
        ASSERT(fsg_block_field_parse(&r, uid, "") == 0 && r.session_uid == -1);
        ASSERT(fsg_block_field_parse(&r, uid, "12x") == 0 && r.session_uid == -1);
        ASSERT(fsg_block_field_parse(&r, uid, "-2") == 0 && r.session_uid == -1);
        ASSERT(fsg_block_report_fill_empty(&r) == 0);
        ASSERT_STREQ(r.type, "");
        ASSERT_STREQ(r.seat, "seat0");
        fsg_block_report_clear(&r);
        ASSERT(!r.seat);
}

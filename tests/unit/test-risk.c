/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The compiled-in risk facts (core/risk.h): found by either spelling, and said in words. */
#include "risk.h"
#include "test-util.h"

/* fsg_risk_find() bsearches: a table out of order would lose modules, so every row is found. */
TEST(every_row_is_found) {
        ASSERT(fsg_risk_table_n > 40);
        for (size_t i = 0; i < fsg_risk_table_n; i++) {
                ASSERT(fsg_risk_find(fsg_risk_table[i].module) == &fsg_risk_table[i]);
                if (i > 0)
                        ASSERT(strcmp(fsg_risk_table[i - 1].module, fsg_risk_table[i].module) < 0);
        }
        ASSERT(strstr(fsg_risk_source, "6.1.") == fsg_risk_source);
}

TEST(find) {
        const FsgRisk *r = fsg_risk_find("ocfs2-dlmfs");

        ASSERT(r && streq(r->module, "ocfs2_dlmfs"));
        ASSERT(!fsg_risk_find("no_such_fs"));
        ASSERT(!fsg_risk_find(""));
        ASSERT(!fsg_risk_find(NULL));
        ASSERT(!fsg_risk_find("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
}

TEST(phrase) {
        char buf[256], tiny[8];

        fsg_risk_phrase(fsg_risk_find("hfs"), buf, sizeof(buf));
        ASSERT(strstr(buf, "orphaned upstream") == buf);
        ASSERT(fsg_risk_is_notable(fsg_risk_find("hfs")));
        fsg_risk_phrase(fsg_risk_find("fuse"), buf, sizeof(buf));
        ASSERT_STREQ(buf, "any user can mount it in a user namespace");
        fsg_risk_phrase(fsg_risk_find("reiserfs"), buf, sizeof(buf));
        ASSERT(strstr(buf, "deprecated") && strstr(buf, "removed in Linux 6.13"));
        /* Maintained, in no user namespace, nothing upstream: nothing to say. */
        fsg_risk_phrase(fsg_risk_find("ext4"), buf, sizeof(buf));
        ASSERT_STREQ(buf, "");
        ASSERT(!fsg_risk_is_notable(fsg_risk_find("ext4")));
        ASSERT(!fsg_risk_is_notable(NULL));
        fsg_risk_phrase(NULL, buf, sizeof(buf));
        ASSERT_STREQ(buf, "");
        /* Cut, never overrun. */
        fsg_risk_phrase(fsg_risk_find("hfs"), tiny, sizeof(tiny));
        ASSERT(strlen(tiny) == sizeof(tiny) - 1);
}

/* Issue 41: the words of every curated line reach the translators (xgettext cannot read the
 * generated table). */
TEST(upstream_translatable) {
        size_t n = 0;

        for (size_t i = 0; i < fsg_risk_table_n; i++)
                if (*fsg_risk_table[i].upstream) {
                        if (!fsg_risk_upstream_translatable(fsg_risk_table[i].upstream))
                                fprintf(stderr, "%s: \"%s\" is not in core/risk.c's upstream_phrases\n",
                                        fsg_risk_table[i].module, fsg_risk_table[i].upstream);
                        ASSERT(fsg_risk_upstream_translatable(fsg_risk_table[i].upstream));
                        n++;
                }
        ASSERT(n >= 4);
        ASSERT(!fsg_risk_upstream_translatable("removed in Linux 9.9"));
}

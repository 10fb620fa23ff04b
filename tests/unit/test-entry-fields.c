/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "entry-fields.h"
#include "strv.h"
#include "test-util.h"

static char **list(const char *a, const char *b) {
        char **l = NULL;

        ASSERT(strv_extend(&l, a) == 0);
        ASSERT(!b || strv_extend(&l, b) == 0);
        return l;
}

static char **list_copy(char **l) {
        char **c = NULL;

        for (char **i = l; i && *i; i++)
                ASSERT(strv_extend(&c, *i) == 0);
        return c;
}

static bool list_equal(char **a, char **b) {
        size_t n = strv_length(a);

        if (n != strv_length(b))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!streq(a[i], b[i]))
                        return false;
        return true;
}

/* An entry with every field set, denied hard along a dependency that is not loaded. */
static void entry_sample(FsgEntry *x) {
        *x = (FsgEntry) {
                .module = strdup("minix"), .types = list("minix", NULL), .denied = true,
                .origin = FSG_ORIGIN_ADMIN, .deciding_file = strdup("/etc/modprobe.d/a.conf"),
                .override_of = strdup(""), .available = true, .mounted = true, .described = true, .hard = true,
                .blocks_reported = true, .install_command = strdup("/bin/false"),
                .install_file = strdup("/etc/modprobe.d/b.conf"),
                .mentions = list("/etc/modprobe.d/a.conf", "blacklist minix"),
        };
        x->hard_deps = calloc(1, sizeof(FsgHardDep));
        x->hard_deps[0] = (FsgHardDep) { .module = strdup("fuse"), .install_command = strdup("/bin/true"),
                                         .install_file = strdup("/etc/modprobe.d/c.conf") };
        x->n_hard_deps = 1;
}

TEST(entry_rows_make_the_entry_signature) {
        char sig[64] = "";

        for (size_t i = 0; i < fsg_entry_fields_n; i++)
                if (fsg_entry_fields[i].flags & FSG_FIELD_ENTRY)
                        strcat(sig, fsg_entry_fields[i].signature);
        /* ListFilesystems' and GetFilesystem's entry, in the table's order. */
        ASSERT_STREQ(sig, "sassssbbbb");
}

TEST(keys_are_unique_and_found) {
        for (size_t i = 0; i < fsg_entry_fields_n; i++)
                ASSERT(fsg_entry_field_find(fsg_entry_fields[i].key) == &fsg_entry_fields[i]);
        ASSERT(!fsg_entry_field_find("source"));
        ASSERT(!fsg_entry_field_find("reported"));
}

/* What a reader of the table stores gives back what the writer read: every row, the
 * computed ones (state, origin, explicit_load_possible, the dependency's) too. */
TEST(round_trip) {
        FsgEntry x, y = {};

        entry_sample(&x);
        for (size_t i = 0; i < fsg_entry_fields_n; i++) {
                const FsgEntryField *f = &fsg_entry_fields[i];

                switch (f->signature[0]) {
                case 's':
                        if (fsg_entry_field_string(&x, f))
                                ASSERT(fsg_entry_field_set_string(&y, f, fsg_entry_field_string(&x, f)) == 0);
                        break;
                case 'b':
                        fsg_entry_field_set_bool(&y, f, fsg_entry_field_bool(&x, f));
                        break;
                default:
                        fsg_entry_field_take_strv(&y, f, list_copy(fsg_entry_field_strv(&x, f)));
                }
        }
        ASSERT(fsg_entry_fields_complete(&y) == 0);
        for (size_t i = 0; i < fsg_entry_fields_n; i++) {
                const FsgEntryField *f = &fsg_entry_fields[i];

                if (f->signature[0] == 's') {
                        /* A copy: a computed value may live in one buffer (risk_summary). */
                        const char *got = fsg_entry_field_string(&x, f);
                        char *want = got ? strdup(got) : NULL;

                        ASSERT(streq_ptr(want, fsg_entry_field_string(&y, f)));
                        free(want);
                } else if (f->signature[0] == 'b')
                        ASSERT(fsg_entry_field_bool(&x, f) == fsg_entry_field_bool(&y, f));
                else
                        ASSERT(list_equal(fsg_entry_field_strv(&x, f), fsg_entry_field_strv(&y, f)));
        }
        ASSERT_STREQ(fsg_entry_field_string(&y, fsg_entry_field_find("hard_denied_dependency_file")),
                     "/etc/modprobe.d/c.conf");
        ASSERT(!fsg_entry_field_bool(&y, fsg_entry_field_find("explicit_load_possible")));
        fsg_entry_done(&x);
        fsg_entry_done(&y);
}

TEST(optional_and_defaults) {
        const FsgEntryField *refused = fsg_entry_field_find("allow_refused");
        const FsgEntryField *dep = fsg_entry_field_find("hard_denied_dependency");
        FsgEntry x = {};

        /* Not asked: not sent. Asked, and an Allow would be done: "". */
        ASSERT(!fsg_entry_field_string(&x, refused));
        ASSERT(fsg_entry_field_set_string(&x, refused, "") == 0);
        ASSERT_STREQ(fsg_entry_field_string(&x, refused), "");
        /* No dependency refuses: "" on the bus, none once read back. */
        ASSERT_STREQ(fsg_entry_field_string(&x, dep), "");
        ASSERT(fsg_entry_field_set_string(&x, dep, "") == 0);
        ASSERT(fsg_entry_fields_complete(&x) == -EBADMSG); /* no module, no deciding file */
        ASSERT(fsg_entry_field_set_string(&x, fsg_entry_field_find("module"), "hfs") == 0);
        ASSERT(fsg_entry_field_set_string(&x, fsg_entry_field_find("deciding_file"), "") == 0);
        ASSERT(fsg_entry_fields_complete(&x) == 0);
        ASSERT(x.n_hard_deps == 0 && !x.hard_deps);
        ASSERT_STREQ(x.install_command, "");
        ASSERT_STREQ(x.install_file, "");
        /* An empty list is none. */
        fsg_entry_field_take_strv(&x, fsg_entry_field_find("types"), calloc(1, sizeof(char *)));
        ASSERT(!x.types);
        fsg_entry_done(&x);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "name.h"
#include "utf8.h"
#include "test-util.h"

TEST(test_valid) {
        ASSERT(fsg_name_is_valid("hfs"));
        ASSERT(fsg_name_is_valid("ocfs2_dlmfs"));
        ASSERT(fsg_name_is_valid("9p"));
        ASSERT(fsg_name_is_valid("usb-storage"));
        ASSERT(fsg_name_is_valid("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")); /* 55 */
}

TEST(test_invalid) {
        static const char * const bad[] = {
                "", "..", ".", "a/b", "hfs\n", " hfs", "hfs ", "$(reboot)", ";rm", "a.conf", "hfs*",
                "h\xc3\xa9", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", /* 56 */
        };
        char big[301];

        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ASSERT(!fsg_name_is_valid(bad[i]));
        memset(big, 'a', 300);
        big[300] = 0;
        ASSERT(!fsg_name_is_valid(big));
        ASSERT(!fsg_name_is_valid(NULL));
}

TEST(test_normalize) {
        char s[] = "usb-storage-x";
        fsg_name_normalize(s);
        ASSERT_STREQ(s, "usb_storage_x");
}

TEST(test_utf8) {
        char *e;

        ASSERT(fsg_utf8_is_valid("/etc/modprobe.d/hfs.conf"));
        ASSERT(fsg_utf8_is_valid("caf\xc3\xa9"));
        ASSERT(!fsg_utf8_is_valid("50-\xff\xfe.conf"));
        ASSERT(!fsg_utf8_is_valid("\xc0\xaf"));         /* overlong '/' */
        ASSERT(!fsg_utf8_is_valid("\xed\xa0\x80"));     /* surrogate */
        e = fsg_utf8_escape("50-\xff\xfe.conf");
        ASSERT_STREQ(e, "50-\\xff\\xfe.conf");
        ASSERT(fsg_utf8_is_valid(e));
        free(e);
        e = fsg_utf8_escape("caf\xc3\xa9");
        ASSERT_STREQ(e, "caf\xc3\xa9");
        free(e);
}

int main(void) {
        RUN(test_utf8);
        RUN(test_valid);
        RUN(test_invalid);
        RUN(test_normalize);
        return 0;
}

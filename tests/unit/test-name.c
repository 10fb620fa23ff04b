/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "name.h"
#include "unit-name.h"
#include "utf8.h"
#include "test-util.h"

TEST(valid) {
        ASSERT(fsg_name_is_valid("hfs"));
        ASSERT(fsg_name_is_valid("ocfs2_dlmfs"));
        ASSERT(fsg_name_is_valid("9p"));
        ASSERT(fsg_name_is_valid("usb-storage"));
        ASSERT(fsg_name_is_valid("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")); /* 55 */
}

TEST(invalid) {
        static const char * const bad[] = {
                "", "..", ".", "a/b", "hfs\n", " hfs", "hfs ", "$(reboot)", ";rm", "a.conf", "hfs*",
                "h\xc3\xa9", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", /* 56 */
        };

        assert_refuses(fsg_name_is_valid, bad, ELEMENTSOF(bad), 'a', 300);
}

TEST(normalize) {
        char s[] = "usb-storage-x";
        fsg_name_normalize(s);
        ASSERT_STREQ(s, "usb_storage_x");
}

TEST(utf8) {
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

/* Expected names as systemd-escape --path --template=T@.service (systemd 252) writes them. */
/* What the text output prints of a name or a line from a file: nothing a terminal acts on. */
TEST(cescape) {
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "/etc/modprobe.d/caf\xc3\xa9.conf", "/etc/modprobe.d/caf\xc3\xa9.conf" },
                { "50-\x1b[2Kok\r.conf", "50-\\x1b[2Kok\\r.conf" },
                { "a\tb\nc\ad\be\vf\fg", "a\\tb\\nc\\ad\\be\\vf\\fg" },
                { "del\x7f", "del\\x7f" },
                { "csi\xc2\x9b" "2J", "csi\\u009b2J" },          /* C1 CSI, as UTF-8 */
                { "rlo\xe2\x80\xae" "fdp.exe", "rlo\\u202efdp.exe" }, /* a bidirectional override */
                { "latin1 \xe9 \x9b", "latin1 \\xe9 \\x9b" },   /* not UTF-8: as fsg_utf8_escape() */
                { "back\\slash", "back\\slash" },
                { "", "" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char *e = fsg_cescape(cases[i].in);
                ASSERT_STREQ(e, cases[i].out);
                ASSERT(fsg_utf8_is_valid(e));
                free(e);
        }
}

TEST(unit_name_from_path) {
        static const char * const cases[][2] = {
                { "/dev/sdb1", "T@dev-sdb1.service" },
                { "/dev/dm-0", "T@dev-dm\\x2d0.service" },
                { "/dev/mapper/luks-a1", "T@dev-mapper-luks\\x2da1.service" },
                { "/dev/.x", "T@dev-.x.service" },
                { "/.x", "T@\\x2ex.service" },
                { "/dev/a b", "T@dev-a\\x20b.service" },
                { "/dev/caf\xc3\xa9", "T@dev-caf\\xc3\\xa9.service" },
                { "/dev/a\\b", "T@dev-a\\x5cb.service" },
                { "/dev/disk/by-label/FSGATE:1_2", "T@dev-disk-by\\x2dlabel-FSGATE:1_2.service" },
        };
        static const char * const bad_paths[] = {
                "", "/", "dev/sdb1", "/dev/", "/dev//sdb1", "/dev/./sdb1", "/dev/../sdb1", "/dev/..", "/dev/.",
        };
        char buf[FSG_UNIT_NAME_MAX + 1], large[512], big[300];

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                ASSERT(fsg_unit_name_from_path("T@.service", cases[i][0], buf, sizeof(buf)) == 0);
                ASSERT_STREQ(buf, cases[i][1]);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad_paths); i++)
                ASSERT(fsg_unit_name_from_path("T@.service", bad_paths[i], buf, sizeof(buf)) == -EINVAL);
        ASSERT(fsg_unit_name_from_path("T.service", "/dev/sdb1", buf, sizeof(buf)) == -EINVAL);
        ASSERT(fsg_unit_name_from_path("@.service", "/dev/sdb1", buf, sizeof(buf)) == -EINVAL);
        ASSERT(fsg_unit_name_from_path("T@x.service", "/dev/sdb1", buf, sizeof(buf)) == -EINVAL);
        ASSERT(fsg_unit_name_from_path("T@.service", "/dev/sdb1", buf, 10) == -ENOBUFS);
        /* systemd's 255 characters: "T@" + 245 + ".service" is the longest. */
        big[0] = '/';
        memset(big + 1, 'a', 246);
        big[247] = '\0';
        ASSERT(fsg_unit_name_from_path("T@.service", big, large, sizeof(large)) == -EINVAL);
        big[246] = '\0';
        ASSERT(fsg_unit_name_from_path("T@.service", big, buf, sizeof(buf)) == 0);
        ASSERT(strlen(buf) == FSG_UNIT_NAME_MAX);
}

/* The device unit Open safely's driver binds to: what systemd-escape --path --suffix=.device
 * writes. */
TEST(unit_name_of_path) {
        char buf[FSG_UNIT_NAME_MAX + 1];

        ASSERT(fsg_unit_name_of_path("/dev/sdb1", ".device", buf, sizeof(buf)) == 0);
        ASSERT_STREQ(buf, "dev-sdb1.device");
        ASSERT(fsg_unit_name_of_path("/dev/disk/by-label/A b", ".device", buf, sizeof(buf)) == 0);
        ASSERT_STREQ(buf, "dev-disk-by\\x2dlabel-A\\x20b.device");
        ASSERT(fsg_unit_name_of_path("/dev/../sdb", ".device", buf, sizeof(buf)) == -EINVAL);
        ASSERT(fsg_unit_name_of_path("/dev/sdb", "device", buf, sizeof(buf)) == -EINVAL);
        ASSERT(fsg_unit_name_of_path("/dev/sdb", ".device", buf, 8) == -ENOBUFS);
}

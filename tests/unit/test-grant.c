/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>

#include "grant.h"
#include "test-util.h"

#define ID "0123456789abcdef0123456789abcdef"
#define BOOT "fedcba9876543210fedcba9876543210"

TEST(round_trip) {
        FsgGrant g, back;
        FsgError e = {};
        _cleanup_free_ char *text = NULL;
        char boot[64] = "", *p = boot;
        FILE *f;

        ASSERT_OK_E(fsg_grant_new("hfs", 1000, UINT64_C(1700000000000000), UINT64_C(5000000), 600, &g, &e), &e);
        ASSERT(strlen(g.id) == FSG_GRANT_ID_LEN);
        ASSERT(g.until_usec == UINT64_C(1700000000000000) + 600 * UINT64_C(1000000));
        ASSERT(g.ends_usec == UINT64_C(5000000) + 600 * UINT64_C(1000000));
        text = fsg_grant_format(&g);
        ASSERT(text);
        /* The record carries this boot's id: read back with it, it is of this boot. */
        f = fopen("/proc/sys/kernel/random/boot_id", "re");
        ASSERT(f && fgets(boot, sizeof(boot), f));
        fclose(f);
        for (char *q = boot; *q; q++)
                if (*q != '-' && *q != '\n')
                        *p++ = *q;
        *p = 0;
        ASSERT(fsg_grant_parse(text, g.id, boot, &back) == 0);
        ASSERT(!back.other_boot);
        ASSERT_STREQ(back.module, "hfs");
        ASSERT(back.uid == 1000 && back.since_usec == g.since_usec && back.until_usec == g.until_usec);
        ASSERT(back.ends_usec == g.ends_usec);
        ASSERT(fsg_grant_parse(text, g.id, BOOT, &back) == 0);
        ASSERT(back.other_boot);
}

/* The end that counts is on the boot clock: a wall clock set back (until_usec far ahead of
 * it now) or forward does not move it. */
TEST(ends_by_the_boot_clock) {
        FsgGrant g;
        FsgError e = {};
        uint64_t boot = fsg_boottime_usec();

        ASSERT_OK_E(fsg_grant_new("hfs", 0, UINT64_C(1700000000000000), boot, 10, &g, &e), &e);
        g.until_usec = UINT64_MAX / 2;  /* as if the wall clock had been set back by years */
        ASSERT(fsg_grant_in_force(&g, boot + 9 * UINT64_C(1000000)));
        ASSERT(!fsg_grant_in_force(&g, boot + 10 * UINT64_C(1000000)));
        g.until_usec = 1;               /* and forward */
        ASSERT(fsg_grant_in_force(&g, boot));
}

/* What a grant loaded with its module goes into the record and comes back; anything but
 * module names one space apart is no record. */
TEST(deps_round_trip_and_strict) {
        static const char * const bad[] = { "", " fuse", "fuse ", "fuse  dlm", "../x", "fuse\tdlm" };
        _cleanup_free_ char *text = NULL;
        FsgGrant g, back;
        FsgError e = {};
        char record[256];

        ASSERT_OK_E(fsg_grant_new("gfs2", 0, 1000000, 1000000, 60, &g, &e), &e);
        snprintf(g.deps, sizeof(g.deps), "%s", "configfs dlm");
        text = fsg_grant_format(&g);
        ASSERT(text);
        ASSERT(fsg_grant_parse(text, g.id, BOOT, &back) == 0);
        ASSERT_STREQ(back.deps, "configfs dlm");
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                snprintf(record, sizeof(record), "module=hfs\nuid=0\nsince=1\nuntil=2\nboot=" BOOT "\ndeps=%s\n", bad[i]);
                ASSERT(fsg_grant_parse(record, ID, BOOT, &back) < 0);
        }
}

/* A record an older fsgated wrote (no ends=) is read, its end taken from the wall clock. */
TEST(parse_without_ends) {
        FsgGrant g;

        ASSERT(fsg_grant_parse("module=hfs\nuid=0\nsince=1\nuntil=2\nboot=" BOOT "\n", ID, BOOT, &g) == 0);
        ASSERT(g.ends_usec == 0);
        ASSERT(fsg_grant_parse("module=hfs\nuid=0\nsince=1\nuntil=2\nends=0\nboot=" BOOT "\n", ID, BOOT, &g) < 0);
        ASSERT(fsg_grant_parse("module=hfs\nuid=0\nsince=1\nuntil=2\nends=3\nends=3\nboot=" BOOT "\n", ID, BOOT,
                               &g) < 0);
}

TEST(new_refuses) {
        FsgGrant g;
        FsgError e = {};

        ASSERT_ERR_E(fsg_grant_new("hfs", 0, 1, 1, 0, &g, &e), &e, FSG_ERR_INVALID_ARGS);
        ASSERT_ERR_E(fsg_grant_new("hfs", 0, 1, 1, FSG_GRANT_SECONDS_MAX + 1, &g, &e), &e, FSG_ERR_INVALID_ARGS);
}

TEST(parse_strict) {
        static const char * const bad[] = {
                "",                                                                     /* nothing */
                "module=hfs\nuid=0\nsince=1\nuntil=2\n",                                /* no boot */
                "module=hfs\nuid=0\nsince=1\nuntil=2\nboot=" BOOT "\nuid=0\n",          /* twice */
                "module=hfs\nuid=0\nsince=1\nuntil=2\nboot=" BOOT "\nextra=1\n",        /* unknown key */
                "module=../x\nuid=0\nsince=1\nuntil=2\nboot=" BOOT "\n",                /* a path */
                "module=hfs\nuid=-1\nsince=1\nuntil=2\nboot=" BOOT "\n",                /* sign */
                "module=hfs\nuid=4294967296\nsince=1\nuntil=2\nboot=" BOOT "\n",        /* > uid_t */
                "module=hfs\nuid=0\nsince=5\nuntil=5\nboot=" BOOT "\n",                 /* ends at its start */
                "module=hfs\nuid=0\nsince=1\nuntil=2x\nboot=" BOOT "\n",                /* trailing junk */
                "module=hfs\nuid=0\nsince=1\nuntil=99999999999999999999999\nboot=" BOOT "\n", /* overflow */
                "hfs\n",                                                                /* no '=' */
                /* A medium: its three keys together, a node below /dev, a diskseq. */
                "module=hfs\nuid=0\nsince=1\nuntil=2\nboot=" BOOT "\ndevice=/dev/sdb1\n",
                "module=hfs\nuid=0\nsince=1\nuntil=2\nboot=" BOOT "\ndevice=/etc/x\ndevnum=8:1\ndiskseq=3\n",
                "module=hfs\nuid=0\nsince=1\nuntil=2\nboot=" BOOT "\ndevice=/dev/../x\ndevnum=8:1\ndiskseq=3\n",
                "module=hfs\nuid=0\nsince=1\nuntil=2\nboot=" BOOT "\ndevice=/dev/sdb1\ndevnum=8:1x\ndiskseq=3\n",
                "module=hfs\nuid=0\nsince=1\nuntil=2\nboot=" BOOT "\ndevice=/dev/sdb1\ndevnum=8:1\ndiskseq=0\n",
        };
        FsgGrant g;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ASSERT(fsg_grant_parse(bad[i], ID, BOOT, &g) < 0);
        ASSERT(fsg_grant_parse("module=hfs\nuid=0\nsince=1\nuntil=2\nboot=" BOOT "\n", "../" ID, BOOT, &g) < 0);
        ASSERT(fsg_grant_parse("module=hfs\nuid=0\nsince=1\nuntil=2\nboot=" BOOT "\n", ID, BOOT, &g) == 0);
        ASSERT(fsg_grant_parse("# a comment\nmodule=usb-storage\nuid=0\nsince=1\nuntil=2\nboot=" BOOT "\n", ID, BOOT,
                               &g) == 0);
        ASSERT_STREQ(g.module, "usb_storage");
        ASSERT(!*g.device);
        ASSERT(fsg_grant_parse("module=hfs\nuid=0\nsince=1\nuntil=2\nboot=" BOOT "\ndevice=/dev/sdb1\ndevnum=8:17\n"
                               "diskseq=42\n", ID, BOOT, &g) == 0);
        ASSERT_STREQ(g.device, "/dev/sdb1");
        ASSERT(g.major == 8 && g.minor == 17 && g.diskseq == 42);
}

TEST(medium_refuses) {
        FsgGrant g = {};
        FsgError e = {};

        ASSERT_ERR_E(fsg_grant_set_medium(&g, "/dev/null", &e), &e, FSG_ERR_INVALID_ARGS);
        ASSERT_ERR_E(fsg_grant_set_medium(&g, "/etc/passwd", &e), &e, FSG_ERR_INVALID_ARGS);
        ASSERT_ERR_E(fsg_grant_set_medium(&g, "/dev/../etc/passwd", &e), &e, FSG_ERR_INVALID_ARGS);
        ASSERT(!*g.device);
        /* A grant without a medium has one always. */
        ASSERT(fsg_grant_medium_present(&g));
}

TEST(time_string) {
        char buf[32];

        ASSERT_STREQ(fsg_grant_time_string(UINT64_C(1796605323000000), buf), "2026-12-07T01:02:03Z");
}

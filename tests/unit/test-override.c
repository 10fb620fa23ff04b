/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One module of a vendor file that denies several, allowed by an override of that file in
 * /etc/modprobe.d, on a scratch root with the real Debian kernel module tree. */
#define _GNU_SOURCE
#include <sys/stat.h>

#include "override.h"
#include "sha256.h"
#include "store.h"
#include "strv.h"
#include "test-util.h"

static char *root;
static FsgContext *ctx;

#define VENDOR "usr/lib/modprobe.d/hardening.conf"
#define ETC "etc/modprobe.d/hardening.conf"
#define VENDOR_LINES "# vendor hardening\nblacklist udf\nblacklist squashfs\ninstall udf /bin/false\nblacklist usb_storage\n"

static const FsgEntry *get(FsgState **s, const char *name) {
        return state_entry(ctx, s, name);
}

static char *read_rel(const char *rel) {
        char *p, *buf = NULL;
        size_t n = 0;
        FILE *f;

        ASSERT(asprintf(&p, "%s/%s", root, rel) > 0);
        f = fopen(p, "re");
        free(p);
        if (!f)
                return NULL;
        ASSERT(getdelim(&buf, &n, 0, f) >= 0 || feof(f));
        fclose(f);
        return buf ?: strdup("");
}

static bool exists(const char *rel) {
        char *p;
        struct stat st;
        bool r;

        ASSERT(asprintf(&p, "%s/%s", root, rel) > 0);
        r = lstat(p, &st) == 0;
        free(p);
        return r;
}

static void unlink_rel(const char *rel) {
        char *p;
        ASSERT(asprintf(&p, "%s/%s", root, rel) > 0);
        (void) unlink(p);
        free(p);
}

TEST(sha256) {
        char hex[FSG_SHA256_HEX_SIZE], *a = malloc(1000000);

        ASSERT_STREQ(fsg_sha256_hex("", 0, hex), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        ASSERT_STREQ(fsg_sha256_hex("abc", 3, hex), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        ASSERT_STREQ(fsg_sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, hex),
                     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
        memset(a, 'a', 1000000);
        ASSERT_STREQ(fsg_sha256_hex(a, 1000000, hex), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
        free(a);
}

TEST(lines_naming) {
        char **l = NULL, *strip[] = { (char *) "udf", (char *) "fs_udf", NULL }, *c;

        ASSERT(fsg_conf_lines_naming("# c\nblacklist  udf\ninstall udf \\\n  /bin/false\nalias fs-udf off\nblacklist udfx\n",
                                     strip, &l) == 0);
        ASSERT(strv_length(l) == 3);
        ASSERT_STREQ(l[0], "line 2: blacklist  udf");
        ASSERT_STREQ(l[1], "line 3: install udf \\");
        ASSERT_STREQ(l[2], "line 5: alias fs-udf off");
        strv_free(l);
        /* A continued line goes whole; a last line without newline keeps its place. */
        c = fsg_override_content("/usr/lib/modprobe.d/x.conf", "install udf \\\n /bin/false\nblacklist jfs", NULL, strip);
        ASSERT(c && strstr(c, "\nblacklist jfs\n") && !strstr(c, "/bin/false"));
        free(c);
}

TEST(allow_one_module_of_a_vendor_file) {
        FsgState *s = NULL;
        FsgError e = {};
        FsgPlan p;
        char *c, sha[FSG_SHA256_HEX_SIZE];

        write_file(root, VENDOR, VENDOR_LINES);
        ASSERT(get(&s, "udf")->denied && get(&s, "squashfs")->denied);

        /* Allow udf: an /etc override without udf's lines; squashfs stays denied. */
        ASSERT_OK_E(fsg_plan(ctx, FSG_OP_ALLOW, "udf", 0, &p, &e), &e);
        ASSERT(p.write == FSG_WRITE_OVERRIDE && p.action == FSG_ACTION_ALLOW);
        ASSERT_STREQ(p.target, "/etc/modprobe.d/hardening.conf");
        ASSERT_OK_E(store_change(ctx, FSG_OP_ALLOW, "udf", 0, &e), &e);
        ASSERT(!get(&s, "udf")->denied && get(&s, "squashfs")->denied);
        ASSERT_STREQ(get(&s, "udf")->deciding_file, "/etc/modprobe.d/hardening.conf");
        ASSERT_STREQ(get(&s, "udf")->override_of, "/usr/lib/modprobe.d/hardening.conf");
        ASSERT(!get(&s, "udf")->override_stale && !get(&s, "udf")->hard);
        ASSERT_STREQ(get(&s, "squashfs")->deciding_file, "/etc/modprobe.d/hardening.conf");
        c = read_rel(ETC);
        ASSERT(strstr(c, "blacklist squashfs\n") && strstr(c, "blacklist usb_storage\n") && strstr(c, "# vendor hardening\n"));
        ASSERT(!strstr(c, "blacklist udf") && !strstr(c, "install udf"));
        fsg_sha256_hex(VENDOR_LINES, strlen(VENDOR_LINES), sha);
        ASSERT(strstr(c, sha) && strstr(c, FSG_OVERRIDE_ALLOWS "udf\n"));
        free(c);
        /* The vendor file is not touched. */
        c = read_rel(VENDOR);
        ASSERT_STREQ(c, VENDOR_LINES);
        free(c);

        /* A second module of the same file updates the same override. */
        ASSERT_OK_E(store_change(ctx, FSG_OP_ALLOW, "squashfs", 0, &e), &e);
        ASSERT(!get(&s, "udf")->denied && !get(&s, "squashfs")->denied);
        c = read_rel(ETC);
        ASSERT(!strstr(c, "blacklist squashfs") && strstr(c, "blacklist usb_storage\n"));
        ASSERT(strstr(c, FSG_OVERRIDE_ALLOWS "udf squashfs\n"));
        free(c);

        /* Reset udf puts its lines back, and needs what a deny needs. */
        ASSERT_OK_E(fsg_plan(ctx, FSG_OP_RESET, "udf", 0, &p, &e), &e);
        ASSERT(p.write == FSG_WRITE_OVERRIDE && p.action == FSG_ACTION_DENY);
        ASSERT_OK_E(store_change(ctx, FSG_OP_RESET, "udf", 0, &e), &e);
        ASSERT(get(&s, "udf")->denied && get(&s, "udf")->hard && !get(&s, "squashfs")->denied);
        c = read_rel(ETC);
        ASSERT(strstr(c, "blacklist udf\n") && strstr(c, "install udf /bin/false\n") && !strstr(c, "blacklist squashfs"));
        free(c);

        /* The last one: the override goes. */
        ASSERT_OK_E(fsg_plan(ctx, FSG_OP_RESET, "squashfs", 0, &p, &e), &e);
        ASSERT(p.write == FSG_WRITE_REMOVE && p.action == FSG_ACTION_DENY);
        ASSERT_OK_E(store_change(ctx, FSG_OP_RESET, "squashfs", 0, &e), &e);
        ASSERT(!exists(ETC));
        ASSERT(get(&s, "udf")->denied && get(&s, "squashfs")->denied);
        ASSERT(get(&s, "squashfs")->origin == FSG_ORIGIN_VENDOR);
        ASSERT(fsg_plan(ctx, FSG_OP_RESET, "udf", 0, &p, &e) == 0 && p.write == FSG_WRITE_NOTHING);
        /* Never for this boot only: the override lives in /etc. */
        ASSERT_ERR_E(store_change(ctx, FSG_OP_ALLOW, "udf", FSG_FLAG_RUNTIME, &e), &e, FSG_ERR_FOREIGN_CONFIG);
        ASSERT(!strstr(e.message, "ln -s") && !exists(ETC) && !exists("run/modprobe.d/hardening.conf"));
        unlink_rel(VENDOR);
        fsg_state_unref(s);
}

TEST(stale) {
        FsgState *s = NULL;
        FsgError e = {};
        FsgPlan p;
        char *c;

        write_file(root, VENDOR, VENDOR_LINES);
        ASSERT_OK_E(store_change(ctx, FSG_OP_ALLOW, "udf", 0, &e), &e);
        ASSERT(!get(&s, "udf")->override_stale && !get(&s, "squashfs")->override_stale);
        /* A package update adds a line: the override no longer mirrors the vendor file. */
        write_file(root, VENDOR, VENDOR_LINES "blacklist minix\n");
        ASSERT(get(&s, "udf")->override_stale && get(&s, "squashfs")->override_stale);
        ASSERT(!get(&s, "minix")->denied);
        /* Allow again makes it from the vendor file as it is now; that may lift what the old
         * copy denied, so it needs the allow authorization. */
        ASSERT_OK_E(fsg_plan(ctx, FSG_OP_ALLOW, "udf", 0, &p, &e), &e);
        ASSERT(p.write == FSG_WRITE_OVERRIDE && p.action == FSG_ACTION_ALLOW);
        ASSERT_OK_E(store_change(ctx, FSG_OP_ALLOW, "udf", 0, &e), &e);
        ASSERT(!get(&s, "udf")->override_stale && get(&s, "minix")->denied && !get(&s, "udf")->denied);
        c = read_rel(ETC);
        ASSERT(strstr(c, "blacklist minix\n"));
        free(c);
        ASSERT(fsg_plan(ctx, FSG_OP_ALLOW, "udf", 0, &p, &e) == 0 && p.write == FSG_WRITE_NOTHING);
        /* A stale reset needs the allow authorization too. */
        write_file(root, VENDOR, VENDOR_LINES);
        ASSERT_OK_E(fsg_plan(ctx, FSG_OP_RESET, "udf", 0, &p, &e), &e);
        ASSERT(p.write == FSG_WRITE_REMOVE && p.action == FSG_ACTION_ALLOW);
        /* The vendor file gone: the override goes with it. */
        unlink_rel(VENDOR);
        ASSERT(get(&s, "udf")->override_stale);
        ASSERT_OK_E(store_change(ctx, FSG_OP_ALLOW, "udf", 0, &e), &e);
        ASSERT(!exists(ETC) && !get(&s, "squashfs")->denied);
        fsg_state_unref(s);
}

TEST(admin_file_is_never_rewritten) {
        FsgState *s = NULL;
        FsgError e = {};
        const char *admin = "# local policy\nblacklist udf\nblacklist squashfs\ninstall udf /bin/true\n";
        char *c;

        write_file(root, ETC, admin);
        write_file(root, "run/modprobe.d/local.conf", "blacklist jfs\nblacklist minix\n");
        ASSERT(get(&s, "udf")->denied);
        ASSERT_ERR_E(store_change(ctx, FSG_OP_ALLOW, "udf", 0, &e), &e, FSG_ERR_FOREIGN_CONFIG);
        ASSERT(strstr(e.message, "/etc/modprobe.d/hardening.conf"));
        ASSERT(strstr(e.message, "line 2: blacklist udf") && strstr(e.message, "line 4: install udf /bin/true"));
        ASSERT(!strstr(e.message, "squashfs") && !strstr(e.message, "ln -s"));
        ASSERT_ERR_E(store_change(ctx, FSG_OP_ALLOW, "jfs", 0, &e), &e, FSG_ERR_FOREIGN_CONFIG);
        ASSERT(strstr(e.message, "/run/modprobe.d/local.conf") && strstr(e.message, "line 1: blacklist jfs"));
        c = read_rel(ETC);
        ASSERT_STREQ(c, admin);
        free(c);
        ASSERT(!exists("etc/modprobe.d/60-blacklist_fs-udf.conf") && !exists("etc/modprobe.d/local.conf"));
        /* Even with the vendor file of that name below it. */
        write_file(root, VENDOR, VENDOR_LINES);
        ASSERT_ERR_E(store_change(ctx, FSG_OP_ALLOW, "squashfs", 0, &e), &e, FSG_ERR_FOREIGN_CONFIG);
        ASSERT(strstr(e.message, "line 3: blacklist squashfs"));
        c = read_rel(ETC);
        ASSERT_STREQ(c, admin);
        free(c);
        unlink_rel(ETC);
        unlink_rel(VENDOR);
        unlink_rel("run/modprobe.d/local.conf");
        fsg_state_unref(s);
}

TEST_SETUP(open_kernel_root) {
        kernel_root_open(&root, &ctx);
}

TEST_TEARDOWN(close_kernel_root) {
        kernel_root_close(root, ctx);
}

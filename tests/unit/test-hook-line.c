/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The install lines that run fsgate's hook, as their writers write them (a deny file:
 * conffile.c; the routes file: routes.c; the vendor files meson makes; and the lines older
 * versions wrote, still on disk), read back by the hook's parser (hook-line.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>

#include "alloc-util.h"
#include "conffile.h"
#include "hook-line.h"
#include "observe.h"
#include "routes.h"
#include "strv.h"
#include "test-util.h"

#define HOOK "/usr/libexec/fsgate-blocked"

/* The one hook line of text for type (alias and install line checked), parsed into *ret: a
 * line of kind for module. *words keeps the strings ret points into. */
static void parse_hook_line(const char *text, const char *hook, const char *type, FsgHookLineKind kind,
                            const char *module, char ***words, FsgHookArgs *ret) {
        _cleanup_free_ char *copy = strdup(text);
        char *save = NULL, *alias = NULL, *install = NULL;
        int n = 0;

        ASSERT(copy);
        for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                char name[128];

                if (sscanf(l, "alias fs-%127s", name) == 1 && streq(name, type)) {
                        ASSERT(!alias);
                        alias = strdup(strchr(l + strlen("alias fs-"), ' ') + 1);
                } else if (strncmp(l, "install ", 8) == 0 && strstr(l, hook) && alias &&
                           strncmp(l + 8, alias, strlen(alias)) == 0 && l[8 + strlen(alias)] == ' ') {
                        ASSERT(!install);
                        install = strdup(l);
                }
        }
        ASSERT(alias && install);
        /* The line runs through /bin/sh: words split at single spaces, nothing quoted. */
        ASSERT(!strpbrk(install, "'\"\\$;|&<>`\t"));
        *words = NULL;
        for (char *w = strtok_r(install, " ", &save); w; w = strtok_r(NULL, " ", &save), n++)
                ASSERT(strv_extend(words, w) == 0);
        ASSERT(n >= 3);
        ASSERT_STREQ((*words)[1], alias);
        ASSERT_STREQ((*words)[2], hook);
        ASSERT(fsg_hook_args_parse(n - 3, *words + 3, ret) == 0);
        ASSERT_STREQ(ret->type, type);
        ASSERT(ret->kind == kind);
        ASSERT_STREQ(ret->module, module);
        free(alias);
        free(install);
}

TEST(deny_file_lines_parse) {
        const char *path = "/etc/modprobe.d/60-blacklist_fs-freevxfs.conf";

        for (int hard = 0; hard <= 1; hard++) {
                _cleanup_free_ char *s = fsg_deny_file_content_mode("freevxfs", "vxfs", path, HOOK, hard);
                char **words = NULL;
                FsgHookArgs a;

                ASSERT(s);
                parse_hook_line(s, HOOK, "vxfs", FSG_HOOK_LINE_BLOCKED, "freevxfs", &words, &a);
                ASSERT_STREQ(a.source, path);
                ASSERT_STREQ(words[1], FSG_BLOCKED_PREFIX "vxfs");
                strv_free(words);
        }
        /* One module, several types: one pair of lines each. */
        _cleanup_free_ char *s = fsg_deny_file_content("ext4", "ext2 ext3 ext4", "/run/modprobe.d/x.conf", HOOK);
        ASSERT(s);
        for (const char *t = "ext2"; t; t = streq(t, "ext2") ? "ext3" : streq(t, "ext3") ? "ext4" : NULL) {
                char **words = NULL;
                FsgHookArgs a;

                parse_hook_line(s, HOOK, t, FSG_HOOK_LINE_BLOCKED, "ext4", &words, &a);
                ASSERT_STREQ(a.source, "/run/modprobe.d/x.conf");
                strv_free(words);
        }
}

TEST(routes_lines_parse) {
        char *silent[] = { (char *) "hfsplus", NULL };
        FsgEntry x = { .module = (char *) "hfsplus", .denied = true, .available = true, .silent_types = silent };
        FsgState st = { .entries = &x, .n = 1 };
        _cleanup_free_ char *s = fsg_routes_content(&st, HOOK);
        char **words = NULL;
        FsgHookArgs a;

        ASSERT(s);
        parse_hook_line(s, HOOK, "hfsplus", FSG_HOOK_LINE_ROUTE, "hfsplus", &words, &a);
        ASSERT(!a.source);
        ASSERT_STREQ(words[1], FSG_ROUTED_PREFIX "hfsplus");
        ASSERT_STREQ(words[3], FSG_HOOK_ROUTE_OPTION);
        strv_free(words);
}

/* An observation's lines: one pair a type of each module that has a module file and is not
 * built in (allowed or not: one a vendor file stops denying is observed from then on), none for
 * the rest; the profile's name and the time it began read back. */
TEST(observation_lines_parse) {
        char *udf_types[] = { (char *) "udf", NULL }, *ext_types[] = { (char *) "ext2", (char *) "ext4", NULL };
        char *none[] = { NULL };
        FsgEntry e[] = {
                { .module = (char *) "ext4", .types = ext_types, .available = true, .denied = true },
                { .module = (char *) "pstore", .types = none, .available = true, .builtin = true },
                { .module = (char *) "udf", .types = udf_types, .available = true },
        };
        FsgState st = { .entries = e, .n = ELEMENTSOF(e) };
        char *modules[] = { (char *) "ext4", (char *) "nosuch", (char *) "pstore", (char *) "udf", NULL };
        size_t n = 0;
        _cleanup_free_ char *s = fsg_observation_content(&st, "cis", modules, 1234, HOOK, &n);
        char **words = NULL;
        FsgHookArgs a;

        ASSERT(s);
        ASSERT(n == 2);
        parse_hook_line(s, HOOK, "udf", FSG_HOOK_LINE_OBSERVE, "udf", &words, &a);
        ASSERT_STREQ(a.profile, "cis");
        ASSERT_STREQ(words[1], FSG_OBSERVED_PREFIX "udf");
        ASSERT_STREQ(words[3], FSG_HOOK_OBSERVE_OPTION);
        strv_free(words);
        parse_hook_line(s, HOOK, "ext2", FSG_HOOK_LINE_OBSERVE, "ext4", &words, &a);
        strv_free(words);
        ASSERT(!strstr(s, "pstore"));
        ASSERT(!strstr(s, "nosuch"));
        ASSERT(strstr(s, "\n# observe-profile cis\n# observe-since 1234\n"));
}

/* What earlier versions wrote, as found in files they left: a deny's line has not changed
 * since the first one; the first routes files named the route as a deny does. */
TEST(older_lines_parse) {
        char **words = NULL;
        FsgHookArgs a;

        parse_hook_line("alias fs-vxfs fsgate_blocked_vxfs\n"
                        "install fsgate_blocked_vxfs " HOOK " vxfs freevxfs /etc/modprobe.d/60-blacklist_fs-freevxfs.conf\n",
                        HOOK, "vxfs", FSG_HOOK_LINE_BLOCKED, "freevxfs", &words, &a);
        strv_free(words);
        parse_hook_line("alias fs-hfs fsgate_blocked_hfs\n"
                        "install fsgate_blocked_hfs " HOOK " --route hfs hfs\n",
                        HOOK, "hfs", FSG_HOOK_LINE_ROUTE, "hfs", &words, &a);
        strv_free(words);
}

/* Three words are an install line's only as one of its two forms; anything else is the
 * usage (and still no load). Three words that are no route's are read as a deny's, as the
 * hook always read them. */
TEST(parse_refuses_other_words) {
        char *route_short[] = { (char *) "--route", (char *) "hfs", NULL };
        char *four[] = { (char *) "hfs", (char *) "hfs", (char *) "/x", (char *) "y", NULL };
        char *bad_type[] = { (char *) "h/fs", (char *) "hfs", (char *) "/x", NULL };
        char *bad_module[] = { (char *) "hfs", (char *) "hfs!", (char *) "/x", NULL };
        char *bad_route[] = { (char *) "--route", (char *) "hfs", (char *) "hf s", NULL };
        char *device[] = { (char *) "--device", (char *) "/dev/sda1", NULL };
        char *observe_bad[] = { (char *) "--observe", (char *) "udf", (char *) "udf", (char *) "c;is", NULL };
        char *observe_short[] = { (char *) "--observe", (char *) "udf", (char *) "udf", NULL };
        FsgHookArgs a;

        /* A profile's name runs through /bin/sh too: only names that need no quoting. */
        ASSERT(fsg_hook_args_parse(4, observe_bad, &a) == -EINVAL);
        ASSERT(fsg_hook_args_parse(3, observe_short, &a) == 0);      /* three words: read as a deny's */
        ASSERT(a.kind == FSG_HOOK_LINE_BLOCKED);

        ASSERT(fsg_hook_args_parse(2, route_short, &a) == -EINVAL);
        ASSERT(fsg_hook_args_parse(4, four, &a) == -EINVAL);
        ASSERT(fsg_hook_args_parse(3, bad_type, &a) == -EINVAL);
        ASSERT(fsg_hook_args_parse(3, bad_module, &a) == -EINVAL);
        ASSERT(fsg_hook_args_parse(2, device, &a) == -EINVAL);
        ASSERT(fsg_hook_args_parse(0, device, &a) == -EINVAL);
        ASSERT(fsg_hook_args_parse(3, bad_route, &a) == 0);
        ASSERT(a.kind == FSG_HOOK_LINE_BLOCKED);
        ASSERT_STREQ(a.type, "--route");
}

/* The vendor files the build made (data/modprobe.d/meson.build spells the deny's line in
 * meson's language): FSGATE_TEST_VENDOR_DIR names their directory, FSGATE_TEST_VENDOR_HOOK
 * the hook they run. */
TEST(vendor_file_lines_parse) {
        const char *dir = getenv("FSGATE_TEST_VENDOR_DIR"), *hook = getenv("FSGATE_TEST_VENDOR_HOOK");
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        size_t n = 0;

        if (!dir || !hook)
                return;
        ASSERT((d = opendir(dir)));
        while ((de = readdir(d))) {
                char module[64], type[64], path[4096], buf[8192], **words = NULL;
                const char *alias;
                FsgHookArgs a;
                FILE *f;
                size_t len;

                if (sscanf(de->d_name, "60-blacklist_fs-%63[^.].conf", module) != 1)
                        continue;
                snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
                ASSERT((f = fopen(path, "re")));
                len = fread(buf, 1, sizeof(buf) - 1, f);
                fclose(f);
                buf[len] = 0;
                alias = strstr(buf, "\nalias fs-");
                if (!alias)
                        continue;       /* a module whose types have no route */
                ASSERT(sscanf(alias, "\nalias fs-%63s", type) == 1);
                parse_hook_line(buf, hook, type, FSG_HOOK_LINE_BLOCKED, module, &words, &a);
                ASSERT(endswith(a.source, de->d_name));
                strv_free(words);
                n++;
        }
        ASSERT(n > 0);
}

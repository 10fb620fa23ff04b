/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <sys/stat.h>

#include "conffile.h"
#include "test-util.h"

static char *path_in(const char *root, const char *rel) {
        char *p;
        ASSERT(asprintf(&p, "%s/%s", root, rel) > 0);
        return p;
}

TEST(test_classify) {
        char *root = scratch_root_new(false), *p, *deny = fsg_deny_file_content("hfs", "hfs", "/etc/modprobe.d/60-blacklist_fs-hfs.conf", "/usr/libexec/fsgate-blocked");
        const char *rel = "etc/modprobe.d/60-blacklist_fs-hfs.conf";

        p = path_in(root, rel);
        ASSERT(fsg_file_classify(p, "hfs") == FSG_FILE_ABSENT);
        make_symlink(root, rel, "/dev/null");
        ASSERT(fsg_file_classify(p, "hfs") == FSG_FILE_MASK);
        make_symlink(root, rel, "/etc/other");
        ASSERT(fsg_file_classify(p, "hfs") == FSG_FILE_FOREIGN);
        unlink(p);
        write_file(root, rel, deny);
        ASSERT(fsg_file_classify(p, "hfs") == FSG_FILE_FSGATE);
        write_file(root, rel, "blacklist hfs\n");
        ASSERT(fsg_file_classify(p, "hfs") == FSG_FILE_SUSE_NEVER);
        ASSERT(fsg_file_classify(p, "ufs") == FSG_FILE_FOREIGN);
        write_file(root, rel, "# CIS 1.1.1.3\ninstall hfs /bin/true\nblacklist hfs\n");
        ASSERT(fsg_file_classify(p, "hfs") == FSG_FILE_FOREIGN);
        write_file(root, rel, "# something\n# __THIS FILE MAY BE MODIFIED__\nblacklist hfs\n");
        ASSERT(fsg_file_classify(p, "hfs") == FSG_FILE_MODIFIABLE);
        free(p);
        free(deny);
        scratch_root_free(root);
}

TEST(test_deny_content) {
        char *s = fsg_deny_file_content("freevxfs", "vxfs", "/etc/modprobe.d/60-blacklist_fs-freevxfs.conf", "/h");
        ASSERT(strncmp(s, FSG_HEADER, strlen(FSG_HEADER)) == 0);
        ASSERT(strstr(s, "\nblacklist freevxfs\n"));
        ASSERT(strstr(s, "fsgatectl reset freevxfs"));
        ASSERT(strstr(s, "\nalias fs-vxfs fsgate_blocked_vxfs\n"));
        ASSERT(strstr(s, "\ninstall fsgate_blocked_vxfs /h vxfs freevxfs /etc/modprobe.d/60-blacklist_fs-freevxfs.conf\n"));
        free(s);
        s = fsg_deny_file_content("ext4", "ext2 ext3 ext4", "/run/x.conf", "/h");
        ASSERT(strstr(s, "alias fs-ext2 fsgate_blocked_ext2\n") && strstr(s, "alias fs-ext4 fsgate_blocked_ext4\n"));
        free(s);
        s = fsg_deny_file_content("exofs", "", "/run/x.conf", "/h"); /* not in this kernel: no types */
        ASSERT(strstr(s, "\nblacklist exofs\n") && !strstr(s, "alias"));
        free(s);
}

TEST(test_atomic_writes) {
        char *root = scratch_root_new(false), *dir = path_in(root, "etc/modprobe.d"), *p, buf[16];
        FsgError e = {};
        struct stat st;
        ssize_t n;

        p = path_in(root, "etc/modprobe.d/x.conf");
        ASSERT(fsg_atomic_write(dir, "x.conf", "blacklist a\n", &e) == 0);
        ASSERT(stat(p, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0644);
        ASSERT(fsg_atomic_symlink(dir, "x.conf", "/dev/null", &e) == 0);
        n = readlink(p, buf, sizeof(buf) - 1);
        ASSERT(n == 9);
        buf[n] = 0;
        ASSERT_STREQ(buf, "/dev/null");
        ASSERT(fsg_durable_unlink(dir, "x.conf", &e) == 0);
        ASSERT(lstat(p, &st) < 0 && errno == ENOENT);
        ASSERT(fsg_durable_unlink(dir, "x.conf", &e) == 0); /* idempotent */

        /* A temp file a killed writer left behind is cleaned; other files are not. */
        write_file(root, "etc/modprobe.d/" FSG_TEMP_PREFIX "deadbeef", "blacklist a\n");
        write_file(root, "etc/modprobe.d/keep.conf", "blacklist a\n");
        fsg_clean_temp_files(dir);
        free(p);
        p = path_in(root, "etc/modprobe.d/" FSG_TEMP_PREFIX "deadbeef");
        ASSERT(lstat(p, &st) < 0);
        free(p);
        p = path_in(root, "etc/modprobe.d/keep.conf");
        ASSERT(lstat(p, &st) == 0);

        /* A directory that cannot be written is ReadOnly, not a generic failure. */
        free(dir);
        dir = path_in(root, "does-not-exist");
        ASSERT(fsg_atomic_write(dir, "x.conf", "x", &e) < 0 && e.code == FSG_ERR_FAILED);
        free(dir);
        free(p);
        scratch_root_free(root);
}

TEST(test_error_names) {
        ASSERT_STREQ(fsg_error_dbus_name(FSG_ERR_FOREIGN_CONFIG), "org.fsgate.fsgate1.Error.ForeignConfig");
        ASSERT_STREQ(fsg_error_dbus_name(FSG_ERR_INVALID_ARGS), "org.freedesktop.DBus.Error.InvalidArgs");
        for (int c = FSG_ERR_FAILED; c < _FSG_ERR_MAX; c++) {
                ASSERT(fsg_error_dbus_name(c));
                ASSERT(fsg_error_exit_status(c) > 0);
                if (c != FSG_ERR_UNREACHABLE)
                        ASSERT(fsg_error_from_dbus_name(fsg_error_dbus_name(c)) == (FsgErrorCode) c);
        }
        ASSERT(fsg_error_from_dbus_name("org.freedesktop.DBus.Error.InteractiveAuthorizationRequired") ==
               FSG_ERR_ACCESS_DENIED);
        ASSERT(fsg_error_errno(NULL, EROFS, "x") < 0);
}

int main(void) {
        RUN(test_classify);
        RUN(test_deny_content);
        RUN(test_atomic_writes);
        RUN(test_error_names);
        return 0;
}

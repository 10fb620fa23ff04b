/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "conffile.h"
#include "test-util.h"

static char *path_in(const char *root, const char *rel) {
        char *p;
        ASSERT(asprintf(&p, "%s/%s", root, rel) > 0);
        return p;
}

/* p (root + rel) after rel is rewritten with content, as classified for module. */
static FsgFileKind kind_with(const char *root, const char *rel, const char *p, const char *content, const char *module) {
        write_file(root, rel, content);
        return fsg_file_classify(p, module);
}

TEST(classify) {
        char *root = scratch_root_new(false), *p, *deny = fsg_deny_file_content("hfs", "hfs", "/etc/modprobe.d/60-blacklist_fs-hfs.conf", "/usr/libexec/fsgate-blocked");
        const char *rel = "etc/modprobe.d/60-blacklist_fs-hfs.conf";

        p = path_in(root, rel);
        ASSERT(fsg_file_classify(p, "hfs") == FSG_FILE_ABSENT);
        make_symlink(root, rel, "/dev/null");
        ASSERT(fsg_file_classify(p, "hfs") == FSG_FILE_MASK);
        make_symlink(root, rel, "/etc/other");
        ASSERT(fsg_file_classify(p, "hfs") == FSG_FILE_FOREIGN);
        unlink(p);
        ASSERT(kind_with(root, rel, p, deny, "hfs") == FSG_FILE_FSGATE);
        ASSERT(kind_with(root, rel, p, "blacklist hfs\n", "hfs") == FSG_FILE_SUSE_NEVER);
        ASSERT(fsg_file_classify(p, "ufs") == FSG_FILE_FOREIGN);
        ASSERT(kind_with(root, rel, p, "# CIS 1.1.1.3\ninstall hfs /bin/true\nblacklist hfs\n", "hfs") == FSG_FILE_FOREIGN);
        ASSERT(kind_with(root, rel, p, "# something\n# __THIS FILE MAY BE MODIFIED__\nblacklist hfs\n", "hfs") ==
               FSG_FILE_MODIFIABLE);
        free(p);
        free(deny);
        scratch_root_free(root);
}

TEST(deny_content) {
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

static int open_dir(const char *root, const char *rel) {
        char *p = path_in(root, rel);
        int fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT(fd >= 0);
        free(p);
        return fd;
}

static FsgFileId id_of(int dfd, const char *name) {
        FsgFileId id;
        fsg_file_classify_at(dfd, name, "hfs", &id);
        return id;
}

/* Only name and the files in keep are in the directory (no temp file left behind). */
static void assert_only(int dfd, const char *name, const char *keep) {
        int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = fdopendir(fd);
        struct dirent *de;

        ASSERT(d);
        while ((de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, "..") && !streq(de->d_name, name) &&
                    !(keep && streq(de->d_name, keep))) {
                        fprintf(stderr, "unexpected %s\n", de->d_name);
                        ASSERT(false);
                }
        closedir(d);
}

static char *content_of(const char *root, const char *rel) {
        char *p = path_in(root, rel), *buf = calloc(1, 4096);
        FILE *f = fopen(p, "re");
        ASSERT(f && buf);
        ASSERT(fread(buf, 1, 4095, f) < 4095);
        fclose(f);
        free(p);
        return buf;
}

/* rel replaced by a new file (a new inode), as another writer would. */
static void replace_file(const char *root, const char *rel, const char *content) {
        char *p = path_in(root, rel);
        ASSERT(unlink(p) == 0);
        free(p);
        write_file(root, rel, content);
}

/* call, given &e, is refused as a concurrent change, and rel still holds want. A macro so
 * that a failure names the caller's line. */
#define ASSERT_CONCURRENT(call, e, root, rel, want)                                            \
        do {                                                                                    \
                char *_s;                                                                       \
                e = (FsgError) {};                                                              \
                ASSERT((call) < 0);                                                             \
                ASSERT(e.code == FSG_ERR_CONCURRENT_CHANGE);                                    \
                ASSERT_STREQ(_s = content_of(root, rel), want);                                 \
                free(_s);                                                                       \
        } while (0)

TEST(atomic_writes) {
        char *root = scratch_root_new(false), *p, buf[16];
        int dfd = open_dir(root, "etc/modprobe.d");
        FsgError e = {};
        FsgFileId id;
        struct stat st;
        mode_t old_umask;
        ssize_t n;

        p = path_in(root, "etc/modprobe.d/x.conf");
        /* The caller's umask does not reach the file: kmod run by anyone reads it. */
        old_umask = umask(077);
        ASSERT_OK_E(fsg_atomic_write(dfd, "/etc/modprobe.d", "x.conf", FSG_HEADER "\nblacklist a\n", NULL, &e), &e);
        umask(old_umask);
        ASSERT(stat(p, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0644);
        id = id_of(dfd, "x.conf");
        ASSERT(id.kind == FSG_FILE_FSGATE && id.ino == st.st_ino);
        ASSERT_OK_E(fsg_atomic_symlink(dfd, "/etc/modprobe.d", "x.conf", "/dev/null", &id, &e), &e);
        n = readlink(p, buf, sizeof(buf) - 1);
        ASSERT(n == 9);
        buf[n] = 0;
        ASSERT_STREQ(buf, "/dev/null");
        assert_only(dfd, "x.conf", NULL);
        id = id_of(dfd, "x.conf");
        ASSERT(id.kind == FSG_FILE_MASK);
        ASSERT_OK_E(fsg_durable_unlink(dfd, "/etc/modprobe.d", "x.conf", &id, &e), &e);
        ASSERT(lstat(p, &st) < 0 && errno == ENOENT);
        ASSERT(fsg_durable_unlink(dfd, "/etc/modprobe.d", "x.conf", &id, &e) == 0); /* idempotent */
        assert_only(dfd, "", NULL);

        /* A temp file a killed writer left behind is cleaned; other files are not, nor a
         * foreign file kept aside because it could not be put back (it waits for a human). */
        write_file(root, "etc/modprobe.d/" FSG_TEMP_PREFIX "deadbeef", FSG_HEADER "\nblacklist a\n");
        write_file(root, "etc/modprobe.d/" FSG_TEMP_PREFIX "half", "# Wri");
        make_symlink(root, "etc/modprobe.d/" FSG_TEMP_PREFIX "mask", "/dev/null");
        write_file(root, "etc/modprobe.d/" FSG_KEPT_PREFIX "0", "# CIS\ninstall hfs /bin/true\n");
        write_file(root, "etc/modprobe.d/keep.conf", "blacklist a\n");
        fsg_clean_temp_files_at(dfd);
        assert_only(dfd, "keep.conf", FSG_KEPT_PREFIX "0");
        free(p);
        close(dfd);
        scratch_root_free(root);
}

/* The promise "never touch a foreign file" against a writer that does not take our lock: a
 * file that appears, or replaces ours, between the plan and the write stays as it is. */
TEST(foreign_file_appears) {
        char *root = scratch_root_new(false), *s;
        const char *rel = "etc/modprobe.d/60-blacklist_fs-hfs.conf", *name = "60-blacklist_fs-hfs.conf";
        const char *foreign = "# by hand\nblacklist hfs\ninstall hfs /bin/true\n";
        int dfd = open_dir(root, "etc/modprobe.d");
        FsgFileId absent = { .kind = FSG_FILE_ABSENT }, ours;
        FsgError e = {};

        /* Planned on an empty name; someone else's file there at the write. */
        write_file(root, rel, foreign);
        ASSERT_CONCURRENT(fsg_atomic_write(dfd, "/etc/modprobe.d", name, FSG_HEADER "\n", &absent, &e), e, root, rel,
                          foreign);
        ASSERT_CONCURRENT(fsg_atomic_symlink(dfd, "/etc/modprobe.d", name, "/dev/null", NULL, &e), e, root, rel,
                          foreign);
        assert_only(dfd, name, NULL);

        /* Planned on our own file; replaced by a foreign one (a new inode) before the write. */
        replace_file(root, rel, FSG_HEADER "\nblacklist hfs\n");
        ours = id_of(dfd, name);
        ASSERT(ours.kind == FSG_FILE_FSGATE);
        replace_file(root, rel, foreign);
        ASSERT_CONCURRENT(fsg_atomic_symlink(dfd, "/etc/modprobe.d", name, "/dev/null", &ours, &e), e, root, rel,
                          foreign);
        ASSERT_CONCURRENT(fsg_atomic_write(dfd, "/etc/modprobe.d", name, FSG_HEADER "\n", &ours, &e), e, root, rel,
                          foreign);
        /* ... and a Reset does not remove it. */
        ASSERT_CONCURRENT(fsg_durable_unlink(dfd, "/etc/modprobe.d", name, &ours, &e), e, root, rel, foreign);
        assert_only(dfd, name, NULL);

        /* Our file edited in place (same inode): no longer the file planned on. */
        replace_file(root, rel, FSG_HEADER "\nblacklist hfs\n");
        ours = id_of(dfd, name);
        s = path_in(root, rel);
        FILE *f = fopen(s, "ae");
        ASSERT(f && fputs("install hfs /bin/true\n", f) >= 0 && fclose(f) == 0);
        free(s);
        ASSERT_CONCURRENT(fsg_durable_unlink(dfd, "/etc/modprobe.d", name, &ours, &e), e, root, rel,
                          FSG_HEADER "\nblacklist hfs\ninstall hfs /bin/true\n");
        assert_only(dfd, name, NULL);

        /* A plan that saw a foreign file never writes. */
        ours = id_of(dfd, name);
        ours.kind = FSG_FILE_FOREIGN;
        e = (FsgError) {};
        ASSERT(fsg_atomic_write(dfd, "/etc/modprobe.d", name, FSG_HEADER "\n", &ours, &e) < 0);
        ASSERT(e.code == FSG_ERR_CONCURRENT_CHANGE);
        assert_only(dfd, name, NULL);
        close(dfd);
        scratch_root_free(root);
}

/* Another fsgate's atomic writes swap our files under the classifier's eyes: what it sees is
 * always one of them, never "foreign" (which would refuse a change for nothing). */
TEST(classify_while_swapped) {
        char *root = scratch_root_new(false), *a = path_in(root, "etc/modprobe.d/a"), *b = path_in(root, "etc/modprobe.d/b");
        int dfd = open_dir(root, "etc/modprobe.d");
        pid_t pid;

        write_file(root, "etc/modprobe.d/a", FSG_HEADER "\nblacklist hfs\n");
        make_symlink(root, "etc/modprobe.d/b", "/dev/null");
        /* Writers, not a busy loop: a file swapped back and forth without pause is rightly
         * too unsettled to vouch for (classify gives up after 16 looks). */
        pid = start_swapping(a, b, 100);
        for (int i = 0; i < 20000; i++) {
                FsgFileKind k = fsg_file_classify_at(dfd, "a", "hfs", NULL);
                ASSERT(k == FSG_FILE_FSGATE || k == FSG_FILE_MASK);
        }
        stop_swapping(pid);
        free(a);
        free(b);
        close(dfd);
        scratch_root_free(root);
}

/* What is read to classify is never waited for: a FIFO at the name is foreign, at once. */
TEST(classify_fifo) {
        char *root = scratch_root_new(false), *p = path_in(root, "etc/modprobe.d/60-blacklist_fs-hfs.conf");
        int dfd = open_dir(root, "etc/modprobe.d");

        ASSERT(mkfifo(p, 0644) == 0);
        ASSERT(fsg_file_classify(p, "hfs") == FSG_FILE_FOREIGN);
        ASSERT(fsg_file_classify_at(dfd, "60-blacklist_fs-hfs.conf", "hfs", NULL) == FSG_FILE_FOREIGN);
        free(p);
        close(dfd);
        scratch_root_free(root);
}

TEST(error_names) {
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

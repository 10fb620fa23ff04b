/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An image is hostile input: nothing read from it may hang or escape it, nothing written for
 * it may land outside it, even while its owner swaps directories for symlinks. Scratch roots
 * without a module tree: modules are named by 60-blacklist_fs-M.conf files. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "store.h"
#include "strv.h"
#include "test-util.h"
#include "time-util.h"
#include "usage.h"

static char *path_in(const char *root, const char *rel) {
        char *p;
        ASSERT(asprintf(&p, "%s/%s", root, rel) > 0);
        return p;
}

static FsgContext *context(const char *root, const char *kver) {
        FsgContext *c = NULL;
        FsgError e = {};

        ASSERT_OK_E(fsg_context_new(root, kver, &c, &e), &e);
        return c;
}

/* The state build fails, at once, with a message naming rel and saying why. */
static void assert_build_fails(const char *root, const char *kver, const char *rel, const char *why) {
        FsgContext *c = context(root, kver);
        FsgState *s = NULL;
        FsgError e = {};

        ASSERT(fsg_state_build(c, NULL, &s, &e) < 0);
        if (!strstr(e.message, rel) || !strstr(e.message, why)) {
                fprintf(stderr, "message: %s\n", e.message);
                ASSERT(false);
        }
        fsg_context_free(c);
}

static void assert_build_succeeds(const char *root, const char *kver) {
        FsgContext *c = context(root, kver);
        FsgState *s = NULL;
        FsgError e = {};

        ASSERT_OK_E(fsg_state_build(c, NULL, &s, &e), &e);
        fsg_state_unref(s);
        fsg_context_free(c);
}

static void replace_with_fifo(const char *root, const char *rel) {
        char *p = path_in(root, rel);
        (void) unlink(p);
        ASSERT(mkfifo(p, 0644) == 0);
        free(p);
}

/* A FIFO would block the reader forever, a device feed it forever, a huge file cost it: each
 * is a clear error instead (the alarm in main() turns a hang into a failure). */
TEST(hostile_proc_files) {
        static const char * const tables[] = { "proc/modules", "proc/mounts", "proc/cmdline" };
        char *root = scratch_root_new(false), *p;
        int fd;

        write_file(root, "usr/lib/modprobe.d/60-blacklist_fs-hfs.conf", "blacklist hfs\n");
        for (size_t i = 0; i < ELEMENTSOF(tables); i++) {
                replace_with_fifo(root, tables[i]);
                assert_build_fails(root, NULL, tables[i], "Not a regular file");
                p = path_in(root, tables[i]);
                ASSERT(unlink(p) == 0);
                free(p);
        }

        /* A sparse file larger than any real table. */
        p = path_in(root, "proc/modules");
        fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        ASSERT(fd >= 0 && ftruncate(fd, (off_t) FSG_TABLE_MAX + 1) == 0);
        close(fd);
        assert_build_fails(root, NULL, "proc/modules", "File too large");
        ASSERT(unlink(p) == 0);

        /* A link to /dev/zero: resolved inside the image, where root can make that node. */
        if (geteuid() == 0) {
                char *dev = path_in(root, "dev");
                (void) mkdir(dev, 0755);
                free(dev);
                dev = path_in(root, "dev/zero");
                ASSERT(mknod(dev, S_IFCHR | 0666, makedev(1, 5)) == 0);
                free(dev);
                make_symlink(root, "proc/modules", "/dev/zero");
                assert_build_fails(root, NULL, "proc/modules", "Not a regular file");
                ASSERT(unlink(p) == 0);
        }
        free(p);
        scratch_root_free(root);
}

TEST(hostile_module_tree) {
        static const char * const files[] = {
                "modules.alias", "modules.builtin", "modules.builtin.modinfo", "modules.dep.bin", "modules.alias.bin",
                "modules.softdep",
        };
        char *root = scratch_root_new(false);

        write_file(root, "usr/lib/modules/9.9-test/modules.order", "");
        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                char *rel = NULL, *p;

                ASSERT(asprintf(&rel, "usr/lib/modules/9.9-test/%s", files[i]) > 0);
                replace_with_fifo(root, rel);
                assert_build_fails(root, "9.9-test", files[i], "Not a regular file");
                /* A symlink is followed inside the image, as the system under it would: libkmod
                 * is not given the name (kmod-view.h). */
                p = path_in(root, rel);
                ASSERT(unlink(p) == 0);
                make_symlink(root, rel, "modules.order");
                assert_build_succeeds(root, "9.9-test");
                ASSERT(unlink(p) == 0);
                free(p);
                free(rel);
        }
        scratch_root_free(root);
}

/* Counts the words of the third column: the types, in /proc/mounts. */
static void count_third(void *userdata, unsigned column, char *word) {
        size_t *n = userdata;

        if (column == 2)
                (*n)++;
}

/* The running system's /proc tables are procfs files of size 0: still read. */
TEST(host_proc_still_read) {
        FsgContext *c = context("/", NULL);
        size_t n = 0, types = 0;

        ASSERT(fsg_read_table(c, "/proc/modules", count_third, &n) == 0);
        ASSERT(fsg_read_table(c, "/proc/mounts", count_third, &types) == 0);
        ASSERT(types > 0); /* this very test runs on some filesystem */
        fsg_context_free(c);
}

/* Symlinks in an image resolve inside it, absolute or "..": never to the host. */
TEST(open_in_root) {
        char *root = scratch_root_new(false), *host = scratch_root_new(false), *rel = NULL, *p;
        FsgContext *c = context(root, NULL);
        int fd;

        write_file(host, "etc/secret", "host\n");
        make_symlink(root, "etc/abs", host);
        ASSERT(asprintf(&rel, "../../../../../../..%s", host) > 0);
        make_symlink(root, "etc/rel", rel);
        free(rel);
        ASSERT(fsg_open_in_root(c, "/etc/abs/etc/secret", O_RDONLY) == -ENOENT);
        ASSERT(fsg_open_in_root(c, "/etc/rel/etc/secret", O_RDONLY) == -ENOENT);
        ASSERT(fsg_open_regular(c, "/etc/abs/etc/secret", 100) == -ENOENT);

        /* A directory made for a write follows the same symlink inside the image. */
        fd = fsg_open_dir(c, "/etc/abs/sub", true);
        ASSERT(fd >= 0);
        close(fd);
        p = path_in(root, host + 1);
        ASSERT(access(p, F_OK) == 0);
        free(p);
        p = path_in(host, "sub");
        ASSERT(access(p, F_OK) < 0 && errno == ENOENT);
        free(p);
        ASSERT(fsg_open_dir(c, "/nonexistent/dir", false) == -ENOENT);

        fsg_context_free(c);
        scratch_root_free(host);
        scratch_root_free(root);
}

static void assert_opens(int fd, const char *root, const char *rel) {
        char *p = path_in(root, rel);
        struct stat a, b;

        if (fd < 0) {
                fprintf(stderr, "%s: %s\n", rel, strerror(-fd));
                ASSERT(false);
        }
        ASSERT(fstat(fd, &a) == 0 && lstat(p, &b) == 0);
        ASSERT(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
        close(fd);
        free(p);
}

/* The walk that stands in for openat2() where it is missing (valgrind, seccomp) resolves as
 * the kernel's RESOLVE_IN_ROOT does; and so does fsg_open_in_root(), whichever it uses. */
TEST(walk_like_openat2) {
        char *root = scratch_root_new(false);
        FsgContext *c = context(root, NULL);

        make_symlink(root, "lib", "usr/lib");
        make_symlink(root, "etc/abs", "/usr/lib");
        make_symlink(root, "etc/up", "../../../../usr");
        make_symlink(root, "etc/loop", "loop");
        make_symlink(root, "etc/dangling", "/nonexistent");
        make_symlink(root, "etc/chain", "abs/modprobe.d");
        write_file(root, "etc/file", "x\n");
        for (int walk = 0; walk < 2; walk++) {
#define OPEN(path, flags) (walk ? fsg_open_in_root_walk(c->root_fd, path, flags) : fsg_open_in_root(c, path, flags))
                int fd;
                struct stat st;

                assert_opens(OPEN("/lib/modprobe.d", O_PATH), root, "usr/lib/modprobe.d");
                assert_opens(OPEN("/etc/abs/modprobe.d/", O_RDONLY | O_DIRECTORY), root, "usr/lib/modprobe.d");
                assert_opens(OPEN("/etc/up/lib", O_PATH), root, "usr/lib");
                assert_opens(OPEN("/../../..", O_PATH), root, ".");
                assert_opens(OPEN("/etc/./chain", O_RDONLY | O_DIRECTORY), root, "usr/lib/modprobe.d");
                assert_opens(OPEN("/etc/file", O_RDONLY), root, "etc/file");
                fd = OPEN("/etc/chain", O_PATH | O_NOFOLLOW);
                ASSERT(fd >= 0 && fstat(fd, &st) == 0 && S_ISLNK(st.st_mode));
                close(fd);
                ASSERT(OPEN("/etc/loop/x", O_PATH) == -ELOOP);
                ASSERT(OPEN("/etc/dangling", O_PATH) == -ENOENT);
                ASSERT(OPEN("/etc/file/x", O_PATH) == -ENOTDIR);
                ASSERT(OPEN("/etc/chain", O_RDONLY | O_NOFOLLOW) == -ELOOP);
#undef OPEN
        }
        fsg_context_free(c);
        scratch_root_free(root);
}

/* Walks /etc/flip for seconds while it flips; counts the walks that opened one of the two
 * files, and those refused with ELOOP. Any other answer fails the test. */
static void walk_while_flipping(FsgContext *c, unsigned seconds, unsigned *opened, unsigned *refused) {
        struct timespec start, now;

        *opened = *refused = 0;
        clock_gettime(CLOCK_MONOTONIC, &start);
        do {
                int fd = fsg_open_in_root_walk(c->root_fd, "/etc/flip", O_RDONLY);
                char buf[8] = {};

                if (fd == -ELOOP) {
                        if ((*refused)++ == 0)
                                fprintf(stderr, "walk: %s\n", strerror(ELOOP));
                        continue;
                }
                ASSERT(fd >= 0);
                ASSERT(read(fd, buf, sizeof(buf) - 1) == 2);
                ASSERT(streq(buf, "x\n") || streq(buf, "y\n"));
                close(fd);
                (*opened)++;
        } while (clock_gettime(CLOCK_MONOTONIC, &now) == 0 && now.tv_sec - start.tv_sec < (time_t) seconds);
}

/* A name that is a symlink when the walk opens it and a file again when the walk reads the
 * link (a writer renaming one over the other) is looked at again, not refused with ELOOP.
 * Regression: a config read under valgrind failed "Too many levels of symbolic links" while
 * an atomic writer flipped a file and its /dev/null mask. Real writers pause between
 * renames (they fsync); a name that never stops changing is refused after a bounded number
 * of looks, as a symlink loop is, and never opens anything else. */
TEST(walk_races_a_flipping_name) {
        char *root = scratch_root_new(false), *file = path_in(root, "etc/flip"), *lnk = path_in(root, "etc/flip-link");
        unsigned opened, refused;
        FsgContext *c = context(root, NULL);
        pid_t pid;

        write_file(root, "etc/flip", "x\n");
        write_file(root, "etc/real", "y\n");
        make_symlink(root, "etc/flip-link", "/etc/real");

        pid = start_swapping(file, lnk, 1000);
        walk_while_flipping(c, 3, &opened, &refused);
        stop_swapping(pid);
        printf("# a writer pausing 1 ms: %u walks opened, %u refused\n", opened, refused);
        ASSERT(opened > 0 && refused == 0);

        pid = start_swapping(file, lnk, 0);
        walk_while_flipping(c, 1, &opened, &refused);
        stop_swapping(pid);
        printf("# a writer that never pauses: %u walks opened, %u refused\n", opened, refused);
        ASSERT(opened > 0);

        fsg_context_free(c);
        free(file), free(lnk);
        scratch_root_free(root);
}

/* A config file this process may not read is skipped and named, not a failure of the whole
 * answer. Run as nobody when we are root: root reads everything. */
TEST(unreadable_config) {
        char *root = scratch_root_new(false), *p = path_in(root, "etc/modprobe.d/50-secret.conf");
        pid_t pid;
        int status;

        write_file(root, "etc/modprobe.d/50-secret.conf", "blacklist jfs\n");
        write_file(root, "usr/lib/modprobe.d/60-blacklist_fs-minix.conf", "blacklist minix\n");
        ASSERT(chmod(p, 0) == 0);
        pid = fork();
        ASSERT(pid >= 0);
        if (pid == 0) {
                FsgConfig *cfg = NULL;
                FsgState *s = NULL;
                FsgContext *c;
                FsgError e = {};

                if (geteuid() == 0)
                        ASSERT(setgid(65534) == 0 && setuid(65534) == 0);
                c = context(root, NULL);
                if (fsg_config_load(c, NULL, &cfg, &e) < 0) {
                        fprintf(stderr, "%s\n", e.message);
                        _exit(1);
                }
                ASSERT(strv_length(cfg->unreadable) == 1);
                ASSERT_STREQ(cfg->unreadable[0], "/etc/modprobe.d/50-secret.conf");
                ASSERT(fsg_config_blacklists(cfg, "minix"));
                fsg_config_free(cfg);
                ASSERT_OK_E(fsg_state_build(c, NULL, &s, &e), &e);
                ASSERT(strv_length(s->unreadable) == 1);
                ASSERT_STREQ(s->unreadable[0], "/etc/modprobe.d/50-secret.conf");
                fsg_state_unref(s);
                fsg_context_free(c);
                free(p);
                free(root);
                _exit(0);
        }
        ASSERT(waitpid(pid, &status, 0) == pid);
        ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        free(p);
        scratch_root_free(root);
}

/* Files (and the directory made for them) are 0644/0755 whatever the caller's umask; a
 * symlink loop is named as one, not reported as a lack of memory. */
TEST(umask_and_loops) {
        char *root = scratch_root_new(false), *p;
        FsgContext *c;
        FsgError e = {};
        struct stat st;
        mode_t old;

        write_file(root, "usr/lib/modprobe.d/60-blacklist_fs-minix.conf", "");
        p = path_in(root, "etc/modprobe.d");
        ASSERT(rmdir(p) == 0);
        c = context(root, NULL);
        old = umask(077);
        ASSERT_OK_E(store_change(c, FSG_OP_DENY, "minix", 0, &e), &e);
        umask(old);
        ASSERT(stat(p, &st) == 0 && (st.st_mode & 0777) == 0755);
        free(p);
        p = path_in(root, "etc/modprobe.d/60-blacklist_fs-minix.conf");
        ASSERT(stat(p, &st) == 0 && (st.st_mode & 0777) == 0644);
        free(p);
        fsg_context_free(c);

        {
                char *cmd;
                ASSERT(asprintf(&cmd, "rm -rf '%s/etc/modprobe.d'", root) > 0);
                ASSERT(system(cmd) == 0);
                free(cmd);
        }
        make_symlink(root, "etc/modprobe.d", "/etc/modprobe.d");
        assert_build_fails(root, NULL, "/etc/modprobe.d", "Too many levels of symbolic links");

        make_symlink(root, "usr/lib/modules", "/usr/lib/modules");
        c = NULL;
        ASSERT(fsg_context_new(root, "9.9-test", &c, &e) < 0);
        if (!strstr(e.message, "Too many levels of symbolic links")) {
                fprintf(stderr, "message: %s\n", e.message);
                ASSERT(false);
        }
        scratch_root_free(root);
}

static bool same_tree(const char *dir, const char *name, const struct stat *before) {
        char *p = path_in(dir, name);
        struct stat st;
        bool same = lstat(p, &st) == 0 && st.st_ino == before->st_ino && st.st_size == before->st_size &&
                    st.st_mtim.tv_sec == before->st_mtim.tv_sec && st.st_mtim.tv_nsec == before->st_mtim.tv_nsec;
        free(p);
        return same;
}

static char *plain_dir_new(void) {
        char tmpl[] = "/tmp/fsgate-outside-XXXXXX";
        ASSERT(mkdtemp(tmpl));
        return strdup(tmpl);
}

static size_t count_entries(const char *dir) {
        DIR *d = opendir(dir);
        struct dirent *de;
        size_t n = 0;

        ASSERT(d);
        while ((de = readdir(d)))
                n += !streq(de->d_name, ".") && !streq(de->d_name, "..");
        closedir(d);
        return n;
}

/* The reported attack: the image's etc/ belongs to someone else, who swaps etc/modprobe.d
 * with a symlink out of the image as fast as the kernel lets them while root allows, denies
 * and resets. No file outside the image may appear, change or go. */
TEST(swap_race_stays_inside) {
        char *root = scratch_root_new(false), *top = plain_dir_new(), *outside = path_in(top, "conf");
        char *modprobe = path_in(root, "etc/modprobe.d"), *evil = path_in(root, "etc/evil");
        struct stat foreign_st, tmp_st;
        unsigned done = 0, tries = 0;
        struct timespec start, now;
        FsgContext *c;
        pid_t pid;

        write_file(root, "usr/lib/modprobe.d/60-blacklist_fs-hfs.conf", "blacklist hfs\n");
        write_file(root, "usr/lib/modprobe.d/60-blacklist_fs-minix.conf", "");
        write_file(top, "conf/60-blacklist_fs-hfs.conf", "# someone else's\nblacklist hfs\n");
        write_file(top, "conf/" FSG_TEMP_PREFIX "0000", "# not ours either\n");
        {
                char *p = path_in(outside, "60-blacklist_fs-hfs.conf");
                ASSERT(lstat(p, &foreign_st) == 0);
                free(p);
                p = path_in(outside, FSG_TEMP_PREFIX "0000");
                ASSERT(lstat(p, &tmp_st) == 0);
                free(p);
        }
        ASSERT(symlink(outside, evil) == 0);

        pid = start_swapping(modprobe, evil, 0);

        c = context(root, NULL);
        clock_gettime(CLOCK_MONOTONIC, &start);
        do {
                static const struct { FsgOp op; const char *module; } steps[] = {
                        { FSG_OP_ALLOW, "hfs" }, { FSG_OP_RESET, "hfs" }, { FSG_OP_DENY, "minix" }, { FSG_OP_RESET, "minix" },
                };
                FsgError e = {};

                done += store_change(c, steps[tries % 4].op, steps[tries % 4].module, 0, &e) == 0;
                tries++;
                clock_gettime(CLOCK_MONOTONIC, &now);
        } while (now.tv_sec - start.tv_sec < 4);
        stop_swapping(pid);
        fsg_context_free(c);

        printf("# %u of %u changes went through while etc/modprobe.d was being swapped\n", done, tries);
        ASSERT(done > 0); /* else this test proved nothing */
        ASSERT(count_entries(outside) == 2 && count_entries(top) == 1);
        ASSERT(same_tree(outside, "60-blacklist_fs-hfs.conf", &foreign_st));
        ASSERT(same_tree(outside, FSG_TEMP_PREFIX "0000", &tmp_st));
        free(modprobe);
        free(evil);
        free(outside);
        scratch_root_free(top);
        scratch_root_free(root);
}

static bool says_secret(const char *s) {
        return s && strstr(s, "SECRET");
}

/* One state build over root in a child that has 10 s for it. 0: it ended with an answer, 3:
 * with an error, and nothing it said holds SECRET either way; 1: something did; 2: it hung. */
static int build_in_child(const char *root, const char *kver) {
        pid_t pid = fork();
        int status;

        ASSERT(pid >= 0);
        if (pid == 0) {
                FsgContext *c = context(root, kver);
                FsgState *s = NULL;
                FsgError e = {};
                bool leak, failed;

                alarm(10);
                failed = fsg_state_build(c, NULL, &s, &e) < 0;
                leak = failed && says_secret(e.message);
                for (size_t i = 0; s && i < s->n; i++) {
                        const FsgEntry *x = &s->entries[i];
                        leak = leak || says_secret(x->install_command) || says_secret(x->install_file) ||
                               says_secret(x->deciding_file);
                        for (char **m = x->mentions; m && *m; m++)
                                leak = leak || says_secret(*m);
                }
                fsg_state_unref(s);
                fsg_context_free(c);
                /* Under valgrind a forked child's exit is checked for leaks, and the parent's
                 * allocations it inherited count as lost there: the answer leaves through an
                 * exec, which valgrind does not follow. */
                execl("/bin/sh", "sh", "-c", leak ? "exit 1" : failed ? "exit 3" : "exit 0", (char *) NULL);
                _exit(leak ? 1 : failed ? 3 : 0);
        }
        ASSERT(waitpid(pid, &status, 0) == pid);
        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
                return 2;
        ASSERT(WIFEXITED(status) && WEXITSTATUS(status) <= 3);
        return WEXITSTATUS(status);
}

/* Up to 200 builds (20 s at most: valgrind is slow) while a and b (below root) are exchanged
 * as fast as the kernel lets them: none may hang, none may say SECRET. Before the fix, 2 to 8
 * builds in 100 did, depending on the file. */
static void builds_race_exchange(const char *root, const char *kver, const char *a, const char *b) {
        char *pa = path_in(root, a), *pb = path_in(root, b);
        unsigned failed = 0, runs = 0;
        uint64_t end = fsg_now_usec() + 20 * UINT64_C(1000000);
        struct stat before, after;
        pid_t pid;

        ASSERT(lstat(pa, &before) == 0);
        pid = start_swapping(pa, pb, 0);

        for (unsigned i = 0; i < 200 && fsg_now_usec() < end; i++, runs++) {
                int r = build_in_child(root, kver);
                if (r == 1 || r == 2)
                        fprintf(stderr, "build %u while %s and %s were exchanged: %s\n", i + 1, a, b,
                                r == 2 ? "hung" : "said SECRET");
                ASSERT(r == 0 || r == 3);
                failed += r == 3;
        }
        stop_swapping(pid);
        /* Each name as it was, for the next race. */
        ASSERT(lstat(pa, &after) == 0);
        if (after.st_ino != before.st_ino)
                ASSERT(renameat2(AT_FDCWD, pa, AT_FDCWD, pb, RENAME_EXCHANGE) == 0);
        printf("# %s exchanged with %s: %u builds, %u failed with an error\n", a, b, runs, failed);
        free(pa);
        free(pb);
}

/* A file outside the image that only root may read, in modprobe.d syntax. */
static char *secret_new(char **dir) {
        char *p;

        *dir = plain_dir_new();
        write_file(*dir, "etc/secret.conf", "install hfs /bin/echo SECRET-LINE-FROM-HOST-FILE\n");
        p = path_in(*dir, "etc/secret.conf");
        ASSERT(chmod(p, 0600) == 0);
        return p;
}

/* What the races below exchange with the files libkmod reads, in dir of root: a FIFO (a read
 * that would block) and a symlink to secret (a read outside the image). */
static void plant_fifo_and_link(const char *root, const char *dir, const char *secret) {
        char *rel;

        ASSERT(asprintf(&rel, "%s/fifo", dir) > 0);
        char *fifo = path_in(root, rel);
        ASSERT(mkfifo(fifo, 0644) == 0);
        free(fifo);
        free(rel);
        ASSERT(asprintf(&rel, "%s/evil", dir) > 0);
        make_symlink(root, rel, secret);
        free(rel);
}

/* The reported attack on libkmod, which opened each config file by name after fsgate had
 * checked it: the image's owner exchanges a checked file with a FIFO (libkmod blocked on it
 * for good) or with a symlink to a root-only host file (libkmod read it, and its lines in
 * modprobe syntax came out as the module's install command). */
TEST(kmod_config_race) {
        char *root = scratch_root_new(false), *dir, *secret = secret_new(&dir);

        write_file(root, "usr/lib/modprobe.d/60-blacklist_fs-hfs.conf", "blacklist hfs\n");
        write_file(root, "etc/modprobe.d/50-admin.conf", "blacklist hfs\n");
        plant_fifo_and_link(root, "etc", secret);
        builds_race_exchange(root, NULL, "etc/modprobe.d/50-admin.conf", "etc/fifo");
        builds_race_exchange(root, NULL, "etc/modprobe.d/50-admin.conf", "etc/evil");
        free(secret);
        scratch_root_free(dir);
        scratch_root_free(root);
}

/* The same on the module tree: libkmod opened its indexes (modules.dep.bin on every lookup)
 * and modules.softdep, which it reads as configuration, by name. */
TEST(kmod_tree_race) {
        char *root = scratch_root_new(false), *dir, *secret = secret_new(&dir);

        write_file(root, "usr/lib/modprobe.d/60-blacklist_fs-hfs.conf", "blacklist hfs\n");
        write_file(root, "usr/lib/modules/9.9-test/modules.dep.bin", "not an index\n");
        write_file(root, "usr/lib/modules/9.9-test/modules.softdep", "# Soft dependencies\n");
        plant_fifo_and_link(root, "usr/lib/modules/9.9-test", secret);
        builds_race_exchange(root, "9.9-test", "usr/lib/modules/9.9-test/modules.dep.bin",
                             "usr/lib/modules/9.9-test/fifo");
        builds_race_exchange(root, "9.9-test", "usr/lib/modules/9.9-test/modules.softdep",
                             "usr/lib/modules/9.9-test/fifo");
        builds_race_exchange(root, "9.9-test", "usr/lib/modules/9.9-test/modules.softdep",
                             "usr/lib/modules/9.9-test/evil");
        free(secret);
        scratch_root_free(dir);
        scratch_root_free(root);
}

TEST_SETUP(fail_on_a_hang) {
        /* A hang is the failure some of these guard against: fail instead of waiting. */
        alarm(300);
}

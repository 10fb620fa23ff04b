/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libkmod.h>

#include "confparse.h"
#include "confscan.h"
#include "kmod-view.h"
#include "strv.h"
#include "test-util.h"

static FsgConfig *load(const char *root, const FsgOverride *ov) {
        FsgContext *c = NULL;
        FsgConfig *cfg = NULL;
        FsgError e = {};

        ASSERT_OK_E(fsg_context_new(root, NULL, &c, &e), &e);
        ASSERT_OK_E(fsg_config_load(c, ov, &cfg, &e), &e);
        ASSERT(cfg);
        fsg_context_free(c);
        return cfg;
}

static const FsgConfFile *file_named(const FsgConfig *cfg, const char *name) {
        for (size_t i = 0; i < cfg->n_files; i++)
                if (streq(cfg->files[i].name, name))
                        return &cfg->files[i];
        return NULL;
}

TEST(parse_like_kmod) {
        char *root = scratch_root_new(false);
        FsgConfig *cfg;

        write_file(root, "usr/lib/modprobe.d/a.conf",
                   "# blacklist commented\n"
                   "  # blacklist indented_comment\n"
                   "blacklist \\\n"
                   "hfs\n"
                   "blacklist\tusb-storage   \n"
                   "install minix /bin/false\n"
                   "alias fs-ufs off\n"
                   "blacklist\n"
                   "options hfs foo=1\n");
        write_file(root, "usr/lib/modprobe.d/b.txt", "blacklist jfs\n");
        cfg = load(root, NULL);
        ASSERT(fsg_config_blacklists(cfg, "hfs"));
        ASSERT(fsg_config_blacklists(cfg, "usb_storage"));
        ASSERT(!fsg_config_blacklists(cfg, "commented"));
        ASSERT(!fsg_config_blacklists(cfg, "indented_comment"));
        ASSERT(!fsg_config_blacklists(cfg, "jfs")); /* not a .conf file */
        ASSERT(cfg->n_rules == 4);
        ASSERT(cfg->rules[2].kind == FSG_RULE_INSTALL && streq(cfg->rules[2].name, "minix"));
        ASSERT_STREQ(cfg->rules[2].value, "/bin/false");
        ASSERT(cfg->rules[3].kind == FSG_RULE_ALIAS && streq(cfg->rules[3].name, "fs_ufs"));
        ASSERT_STREQ(cfg->rules[3].value, "off");
        fsg_config_free(cfg);
        scratch_root_free(root);
}

/* Everything kmod's configuration holds, in its order, one "KIND KEY VALUE" line each. */
static char *kmod_config_dump(struct kmod_ctx *k) {
        static struct kmod_config_iter *(* const kinds[])(const struct kmod_ctx *) = {
                kmod_config_get_blacklists, kmod_config_get_install_commands, kmod_config_get_remove_commands,
                kmod_config_get_aliases,    kmod_config_get_options,          kmod_config_get_softdeps,
        };
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        ASSERT(f);
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
                struct kmod_config_iter *it = kinds[i](k);
                while (it && kmod_config_iter_next(it))
                        fprintf(f, "%zu %s %s\n", i, kmod_config_iter_get_key(it), kmod_config_iter_get_value(it) ?: "");
                kmod_config_iter_free_iter(it);
        }
        ASSERT(fclose(f) == 0);
        return buf;
}

/* kmod's configuration as fsgate hands it to kmod for c (ov: a "what if"), dumped. */
static char *fsgate_kmod_config_dump(const FsgContext *c, const FsgOverride *ov) {
        struct kmod_ctx *k = NULL;
        FsgConfig *cfg = NULL;
        FsgError e = {};
        char *dump;

        ASSERT_OK_E(fsg_config_load(c, ov, &cfg, &e), &e);
        ASSERT_OK_E(fsg_kmod_new(c, cfg, &k, &e), &e);
        dump = kmod_config_dump(k);
        fsg_kmod_unrefp(&k);
        fsg_config_free(cfg);
        return dump;
}

/* Two dumps that must be the same, each printed under its name when they are not. */
static void assert_same_dump(const char *name_a, const char *a, const char *name_b, const char *b) {
        if (!streq(a, b)) {
                fprintf(stderr, "%s:\n%s\n%s:\n%s\n", name_a, a, name_b, b);
                ASSERT(false);
        }
}

/* In an image kmod reads one file holding every file's bytes (kmod-view.h): it must find the
 * same lines, in the same order, as in the files read one by one, whatever their last line
 * looks like, with the module tree's modules.softdep among them by name. */
TEST(kmod_reads_one_text_as_the_files) {
        static const struct { const char *rel, *body; } files[] = {
                { "etc/modprobe.d/a.conf",     "install a1 /bin/a \\" },          /* a lone backslash at the end */
                { "etc/modprobe.d/b.conf",     "alias b1 one\nalias b2 two\\\n" }, /* a continuation at the end */
                { "etc/modprobe.d/c.conf",     "blacklist c1" },                  /* no newline */
                { "run/modprobe.d/d.conf",     "install d1 /bin/d \\\\" },        /* an escaped backslash */
                { "usr/lib/modprobe.d/e.conf", "\\\n\\\nblacklist e1\n" },
                { "usr/lib/modprobe.d/ma.conf", "install s2 /bin/ma\n" },
                { "usr/lib/modprobe.d/mz.conf", "install s3 /bin/mz\n" },
                { "usr/lib/modprobe.d/z.conf", "options z1 x=1\ninstall a1 /bin/z\n" },
                { "usr/lib/modules/9.9-test/modules.softdep",
                  "softdep m1 pre: m2\ninstall s2 /bin/softdep\ninstall s3 /bin/softdep\ninstall s4 \\" },
        };
        char *root = scratch_root_new(false), *moddir, *joined, *separate;
        const char *paths[ELEMENTSOF(files)];
        struct kmod_ctx *k;
        FsgContext *c = NULL;
        FsgError e = {};

        for (size_t i = 0; i < ELEMENTSOF(files); i++)
                write_file(root, files[i].rel, files[i].body);
        ASSERT_OK_E(fsg_context_new(root, "9.9-test", &c, &e), &e);
        joined = fsgate_kmod_config_dump(c, NULL);

        /* The same files, each by its name, as kmod reads them on the running system. */
        for (size_t i = 0; i + 1 < ELEMENTSOF(files); i++)
                ASSERT(asprintf((char **) &paths[i], "%s/%s", root, files[i].rel) > 0);
        paths[ELEMENTSOF(files) - 1] = NULL;
        ASSERT(asprintf(&moddir, "%s/usr/lib/modules/9.9-test", root) > 0);
        k = kmod_new(moddir, paths);
        ASSERT(k);
        separate = kmod_config_dump(k);
        kmod_unref(k);

        assert_same_dump("one text", joined, "the files", separate);
        ASSERT(strstr(joined, "1 s2 /bin/ma\n") && strstr(joined, "1 s3 /bin/softdep\n"));
        for (size_t i = 0; i + 1 < ELEMENTSOF(files); i++)
                free((char *) paths[i]);
        free(moddir);
        free(joined);
        free(separate);
        fsg_context_free(c);
        scratch_root_free(root);
}

/* A "what if" override's content (a file not yet written) is read in an image where the file
 * would be: in the one text kmod reads, in its place by name, never as a name for kmod to
 * open. kmod must find the same lines, in the same order, as once the file is written. */
TEST(kmod_reads_what_if_content_in_its_place) {
        static const char what_if[] = "alias x1 fifty\ninstall a1 /bin/whatif\n";
        const FsgOverride ov = { .path = "/etc/modprobe.d/50-a.conf", .content = what_if };
        char *root = scratch_root_new(false), *asked, *written;
        FsgContext *c = NULL;
        FsgError e = {};

        write_file(root, "usr/lib/modprobe.d/10-x.conf", "alias x1 ten\n");
        write_file(root, "usr/lib/modprobe.d/50-a.conf", "install a1 /bin/vendor\n");
        write_file(root, "usr/lib/modprobe.d/90-z.conf", "alias x1 ninety\ninstall a1 /bin/late\n");
        write_file(root, "usr/lib/modules/9.9-test/modules.softdep", "softdep m1 pre: m2\n");
        ASSERT_OK_E(fsg_context_new(root, "9.9-test", &c, &e), &e);
        asked = fsgate_kmod_config_dump(c, &ov);
        write_file(root, "etc/modprobe.d/50-a.conf", what_if);
        written = fsgate_kmod_config_dump(c, NULL);
        assert_same_dump("asked", asked, "written", written);
        ASSERT(strstr(asked, "1 a1 /bin/whatif\n") && !strstr(asked, "/bin/vendor"));
        ASSERT(strstr(asked, "3 x1 ten\n3 x1 fifty\n3 x1 ninety\n"));
        free(asked);
        free(written);
        fsg_context_free(c);
        scratch_root_free(root);
}

TEST(precedence_and_masks) {
        char *root = scratch_root_new(false);
        const FsgConfFile *f;
        FsgConfig *cfg;

        write_file(root, "usr/lib/modprobe.d/60-blacklist_fs-hfs.conf", "blacklist hfs\n");
        write_file(root, "usr/lib/modprobe.d/60-blacklist_fs-ufs.conf", "blacklist ufs\n");
        write_file(root, "run/modprobe.d/60-blacklist_fs-ufs.conf", "blacklist ufs\nblacklist jfs\n");
        write_file(root, "usr/local/lib/modprobe.d/10-x.conf", "blacklist minix\n");
        make_symlink(root, "etc/modprobe.d/60-blacklist_fs-hfs.conf", "/dev/null");

        cfg = load(root, NULL);
        ASSERT(!fsg_config_blacklists(cfg, "hfs"));
        ASSERT(fsg_config_blacklists(cfg, "jfs"));
        ASSERT(fsg_config_blacklists(cfg, "minix"));
        f = file_named(cfg, "60-blacklist_fs-hfs.conf");
        ASSERT(f && f->mask && f->origin == FSG_ORIGIN_ADMIN);
        ASSERT(f->shadowed && strstr(f->shadowed, "/usr/lib/modprobe.d/60-blacklist_fs-hfs.conf"));
        f = file_named(cfg, "60-blacklist_fs-ufs.conf");
        ASSERT(f && !f->mask && f->origin == FSG_ORIGIN_RUNTIME);
        ASSERT_STREQ(f->path, "/run/modprobe.d/60-blacklist_fs-ufs.conf");
        f = file_named(cfg, "10-x.conf");
        ASSERT(f && f->origin == FSG_ORIGIN_LOCAL);
        ASSERT(strv_contains(cfg->named_modules, "hfs") && strv_contains(cfg->named_modules, "ufs"));
        /* Sorted by basename, as kmod reads them. */
        for (size_t i = 1; i < cfg->n_files; i++)
                ASSERT(strcmp(cfg->files[i - 1].name, cfg->files[i].name) < 0);
        fsg_config_free(cfg);

        /* "What if": the admin mask gone brings the vendor deny back; a mask on /run hides it. */
        cfg = load(root, &(FsgOverride) { .path = "/etc/modprobe.d/60-blacklist_fs-hfs.conf", .as_mask = false });
        ASSERT(fsg_config_blacklists(cfg, "hfs"));
        fsg_config_free(cfg);
        cfg = load(root, &(FsgOverride) { .path = "/etc/modprobe.d/60-blacklist_fs-ufs.conf", .as_mask = true });
        ASSERT(!fsg_config_blacklists(cfg, "ufs") && !fsg_config_blacklists(cfg, "jfs"));
        fsg_config_free(cfg);
        scratch_root_free(root);
}

/* Roots that differ only in a few files: what each writes, and what its config then says of
 * some modules. */
typedef struct {
        const char *what;
        const char *files[4]; /* path, content, ... */
        const char *denied[4], *allowed[4];
} Decision;

static const Decision decisions[] = {
        { "an empty file masks",
          { "usr/lib/modprobe.d/60-blacklist_fs-hfs.conf", "blacklist hfs\n",
            "etc/modprobe.d/60-blacklist_fs-hfs.conf", "" },
          .allowed = { "hfs" } },
        /* ufs_x: kmod 30 does not normalize the command line's names. */
        { "the command line",
          { "proc/cmdline", "BOOT_IMAGE=/vmlinuz quiet modprobe.blacklist=hfs,ufs-x modprobe.blacklist=jfs\n" },
          .denied = { "hfs", "ufs-x", "jfs" },
          .allowed = { "ufs_x", "quiet" } },
};

TEST(decisions) {
        for (size_t i = 0; i < ELEMENTSOF(decisions); i++) {
                const Decision *d = &decisions[i];
                char *root = scratch_root_new(false);
                FsgConfig *cfg;

                for (size_t j = 0; j + 1 < ELEMENTSOF(d->files) && d->files[j]; j += 2)
                        write_file(root, d->files[j], d->files[j + 1]);
                cfg = load(root, NULL);
                for (size_t j = 0; j < ELEMENTSOF(d->denied) && d->denied[j]; j++)
                        if (!fsg_config_blacklists(cfg, d->denied[j])) {
                                fprintf(stderr, "%s: %s is not denied\n", d->what, d->denied[j]);
                                ASSERT(false);
                        }
                for (size_t j = 0; j < ELEMENTSOF(d->allowed) && d->allowed[j]; j++)
                        if (fsg_config_blacklists(cfg, d->allowed[j])) {
                                fprintf(stderr, "%s: %s is denied\n", d->what, d->allowed[j]);
                                ASSERT(false);
                        }
                fsg_config_free(cfg);
                scratch_root_free(root);
        }
}

/* fsg_path() finds path at rel below root. */
static void assert_path_in_root(const FsgContext *c, const char *path, const char *root, const char *rel) {
        _cleanup_free_ char *p = fsg_path(c, path), *expect = NULL;

        ASSERT(asprintf(&expect, "%s/%s", root, rel) > 0);
        ASSERT_STREQ(p, expect);
}

TEST(paths_stay_below_root) {
        char *root = scratch_root_new(false), *p, *expect;
        FsgContext *c = NULL;
        FsgError e = {};

        ASSERT_OK_E(fsg_context_new(root, NULL, &c, &e), &e);
        ASSERT(asprintf(&p, "%s/etc/modprobe.d", root) > 0);
        ASSERT(rmdir(p) == 0);
        free(p);
        make_symlink(root, "etc/modprobe.d", "/elsewhere/conf");  /* absolute: restarts at the root */
        make_symlink(root, "lib", "usr/lib");                     /* relative, as on merged /usr */
        assert_path_in_root(c, "/etc/modprobe.d/x.conf", root, "elsewhere/conf/x.conf");
        p = fsg_path(c, "/lib/modprobe.d/../../../../../etc");
        ASSERT(asprintf(&expect, "%s/etc", root) > 0);
        ASSERT(strncmp(p, root, strlen(root)) == 0);
        free(p);
        free(expect);
        assert_path_in_root(c, "/lib/modprobe.d", root, "usr/lib/modprobe.d");
        make_symlink(root, "etc/loop", "/etc/loop");
        ASSERT(fsg_path(c, "/etc/loop/x") == NULL);               /* ELOOP, not a hang */
        p = fsg_path_nofollow(c, "/etc/loop");
        ASSERT(p && strstr(p, "/etc/loop"));
        free(p);
        fsg_context_free(c);
        scratch_root_free(root);
}

/* Enough files to grow the name index several times, each name in two directories, and the
 * same module named in many of them: what kmod would decide, found through the indexes. */
TEST(many_files) {
        char *root = scratch_root_new(false);
        const FsgConfFile *f;
        const size_t *idx;
        FsgConfig *cfg;
        size_t n;

        for (int i = 0; i < 700; i++) {
                char rel[128], body[128];
                snprintf(rel, sizeof(rel), "etc/modprobe.d/%04d.conf", i);
                snprintf(body, sizeof(body), "blacklist mod%d\nblacklist shared\n", i);
                write_file(root, rel, body);
                snprintf(rel, sizeof(rel), "usr/lib/modprobe.d/%04d.conf", i);
                write_file(root, rel, "blacklist hidden\n");
                snprintf(rel, sizeof(rel), "usr/lib/modprobe.d/60-blacklist_fs-m%d.conf", i % 50);
                write_file(root, rel, "");
        }
        cfg = load(root, NULL);
        ASSERT(cfg->n_files == 750);
        for (size_t i = 1; i < cfg->n_files; i++)
                ASSERT(strcmp(cfg->files[i - 1].name, cfg->files[i].name) < 0);
        f = file_named(cfg, "0123.conf");
        ASSERT(f && f->origin == FSG_ORIGIN_ADMIN && !f->mask);
        ASSERT_STREQ(f->path, "/etc/modprobe.d/0123.conf");
        ASSERT(f->shadowed && strstr(f->shadowed, "/usr/lib/modprobe.d/0123.conf"));
        ASSERT(!fsg_config_blacklists(cfg, "hidden"));
        ASSERT(fsg_config_blacklists(cfg, "mod699") && !fsg_config_blacklists(cfg, "mod700"));
        n = fsg_config_rules_named(cfg, "shared", &idx);
        ASSERT(n == 700);
        for (size_t i = 1; i < n; i++)
                ASSERT(idx[i - 1] < idx[i]); /* in kmod's read order */
        ASSERT(fsg_config_rules_named(cfg, "nosuch", &idx) == 0);
        ASSERT(strv_length(cfg->named_modules) == 50 && strv_contains(cfg->named_modules, "m49"));
        fsg_config_free(cfg);
        scratch_root_free(root);
}

/* A writer replaces a file with a /dev/null mask (and back) by rename while a reader that
 * takes no lock scans: every read must succeed and see one of the two, never a file listed
 * as a rule file that then reads as empty or fails as "not a regular file". */
static void read_while_flipping(const char *root) {
        char *file, *tmp, *lnk;
        pid_t pid;
        int status;

        ASSERT(asprintf(&file, "%s/etc/modprobe.d/flip.conf", root) > 0);
        ASSERT(asprintf(&tmp, "%s/etc/modprobe.d/.flip.tmp", root) > 0);
        ASSERT(asprintf(&lnk, "%s/etc/modprobe.d/.flip.lnk", root) > 0);
        pid = fork();
        ASSERT(pid >= 0);
        if (pid == 0) {
                /* A failed assertion in the parent must not leave the writer running. */
                if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() == 1)
                        _exit(1);
                for (;;) {
                        FILE *f = fopen(tmp, "we");
                        if (!f || fputs("blacklist flip\n", f) < 0 || fclose(f) != 0 || rename(tmp, file) < 0)
                                _exit(1);
                        (void) unlink(lnk); /* left by a writer killed before its rename */
                        if (symlink("/dev/null", lnk) < 0 || rename(lnk, file) < 0)
                                _exit(1);
                        /* Real writers fsync between renames; a writer that never pauses
                         * would be reported as "kept changing", rightly. */
                        (void) usleep(1000);
                }
        }
        for (int i = 0; i < 200; i++) {
                FsgConfig *cfg = load(root, NULL);
                const FsgConfFile *f = file_named(cfg, "flip.conf");
                /* readdir() may miss a name renamed over during the listing (POSIX leaves it
                 * open, and kmod reads the same way); what is listed must be read right. */
                if (f)
                        ASSERT(f->mask ? !fsg_config_blacklists(cfg, "flip") : fsg_config_blacklists(cfg, "flip"));
                fsg_config_free(cfg);
        }
        ASSERT(kill(pid, SIGKILL) == 0 && waitpid(pid, &status, 0) == pid);
        ASSERT(WIFSIGNALED(status)); /* the writer was still writing, not failed */
        free(file), free(tmp), free(lnk);
}

TEST(read_races_atomic_writer) {
        char *root = scratch_root_new(false), *null;

        for (int i = 0; i < 100; i++) {
                char rel[64];
                snprintf(rel, sizeof(rel), "etc/modprobe.d/%03d.conf", i);
                write_file(root, rel, "blacklist other\n");
        }
        write_file(root, "etc/modprobe.d/flip.conf", "blacklist flip\n");
        /* The mask's target missing below the root (the parse sees ENOENT), then present and
         * not a regular file (EBADFD). */
        read_while_flipping(root);
        ASSERT(asprintf(&null, "%s/dev/null", root) > 0);
        write_file(root, "dev/.keep", "");
        ASSERT(mkfifo(null, 0600) == 0);
        read_while_flipping(root);
        free(null);
        scratch_root_free(root);
}

static long max_rss_kib(void) {
        struct rusage ru;
        ASSERT(getrusage(RUSAGE_SELF, &ru) == 0);
        return ru.ru_maxrss;
}

/* The cap holds while the stream is read: exactly max bytes are a file, one more is not. */
TEST(capped_stream) {
        char tmpl[] = "/tmp/fsgate-unit-cap-XXXXXX", *line = NULL;
        int fd = mkstemp(tmpl);
        size_t cap = 0;
        FILE *f;

        ASSERT(fd >= 0);
        ASSERT(write(fd, "ab\ncd\nef", 8) == 8);
        ASSERT(fsg_fdopen_capped(open(tmpl, O_RDONLY | O_CLOEXEC), 8, &f) == 0);
        ASSERT(fsg_read_line(f, '\n', 16, &line, &cap) == 3 && streq(line, "ab\n"));
        ASSERT(fsg_read_line(f, '\n', 16, &line, &cap) == 3 && streq(line, "cd\n"));
        ASSERT(fsg_read_line(f, '\n', 16, &line, &cap) == 2 && streq(line, "ef"));
        ASSERT(fsg_read_line(f, '\n', 16, &line, &cap) == 0);
        fclose(f);
        /* Opened at 8 bytes, grown to 9 before the read. */
        ASSERT(fsg_fdopen_capped(open(tmpl, O_RDONLY | O_CLOEXEC), 8, &f) == 0);
        ASSERT(write(fd, "\n", 1) == 1);
        ASSERT(fsg_read_line(f, '\n', 16, &line, &cap) == -EFBIG);
        ASSERT(fsg_read_line(f, '\n', 16, &line, &cap) == -EFBIG);
        fclose(f);
        /* A line one byte longer than allowed, and one that just fits (the delimiter aside). */
        ASSERT(fsg_fdopen_capped(open(tmpl, O_RDONLY | O_CLOEXEC), 64, &f) == 0);
        ASSERT(fsg_read_line(f, '\n', 1, &line, &cap) == -EMSGSIZE);
        fclose(f);
        ASSERT(fsg_fdopen_capped(open(tmpl, O_RDONLY | O_CLOEXEC), 64, &f) == 0);
        ASSERT(fsg_read_line(f, '\n', 2, &line, &cap) == 3 && streq(line, "ab\n"));
        fclose(f);
        free(line);
        close(fd);
        unlink(tmpl);
}

/* A whole file read at once is held to its cap while it is read, like the streams: procfs
 * files say size 0 at the open (as a file grown since its check would have passed it) and
 * hold more. Within the cap, all of it, NUL-terminated. */
TEST(read_regular_capped_while_reading) {
        static const FsgContext host = { .root = (char *) "", .root_fd = -1 };
        char *buf = NULL;
        size_t len = 0;

        ASSERT(fsg_read_regular(&host, "/proc/self/maps", 64, &buf, &len) == -EFBIG);
        ASSERT(!buf);
        ASSERT(fsg_read_regular(&host, "/proc/self/maps", FSG_TABLE_MAX, &buf, &len) == 0);
        ASSERT(len > 64 && strlen(buf) == len && buf[len - 1] == '\n');
        free(buf);
        ASSERT(fsg_read_regular(&host, "/proc/self/maps", FSG_TABLE_MAX, &buf, NULL) == 0);
        free(buf);
}

/* The attacker: a modprobe.d file that passes the size check at the open and is a sparse
 * gigabyte by the time it is read (short lines at first, then one endless one). The old
 * parser read all of it: some 2 GiB of memory. */
TEST(file_grown_after_open) {
        char *root = scratch_root_new(false), *path;
        FsgContext *c = NULL;
        FsgRule *rules = NULL;
        FsgError e = {};
        size_t n = 0;
        FILE *f = NULL;
        long before;
        int fd;

        write_file(root, "etc/modprobe.d/grow.conf", "blacklist hfs\n");
        ASSERT(asprintf(&path, "%s/etc/modprobe.d/grow.conf", root) > 0);
        ASSERT_OK_E(fsg_context_new(root, NULL, &c, &e), &e);
        ASSERT(fsg_fopen_regular(c, "/etc/modprobe.d/grow.conf", FSG_CONF_MAX, &f) == 0);

        fd = open(path, O_WRONLY | O_CLOEXEC);
        ASSERT(fd >= 0);
        ASSERT(ftruncate(fd, (off_t) 1 << 30) == 0);
        for (off_t o = 64 << 10; o < (off_t) (2 * FSG_CONF_MAX); o += 64 << 10)
                ASSERT(pwrite(fd, "\n", 1, o) == 1);
        close(fd);

        before = max_rss_kib();
        ASSERT(fsg_conf_parse(f, 0, &rules, &n) == -EFBIG);
        ASSERT(max_rss_kib() - before < 64 << 10);
        fclose(f);
        fsg_rules_free(rules, n);

        /* The same file at the open: the same error, said the same way. */
        ASSERT(fsg_conf_parse_at(c, "/etc/modprobe.d/grow.conf", 0, &rules, &n) == -EFBIG);
        ASSERT(streq(fsg_strerror(EFBIG), "File too large"));
        fsg_context_free(c);
        free(path);
        scratch_root_free(root);
}

/* One line of 2 MiB, well within the file's cap: refused by name, not held in memory. */
TEST(line_too_long) {
        char *root = scratch_root_new(false), *big = malloc(2 << 20);
        FsgConfig *cfg = NULL;
        FsgContext *c = NULL;
        FsgError e = {};

        ASSERT(big);
        memset(big, 'x', (2 << 20) - 1);
        big[(2 << 20) - 1] = 0;
        memcpy(big, "install hfs ", 12);
        write_file(root, "etc/modprobe.d/long.conf", big);
        ASSERT_OK_E(fsg_context_new(root, NULL, &c, &e), &e);
        ASSERT(fsg_config_load(c, NULL, &cfg, &e) < 0);
        ASSERT(strstr(e.message, "long.conf: Line too long"));
        /* Continuations join into one line: held to the same length. */
        for (size_t i = 64 << 10; i < (2 << 20) - 1; i += 64 << 10)
                memcpy(big + i - 2, "\\\n", 2);
        write_file(root, "etc/modprobe.d/long.conf", big);
        ASSERT(fsg_config_load(c, NULL, &cfg, &e) < 0);
        ASSERT(strstr(e.message, "long.conf: Line too long"));
        fsg_context_free(c);
        free(big);
        scratch_root_free(root);
}

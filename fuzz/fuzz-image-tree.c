/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The offline path over a hostile image: the input is a small tree (files, directories,
 * symlinks, FIFOs, huge sparse files, device nodes) built under a scratch root, then the
 * state is built and a few changes planned and applied on it. Invariants: it returns (a FIFO
 * or /dev/zero must not hang it: libFuzzer's -timeout catches that), and nothing outside the
 * root appears, changes or goes.
 *
 * Input: entries of [kind][place][path NUL][content NUL], then nothing more. place picks a
 * directory fsgate reads or writes, path is appended to it. A symlink's content is its target;
 * an absolute target is rewritten to point into the sentinel tree around the root (so that an
 * escape would land there, never on the host), and ".." is rationed so that no string
 * resolution can climb out of the sentinel either. The first byte of the input picks the
 * changes made. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <ftw.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include "store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The root sits this deep below the sentinel: deeper than all ".." an input may hold. */
#define DEPTH 24
#define MAX_DOTDOT 20
#define MAX_ENTRIES 32

static char sentinel[64], root[256];

static const char * const places[] = {
        "etc/modprobe.d/", "run/modprobe.d/", "usr/lib/modprobe.d/", "lib/modprobe.d/",
        "usr/local/lib/modprobe.d/", "proc/", "usr/lib/modules/0.0-fuzz/", "", "etc/", "usr/lib/",
        "dev/", "run/",
};

static void write_at(const char *path, const char *content) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, content, strlen(content)) != (ssize_t) strlen(content))
                abort();
        close(fd);
}

static int remove_any(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) remove(path);
        return 0;
}

/* A crash leaves the tree for a look; a normal exit removes it. */
static void teardown(void) {
        (void) nftw(sentinel, remove_any, 16, FTW_PHYS | FTW_DEPTH | FTW_MOUNT);
}

/* The sentinel: foreign files where an escaping write would go, at the top and beside every
 * directory on the way down to the root. */
static void setup(void) {
        char p[512];
        size_t l;

        snprintf(sentinel, sizeof(sentinel), "/tmp/fsgate-fuzz-image-XXXXXX");
        if (!mkdtemp(sentinel))
                abort();
        l = (size_t) snprintf(root, sizeof(root), "%s", sentinel);
        for (int i = 0; i < DEPTH; i++) {
                l += (size_t) snprintf(root + l, sizeof(root) - l, "/d");
                if (mkdir(root, 0755) < 0)
                        abort();
        }
        l += (size_t) snprintf(root + l, sizeof(root) - l, "/root");
        if (mkdir(root, 0755) < 0)
                abort();
        for (const char *d = "etc/modprobe.d"; d; d = streq(d, "etc/modprobe.d") ? "run/modprobe.d" : NULL) {
                snprintf(p, sizeof(p), "%s/%.3s", sentinel, d);
                (void) mkdir(p, 0755);
                snprintf(p, sizeof(p), "%s/%s", sentinel, d);
                (void) mkdir(p, 0755);
                snprintf(p, sizeof(p), "%s/%s/60-blacklist_fs-hfs.conf", sentinel, d);
                write_at(p, "# someone else's\nblacklist hfs\n");
                snprintf(p, sizeof(p), "%s/%s/" FSG_TEMP_PREFIX "0", sentinel, d);
                write_at(p, "# not fsgate's\n");
        }
        snprintf(p, sizeof(p), "%s/60-blacklist_fs-minix.conf", sentinel);
        write_at(p, "# by hand\n");
        atexit(teardown);
}

/* Everything under the sentinel but the root: names, inodes, sizes, mtimes (a directory's
 * changes with every entry made or removed in it). */
static uint64_t fingerprint;
static int fingerprint_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        size_t rl = strlen(root);
        uint64_t h = 1469598103934665603ULL;

        if (strncmp(path, root, rl) == 0 && (path[rl] == 0 || path[rl] == '/'))
                return 0;
        for (const char *s = path; *s; s++)
                h = (h ^ (uint8_t) *s) * 1099511628211ULL;
        h ^= (uint64_t) st->st_ino * 31 + (uint64_t) st->st_size * 131 + (uint64_t) st->st_mode * 7 +
             (uint64_t) st->st_mtim.tv_sec * 1000000007ULL + (uint64_t) st->st_mtim.tv_nsec;
        fingerprint += h * 2654435761ULL;
        return 0;
}

static uint64_t sentinel_fingerprint(void) {
        fingerprint = 0;
        if (nftw(sentinel, fingerprint_one, 16, FTW_PHYS | FTW_MOUNT) < 0)
                abort();
        return fingerprint;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        if (ftw->level > 0)
                (void) remove(path);
        return 0;
}

static void clear_root(void) {
        /* etc/modprobe.d and run/modprobe.d are left for the input (a symlink, say) or for
         * fsgate to make. */
        static const char * const dirs[] = { "etc", "run", "usr", "usr/lib", "usr/lib/modprobe.d", "proc",
                                             "usr/lib/modules", "usr/lib/modules/0.0-fuzz" };
        char p[512];

        /* Depth first, never following a symlink: only what is below the root goes. */
        if (nftw(root, remove_one, 16, FTW_PHYS | FTW_DEPTH | FTW_MOUNT) < 0)
                abort();
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                snprintf(p, sizeof(p), "%s/%s", root, dirs[i]);
                (void) mkdir(p, 0755);
        }
        snprintf(p, sizeof(p), "%s/usr/lib/modprobe.d/60-blacklist_fs-hfs.conf", root);
        write_at(p, "blacklist hfs\n");
        snprintf(p, sizeof(p), "%s/usr/lib/modprobe.d/60-blacklist_fs-minix.conf", root);
        write_at(p, "");
}

/* The directory an entry goes in, made as needed, never through a symlink: the harness must
 * not escape the root itself. Returns an fd or -1 (the entry is skipped). */
static int entry_dir(char *rel, char **ret_name) {
        struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
        int dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC), fd;
        char *save = NULL, *comp, *next;

        comp = strtok_r(rel, "/", &save);
        while (dfd >= 0 && comp && (next = strtok_r(NULL, "/", &save))) {
                if (streq(comp, ".") || streq(comp, "..")) {
                        close(dfd);
                        return -1;
                }
                (void) mkdirat(dfd, comp, 0755);
                fd = (int) syscall(SYS_openat2, dfd, comp, &how, sizeof(how));
                close(dfd);
                dfd = fd;
                comp = next;
        }
        if (dfd < 0 || !comp || streq(comp, ".") || streq(comp, "..")) {
                if (dfd >= 0)
                        close(dfd);
                return -1;
        }
        *ret_name = comp;
        return dfd;
}

/* A new regular file name in dfd, of mode, holding content. */
static void new_file(int dfd, const char *name, const char *content, mode_t mode) {
        int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);

        if (fd >= 0) {
                (void) write(fd, content, strlen(content));
                close(fd);
        }
}

static void make_entry(uint8_t kind, const char *path, const char *content, unsigned *dotdot) {
        char rel[512], target[1024];
        char *name;
        int dfd, fd;

        snprintf(rel, sizeof(rel), "%s%s", places[kind >> 4 < ELEMENTSOF(places) ? kind >> 4 : 0], path);
        dfd = entry_dir(rel, &name);
        if (dfd < 0)
                return;
        switch ((kind & 0xf) % 7) {
        case 0:
                new_file(dfd, name, content, 0644);
                break;
        case 1:
                (void) mkdirat(dfd, name, 0755);
                break;
        case 2: {
                unsigned n = 0;
                for (const char *s = content; (s = strstr(s, "..")); s += 2)
                        n++;
                if (*dotdot + n > MAX_DOTDOT)
                        break;
                *dotdot += n;
                snprintf(target, sizeof(target), "%s%s", content[0] == '/' ? sentinel : "", content);
                (void) symlinkat(target, dfd, name);
                break;
        }
        case 3:
                (void) mkfifoat(dfd, name, 0644);
                break;
        case 4:
                fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
                if (fd >= 0) {
                        (void) ftruncate(fd, (off_t) (content[0] ? FSG_CONF_MAX : FSG_TABLE_MAX) + 1);
                        close(fd);
                }
                break;
        case 5: /* /dev/zero or /dev/null, where we may make them */
                (void) mknodat(dfd, name, S_IFCHR | 0666, makedev(1, content[0] ? 5 : 3));
                break;
        case 6: /* mode 0: unreadable but to root */
                new_file(dfd, name, content, 0);
                break;
        }
        close(dfd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const struct {
                FsgOp op;
                const char *module;
                uint64_t flags;
        } changes[] = {
                { FSG_OP_ALLOW, "hfs", 0 }, { FSG_OP_RESET, "hfs", 0 }, { FSG_OP_DENY, "minix", FSG_FLAG_FORCE },
                { FSG_OP_RESET, "minix", 0 }, { FSG_OP_ALLOW, "hfs", FSG_FLAG_RUNTIME },
                { FSG_OP_DENY, "minix", FSG_FLAG_RUNTIME }, { FSG_OP_RESET, "hfs", FSG_FLAG_RUNTIME },
                { FSG_OP_DENY, "hfs", 0 },
        };
        _cleanup_free_ char *buf = NULL;
        FsgContext *c = NULL;
        FsgState *s = NULL;
        FsgError e = {};
        unsigned dotdot = 0, n = 0;
        uint64_t before;
        size_t i = 1;

        if (!sentinel[0])
                setup();
        if (size < 1)
                return 0;
        clear_root();
        before = sentinel_fingerprint();

        /* NUL-terminated copies of path and content, however the input ends. */
        buf = malloc(size + 2);
        if (!buf)
                abort();
        memcpy(buf, data, size);
        buf[size] = buf[size + 1] = 0;
        while (i + 1 < size && n++ < MAX_ENTRIES) {
                uint8_t kind = (uint8_t) buf[i];
                const char *path = buf + i + 1, *content = path + strlen(path) + 1;

                if ((size_t) (content - buf) > size)
                        content = buf + size + 1;
                make_entry(kind, path, content, &dotdot);
                i = (size_t) (content - buf) + strlen(content) + 1;
        }

        if (fsg_context_new(root, "0.0-fuzz", &c, &e) < 0)
                goto check;
        if (fsg_state_build(c, NULL, &s, &e) == 0) {
                for (size_t j = 0; j < s->n; j++)
                        if (!s->entries[j].module || !s->entries[j].deciding_file)
                                abort();
                fsg_state_unref(s);
        }
        for (size_t j = 0; j < ELEMENTSOF(changes); j++) {
                FsgPlan p;
                if (!(data[0] & (1u << j)))
                        continue;
                e = (FsgError) {};
                if (fsg_plan(c, changes[j].op, changes[j].module, changes[j].flags, &p, &e) == 0)
                        (void) fsg_apply(c, &p, &e);
                if (e.code != FSG_OK && !e.message[0])
                        abort(); /* every error says something */
        }
        fsg_context_free(c);
check:
        if (sentinel_fingerprint() != before) {
                fprintf(stderr, "something outside the image root %s changed\n", root);
                abort();
        }
        return 0;
}

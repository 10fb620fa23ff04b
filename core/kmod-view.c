/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <fcntl.h>
#include <libkmod.h>
#include <sys/stat.h>

#include "kmod-view.h"
#include "strv.h"

/* What libkmod 30 opens in its module directory: index_files[] of libkmod.c, each with
 * ".bin" (lookups, each time), and FSG_KMOD_SOFTDEP as configuration (once). */
static const char * const index_names[] = {
        "modules.dep.bin", "modules.alias.bin", "modules.symbols.bin", "modules.builtin.alias.bin",
        "modules.builtin.bin",
};

/* Our configuration file in the directory; a "modules." name, which no link of ours has. */
#define VIEW_CONF "modules.fsgate.conf"

#define PROC_FD_MAX sizeof("/proc/self/fd/") + 12

typedef struct KmodView {
        const FsgContext *c;
        char *dir;                     /* made by us, 0700 */
        int dir_fd;
        char dirname[PROC_FD_MAX];     /* what libkmod takes for the tree: dir_fd, so that
                                        * nobody can rename another directory in its place */
        int fds[ELEMENTSOF(index_names) + 1]; /* the checked indexes and the tree: open while
                                        * libkmod may open them again */
        size_t n_fds;
} KmodView;

static void log_silent(void *data, int priority, const char *file, int line, const char *fn,
                       const char *format, va_list args) {
}

static void view_free(KmodView *v) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        int fd;

        if (!v)
                return;
        if (v->dir_fd >= 0 && (fd = openat(v->dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
                d = fdopendir(fd);
                if (!d)
                        close(fd);
                while (d && (de = readdir(d)))
                        if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                                (void) unlinkat(v->dir_fd, de->d_name, 0);
        }
        if (v->dir)
                (void) rmdir(v->dir);
        if (v->dir_fd >= 0)
                close(v->dir_fd);
        while (v->n_fds > 0)
                close(v->fds[--v->n_fds]);
        free(v->dir);
        free(v);
}

static void view_freep(KmodView **v) {
        view_free(*v);
}

void fsg_kmod_unrefp(struct kmod_ctx **k) {
        KmodView *v;

        if (!*k)
                return;
        v = kmod_get_userdata(*k);
        if (!kmod_unref(*k))
                view_free(v);
}

static int view_new(const FsgContext *c, KmodView **ret, FsgError *e) {
        _cleanup_(view_freep) KmodView *v = calloc(1, sizeof(KmodView));
        const char *tmp = secure_getenv("TMPDIR") ?: "/tmp";

        if (!v)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        v->c = c;
        v->dir_fd = -1;
        if (asprintf(&v->dir, "%s/fsgate-kmod.XXXXXX", tmp) < 0) {
                v->dir = NULL;
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        }
        if (!mkdtemp(v->dir)) {
                int r = fsg_error(e, FSG_ERR_FAILED, "Failed to make a directory for libkmod in %s: %s", tmp, strerror(errno));
                free(TAKE_PTR(v->dir));
                return r;
        }
        v->dir_fd = open(v->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (v->dir_fd < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Failed to open %s: %s", v->dir, strerror(errno));
        snprintf(v->dirname, sizeof(v->dirname), "/proc/self/fd/%d", v->dir_fd);
        /* Without /proc (a bare chroot) no name could lead to what we checked. */
        if (access(v->dirname, F_OK) < 0)
                return fsg_error(e, FSG_ERR_FAILED, "libkmod reads an image only through /proc/self/fd: %s: %s",
                                       v->dirname, strerror(errno));
        *ret = TAKE_PTR(v);
        return 0;
}

/* Each index, opened inside the root and checked, under its name in our directory. */
static int link_indexes(KmodView *v, FsgError *e) {
        const FsgContext *c = v->c;

        for (size_t i = 0; i < ELEMENTSOF(index_names); i++) {
                char target[PROC_FD_MAX];
                int fd = fsg_moddir_open(c, index_names[i], O_RDONLY, e);

                if (fd == -ENOENT)
                        continue;
                if (fd < 0)
                        return fd;
                v->fds[v->n_fds++] = fd;
                snprintf(target, sizeof(target), "/proc/self/fd/%d", fd);
                if (symlinkat(target, v->dir_fd, index_names[i]) < 0)
                        return fsg_error(e, FSG_ERR_FAILED, "Failed to link %s/%s: %s", v->dir, index_names[i], strerror(errno));
        }
        return 0;
}

/* The rest of the tree, for the module files libkmod names: modules.dep says
 * "kernel/fs/hfs/hfs.ko", libkmod makes that DIRNAME/kernel/fs/hfs/hfs.ko and stat()s it (a
 * dependency that is not there is dropped). So every top-level entry but the tree's own
 * "modules.*" files is a link into the directory opened inside the root. fsgate itself looks
 * module files up inside the root (fsg_kmod_module_file_exists()). */
static int link_tree(KmodView *v, FsgError *e) {
        const FsgContext *c = v->c;
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        int tree, fd;

        tree = fsg_open_in_root(c, c->moddir_in_root, O_RDONLY | O_DIRECTORY);
        if (tree == -ENOENT)
                return 0;
        if (tree < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Failed to read %s%s: %s", c->root, c->moddir_in_root,
                                 fsg_strerror(-tree));
        v->fds[v->n_fds++] = tree;
        fd = openat(tree, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || !(d = fdopendir(fd))) {
                if (fd >= 0)
                        close(fd);
                return fsg_error(e, FSG_ERR_FAILED, "Failed to read %s%s: %s", c->root, c->moddir_in_root, strerror(errno));
        }
        while ((errno = 0, de = readdir(d))) {
                _cleanup_free_ char *target = NULL;

                if (streq(de->d_name, ".") || streq(de->d_name, "..") || strncmp(de->d_name, "modules.", 8) == 0)
                        continue;
                if (asprintf(&target, "/proc/self/fd/%d/%s", tree, de->d_name) < 0)
                        return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
                if (symlinkat(target, v->dir_fd, de->d_name) < 0)
                        return fsg_error(e, FSG_ERR_FAILED, "Failed to link %s/%s: %s", v->dir, de->d_name, strerror(errno));
        }
        if (errno > 0)
                return fsg_error(e, FSG_ERR_FAILED, "Failed to read %s%s: %s", c->root, c->moddir_in_root, strerror(errno));
        return 0;
}

/* The tree's modules.softdep, which kmod reads as configuration: its bytes, or none. */
static int read_softdep(const FsgContext *c, char **ret, size_t *ret_len, FsgError *e) {
        _cleanup_free_ char *abs = NULL;
        int r;

        *ret = NULL;
        *ret_len = 0;
        if (!c->moddir_in_root)
                return 0;
        if (asprintf(&abs, "%s/%s", c->moddir_in_root, FSG_KMOD_SOFTDEP) < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        r = fsg_read_regular(c, abs, FSG_CONF_MAX, ret, ret_len);
        if (r == -ENOENT || r == -EACCES || r == -EPERM)
                return 0; /* kmod goes on without a file it cannot open */
        if (r < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Failed to read %s%s: %s", c->root, abs, fsg_strerror(-r));
        return 0;
}

/* One file with everything kmod would read as configuration, in its order: cfg's files by
 * name with modules.softdep among them. */
static int write_conf(KmodView *v, const FsgConfig *cfg, FsgError *e) {
        _cleanup_free_ char *softdep = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        const char *text = cfg->kmod_text ?: "";
        size_t softdep_len, at = cfg->kmod_softdep_at, len = cfg->kmod_len;
        int fd, r;

        r = read_softdep(v->c, &softdep, &softdep_len, e);
        if (r < 0)
                return r;
        fd = openat(v->dir_fd, VIEW_CONF, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0 || !(f = fdopen(fd, "we"))) {
                if (fd >= 0)
                        close(fd);
                return fsg_error(e, FSG_ERR_FAILED, "Failed to write %s/%s: %s", v->dir, VIEW_CONF, strerror(errno));
        }
        if (fwrite(text, 1, at, f) != at || (softdep && fsg_conf_write_for_kmod(f, softdep, softdep_len) < 0) ||
            fwrite(text + at, 1, len - at, f) != len - at || fclose(TAKE_PTR(f)) == EOF)
                return fsg_error(e, FSG_ERR_FAILED, "Failed to write %s/%s", v->dir, VIEW_CONF);
        return 0;
}

/* An image: everything through our directory. */
static int new_for_image(const FsgContext *c, const FsgConfig *cfg, struct kmod_ctx **ret, FsgError *e) {
        _cleanup_(view_freep) KmodView *v = NULL;
        char conf[PROC_FD_MAX + sizeof("/" VIEW_CONF)];
        const char *paths[] = { conf, NULL };
        struct kmod_ctx *k;
        int r;

        r = view_new(c, &v, e);
        if (r >= 0 && c->moddir_in_root)
                r = link_indexes(v, e);
        if (r >= 0 && c->moddir_in_root)
                r = link_tree(v, e);
        if (r >= 0)
                r = write_conf(v, cfg, e);
        if (r < 0)
                return r;
        snprintf(conf, sizeof(conf), "%s/%s", v->dirname, VIEW_CONF);
        k = kmod_new(v->dirname, paths);
        (void) unlinkat(v->dir_fd, VIEW_CONF, 0); /* read once, in kmod_new() */
        if (!k)
                return fsg_error(e, FSG_ERR_FAILED, "Failed to set up libkmod");
        kmod_set_userdata(k, TAKE_PTR(v));
        *ret = k;
        return 0;
}

/* The config list kmod reads when there is no file to read: an empty list would make it fall
 * back to the host's default directories. */
static const char * const no_config[] = { "/dev/null/none", NULL };

/* The running system: root's own names, given as they are. */
static int new_for_host(const FsgContext *c, const FsgConfig *cfg, struct kmod_ctx **ret, FsgError *e) {
        _cleanup_strv_free_ char **paths = fsg_config_kmod_paths(cfg);
        struct kmod_ctx *k;

        if (!paths)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        /* kmod inserts each file into its list sorted by name, walking the list from the
         * start to the first name not smaller: given in descending order every insertion stops
         * at the first element, and reading n files costs O(n), not O(n²) (a third of a second
         * at 10 000 files). The names are distinct, so the order changes nothing else. */
        for (size_t i = 0, n = strv_length(paths); i < n / 2; i++) {
                char *tmp = paths[i];
                paths[i] = paths[n - 1 - i];
                paths[n - 1 - i] = tmp;
        }
        k = kmod_new(c->moddir ?: "/usr/lib/modules/none", paths[0] ? (const char * const *) paths : no_config);
        if (!k)
                return fsg_error(e, FSG_ERR_FAILED, "Failed to set up libkmod");
        *ret = k;
        return 0;
}

int fsg_kmod_new(const FsgContext *c, const FsgConfig *cfg, struct kmod_ctx **ret, FsgError *e) {
        int r = c->root_fd >= 0 ? new_for_image(c, cfg, ret, e) : new_for_host(c, cfg, ret, e);

        if (r >= 0)
                kmod_set_log_fn(*ret, log_silent, NULL);
        return r;
}

int fsg_kmod_new_plain(const FsgContext *c, struct kmod_ctx **ret, FsgError *e) {
        static const FsgConfig no_files = {};

        *ret = NULL;
        if (!c->moddir)
                return 0;
        return fsg_kmod_new(c, &no_files, ret, e);
}

char *fsg_kmod_module_path(struct kmod_ctx *k, struct kmod_module *m) {
        const KmodView *v = kmod_get_userdata(k);
        const char *p = kmod_module_get_path(m);
        size_t l;
        char *r;

        if (!p)
                return NULL;
        if (!v)
                return strdup(p);
        /* Ours plus the path modules.dep gives, relative to the tree; an absolute one is the
         * system's own already. */
        l = strlen(v->dirname);
        if (strncmp(p, v->dirname, l) != 0 || p[l] != '/' || !v->c->moddir_in_root)
                return strdup(p);
        return asprintf(&r, "%s%s", v->c->moddir_in_root, p + l) < 0 ? NULL : r;
}

bool fsg_kmod_module_file_exists(struct kmod_ctx *k, struct kmod_module *m) {
        const KmodView *v = kmod_get_userdata(k);
        _cleanup_free_ char *p = NULL;
        _cleanup_close_ int fd = -1;

        if (!v) {
                const char *path = kmod_module_get_path(m);
                return path && access(path, F_OK) == 0;
        }
        p = fsg_kmod_module_path(k, m);
        fd = p ? fsg_open_in_root(v->c, p, O_PATH) : -1;
        return fd >= 0;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>

#include "alloc-util.h"
#include "modtree.h"
#include "name.h"
#include "strv.h"

static int add_type(FsgModTree *t, const char *type, char *module) {
        if (!fsg_name_is_valid(type) || !fsg_name_is_valid(module))
                return 0;
        fsg_name_normalize(module);
        if (strv_contains(t->types, type))
                return 0; /* first alias wins, as in modules.alias.bin */
        if (strv_extend(&t->types, type) < 0 || strv_extend(&t->modules, module) < 0)
                return -ENOMEM;
        t->n++;
        return 0;
}

/* kmod itself answers lookups from the .bin indexes; the text files hold the same
 * aliases and are the only way to enumerate every "fs-" one. */
static int read_fs_aliases(FsgModTree *t, FILE *f) {
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        ssize_t l;

        while ((l = fsg_read_line(f, '\n', FSG_LINE_MAX, &line, &cap)) > 0) {
                char type[128], module[128];
                if (sscanf(line, "alias fs-%127s %127s", type, module) != 2)
                        continue;
                int r = add_type(t, type, module);
                if (r < 0)
                        return r;
        }
        return (int) l;
}

static int read_builtin(FsgModTree *t, FILE *f) {
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        ssize_t l;

        while ((l = fsg_read_line(f, '\n', FSG_LINE_MAX, &line, &cap)) > 0) {
                char *base = strrchr(line, '/'), *dot;
                bool fs = strncmp(line, "kernel/fs/", strlen("kernel/fs/")) == 0;
                base = base ? base + 1 : line;
                dot = strstr(base, ".ko");
                if (!dot)
                        continue;
                *dot = 0;
                fsg_name_normalize(base);
                if (strv_extend(&t->builtin, base) < 0 || (fs && strv_extend(&t->builtin_fs, base) < 0))
                        return -ENOMEM;
        }
        return (int) l;
}

/* depmod writes the aliases of built-in code only to the modules.builtin.alias.bin index;
 * its source, modules.builtin.modinfo, holds them as NUL-terminated "MODULE.alias=ALIAS"
 * records (debugfs, tracefs on Debian), and names code modules.builtin does not list
 * because it can never be a module. */
static int read_builtin_modinfo(FsgModTree *t, FILE *f) {
        _cleanup_free_ char *rec = NULL;
        size_t cap = 0;
        ssize_t l;

        while ((l = fsg_read_line(f, 0, FSG_LINE_MAX, &rec, &cap)) > 0) {
                char *eq = strstr(rec, ".alias=fs-");
                if (!eq || memchr(rec, '/', eq - rec))
                        continue;
                *eq = 0;
                int r = add_type(t, eq + strlen(".alias=fs-"), rec);
                if (r >= 0)
                        r = strv_extend_unique(&t->builtin, rec);
                if (r < 0)
                        return r;
        }
        return (int) l;
}

/* On the running system libkmod opens these itself, by name, and blocks on a FIFO: each must
 * be a regular file before a kmod context sees the tree. (In an image it opens none of them
 * by name: kmod-view.h.) */
static int check_kmod_indexes(const FsgContext *c, FsgError *e) {
        static const char * const names[] = {
                "modules.dep.bin", "modules.alias.bin", "modules.symbols.bin", "modules.builtin.bin",
                "modules.builtin.alias.bin", "modules.softdep", "modules.weakdep",
        };

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                int fd = fsg_moddir_open(c, names[i], O_PATH, e);

                if (fd < 0 && fd != -ENOENT)
                        return fd;
                safe_close(fd);
        }
        return 0;
}

int fsg_modtree_load(const FsgContext *c, FsgModTree **ret, FsgError *e) {
        static const struct {
                const char *name;
                int (*read)(FsgModTree *t, FILE *f);
        } files[] = {
                { "modules.alias",           read_fs_aliases },
                { "modules.builtin",         read_builtin },
                { "modules.builtin.modinfo", read_builtin_modinfo },
        };
        _cleanup_(fsg_modtree_freep) FsgModTree *t = calloc(1, sizeof(FsgModTree));
        int r;

        if (!t)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        if (c->moddir_in_root && c->root_fd < 0) {
                r = check_kmod_indexes(c, e);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; c->moddir_in_root && i < ELEMENTSOF(files); i++) {
                _cleanup_free_ char *p = NULL;
                _cleanup_fclose_ FILE *f = NULL;

                if (asprintf(&p, "%s/%s", c->moddir_in_root, files[i].name) < 0)
                        return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
                r = fsg_fopen_regular(c, p, FSG_TABLE_MAX, &f);
                if (r == -ENOENT)
                        continue;
                if (r < 0)
                        return fsg_error(e, FSG_ERR_FAILED, "Failed to read %s%s: %s", c->root, p, fsg_strerror(-r));
                r = files[i].read(t, f);
                if (r < 0)
                        return fsg_error(e, FSG_ERR_FAILED, "Failed to read %s%s: %s", c->root, p, fsg_strerror(-r));
        }
        /* Asked for every module kmod's probe walks through: a sorted set. */
        strv_sort_unique(t->builtin);
        strv_sort_unique(t->builtin_fs);
        t->n_builtin = strv_length(t->builtin);
        t->n_builtin_fs = strv_length(t->builtin_fs);
        *ret = TAKE_PTR(t);
        return 0;
}

bool fsg_modtree_is_builtin(const FsgModTree *t, const char *module) {
        return strv_sorted_contains(t->builtin, t->n_builtin, module);
}

bool fsg_modtree_is_builtin_fs(const FsgModTree *t, const char *module) {
        return strv_sorted_contains(t->builtin_fs, t->n_builtin_fs, module);
}

FsgModTree *fsg_modtree_free(FsgModTree *t) {
        if (!t)
                return NULL;
        strv_free_many(t->types, t->modules, t->builtin, t->builtin_fs);
        free(t);
        return NULL;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE

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
static int read_fs_aliases(FsgModTree *t, const char *path) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;

        if (!f)
                return errno == ENOENT ? 0 : -errno;
        while (getline(&line, &cap, f) >= 0) {
                char type[128], module[128];
                if (sscanf(line, "alias fs-%127s %127s", type, module) != 2)
                        continue;
                int r = add_type(t, type, module);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int read_builtin(FsgModTree *t, const char *path) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;

        if (!f)
                return errno == ENOENT ? 0 : -errno;
        while (getline(&line, &cap, f) >= 0) {
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
        return 0;
}

/* depmod writes the aliases of built-in code only to the modules.builtin.alias.bin index;
 * its source, modules.builtin.modinfo, holds them as NUL-terminated "MODULE.alias=ALIAS"
 * records (debugfs, tracefs on Debian), and names code modules.builtin does not list
 * because it can never be a module. */
static int read_builtin_modinfo(FsgModTree *t, const char *path) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        _cleanup_free_ char *rec = NULL;
        size_t cap = 0;
        ssize_t l;

        if (!f)
                return errno == ENOENT ? 0 : -errno;
        while ((l = getdelim(&rec, &cap, 0, f)) > 0) {
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
        return 0;
}

int fsg_modtree_load(const FsgContext *c, FsgModTree **ret, FsgError *e) {
        static const struct {
                const char *name;
                int (*read)(FsgModTree *t, const char *path);
        } files[] = {
                { "modules.alias",           read_fs_aliases },
                { "modules.builtin",         read_builtin },
                { "modules.builtin.modinfo", read_builtin_modinfo },
        };
        _cleanup_(fsg_modtree_freep) FsgModTree *t = calloc(1, sizeof(FsgModTree));

        if (!t)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        for (size_t i = 0; c->moddir && i < ELEMENTSOF(files); i++) {
                _cleanup_free_ char *p = NULL;
                int r;

                if (asprintf(&p, "%s/%s", c->moddir, files[i].name) < 0)
                        return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
                r = files[i].read(t, p);
                if (r < 0)
                        return fsg_error_errno(e, -r, "Failed to read %s", p);
        }
        *ret = TAKE_PTR(t);
        return 0;
}

FsgModTree *fsg_modtree_free(FsgModTree *t) {
        if (!t)
                return NULL;
        strv_free(t->types);
        strv_free(t->modules);
        strv_free(t->builtin);
        strv_free(t->builtin_fs);
        free(t);
        return NULL;
}

/* Reads the given column of a whitespace-separated table file into a set. */
static int read_column(const FsgContext *c, const char *abs, int column, bool normalize, char ***ret) {
        _cleanup_free_ char *p = fsg_path(c, abs), *line = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_strv_free_ char **l = NULL;
        size_t cap = 0;

        if (!p)
                return -ENOMEM;
        f = fopen(p, "re");
        if (!f) {
                *ret = NULL;
                return errno == ENOENT ? 0 : -errno;
        }
        while (getline(&line, &cap, f) >= 0) {
                char *save = NULL, *w = strtok_r(line, " \t\n", &save);
                for (int i = 0; w && i < column; i++)
                        w = strtok_r(NULL, " \t\n", &save);
                if (!w)
                        continue;
                if (normalize)
                        fsg_name_normalize(w);
                if (strv_extend_unique(&l, w) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

int fsg_read_loaded_modules(const FsgContext *c, char ***ret) {
        return read_column(c, "/proc/modules", 0, true, ret);
}

int fsg_read_mounted_types(const FsgContext *c, char ***ret) {
        return read_column(c, "/proc/mounts", 2, false, ret);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <libkmod.h>
#include <sys/stat.h>

#include "kmod-view.h"
#include "name.h"
#include "on-demand.h"
#include "profile.h"
#include "strv.h"

/* The "unused" computation: which filesystem modules this system uses, from what is loaded and
 * mounted, fstab, mount units, udev's database and the dependencies of all of them. */

typedef struct UsedSet {
        const FsgState *s;
        char **used;     /* "MODULE\tWHY", first reason only */
        bool in_mount;   /* reading a unit: inside its [Mount] section */
} UsedSet;

static bool used_has(const UsedSet *u, const char *module) {
        size_t l = strlen(module);

        for (char **w = u->used; w && *w; w++)
                if (strncmp(*w, module, l) == 0 && (*w)[l] == '\t')
                        return true;
        return false;
}

static int use_module(UsedSet *u, const char *module, const char *why) {
        char *w;

        if (used_has(u, module))
                return 0;
        if (asprintf(&w, "%s\t%s", module, why) < 0)
                return -ENOMEM;
        return strv_push(&u->used, w);
}

typedef struct UseType {
        UsedSet *u;
        const char *why;
} UseType;

static int use_type(const char *type, void *userdata) {
        const UseType *ut = userdata;
        const FsgEntry *x = fsg_state_find(ut->u->s, type);

        return x ? use_module(ut->u, x->module, ut->why) : 0;
}

/* A filesystem type as fstab, a mount unit or udev spells it (fsg_name_foreach_type_in_field()). */
static int use_types(UsedSet *u, const char *types, const char *why) {
        return fsg_name_foreach_type_in_field(types, use_type, &(UseType) { .u = u, .why = why });
}

typedef int (*LineFn)(UsedSet *u, const char *abs, char *line);

/* Calls fn for each line of abs, read inside the root. A missing file has no lines. */
static int read_lines(const FsgContext *c, const char *abs, UsedSet *u, LineFn fn) {
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        ssize_t n;
        int r = fsg_fopen_regular(c, abs, FSG_CONF_MAX, &f);

        if (r == -ENOENT || r == -EISDIR || r == -EBADFD || r == -EACCES)
                return 0; /* nothing a reader could use: no answer to give from it */
        if (r < 0)
                return r;
        while ((n = fsg_read_line(f, '\n', FSG_LINE_MAX, &line, &cap)) > 0) {
                r = fn(u, abs, line);
                if (r < 0)
                        return r;
        }
        return (int) n;
}

/* fstab(5): "SPEC FILE VFSTYPE OPTIONS FREQ PASSNO"; "auto" and "none" name no module. */
static int fstab_line(UsedSet *u, const char *abs, char *line) {
        char *save = NULL, *w = strtok_r(line, " \t\n", &save);
        char why[300];

        if (!w || *w == '#')
                return 0;
        if (!strtok_r(NULL, " \t\n", &save) || !(w = strtok_r(NULL, " \t\n", &save)))
                return 0;
        snprintf(why, sizeof(why), "named in %s", abs);
        return use_types(u, w, why);
}

/* A mount unit's (or its drop-in's) Type= in [Mount]. */
static int unit_line(UsedSet *u, const char *abs, char *line) {
        char *l = strstrip(line), why[300];

        if (*l == '[') {
                u->in_mount = strncmp(l, "[Mount]", 7) == 0;
                return 0;
        }
        if (!u->in_mount || strncmp(l, "Type=", 5) != 0)
                return 0;
        snprintf(why, sizeof(why), "the type of %s", abs);
        return use_types(u, strstrip(l + 5), why);
}

static int read_unit(const FsgContext *c, UsedSet *u, const char *dir, const char *name) {
        _cleanup_free_ char *abs = NULL;

        if (asprintf(&abs, "%s/%s", dir, name) < 0)
                return -ENOMEM;
        u->in_mount = false;
        return read_lines(c, abs, u, unit_line);
}

/* The mount units in dir, or in a drop-in directory its *.conf. A directory that is not there
 * holds no unit. */
static int scan_unit_dir(const FsgContext *c, UsedSet *u, const char *dir, bool drop_ins) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        int r = fsg_opendir(c, dir, &d);

        if (r < 0)
                return r == -ENOMEM ? r : 0;
        while ((de = readdir(d))) {
                _cleanup_free_ char *sub = NULL;

                if (de->d_name[0] == '.')
                        continue;
                r = 0;
                if (endswith(de->d_name, drop_ins ? ".conf" : ".mount"))
                        r = read_unit(c, u, dir, de->d_name);
                else if (!drop_ins && endswith(de->d_name, ".mount.d")) {
                        /* Drop-ins may set Type= too; the sub-directory is scanned like a unit. */
                        if (asprintf(&sub, "%s/%s", dir, de->d_name) < 0)
                                return -ENOMEM;
                        r = scan_unit_dir(c, u, sub, true);
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

static int udev_line(UsedSet *u, const char *abs, char *line) {
        char *l = strstrip(line), why[300];

        if (strncmp(l, "E:ID_FS_TYPE=", 13) != 0 || !l[13])
                return 0;
        snprintf(why, sizeof(why), "the type udev found on block device %s", strrchr(abs, '/') + 2);
        return use_types(u, l + 13, why);
}

/* udev's database (what sd-device reads): one file per device, "b MAJOR:MINOR" for block
 * devices, with ID_FS_TYPE from its blkid builtin. A device that is gone may leave its file
 * for a moment: where /sys is there, only present devices count. */
static int scan_udev(const FsgContext *c, UsedSet *u) {
        _cleanup_close_ int sys = fsg_open_dir(c, "/sys/dev/block", false);
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        int r = fsg_opendir(c, "/run/udev/data", &d);

        if (r < 0)
                return r == -ENOMEM ? r : 0;
        while ((de = readdir(d))) {
                _cleanup_free_ char *abs = NULL;
                struct stat st;

                if (de->d_name[0] != 'b' || !strchr(de->d_name, ':'))
                        continue;
                if (sys >= 0 && fstatat(sys, de->d_name + 1, &st, 0) < 0)
                        continue;
                if (asprintf(&abs, "/run/udev/data/%s", de->d_name) < 0)
                        return -ENOMEM;
                r = read_lines(c, abs, u, udev_line);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* What a kept module needs loaded first (modules.dep): with a hard deny, kmod would run the
 * dependency's install command and the kept module would not load either. */
static int use_dependencies(const FsgContext *c, UsedSet *u) {
        _cleanup_(fsg_kmod_unrefp) struct kmod_ctx *k = NULL;
        bool more = true;
        int r;

        r = fsg_kmod_new_plain(c, &k, NULL);
        if (r < 0 || !k)
                return r;
        while (more) {
                _cleanup_strv_free_ char **snapshot = NULL;

                more = false;
                for (char **w = u->used; w && *w; w++)
                        if (strv_push(&snapshot, strndup(*w, strcspn(*w, "\t"))) < 0)
                                return -ENOMEM;
                for (char **m = snapshot; m && *m; m++) {
                        struct kmod_module *mod = NULL;
                        struct kmod_list *deps, *it;
                        char why[128];

                        if (kmod_module_new_from_name(k, *m, &mod) < 0)
                                continue;
                        deps = kmod_module_get_dependencies(mod);
                        snprintf(why, sizeof(why), "a dependency of %s", *m);
                        kmod_list_foreach(it, deps) {
                                struct kmod_module *dm = kmod_module_get_module(it);
                                char name[FSG_NAME_MAX + 1];
                                const FsgEntry *x;

                                snprintf(name, sizeof(name), "%s", kmod_module_get_name(dm));
                                kmod_module_unref(dm);
                                fsg_name_normalize(name);
                                x = fsg_state_find_module(u->s, name);
                                if (x && !used_has(u, x->module)) {
                                        if (use_module(u, x->module, why) < 0) {
                                                kmod_module_unref_list(deps);
                                                kmod_module_unref(mod);
                                                return -ENOMEM;
                                        }
                                        more = true;
                                }
                        }
                        kmod_module_unref_list(deps);
                        kmod_module_unref(mod);
                }
        }
        return 0;
}

/* Where systemd reads mount units (and the generators' output, fstab's among them). */
static const char * const unit_dirs[] = {
        "/etc/systemd/system", "/run/systemd/system", "/run/systemd/generator", "/run/systemd/generator.early",
        "/run/systemd/generator.late", "/usr/local/lib/systemd/system", "/usr/lib/systemd/system",
        "/lib/systemd/system",
};

/* The types people need on demand (core/on-demand.h): kept like used ones, so that what they
 * need (vfat's fat, nfs's sunrpc) is kept with them. */
static int use_on_demand(UsedSet *u) {
        for (size_t i = 0; i < fsg_on_demand_table_n; i++) {
                const FsgEntry *x = fsg_state_find_module(u->s, fsg_on_demand_table[i].module);
                int r = x ? use_module(u, x->module, "needed on demand") : 0;

                if (r < 0)
                        return r;
        }
        return 0;
}

int fsg_profile_unused(const FsgContext *c, const FsgState *s, bool include_on_demand, char ***ret,
                       char ***ret_used, FsgError *e) {
        _cleanup_strv_free_ char **unused = NULL;
        UsedSet u = { .s = s };
        int r = 0;

        for (size_t i = 0; r >= 0 && i < s->n; i++) {
                const FsgEntry *x = &s->entries[i];
                if (x->builtin)
                        r = use_module(&u, x->module, "built into the kernel");
                else if (x->mounted)
                        r = use_module(&u, x->module, "mounted");
                else if (x->loaded)
                        r = use_module(&u, x->module, "loaded");
        }
        if (r >= 0)
                r = read_lines(c, "/etc/fstab", &u, fstab_line);
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(unit_dirs); i++)
                r = scan_unit_dir(c, &u, unit_dirs[i], false);
        if (r >= 0)
                r = scan_udev(c, &u);
        if (r >= 0 && !include_on_demand)
                r = use_on_demand(&u);
        if (r >= 0)
                r = use_dependencies(c, &u);
        if (r < 0) {
                strv_free(u.used);
                return fsg_error(e, FSG_ERR_FAILED, "Failed to find out which filesystems are in use: %s",
                                 fsg_strerror(-r));
        }
        for (size_t i = 0; i < s->n; i++) {
                const FsgEntry *x = &s->entries[i];
                /* Only what a module file could bring in: nothing else is there to deny. */
                if (!x->available || used_has(&u, x->module))
                        continue;
                if (strv_extend(&unused, x->module) < 0) {
                        strv_free(u.used);
                        return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
                }
        }
        if (ret_used) {
                /* "MODULE\tWHY" becomes "MODULE: WHY", one byte longer: a new string. */
                for (char **w = u.used; w && *w; w++) {
                        char *tab = strchr(*w, '\t'), *t;

                        if (!tab)
                                continue;
                        if (asprintf(&t, "%.*s: %s", (int) (tab - *w), *w, tab + 1) < 0) {
                                strv_free(u.used);
                                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
                        }
                        free(*w);
                        *w = t;
                }
                strv_sort(u.used);
                *ret_used = u.used;
        } else
                strv_free(u.used);
        *ret = TAKE_PTR(unused);
        return 0;
}

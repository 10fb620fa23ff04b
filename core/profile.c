/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <fcntl.h>
#include <libkmod.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "autoload.h"
#include "config.h"
#include "conffile.h"
#include "lock.h"
#include "modtree.h"
#include "name.h"
#include "profile.h"
#include "strv.h"

#define PROFILE_SUFFIX ".profile"
#define PROFILE_NAME_MAX 32
#define PROFILE_FILE_MAX (UINT64_C(64) << 10)

const char *fsg_profile_dir(void) {
        const char *d = secure_getenv("FSGATE_PROFILE_DIR");
        return d && *d ? d : FSGATE_PROFILE_DIR;
}

/* A profile name becomes a file name: nothing that could leave the directory. */
static bool profile_name_is_valid(const char *s) {
        size_t n = 0;

        for (; s[n]; n++)
                if (n >= PROFILE_NAME_MAX || !((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9') ||
                                               s[n] == '-' || s[n] == '_'))
                        return false;
        return n > 0;
}

int fsg_profile_list(char ***ret, FsgError *e) {
        _cleanup_closedir_ DIR *d = opendir(fsg_profile_dir());
        _cleanup_strv_free_ char **names = NULL;
        struct dirent *de;

        if (!d)
                return fsg_error_errno(e, errno, "Failed to open the profile directory %s", fsg_profile_dir());
        while ((de = readdir(d))) {
                size_t l = strlen(de->d_name);
                _cleanup_free_ char *n = NULL;

                if (l <= strlen(PROFILE_SUFFIX) || !streq(de->d_name + l - strlen(PROFILE_SUFFIX), PROFILE_SUFFIX))
                        continue;
                n = strndup(de->d_name, l - strlen(PROFILE_SUFFIX));
                if (!n)
                        return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
                if (profile_name_is_valid(n) && strv_push(&names, TAKE_PTR(n)) < 0)
                        return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        }
        strv_sort(names);
        *ret = TAKE_PTR(names);
        return 0;
}

FsgProfile *fsg_profile_free(FsgProfile *p) {
        if (!p)
                return NULL;
        free(p->name);
        free(p->description);
        free(p->compute);
        strv_free(p->modules);
        free(p);
        return NULL;
}

static char *strip(char *s) {
        char *end;

        s += strspn(s, " \t");
        end = s + strlen(s);
        while (end > s && strchr(" \t\r\n", end[-1]))
                *--end = 0;
        return s;
}

static int no_such_profile(const char *name, FsgError *e) {
        _cleanup_strv_free_ char **names = NULL;
        char list[256] = "";

        if (fsg_profile_list(&names, NULL) >= 0)
                for (char **n = names; n && *n; n++) {
                        size_t l = strlen(list);
                        snprintf(list + l, sizeof(list) - l, "%s%s", l ? ", " : "", *n);
                }
        return fsg_error(e, FSG_ERR_NO_SUCH_PROFILE, "No profile named %.64s%s; the profiles are: %s",
                         profile_name_is_valid(name) ? name : "like that", "", *list ? list : "(none installed)");
}

/* The file format: "Key=value" lines, '#' comments. Description=, Hard=yes|no, Modules=
 * (space-separated, may repeat), Compute=unused. Unknown keys are an error: a profile that
 * says more than fsgate understands must not be applied as if it said less. */
static int profile_read(const char *name, FsgProfile **ret, FsgError *e) {
        _cleanup_(fsg_profile_freep) FsgProfile *p = NULL;
        _cleanup_free_ char *path = NULL, *line = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_close_ int fd = -1;
        size_t cap = 0;
        unsigned lineno = 0;
        struct stat st;
        ssize_t n;

        if (!profile_name_is_valid(name))
                return no_such_profile(name, e);
        if (asprintf(&path, "%s/%s" PROFILE_SUFFIX, fsg_profile_dir(), name) < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT)
                return no_such_profile(name, e);
        if (fd < 0)
                return fsg_error_errno(e, errno, "Failed to open %s", path);
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t) st.st_size > PROFILE_FILE_MAX)
                return fsg_error(e, FSG_ERR_FAILED, "%s is not a regular file of at most 64 KiB", path);
        /* Held to the size while it is read, too: the file may grow after the check. */
        if (fsg_fdopen_capped(TAKE_FD(fd), PROFILE_FILE_MAX, &f) < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");

        p = calloc(1, sizeof(FsgProfile));
        if (!p || !(p->name = strdup(name)))
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        while ((n = fsg_read_line(f, '\n', PROFILE_FILE_MAX, &line, &cap)) > 0) {
                char *l = strip(line), *eq, *key, *value;

                lineno++;
                if (!*l || *l == '#')
                        continue;
                eq = strchr(l, '=');
                if (!eq)
                        return fsg_error(e, FSG_ERR_FAILED, "%s:%u: not a Key=value line", path, lineno);
                *eq = 0;
                key = strip(l);
                value = strip(eq + 1);
                if (streq(key, "Description")) {
                        free(p->description);
                        if (!(p->description = strdup(value)))
                                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
                } else if (streq(key, "Hard")) {
                        if (!streq(value, "yes") && !streq(value, "no"))
                                return fsg_error(e, FSG_ERR_FAILED, "%s:%u: Hard= is yes or no", path, lineno);
                        p->hard = streq(value, "yes");
                } else if (streq(key, "Compute")) {
                        if (!streq(value, "unused"))
                                return fsg_error(e, FSG_ERR_FAILED, "%s:%u: unknown Compute=%s", path, lineno, value);
                        free(p->compute);
                        if (!(p->compute = strdup(value)))
                                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
                } else if (streq(key, "Modules")) {
                        for (char *save = NULL, *w = strtok_r(value, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
                                if (!fsg_name_is_valid(w))
                                        return fsg_error(e, FSG_ERR_FAILED, "%s:%u: not a module name: %s", path, lineno, w);
                                fsg_name_normalize(w);
                                if (strv_extend_unique(&p->modules, w) < 0)
                                        return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
                        }
                } else
                        return fsg_error(e, FSG_ERR_FAILED, "%s:%u: unknown key %s", path, lineno, key);
        }
        if (n == -EFBIG)
                return fsg_error(e, FSG_ERR_FAILED, "%s is not a regular file of at most 64 KiB", path);
        if (n < 0)
                return fsg_error_errno(e, (int) -n, "Failed to read %s", path);
        if (p->compute && p->modules)
                return fsg_error(e, FSG_ERR_FAILED, "%s: a computed profile lists no modules", path);
        *ret = TAKE_PTR(p);
        return 0;
}

/* -- "unused": what this system uses --------------------------------------------------------- */

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

/* A filesystem type as fstab, a mount unit or udev spells it: "fuse.sshfs" is served by fuse,
 * a list ("ext4,btrfs") by each of its members. */
static int use_types(UsedSet *u, const char *types, const char *why) {
        _cleanup_free_ char *copy = strdup(types);
        int r;

        if (!copy)
                return -ENOMEM;
        for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                const FsgEntry *x;
                char *dot = strchr(t, '.');

                if (dot && dot != t)
                        *dot = 0;
                if (!fsg_name_is_valid(t))
                        continue;
                x = fsg_state_find(u->s, t);
                if (x) {
                        r = use_module(u, x->module, why);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
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
        char *l = strip(line), why[300];

        if (*l == '[') {
                u->in_mount = strncmp(l, "[Mount]", 7) == 0;
                return 0;
        }
        if (!u->in_mount || strncmp(l, "Type=", 5) != 0)
                return 0;
        snprintf(why, sizeof(why), "the type of %s", abs);
        return use_types(u, strip(l + 5), why);
}

static bool has_suffix(const char *s, const char *suffix) {
        size_t a = strlen(s), b = strlen(suffix);
        return a >= b && streq(s + a - b, suffix);
}

static int scan_unit_dir(const FsgContext *c, UsedSet *u, const char *dir) {
        _cleanup_close_ int fd = fsg_open_dir(c, dir, false);
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        int r;

        if (fd < 0)
                return 0; /* a directory that is not there holds no unit */
        d = fdopendir(fd);
        if (!d)
                return -errno;
        fd = -1;
        while ((de = readdir(d))) {
                _cleanup_free_ char *abs = NULL;

                if (de->d_name[0] == '.')
                        continue;
                if (has_suffix(de->d_name, ".mount")) {
                        if (asprintf(&abs, "%s/%s", dir, de->d_name) < 0)
                                return -ENOMEM;
                        u->in_mount = false;
                        r = read_lines(c, abs, u, unit_line);
                        if (r < 0)
                                return r;
                } else if (has_suffix(de->d_name, ".mount.d")) {
                        /* Drop-ins may set Type= too; the sub-directory is scanned like a unit. */
                        _cleanup_close_ int sfd = -1;
                        _cleanup_closedir_ DIR *sd = NULL;
                        struct dirent *se;

                        if (asprintf(&abs, "%s/%s", dir, de->d_name) < 0)
                                return -ENOMEM;
                        sfd = fsg_open_dir(c, abs, false);
                        if (sfd < 0 || !(sd = fdopendir(sfd)))
                                continue;
                        sfd = -1;
                        while ((se = readdir(sd))) {
                                _cleanup_free_ char *conf = NULL;

                                if (se->d_name[0] == '.' || !has_suffix(se->d_name, ".conf"))
                                        continue;
                                if (asprintf(&conf, "%s/%s", abs, se->d_name) < 0)
                                        return -ENOMEM;
                                u->in_mount = false;
                                r = read_lines(c, conf, u, unit_line);
                                if (r < 0)
                                        return r;
                        }
                }
        }
        return 0;
}

static int udev_line(UsedSet *u, const char *abs, char *line) {
        char *l = strip(line), why[300];

        if (strncmp(l, "E:ID_FS_TYPE=", 13) != 0 || !l[13])
                return 0;
        snprintf(why, sizeof(why), "the type udev found on block device %s", strrchr(abs, '/') + 2);
        return use_types(u, l + 13, why);
}

/* udev's database (what sd-device reads): one file per device, "b MAJOR:MINOR" for block
 * devices, with ID_FS_TYPE from its blkid builtin. A device that is gone may leave its file
 * for a moment: where /sys is there, only present devices count. */
static int scan_udev(const FsgContext *c, UsedSet *u) {
        _cleanup_close_ int fd = fsg_open_dir(c, "/run/udev/data", false), sys = fsg_open_dir(c, "/sys/dev/block", false);
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        int r;

        if (fd < 0)
                return 0;
        d = fdopendir(fd);
        if (!d)
                return -errno;
        fd = -1;
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

        if (!c->moddir)
                return 0;
        r = fsg_kmod_new(c, NULL, &k, NULL);
        if (r < 0)
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

int fsg_profile_unused(const FsgContext *c, const FsgState *s, char ***ret, char ***ret_used, FsgError *e) {
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
                r = scan_unit_dir(c, &u, unit_dirs[i]);
        if (r >= 0)
                r = scan_udev(c, &u);
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

int fsg_profile_load(const FsgContext *c, const FsgState *s, const char *name, FsgProfile **ret, FsgError *e) {
        _cleanup_(fsg_profile_freep) FsgProfile *p = NULL;
        int r;

        r = profile_read(name, &p, e);
        if (r < 0)
                return r;
        if (p->compute) {
                r = fsg_profile_unused(c, s, &p->modules, NULL, e);
                if (r < 0)
                        return r;
        }
        strv_sort(p->modules);
        *ret = TAKE_PTR(p);
        return 0;
}

/* -- Apply ----------------------------------------------------------------------------------- */

FsgProfilePlan *fsg_profile_plan_free(FsgProfilePlan *p) {
        if (!p)
                return NULL;
        free(p->plans);
        strv_free(p->skipped);
        free(p);
        return NULL;
}

const char *fsg_profile_change_string(const FsgPlan *p) {
        return p->flags & FSG_FLAG_HARD ? "deny-hard" : "deny";
}

/* A module this kernel does not have, named by no file either: no entry for fsg_plan() to
 * resolve. Denied all the same, so that the next kernel that has it (and an auditor reading
 * the files) finds it denied: a deny file of its own, without routes to the hook (its types
 * are unknown). Only a free target: anything there would have made it an entry. */
static int plan_absent(const FsgContext *c, const char *module, uint64_t deny_flags, FsgPlan *p, FsgError *e) {
        FsgFileKind kind;

        *p = (FsgPlan) { .op = FSG_OP_DENY, .flags = deny_flags, .write = FSG_WRITE_DENY, .action = FSG_ACTION_DENY };
        snprintf(p->module, sizeof(p->module), "%s", module);
        snprintf(p->target, sizeof(p->target), "/etc/modprobe.d/" FSG_FILE_PREFIX "%s" FSG_FILE_SUFFIX, module);
        kind = fsg_target_classify(c, p->target, module, &p->target_id);
        if (kind != FSG_FILE_ABSENT && kind != FSG_FILE_MASK)
                return fsg_error(e, FSG_ERR_FOREIGN_CONFIG,
                                 "%s was not written by fsgate and fsgate will not change it; "
                                 "edit it by hand, or remove it and try again", p->target);
        return 0;
}

/* ReadOnly before anything is written, not after the first module. */
static int check_writable(const FsgContext *c, FsgError *e) {
        _cleanup_close_ int fd = fsg_open_dir(c, "/etc/modprobe.d", false);
        struct statvfs sv;

        if (fd == -ENOENT)
                fd = fsg_open_dir(c, "/etc", false);
        if (fd < 0)
                return fsg_error_errno(e, -fd, "Failed to open %s/etc/modprobe.d", c->root);
        if ((fstatvfs(fd, &sv) >= 0 && (sv.f_flag & ST_RDONLY)) || faccessat(fd, ".", W_OK, AT_EACCESS) < 0)
                return fsg_error(e, FSG_ERR_READ_ONLY,
                                 "%s/etc/modprobe.d cannot be written (read-only filesystem or image); nothing was changed",
                                 c->root);
        return 0;
}

/* Why one module of a profile cannot be denied, in a word or two: the message reaches people,
 * who should not have to read error names (the full reasons follow it). */
static const char *refusal_words(FsgErrorCode code) {
        switch (code) {
        case FSG_ERR_FOREIGN_CONFIG:    return "decided by a file fsgate did not write";
        case FSG_ERR_IN_USE:            return "in use";
        case FSG_ERR_OVERRIDDEN:        return "overridden by /etc";
        case FSG_ERR_HARD_DENY_IGNORED: return "a hard deny cannot take effect";
        case FSG_ERR_BUILTIN:           return "built in";
        case FSG_ERR_NO_SUCH_FILESYSTEM:
        case FSG_ERR_NOT_A_FILESYSTEM:  return "no such filesystem";
        default:                        return "refused";
        }
}

int fsg_profile_plan(const FsgContext *c, const FsgState *current, FsgWhatIfMemo *memo, const char *name,
                     uint64_t flags, FsgProfilePlan **ret, FsgError *e) {
        _cleanup_(fsg_state_freep) FsgState *built = NULL;
        _cleanup_(fsg_profile_freep) FsgProfile *prof = NULL;
        _cleanup_(fsg_profile_plan_freep) FsgProfilePlan *pp = NULL;
        _cleanup_(fsg_modtree_freep) FsgModTree *tree = NULL;
        const uint64_t valid = FSG_FLAG_HARD | FSG_FLAG_FORCE | FSG_FLAG_DRY_RUN;
        char names[512] = "", details[512] = "";
        size_t n_refused = 0;
        uint64_t deny_flags;
        int r;

        if (flags & ~valid)
                return fsg_error(e, FSG_ERR_INVALID_ARGS, "Unknown flags 0x%llx", (unsigned long long) (flags & ~valid));
        r = fsg_state_current_or_build(c, &current, &built, e);
        if (r < 0)
                return r;
        r = fsg_profile_load(c, current, name, &prof, e);
        if (r < 0)
                return r;
        deny_flags = (flags & FSG_FLAG_FORCE) | (prof->hard || (flags & FSG_FLAG_HARD) ? FSG_FLAG_HARD : 0);

        pp = calloc(1, sizeof(FsgProfilePlan));
        if (!pp || !(pp->plans = calloc(strv_length(prof->modules) + 1, sizeof(FsgPlan))))
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        snprintf(pp->profile, sizeof(pp->profile), "%s", prof->name);
        pp->flags = flags;

        for (char **m = prof->modules; m && *m; m++) {
                const FsgEntry *x = fsg_state_find_module(current, *m);
                FsgError me = {};
                FsgPlan p;

                if (!x && !tree) {
                        r = fsg_modtree_load(c, &tree, e);
                        if (r < 0)
                                return r;
                }
                /* Nothing can deny what is compiled in (with or without an entry: pstore is
                 * none until a file names it): left out, not a conflict that would keep the
                 * rest of the profile from ever applying. */
                if ((x && x->builtin) || (!x && fsg_modtree_is_builtin(tree, *m))) {
                        if (strv_extend(&pp->skipped, *m) < 0)
                                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
                        continue;
                }

                r = x ? fsg_plan_cached(c, current, memo, FSG_OP_DENY, *m, deny_flags, &p, &me) :
                        plan_absent(c, *m, deny_flags, &p, &me);
                if (r < 0) {
                        /* Not the module's own fault: no point listing every module. */
                        if (me.code == FSG_ERR_FAILED || me.code == FSG_ERR_INVALID_ARGS || me.code == FSG_ERR_BUSY) {
                                *e = me;
                                return r;
                        }
                        /* The names first, so that a message cut at its size still names all. */
                        size_t ln = strlen(names), ld = strlen(details);
                        snprintf(names + ln, sizeof(names) - ln, "%s%s (%s)", ln ? ", " : "", *m,
                                 refusal_words(me.code));
                        snprintf(details + ld, sizeof(details) - ld, "%s%.400s", ld ? " | " : "", me.message);
                        n_refused++;
                        continue;
                }
                if (p.write != FSG_WRITE_NOTHING)
                        pp->plans[pp->n++] = p;
        }
        if (n_refused > 0)
                return fsg_error(e, FSG_ERR_PROFILE_CONFLICT,
                                 "Nothing was changed: %zu module%s of profile %s cannot be denied: %s. %s",
                                 n_refused, n_refused == 1 ? "" : "s", pp->profile, names, details);
        if (pp->n > 0 && !(flags & FSG_FLAG_DRY_RUN)) {
                r = check_writable(c, e);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(pp);
        return 0;
}

/* What a target held before a write, to put it back should a later write fail. */
typedef struct Before {
        FsgFileKind kind;
        char *content;     /* the file's bytes for a file; NULL for a mask or nothing */
} Before;

static int before_read(const FsgContext *c, const FsgPlan *p, Before *b) {
        _cleanup_close_ int fd = -1;
        struct stat st;
        ssize_t n;

        b->kind = p->target_id.kind;
        if (b->kind == FSG_FILE_ABSENT || b->kind == FSG_FILE_MASK)
                return 0;
        fd = fsg_open_regular(c, p->target, FSG_CONF_MAX);
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return -errno;
        if ((uint64_t) st.st_size > FSG_CONF_MAX)
                return -EFBIG; /* grown since the open: not read into memory */
        b->content = calloc(1, st.st_size + 1);
        if (!b->content)
                return -ENOMEM;
        n = read(fd, b->content, st.st_size);
        return n < 0 ? -errno : 0;
}

/* Puts back what was at p->target before p was written. Best effort: the failure that
 * started it is what the caller reports. */
static void before_restore(const FsgContext *c, const FsgPlan *p, const Before *b) {
        _cleanup_free_ char *sysdir = strndup(p->target, strrchr(p->target, '/') - p->target), *dir = NULL;
        _cleanup_close_ int dfd = -1;
        const char *name = strrchr(p->target, '/') + 1;
        FsgFileId now = {};

        if (!sysdir || asprintf(&dir, "%s%s", c->root, sysdir) < 0)
                return;
        dfd = fsg_open_dir(c, sysdir, false);
        if (dfd < 0)
                return;
        (void) fsg_target_classify(c, p->target, p->module, &now);
        if (b->kind == FSG_FILE_ABSENT)
                (void) fsg_durable_unlink(dfd, dir, name, &now, NULL);
        else if (b->kind == FSG_FILE_MASK)
                (void) fsg_atomic_symlink(dfd, dir, name, "/dev/null", &now, NULL);
        else if (b->content)
                (void) fsg_atomic_write(dfd, dir, name, b->content, &now, NULL);
}

static bool same_plans(const FsgProfilePlan *a, const FsgProfilePlan *b) {
        if (a->n != b->n)
                return false;
        for (size_t i = 0; i < a->n; i++)
                if (!streq(a->plans[i].module, b->plans[i].module) || a->plans[i].write != b->plans[i].write ||
                    a->plans[i].flags != b->plans[i].flags || !streq(a->plans[i].target, b->plans[i].target))
                        return false;
        return true;
}

int fsg_profile_apply(const FsgContext *c, const FsgProfilePlan *authorized, FsgError *e) {
        _cleanup_(fsg_profile_plan_freep) FsgProfilePlan *now = NULL;
        _cleanup_close_ int lock = -1;
        Before *before = NULL;
        size_t done = 0;
        int r;

        if (authorized->n == 0 || (authorized->flags & FSG_FLAG_DRY_RUN))
                return 0;
        r = fsg_lock(c, c->lock_timeout_usec, &lock, e);
        if (r < 0)
                return r;
        r = fsg_profile_plan(c, NULL, NULL, authorized->profile, authorized->flags, &now, e);
        if (r < 0)
                return r;
        if (!same_plans(authorized, now))
                return fsg_error(e, FSG_ERR_CONCURRENT_CHANGE,
                                 "The configuration (or, for a computed profile, what is in use) changed while "
                                 "authorizing; nothing was changed, try again");
        before = calloc(now->n, sizeof(Before));
        if (!before)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        for (size_t i = 0; i < now->n; i++) {
                r = before_read(c, &now->plans[i], &before[i]);
                if (r < 0) {
                        r = fsg_error(e, FSG_ERR_FAILED, "Failed to read %s%s: %s; nothing was changed", c->root,
                                      now->plans[i].target, fsg_strerror(-r));
                        goto finish;
                }
        }
        for (; done < now->n; done++) {
                r = fsg_write_plan_locked(c, &now->plans[done], e);
                if (r < 0)
                        break;
        }
        if (r < 0)
                /* All or nothing: what was written goes back, newest first. */
                for (size_t i = done; i-- > 0;)
                        before_restore(c, &now->plans[i], &before[i]);
        else
                r = 0;
finish:
        for (size_t i = 0; i < now->n; i++)
                free(before[i].content);
        free(before);
        return r;
}

/* -- Audit ----------------------------------------------------------------------------------- */

FsgAudit *fsg_audit_free(FsgAudit *a) {
        if (!a)
                return NULL;
        for (size_t i = 0; i < a->n; i++) {
                free(a->items[i].module);
                free(a->items[i].why);
        }
        free(a->items);
        free(a);
        return NULL;
}

static int audit_add(FsgAudit *a, const char *module, bool compliant, bool denied, bool hard, const char *fmt, ...)
        _printf_(6, 7);
static int audit_add(FsgAudit *a, const char *module, bool compliant, bool denied, bool hard, const char *fmt, ...) {
        FsgAuditItem *it = &a->items[a->n];
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&it->why, fmt, ap);
        va_end(ap);
        if (r < 0 || !(it->module = strdup(module)))
                return -ENOMEM;
        it->compliant = compliant;
        it->denied = denied;
        it->hard = hard;
        a->n++;
        a->n_compliant += compliant;
        return 0;
}

int fsg_profile_audit(const FsgContext *c, const FsgState *current, const char *name, bool hard, FsgAudit **ret,
                      FsgError *e) {
        _cleanup_(fsg_state_freep) FsgState *built = NULL;
        const FsgState *s = current;
        _cleanup_(fsg_profile_freep) FsgProfile *p = NULL;
        _cleanup_(fsg_audit_freep) FsgAudit *a = NULL;
        int r;

        /* The state says what kmod would do: the deny, and (hard) whether the install command
         * it would run for `modprobe MODULE` loads nothing. */
        r = fsg_context_require_kernel(c, e);
        if (r < 0)
                return r;
        r = fsg_state_current_or_build(c, &s, &built, e);
        if (r < 0)
                return r;
        r = fsg_profile_load(c, s, name, &p, e);
        if (r < 0)
                return r;
        a = calloc(1, sizeof(FsgAudit));
        if (!a || !(a->items = calloc(strv_length(p->modules) + 1, sizeof(FsgAuditItem))))
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        snprintf(a->profile, sizeof(a->profile), "%s", p->name);
        a->hard_required = hard || p->hard;

        for (char **m = p->modules; m && *m; m++) {
                const FsgEntry *x = fsg_state_find_module(s, *m);
                const char *src, *cmd;
                bool refused;

                if (!x) {
                        /* kmod finds nothing to load, whatever the files say. */
                        if (audit_add(a, *m, true, false, true, "not in kernel %s and named by no file: nothing to load",
                                      c->kver ?: "(none)") < 0)
                                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
                        continue;
                }
                src = x->deciding_file && *x->deciding_file ? x->deciding_file : fsg_origin_to_string(x->origin);

                cmd = x->install_command && *x->install_command ? x->install_command : NULL;
                refused = x->hard || !x->available;
                /* Built in: the kernel asks modprobe for nothing, so a soft profile (no
                 * autoload from a stick) holds; a hard one (the code must not be there) cannot. */
                if (x->builtin)
                        r = audit_add(a, x->module, !a->hard_required, false, false,
                                      "built into kernel %s: never autoloaded, and no file can deny it",
                                      c->kver ?: "");
                else if (!x->available)
                        r = audit_add(a, x->module, true, x->denied, true,
                                      "no module file in kernel %s: nothing to load", c->kver ?: "");
                else if (!x->denied)
                        r = audit_add(a, x->module, false, false, refused,
                                      "the kernel may load it on its own (%s)", src);
                else if (x->loaded || x->mounted)
                        r = audit_add(a, x->module, false, true, refused,
                                      "denied by %s, but %s now: a deny unloads nothing", src,
                                      x->mounted ? "mounted" : "loaded");
                else if (a->hard_required && !refused)
                        r = audit_add(a, x->module, false, true, false,
                                      "soft deny only (%s): `modprobe %s` by root still loads it%s%s", src, x->module,
                                      cmd ? "; install command: " : "", cmd ?: "");
                else if (refused)
                        r = audit_add(a, x->module, true, true, true, "denied by %s; explicit loads run `%s`", src, cmd);
                else
                        r = audit_add(a, x->module, true, true, false, "denied by %s", src);
                if (r < 0)
                        return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        }
        *ret = TAKE_PTR(a);
        return 0;
}

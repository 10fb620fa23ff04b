/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>

#include "alloc-util.h"
#include "config.h"
#include "name.h"
#include "profile.h"
#include "risk.h"
#include "strv.h"

#define PROFILE_SUFFIX ".profile"
#define PROFILE_NAME_MAX 32
#define PROFILE_FILE_MAX (UINT64_C(64) << 10)
/* How deep Include= may go: a site profile that includes one that includes one. Bounded, so
 * that a cycle or a long chain is an error at once, not a recursion. */
#define PROFILE_INCLUDE_DEPTH 4
#define FSG_SITE_PROFILE_DIR "/etc/fsgate/profiles"

const char *fsg_profile_dir(void) {
        const char *d = secure_getenv("FSGATE_PROFILE_DIR");
        return d && *d ? d : FSGATE_PROFILE_DIR;
}

const char *fsg_profile_site_dir(void) {
        const char *d = secure_getenv("FSGATE_SITE_PROFILE_DIR");
        return d && *d ? d : FSG_SITE_PROFILE_DIR;
}

/* A profile name becomes a file name: nothing that could leave the directory. */
bool fsg_profile_name_is_valid(const char *s) {
        size_t n = 0;

        for (; s[n]; n++)
                if (n >= PROFILE_NAME_MAX || !((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9') ||
                                               s[n] == '-' || s[n] == '_'))
                        return false;
        return n > 0;
}

/* A site profile decides what is denied as root: only one that no one but root (or the user
 * who runs this program, who could run it with any file anyway) could have written counts. */
static bool site_stat_is_trusted(const struct stat *st) {
        if (st->st_uid != 0 && st->st_uid != geteuid())
                return false;
        if (st->st_mode & S_IWOTH)
                return false;
        return !(st->st_mode & S_IWGRP) || st->st_gid == 0;
}

/* Adds the profile names of directory dir to *names; a site directory or file that is not
 * trusted adds none. A missing directory is no profile, not an error. */
static int list_dir(const char *dir, bool site, char ***names, FsgError *e) {
        _cleanup_closedir_ DIR *d = opendir(dir);
        struct dirent *de;
        struct stat st;

        if (!d && errno == ENOENT && site)
                return 0;
        if (!d)
                return fsg_error_errno(e, errno, "Failed to open the profile directory %s", dir);
        if (site && (fstat(dirfd(d), &st) < 0 || !site_stat_is_trusted(&st)))
                return 0;
        while ((de = readdir(d))) {
                size_t l = strlen(de->d_name);
                _cleanup_free_ char *n = NULL;

                if (l <= strlen(PROFILE_SUFFIX) || !streq(de->d_name + l - strlen(PROFILE_SUFFIX), PROFILE_SUFFIX))
                        continue;
                if (site && (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
                             !site_stat_is_trusted(&st)))
                        continue;
                n = strndup(de->d_name, l - strlen(PROFILE_SUFFIX));
                if (!n)
                        return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
                if (fsg_profile_name_is_valid(n) && !strv_contains(*names, n) && strv_push(names, TAKE_PTR(n)) < 0)
                        return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        }
        return 0;
}

int fsg_profile_list(char ***ret, FsgError *e) {
        _cleanup_strv_free_ char **names = NULL;
        int r;

        r = list_dir(fsg_profile_site_dir(), true, &names, e);
        if (r >= 0)
                r = list_dir(fsg_profile_dir(), false, &names, e);
        if (r < 0)
                return r;
        strv_sort(names);
        *ret = TAKE_PTR(names);
        return 0;
}

FsgProfile *fsg_profile_free(FsgProfile *p) {
        if (!p)
                return NULL;
        strv_free_many(p->modules, p->includes);
        free_many(p->name, p->description, p->compute, p->path, p);
        return NULL;
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
                         fsg_profile_name_is_valid(name) ? name : "like that", "", *list ? list : "(none installed)");
}

/* Opens the file of profile name: the site's (fsg_profile_site_dir()) before the shipped one,
 * unless shipped_only. An untrusted site file is refused, naming it, rather than passed over:
 * falling back to a shipped profile of the same name would enforce what the site replaced. */
static int profile_open(const char *name, bool shipped_only, char **ret_path, FsgError *e) {
        _cleanup_free_ char *site = NULL, *shipped = NULL;
        _cleanup_close_ int fd = -1;
        struct stat st, dst;

        if (asprintf(&site, "%s/%s" PROFILE_SUFFIX, fsg_profile_site_dir(), name) < 0 ||
            asprintf(&shipped, "%s/%s" PROFILE_SUFFIX, fsg_profile_dir(), name) < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        if (!shipped_only) {
                fd = open(site, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW);
                if (fd < 0 && errno != ENOENT)
                        return fsg_error_errno(e, errno, "Failed to open %s", site);
                if (fd >= 0 && (fstat(fd, &st) < 0 || stat(fsg_profile_site_dir(), &dst) < 0 ||
                                !site_stat_is_trusted(&st) || !site_stat_is_trusted(&dst)))
                        return fsg_error(e, FSG_ERR_FAILED,
                                         "%s is ignored: it (or its directory) is not owned by root or is writable by "
                                         "others; fix its owner and mode", site);
                if (fd >= 0) {
                        *ret_path = TAKE_PTR(site);
                        return TAKE_FD(fd);
                }
        }
        fd = open(shipped, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT)
                return no_such_profile(name, e);
        if (fd < 0)
                return fsg_error_errno(e, errno, "Failed to open %s", shipped);
        *ret_path = TAKE_PTR(shipped);
        return TAKE_FD(fd);
}

/* One "Key=value" line of path into p. */
static int profile_parse_line(FsgProfile *p, char *l, const char *path, unsigned lineno, FsgError *e) {
        char *eq = strchr(l, '='), *key, *value;

        if (!eq)
                return fsg_error(e, FSG_ERR_FAILED, "%s:%u: not a Key=value line", path, lineno);
        *eq = 0;
        key = strstrip(l);
        value = strstrip(eq + 1);
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
        } else if (streq(key, "Modules") || streq(key, "Include")) {
                bool inc = streq(key, "Include");
                for (char *save = NULL, *w = strtok_r(value, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
                        if (inc ? !fsg_profile_name_is_valid(w) : !fsg_name_is_valid(w))
                                return fsg_error(e, FSG_ERR_FAILED, "%s:%u: not a %s name: %s", path, lineno,
                                                 inc ? "profile" : "module", w);
                        if (!inc)
                                fsg_name_normalize(w);
                        if (strv_extend_unique(inc ? &p->includes : &p->modules, w) < 0)
                                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
                }
        } else
                return fsg_error(e, FSG_ERR_FAILED, "%s:%u: unknown key %s", path, lineno, key);
        return 0;
}

static int profile_read(const char *name, bool shipped_only, unsigned depth, FsgProfile **ret, FsgError *e);

/* Include=: the modules of each included profile join p's, and a hard one makes p hard (a
 * site profile that includes cis must not weaken it). A name includes the shipped profile of
 * that name when p is the site's profile of the same name (a site "cis" that adds to cis). */
static int profile_include(FsgProfile *p, bool shipped_only, unsigned depth, FsgError *e) {
        for (char **i = p->includes; i && *i; i++) {
                _cleanup_(fsg_profile_freep) FsgProfile *inc = NULL;
                bool self = streq(*i, p->name);
                int r;

                if ((self && shipped_only) || depth + 1 >= PROFILE_INCLUDE_DEPTH)
                        return fsg_error(e, FSG_ERR_FAILED, "%s: Include=%s: includes nest deeper than %d or in a circle",
                                         p->path, *i, PROFILE_INCLUDE_DEPTH);
                r = profile_read(*i, shipped_only || self, depth + 1, &inc, e);
                if (r < 0)
                        return r;
                if (inc->compute)
                        return fsg_error(e, FSG_ERR_FAILED, "%s: Include=%s: a computed profile cannot be included",
                                         p->path, *i);
                p->hard = p->hard || inc->hard;
                for (char **m = inc->modules; m && *m; m++)
                        if (strv_extend_unique(&p->modules, *m) < 0)
                                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        }
        return 0;
}

/* The file format: "Key=value" lines, '#' comments. Description=, Hard=yes|no, Modules=
 * (space-separated, may repeat), Include= (profiles, may repeat), Compute=unused. Unknown
 * keys are an error: a profile that says more than fsgate understands must not be applied as
 * if it said less. */
static int profile_read(const char *name, bool shipped_only, unsigned depth, FsgProfile **ret, FsgError *e) {
        _cleanup_(fsg_profile_freep) FsgProfile *p = NULL;
        _cleanup_free_ char *path = NULL, *line = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_close_ int fd = -1;
        size_t cap = 0;
        unsigned lineno = 0;
        struct stat st;
        ssize_t n;
        int r;

        if (!fsg_profile_name_is_valid(name))
                return no_such_profile(name, e);
        fd = profile_open(name, shipped_only, &path, e);
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t) st.st_size > PROFILE_FILE_MAX)
                return fsg_error(e, FSG_ERR_FAILED, "%s is not a regular file of at most 64 KiB", path);
        /* Held to the size while it is read, too: the file may grow after the check. */
        if (fsg_fdopen_capped(TAKE_FD(fd), PROFILE_FILE_MAX, &f) < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");

        p = calloc(1, sizeof(FsgProfile));
        if (!p || !(p->name = strdup(name)))
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        p->path = TAKE_PTR(path);
        while ((n = fsg_read_line(f, '\n', PROFILE_FILE_MAX, &line, &cap)) > 0) {
                char *l = strstrip(line);

                lineno++;
                if (!*l || *l == '#')
                        continue;
                r = profile_parse_line(p, l, p->path, lineno, e);
                if (r < 0)
                        return r;
        }
        if (n == -EFBIG)
                return fsg_error(e, FSG_ERR_FAILED, "%s is not a regular file of at most 64 KiB", p->path);
        if (n < 0)
                return fsg_error_errno(e, (int) -n, "Failed to read %s", p->path);
        if (p->compute && (p->modules || p->includes))
                return fsg_error(e, FSG_ERR_FAILED, "%s: a computed profile lists no modules", p->path);
        r = profile_include(p, shipped_only, depth, e);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(p);
        return 0;
}

int fsg_profile_read(const char *name, FsgProfile **ret, FsgError *e) {
        assert(name);
        assert(ret);

        return profile_read(name, false, 0, ret, e);
}

static int compare_notable_first(const void *a, const void *b) {
        const char *x = *(const char * const *) a, *y = *(const char * const *) b;
        bool nx = fsg_risk_is_notable(fsg_risk_find(x)), ny = fsg_risk_is_notable(fsg_risk_find(y));

        return nx != ny ? (nx ? -1 : 1) : strcmp(x, y);
}

int fsg_profile_load(const FsgContext *c, const FsgState *s, const char *name, bool include_on_demand,
                     FsgProfile **ret, FsgError *e) {
        assert(c);
        assert(s);
        assert(name);
        assert(ret);

        _cleanup_(fsg_profile_freep) FsgProfile *p = NULL;
        int r;

        r = profile_read(name, false, 0, &p, e);
        if (r < 0)
                return r;
        if (p->compute) {
                r = fsg_profile_unused(c, s, include_on_demand, &p->modules, NULL, e);
                if (r < 0)
                        return r;
                /* A computed list is one nobody wrote: who reviews it sees the modules the kernel
                 * source gives a reason to worry about first. The set is the same. */
                if (p->modules)         /* nothing unused: no list at all */
                        qsort(p->modules, strv_length(p->modules), sizeof(char *), compare_notable_first);
        } else
                strv_sort(p->modules);
        *ret = TAKE_PTR(p);
        return 0;
}

int fsg_profile_load_current(const FsgContext *c, const FsgState **current, FsgState **built, const char *name,
                             bool include_on_demand, FsgProfile **ret, FsgError *e) {
        int r = fsg_state_current_or_build(c, current, built, e);

        return r < 0 ? r : fsg_profile_load(c, *current, name, include_on_demand, ret, e);
}

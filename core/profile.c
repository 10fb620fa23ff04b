/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>

#include "config.h"
#include "name.h"
#include "profile.h"
#include "risk.h"
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
                char *l = strstrip(line), *eq, *key, *value;

                lineno++;
                if (!*l || *l == '#')
                        continue;
                eq = strchr(l, '=');
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

        r = profile_read(name, &p, e);
        if (r < 0)
                return r;
        if (p->compute) {
                r = fsg_profile_unused(c, s, include_on_demand, &p->modules, NULL, e);
                if (r < 0)
                        return r;
                /* A computed list is one nobody wrote: who reviews it sees the modules the kernel
                 * source gives a reason to worry about first. The set is the same. */
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

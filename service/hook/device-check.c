/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <fcntl.h>

#include "confscan.h"
#include "device-check.h"
#include "grant.h"
#include "name.h"
#include "strv.h"

/* Enough for modules.alias of a distribution kernel (1.3 MB for Debian's 6.1). */
#define ALIAS_MAX (UINT64_C(32) << 20)

static char *read_all(int fd, uint64_t max) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, cap = 0;
        ssize_t n;

        for (;;) {
                if (len + 4096 + 1 > cap) {
                        char *t;
                        if (len >= max)
                                break;
                        cap = cap ? cap * 2 : 65536;
                        t = realloc(buf, cap);
                        if (!t)
                                return NULL;
                        buf = t;
                }
                n = read(fd, buf + len, cap - len - 1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                len += n;
        }
        if (!buf && !(buf = malloc(1)))
                return NULL;
        buf[len] = 0;
        return TAKE_PTR(buf);
}

static char *read_file(const FsgContext *c, const char *abs, uint64_t max) {
        _cleanup_close_ int fd = fsg_open_regular(c, abs, max);
        return fd < 0 ? NULL : read_all(fd, max);
}

/* Each line is WORD WORD...; calls f for every word, stops early when it returns true. */
static bool any_word(const char *text, bool (*f)(const char *w, size_t n, void *u), void *u) {
        for (const char *p = text; *p;) {
                size_t n;

                p += strspn(p, " \t\n=,");
                n = strcspn(p, " \t\n=,");
                if (n > 0 && f(p, n, u))
                        return true;
                p += n;
        }
        return false;
}

static bool same_name(const char *w, size_t n, const char *name) {
        /* kmod treats '-' and '_' in module names alike. */
        if (strlen(name) != n)
                return false;
        for (size_t i = 0; i < n; i++)
                if (w[i] != name[i] && !(strchr("-_", w[i]) && strchr("-_", name[i])))
                        return false;
        return true;
}

static bool names_any(const char *w, size_t n, void *u) {
        for (char **t = u; *t; t++)
                if (same_name(w, n, *t))
                        return true;
        return false;
}

static bool registered(const FsgContext *c, const char *type) {
        _cleanup_free_ char *text = read_file(c, "/proc/filesystems", ALIAS_MAX);
        char *line, *save = NULL;

        /* "nodev\tsysfs" or "\text4": the type is the last word of its line. */
        for (line = text ? strtok_r(text, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
                const char *w = strrchr(line, '\t');
                if (streq(w ? w + 1 : line, type))
                        return true;
        }
        return false;
}

/* The modules modules.alias names for fs-TYPE ("alias fs-TYPE MODULE"). */
static int modules_of(const FsgContext *c, const char *type, char ***ret) {
        _cleanup_free_ char *path = NULL, *text = NULL, *alias = NULL;
        _cleanup_strv_free_ char **l = NULL;

        if (!c->moddir_in_root || asprintf(&path, "%s/modules.alias", c->moddir_in_root) < 0 ||
            asprintf(&alias, "\nalias fs-%s ", type) < 0)
                return -ENOMEM;
        text = read_file(c, path, ALIAS_MAX);
        /* strstr, not a line loop: the file has tens of thousands of lines and one or two
         * matter. The first line has no '\n' before it, but is never an fs- alias. */
        for (char *p = text; p && (p = strstr(p, alias)); ) {
                p += strlen(alias);
                size_t n = strcspn(p, "\n");
                char *m = strndup(p, n);
                if (!m || strv_push(&l, m) < 0)
                        return -ENOMEM;
                p += n;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

static bool configuration_names(const FsgContext *c, char **words) {
        for (size_t i = 0; i < fsg_n_conf_dirs; i++) {
                _cleanup_close_ int dfd = fsg_open_dir(c, fsg_conf_dirs[i].path, false);
                _cleanup_closedir_ DIR *d = NULL;
                struct dirent *de;

                if (dfd < 0)
                        continue;
                d = fdopendir(dfd);
                if (!d)
                        return true; /* cannot tell */
                TAKE_FD(dfd);
                while ((de = readdir(d))) {
                        _cleanup_close_ int fd = -1;
                        _cleanup_free_ char *text = NULL;

                        if (de->d_name[0] == '.')
                                continue;
                        fd = fsg_open_regular_at(dirfd(d), de->d_name, FSG_CONF_MAX);
                        if (fd == -EACCES || fd == -EPERM)
                                return true; /* unreadable: it may say anything */
                        if (fd < 0)
                                continue; /* a mask, a dangling link: says nothing */
                        text = read_all(fd, FSG_CONF_MAX);
                        if (!text || any_word(text, names_any, words))
                                return true;
                }
        }
        return false;
}

bool device_type_may_be_denied(const FsgContext *c, const char *type) {
        _cleanup_strv_free_ char **words = NULL;
        _cleanup_free_ char *cmdline = NULL;
        char *alias;

        if (registered(c, type))
                return false;
        if (modules_of(c, type, &words) < 0)
                return true;
        if (!words)
                return false; /* built in, or not a kernel filesystem (swap, LVM2_member, ...) */
        if (asprintf(&alias, "fs-%s", type) < 0 || strv_push(&words, alias) < 0)
                return true;
        cmdline = read_file(c, "/proc/cmdline", FSG_CONF_MAX);
        if (cmdline && any_word(cmdline, names_any, words))
                return true;
        return configuration_names(c, words);
}

bool device_granted_elsewhere(const FsgContext *c, const char *type, const char *devnode) {
        _cleanup_strv_free_ char **modules = NULL;
        _cleanup_free_ FsgGrant *g = NULL;
        FsgGrant here = {};
        bool elsewhere = false, any_medium = false;
        uint64_t now = fsg_boottime_usec();
        size_t n;

        /* The records first: mostly there is none for a medium, and then modules.alias (over
         * a megabyte) is not read for each medium udev sees. */
        if (fsg_grants_read(c, &g, &n, NULL, NULL) < 0)
                return false;
        for (size_t i = 0; i < n; i++)
                any_medium = any_medium || (*g[i].device && fsg_grant_in_force(&g[i], now));
        if (!any_medium || modules_of(c, type, &modules) < 0 || strv_isempty(modules))
                return false;
        /* A medium the kernel cannot tell from the next one is never "this one". */
        (void) fsg_grant_set_medium(&here, devnode, NULL);
        for (size_t i = 0; i < n; i++) {
                if (!fsg_grant_in_force(&g[i], now) || !names_any(g[i].module, strlen(g[i].module), modules))
                        continue;
                if (!*g[i].device)
                        return false;
                if (here.diskseq && g[i].diskseq == here.diskseq && g[i].major == here.major &&
                    g[i].minor == here.minor)
                        return false;
                elsewhere = true;
        }
        return elsewhere;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <sys/stat.h>
#include <sys/utsname.h>

#include "context.h"

/* Resolves abs the way the system under the root sees it: an absolute symlink target starts
 * again at the root, ".." stops at the root, so nothing read or written escapes it (an image
 * may well hold "etc/modprobe.d -> /somewhere"). The part that does not exist yet is
 * appended as it is. */
static char *chase(const FsgContext *c, const char *abs, bool follow_last) {
        _cleanup_free_ char *done = strdup(""), *todo = strdup(abs);
        unsigned links = 0;
        char *p;

        if (!done || !todo)
                return NULL;
        for (;;) {
                char *comp = todo, *rest, *cand = NULL, *full = NULL, target[4096];
                struct stat st;
                ssize_t n;

                while (*comp == '/')
                        comp++;
                if (!*comp)
                        break;
                rest = strchrnul(comp, '/');
                if (asprintf(&cand, "%s/%.*s", done, (int) (rest - comp), comp) < 0)
                        return NULL;
                if (rest - comp == 1 && comp[0] == '.') {
                        free(cand);
                } else if (rest - comp == 2 && comp[0] == '.' && comp[1] == '.') {
                        free(cand);
                        *(strrchr(done, '/') ?: done) = 0;
                } else if (asprintf(&full, "%s%s", c->root, cand) < 0 || lstat(full, &st) < 0 ||
                           !S_ISLNK(st.st_mode) || (!*rest && !follow_last)) {
                        free(full);
                        free(done);
                        done = cand;
                } else {
                        n = readlink(full, target, sizeof(target) - 1);
                        free(full);
                        free(cand);
                        if (n < 0 || ++links > 40)
                                return NULL;
                        target[n] = 0;
                        if (target[0] == '/')
                                done[0] = 0;
                        if (asprintf(&p, "%s%s", target, rest) < 0)
                                return NULL;
                        free(todo);
                        todo = p;
                        continue;
                }
                memmove(todo, rest, strlen(rest) + 1);
        }
        if (asprintf(&p, "%s%s", c->root, *done ? done : "/") < 0)
                return NULL;
        return p;
}

char *fsg_path(const FsgContext *c, const char *abs) {
        char *p;
        if (*c->root)
                return chase(c, abs, true);
        if (asprintf(&p, "%s", abs) < 0)
                return NULL;
        return p;
}

char *fsg_path_nofollow(const FsgContext *c, const char *abs) {
        char *p;
        if (*c->root)
                return chase(c, abs, false);
        if (asprintf(&p, "%s", abs) < 0)
                return NULL;
        return p;
}

static bool is_dir(const char *p) {
        struct stat st;
        return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Debian and openSUSE both merged /usr; older images keep modules in /lib only. */
static char *modules_base(const FsgContext *c) {
        static const char * const bases[] = { "/usr/lib/modules", "/lib/modules" };
        for (size_t i = 0; i < ELEMENTSOF(bases); i++) {
                _cleanup_free_ char *p = fsg_path(c, bases[i]);
                if (p && is_dir(p))
                        return TAKE_PTR(p);
        }
        return NULL;
}

static int filter_release(const struct dirent *d) {
        return d->d_name[0] != '.';
}

static int pick_release(const FsgContext *c, const char *base, char **ret) {
        struct utsname u;
        struct dirent **names = NULL;
        int n;

        if (uname(&u) == 0) {
                _cleanup_free_ char *p = NULL;
                if (asprintf(&p, "%s/%s", base, u.release) >= 0 && is_dir(p)) {
                        *ret = strdup(u.release);
                        return *ret ? 0 : -ENOMEM;
                }
        }

        /* No tree for the running kernel (an image, a chroot): the newest one present. */
        n = scandir(base, &names, filter_release, versionsort);
        if (n < 0)
                return -errno;
        *ret = n > 0 ? strdup(names[n - 1]->d_name) : NULL;
        for (int i = 0; i < n; i++)
                free(names[i]);
        free(names);
        return 0;
}

int fsg_context_new(const char *root, const char *kver, FsgContext **ret, FsgError *e) {
        FsgContext *c;
        _cleanup_free_ char *base = NULL;
        size_t l;

        c = calloc(1, sizeof(*c));
        if (!c)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");

        if (!root || streq(root, "/") || !*root)
                root = "";
        else if (root[0] != '/') {
                free(c);
                return fsg_error(e, FSG_ERR_INVALID_ARGS, "Root directory must be an absolute path: %s", root);
        }
        c->root = strdup(root);
        if (!c->root)
                goto oom;
        l = strlen(c->root);
        while (l > 0 && c->root[l - 1] == '/')
                c->root[--l] = 0;
        if (*c->root && !is_dir(c->root)) {
                fsg_error(e, FSG_ERR_INVALID_ARGS, "Root directory %s does not exist", c->root);
                fsg_context_free(c);
                return -1;
        }

        base = modules_base(c);
        if (kver) {
                if (strchr(kver, '/') || streq(kver, "..") || streq(kver, ".") || !*kver) {
                        fsg_context_free(c);
                        return fsg_error(e, FSG_ERR_INVALID_ARGS, "Invalid kernel release: %s", kver);
                }
                c->kver = strdup(kver);
                if (!c->kver)
                        goto oom;
        } else if (base) {
                if (pick_release(c, base, &c->kver) < 0)
                        goto oom;
        }

        if (c->kver) {
                if (!base && !(base = fsg_path(c, "/usr/lib/modules")))
                        goto oom;
                if (asprintf(&c->moddir, "%s/%s", base, c->kver) < 0) {
                        c->moddir = NULL;
                        goto oom;
                }
        }
        *ret = c;
        return 0;
oom:
        fsg_context_free(c);
        return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
}

FsgContext *fsg_context_free(FsgContext *c) {
        if (!c)
                return NULL;
        free(c->root);
        free(c->kver);
        free(c->moddir);
        free(c);
        return NULL;
}

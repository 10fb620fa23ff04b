/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "alloc-util.h"
#include "context.h"
#include "shell-quote.h"

static bool dir_exists(const FsgContext *c, const char *abs) {
        _cleanup_close_ int fd = fsg_open_in_root(c, abs, O_PATH | O_DIRECTORY);
        return fd >= 0;
}

/* Debian and openSUSE both merged /usr; older images keep modules in /lib only. */
static const char *modules_base(const FsgContext *c) {
        static const char * const bases[] = { "/usr/lib/modules", "/lib/modules" };
        for (size_t i = 0; i < ELEMENTSOF(bases); i++)
                if (dir_exists(c, bases[i]))
                        return bases[i];
        return NULL;
}

static int pick_release(const FsgContext *c, const char *base, char **ret) {
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_free_ char *best = NULL;
        struct utsname u;
        struct dirent *de;
        int r;

        if (uname(&u) == 0) {
                _cleanup_free_ char *p = NULL;
                if (asprintf(&p, "%s/%s", base, u.release) >= 0 && dir_exists(c, p)) {
                        *ret = strdup(u.release);
                        return *ret ? 0 : -ENOMEM;
                }
        }

        /* No tree for the running kernel (an image, a chroot): the newest one present. */
        r = fsg_opendir(c, base, &d);
        if (r < 0)
                return r;
        while ((errno = 0, de = readdir(d))) {
                if (de->d_name[0] == '.' || (best && strverscmp(de->d_name, best) <= 0))
                        continue;
                free(best);
                best = strdup(de->d_name);
                if (!best)
                        return -ENOMEM;
        }
        if (errno > 0)
                return -errno;
        *ret = TAKE_PTR(best);
        return 0;
}

/* c->root and c->root_fd from root ("" for the running system), which must be a system image. */
static int context_open_root(FsgContext *c, const char *root, FsgError *e) {
        size_t l;

        if (!root || streq(root, "/") || !*root)
                root = "";
        else if (root[0] != '/')
                return fsg_error(e, FSG_ERR_INVALID_ARGS, "Root directory must be an absolute path: %s", root);
        c->root = strdup(root);
        if (!c->root)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        l = strlen(c->root);
        while (l > 0 && c->root[l - 1] == '/')
                c->root[--l] = 0;
        if (!*c->root)
                return 0;
        c->root_fd = open(c->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (c->root_fd < 0 && errno == ENOENT)
                return fsg_error(e, FSG_ERR_INVALID_ARGS, "Root directory %s does not exist", c->root);
        if (c->root_fd < 0 && errno == ENOTDIR)
                return fsg_error(e, FSG_ERR_INVALID_ARGS, "Root %s is not a directory", c->root);
        if (c->root_fd < 0)
                return fsg_error_errno(e, errno, "Failed to open %s", c->root);
        /* A mistyped path or an unset variable's empty directory would otherwise be judged as
         * a system with nothing configured: "all allowed", or compliant. */
        if (!dir_exists(c, "/etc") && !dir_exists(c, "/usr"))
                return fsg_error(e, FSG_ERR_INVALID_ARGS, "%s is not a system image: it has neither /etc nor /usr",
                                 c->root);
        return 0;
}

/* c->kver: the one asked for, else the newest tree under base (NULL: none). */
static int context_pick_kernel(FsgContext *c, const char *kver, const char *base, FsgError *e) {
        int r;

        if (kver) {
                if (!fsg_kernel_release_is_valid(kver))
                        return fsg_error(e, FSG_ERR_INVALID_ARGS,
                                         "Invalid kernel release: %s (only letters, digits and . _ + - may name one)",
                                         kver);
                c->kver = strdup(kver);
                return c->kver ? 0 : fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        }
        if (!base)
                return 0;
        r = pick_release(c, base, &c->kver);
        if (r < 0)
                return fsg_error_errno(e, -r, "Failed to list %s%s", c->root, base);
        /* An image is hostile input: its newest module tree's name goes into paths and into
         * the commands fsgatectl prints (chroot IMG update-initramfs -k KVER). */
        if (c->kver && !fsg_kernel_release_is_valid(c->kver))
                return fsg_error(e, FSG_ERR_INVALID_ARGS,
                                 "Invalid kernel release %s in %s%s: only letters, digits and . _ + - may name one; "
                                 "--kernel-release= picks another tree", c->kver, c->root, base);
        return 0;
}

/* c->moddir_in_root and c->moddir for c->kver; asked for by name, the tree must exist. */
static int context_module_dirs(FsgContext *c, bool asked, const char *base, FsgError *e) {
        if (asprintf(&c->moddir_in_root, "%s/%s", base ?: "/usr/lib/modules", c->kver) < 0) {
                c->moddir_in_root = NULL;
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        }
        /* Judging against a tree that is not there would call every module "not in this
         * kernel". */
        if (asked) {
                _cleanup_close_ int fd = fsg_open_in_root(c, c->moddir_in_root, O_PATH | O_DIRECTORY);
                if (fd == -ENOENT || fd == -ENOTDIR)
                        return fsg_error(e, FSG_ERR_NO_KERNEL, "Kernel %s has no module tree in %s (no %s)",
                                         c->kver, *c->root ? c->root : "/", c->moddir_in_root);
                if (fd < 0)
                        return fsg_error(e, FSG_ERR_FAILED, "Failed to resolve %s in %s: %s", c->moddir_in_root,
                                         c->root, fsg_strerror(-fd));
        }
        c->moddir = fsg_path(c, c->moddir_in_root);
        if (!c->moddir)
                return fsg_error_errno(e, errno, "Failed to resolve %s in %s", c->moddir_in_root, c->root);
        return 0;
}

int fsg_context_new(const char *root, const char *kver, FsgContext **ret, FsgError *e) {
        assert(ret);

        _cleanup_(fsg_context_freep) FsgContext *c = NULL;
        const char *base;
        int r;

        c = calloc(1, sizeof(*c));
        if (!c)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        c->root_fd = -1;
        c->lock_timeout_usec = FSG_LOCK_TIMEOUT_USEC;
        r = context_open_root(c, root, e);
        if (r < 0)
                return r;
        base = modules_base(c);
        r = context_pick_kernel(c, kver, base, e);
        if (r >= 0 && c->kver)
                r = context_module_dirs(c, kver, base, e);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(c);
        return 0;
}

bool fsg_stat_is_host_root(const struct stat *st) {
        struct stat host;
        return stat("/", &host) == 0 && st->st_dev == host.st_dev && st->st_ino == host.st_ino;
}

bool fsg_context_is_running_system(const FsgContext *c) {
        assert(c);

        struct stat st;

        return !*c->root || (c->root_fd >= 0 && fstat(c->root_fd, &st) == 0 && fsg_stat_is_host_root(&st));
}

static const char *root_name(const FsgContext *c) {
        return *c->root ? c->root : "this system";
}

int fsg_context_require_kernel(const FsgContext *c, FsgError *e) {
        assert(c);

        /* libkmod reads the binary index only: a text modules.dep alone finds nothing. */
        static const char * const indexes[] = { "modules.dep.bin" };

        if (!c->kver)
                return fsg_error(e, FSG_ERR_NO_KERNEL,
                                 "%s has no kernel module tree (/usr/lib/modules or /lib/modules is missing or empty): "
                                 "there is no kernel to judge yet", root_name(c));
        /* Without the index kmod finds no module at all, and every one would look absent. */
        for (size_t i = 0; i < ELEMENTSOF(indexes); i++) {
                _cleanup_free_ char *p = NULL;
                _cleanup_close_ int fd = -1;

                if (asprintf(&p, "%s/%s", c->moddir_in_root, indexes[i]) < 0)
                        return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
                fd = fsg_open_in_root(c, p, O_PATH);
                if (fd >= 0)
                        return 0;
        }
        return fsg_error(e, FSG_ERR_NO_KERNEL,
                         "The module tree %s of %s has no modules.dep.bin: run depmod for kernel %s first",
                         c->moddir_in_root, root_name(c), c->kver);
}

int fsg_moddir_open(const FsgContext *c, const char *name, int mode, FsgError *e) {
        assert(c);
        assert(c->moddir_in_root);
        assert(mode == O_RDONLY || mode == O_PATH);

        _cleanup_free_ char *p = NULL;
        _cleanup_close_ int fd = -1;
        struct stat st;

        if (asprintf(&p, "%s/%s", c->moddir_in_root, name) < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        /* fsg_open_regular() checks what it opens; an O_PATH fd is checked here. */
        fd = mode == O_PATH ? fsg_open_in_root(c, p, O_PATH) : fsg_open_regular(c, p, FSG_TABLE_MAX);
        if (fd == -ENOENT)
                return -ENOENT;
        if (fd < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Failed to read %s%s: %s", c->root, p, fsg_strerror(-fd));
        if (mode == O_PATH && fstat(fd, &st) < 0)
                return fsg_error_errno(e, errno, "Failed to read %s%s", c->root, p);
        if (mode == O_PATH && !S_ISREG(st.st_mode))
                return fsg_error(e, FSG_ERR_FAILED, "Failed to read %s%s: %s", c->root, p, fsg_strerror(EBADFD));
        return TAKE_FD(fd);
}

FsgContext *fsg_context_free(FsgContext *c) {
        if (!c)
                return NULL;
        if (c->root_fd >= 0)
                close(c->root_fd);
        free_many(c->root, c->kver, c->moddir, c->moddir_in_root, c);
        return NULL;
}

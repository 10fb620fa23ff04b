/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Preloaded into an Open safely driver (service/open-sandbox.c): its open("/dev/fd/N") of the
 * medium becomes a dup of fd N, its realpath() of it stays "/dev/fd/N" (libguestfs would
 * otherwise hand QEMU the image's host path, which the sandbox hides) and its access() of it
 * asks the descriptor. The drivers take the medium by path only, and opening
 * /dev/fd/N opens the file again with its permissions checked anew: a stick's node (0660
 * root:disk) or a user's 0600 image cannot be opened by nobody, though fsgated handed the
 * open file over. Only read-only opens of a /dev/fd/N are changed; everything else is passed
 * to libc as it is. */
#undef _FORTIFY_SOURCE   /* these are the functions fortify would wrap */
#undef _FILE_OFFSET_BITS /* open and open64 are each defined here, not one redirected to the other */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* core/open-route.h's FSG_OPEN_VM_MEDIUM_FD: the VM route's medium (this file is built without
 * fsgate's headers; tests/unit/test-open.c checks the two agree through the route's argv). */
#define VM_MEDIUM_FD 1000

/* In the VM route's guestmount, libguestfs closes every descriptor below the soft
 * RLIMIT_NOFILE before it runs QEMU and qemu-img; the sandbox lowered that limit below the
 * medium's descriptor, and this lowers it again where that did not reach the process: a
 * parent under valgrind, which keeps a child's setrlimit() to itself until exec. */
__attribute__((constructor)) static void keep_vm_medium(void) {
        struct rlimit rl;

        if (fcntl(VM_MEDIUM_FD, F_GETFD) < 0 || getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur <= VM_MEDIUM_FD / 2)
                return;
        rl.rlim_cur = VM_MEDIUM_FD / 2;
        (void) setrlimit(RLIMIT_NOFILE, &rl);
}

/* N of a "/dev/fd/N" that is open, or -1. */
static int fd_of(const char *path) {
        char *end;
        long n;

        if (!path || strncmp(path, "/dev/fd/", 8) != 0)
                return -1;
        errno = 0;
        n = strtol(path + 8, &end, 10);
        if (errno || *end || end == path + 8 || n < 0 || n > 1024 || fcntl((int) n, F_GETFD) < 0)
                return -1;
        return (int) n;
}

static int handed_over(const char *path, int flags) {
        int n = (flags & O_ACCMODE) == O_RDONLY ? fd_of(path) : -1;

        return n < 0 ? -1 : fcntl(n, (flags & O_CLOEXEC) ? F_DUPFD_CLOEXEC : F_DUPFD, 0);
}

#define WRAP(type, name, ...)                                                                   \
        int fd = handed_over(path, flags);                                                      \
        if (fd >= 0)                                                                            \
                return fd;                                                                      \
        type real = (type) dlsym(RTLD_NEXT, name);                                              \
        if (!real) {                                                                            \
                errno = ENOSYS;                                                                 \
                return -1;                                                                      \
        }                                                                                       \
        return real(__VA_ARGS__);

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef int (*open2_fn)(const char *, int);

int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);

static mode_t mode_arg(int flags, va_list ap) {
        return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(ap, mode_t) : 0;
}

int open(const char *path, int flags, ...) {
        va_list ap;
        va_start(ap, flags);
        mode_t mode = mode_arg(flags, ap);
        va_end(ap);
        WRAP(open_fn, "open", path, flags, mode)
}

int open64(const char *path, int flags, ...) {
        va_list ap;
        va_start(ap, flags);
        mode_t mode = mode_arg(flags, ap);
        va_end(ap);
        WRAP(open_fn, "open64", path, flags, mode)
}

int openat(int dfd, const char *path, int flags, ...) {
        va_list ap;
        va_start(ap, flags);
        mode_t mode = mode_arg(flags, ap);
        va_end(ap);
        WRAP(openat_fn, "openat", dfd, path, flags, mode)
}

int openat64(int dfd, const char *path, int flags, ...) {
        va_list ap;
        va_start(ap, flags);
        mode_t mode = mode_arg(flags, ap);
        va_end(ap);
        WRAP(openat_fn, "openat64", dfd, path, flags, mode)
}

int __open_2(const char *path, int flags) {
        WRAP(open2_fn, "__open_2", path, flags)
}

int __open64_2(const char *path, int flags) {
        WRAP(open2_fn, "__open64_2", path, flags)
}

typedef char *(*realpath_fn)(const char *, char *);
typedef char *(*realpath_chk_fn)(const char *, char *, size_t);
typedef int (*access_fn)(const char *, int);
char *__realpath_chk(const char *path, char *resolved, size_t size);

static char *same_path(const char *path, char *resolved) {
        if (!resolved)
                return strdup(path);
        strcpy(resolved, path);         /* "/dev/fd/N": shorter than PATH_MAX */
        return resolved;
}

char *realpath(const char *path, char *resolved) {
        if (fd_of(path) >= 0)
                return same_path(path, resolved);
        realpath_fn real = (realpath_fn) dlsym(RTLD_NEXT, "realpath");
        if (!real) {
                errno = ENOSYS;
                return NULL;
        }
        return real(path, resolved);
}

char *__realpath_chk(const char *path, char *resolved, size_t size) {
        if (fd_of(path) >= 0)
                return same_path(path, resolved);
        realpath_chk_fn real = (realpath_chk_fn) dlsym(RTLD_NEXT, "__realpath_chk");
        if (!real) {
                errno = ENOSYS;
                return NULL;
        }
        return real(path, resolved, size);
}

/* Read (or only be there): what the descriptor was opened for, which is reading. */
int access(const char *path, int mode) {
        if (fd_of(path) >= 0 && !(mode & (W_OK | X_OK)))
                return 0;
        access_fn real = (access_fn) dlsym(RTLD_NEXT, "access");
        if (!real) {
                errno = ENOSYS;
                return -1;
        }
        return real(path, mode);
}

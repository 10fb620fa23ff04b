/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <dirent.h>
#include <stdio.h>

#include <stdint.h>
#include <sys/stat.h>

#include "fsg-error.h"

/* How long a writer waits for another writer (always the same user, root in practice)
 * before giving up with Busy (lock.h; a context starts with the first). A write holds the lock while it plans again and writes:
 * milliseconds, a second under sanitizers on a busy machine, and writers queue. The daemon,
 * which answers everyone from one loop, waits less (FSGATED_LOCK_TIMEOUT_USEC). */
#define FSG_LOCK_TIMEOUT_USEC (15 * 1000000ULL)
#define FSGATED_LOCK_TIMEOUT_USEC (5 * 1000000ULL)

/* Where fsgate looks: a system root ("/" or an image) and one kernel release in it. */
typedef struct FsgContext {
        char *root;     /* "" for the running system, else an absolute path without trailing '/' */
        char *kver;     /* NULL when the root has no module tree */
        char *moddir;   /* root-prefixed lib/modules/KVER (for libkmod, which opens by name), NULL with kver */
        char *moddir_in_root; /* the same as the system under the root names it, e.g. /usr/lib/modules/KVER */
        int root_fd;    /* the root, O_PATH; -1 for the running system */
        /* How long a write waits for another writer's lock (lock.h): a CLI can wait, a
         * daemon answering everyone from one loop must not. */
        uint64_t lock_timeout_usec;
} FsgContext;

int fsg_context_new(const char *root, const char *kver, FsgContext **ret, FsgError *e);
FsgContext *fsg_context_free(FsgContext *c);
static inline void fsg_context_freep(FsgContext **c) {
        fsg_context_free(*c);
}

/* Whether st (of a root given by path) is this system's "/": "/.", "//", a symlink to /. */
bool fsg_stat_is_host_root(const struct stat *st);

/* Whether the root is the system this process runs on ("", or "/" however spelled): only
 * then may a module be loaded or unloaded. An image's module files never go into the running
 * kernel, however its files are named. */
bool fsg_context_is_running_system(const FsgContext *c);

/* Whether there is a kernel to judge against: a module tree with its index. An answer that
 * must not pass on missing data (an audit) asks this first; NoKernel if not. */
int fsg_context_require_kernel(const FsgContext *c, FsgError *e);
/* The file name of c's module tree (moddir_in_root/name), opened inside the root and checked
 * to be a regular file: with mode O_RDONLY to read (fsg_open_regular(), at most FSG_TABLE_MAX),
 * with O_PATH only found. Returns the fd, -ENOENT (nothing said in e) when it is not there, or
 * another failure, said in e. */
int fsg_moddir_open(const FsgContext *c, const char *name, int mode, FsgError *e);

/* abs as a path on the host: below the root, with symlinks resolved inside the root.
 * abs must start with '/'. Returns NULL with errno set (ENOMEM, ELOOP, ...). The _nofollow
 * variant leaves a final symlink alone (for classifying our own files, masks included).
 * The string is only as good as the moment it was made: a symlink swapped in later is
 * followed by whoever opens it. Use it to name, watch or hand a path to libkmod; open
 * through fsg_open_in_root() and friends. */
char *fsg_path(const FsgContext *c, const char *abs);
char *fsg_path_nofollow(const FsgContext *c, const char *abs);

/* Opens abs as the system under the root sees it: every symlink resolved inside the root by
 * the kernel (openat2 RESOLVE_IN_ROOT, no magic links), so what is opened is inside the root
 * whatever the image holds or an attacker swaps in meanwhile. For the running system a plain
 * open(). Returns an fd (O_CLOEXEC) or a negative errno. */
int fsg_open_in_root(const FsgContext *c, const char *abs, int flags);
/* The same by hand, where openat2() is missing (old kernels, seccomp filters, valgrind): one
 * component at a time from directory fds held, each symlink read and walked again from the
 * root (absolute) or from where it is, ".." never above the root. Exported for tests. */
int fsg_open_in_root_walk(int root_fd, const char *abs, int flags);

/* A directory below the root as an fd for the *at() calls that write in it (O_RDONLY, so that
 * it can be fsync'd and flock'd). With create, missing components are made, 0755 whatever the
 * umask, each inside the directory found for its parent. Returns an fd or a negative errno. */
int fsg_open_dir(const FsgContext *c, const char *abs, bool create);
/* fsg_open_dir() without create as a stream for readdir(): 0 and *ret, or a negative errno. */
int fsg_opendir(const FsgContext *c, const char *abs, DIR **ret);

/* Opens a file to read and checks it first: a FIFO would block the reader forever and a
 * device (a link to /dev/zero) feed it forever, so only a regular file of at most max bytes is
 * opened, never blocking (procfs files say size 0: the reader caps what it reads). Returns an
 * fd, or -ENOENT, -EISDIR, -EBADFD (not a regular file), -EFBIG (larger than max), ... */
int fsg_open_regular(const FsgContext *c, const char *abs, uint64_t max);
/* fsg_open_regular() as a stdio stream: 0 and *ret, or the same negative errnos. The stream
 * holds the file to max bytes while it is read, too (fsg_fdopen_capped()). */
int fsg_fopen_regular(const FsgContext *c, const char *abs, uint64_t max, FILE **ret);
/* fd (taken, also on error) as a stream that fails with EFBIG once more than max bytes came
 * from it: the size checked at the open says nothing of what a writer appends after it. */
int fsg_fdopen_capped(int fd, uint64_t max, FILE **ret);
/* The next line (up to and with delim) into *line, grown as getline() would: its length, 0
 * at the end, or a negative errno: -EMSGSIZE for a line longer than max bytes, -EFBIG from a
 * capped stream past its cap, -EIO. Memory stays within max, whatever the file holds. */
ssize_t fsg_read_line(FILE *f, int delim, size_t max, char **line, size_t *cap);
/* fsg_fopen_regular() and all it holds, read at once: *ret (NUL-terminated, the caller frees)
 * and *ret_len (may be NULL), or the same negative errnos (-EFBIG for a file that grew past
 * max meanwhile, found while reading: memory stays within max). */
int fsg_read_regular(const FsgContext *c, const char *abs, uint64_t max, char **ret, size_t *ret_len);
/* The same for name in the directory dfd, a final symlink not followed. */
int fsg_open_regular_at(int dfd, const char *name, uint64_t max);

/* strerror() with the words for the errors above ("not a regular file" for EBADFD, "line
 * too long" for EMSGSIZE). */
const char *fsg_strerror(int err);

/* Caps on what one file may hold: beyond them a file is an error, not a slow answer. */
#define FSG_CONF_MAX  (UINT64_C(16) << 20)   /* one modprobe.d file */
#define FSG_TABLE_MAX (UINT64_C(64) << 20)   /* a module tree text file, a /proc table */
#define FSG_LINE_MAX  ((size_t) 1 << 20)     /* one line of any of them, as systemd's parsers */

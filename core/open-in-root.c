/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Opening anything under a root (context.h): every path resolved the way the system under the
 * root sees it, never outside it, whatever an image's symlinks say; files read with a cap. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "context.h"

/* Resolves abs the way the system under the root sees it: an absolute symlink target starts
 * again at the root, ".." stops at the root. The part that does not exist yet is appended as
 * it is. Only for strings (names, watches, libkmod): opening goes through openat2(). */
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
                        if (++links > 40) {
                                errno = ELOOP;
                                return NULL;
                        }
                        /* No symlink any more (replaced since the lstat()): look again. */
                        if (n < 0 && errno == EINVAL)
                                continue;
                        if (n < 0)
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
        assert(c);
        assert(abs);

        if (*c->root)
                return chase(c, abs, true);
        return strdup(abs);
}

char *fsg_path_nofollow(const FsgContext *c, const char *abs) {
        if (*c->root)
                return chase(c, abs, false);
        return strdup(abs);
}

#define WALK_DEPTH 64

static void close_all(int *fds, size_t n) {
        while (n > 0)
                close(fds[--n]);
}

/* Where fsg_open_in_root_walk() is. */
typedef struct Walk {
        int root_fd;
        int dirs[WALK_DEPTH];   /* the directories walked so far below the root */
        size_t depth;
        unsigned links;         /* symlinks followed, as the kernel counts them: at most 40 */
        char *todo;             /* the path being walked */
        const char *rest;       /* in todo: what is left of it */
} Walk;

static int walk_cur(const Walk *w) {
        return w->depth > 0 ? w->dirs[w->depth - 1] : w->root_fd;
}

/* One component, never following a symlink: the last with the caller's flags, any other as a
 * directory to walk on from. */
static int walk_open(const Walk *w, const char *comp, bool last, int flags) {
        struct stat st;
        int fd = last ? openat(walk_cur(w), comp, flags | O_NOFOLLOW | O_CLOEXEC) :
                        openat(walk_cur(w), comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        if (last && (flags & O_PATH) && !(flags & O_NOFOLLOW) && (fstat(fd, &st) < 0 || S_ISLNK(st.st_mode))) {
                close(fd); /* O_PATH|O_NOFOLLOW opened the symlink itself */
                return -ELOOP;
        }
        return fd;
}

/* comp (l bytes, just walked past) would not open as asked (err): if it is a symlink, its
 * target is walked next, from the root (absolute) or from here. 0 to walk on, or the error. */
static int walk_follow(Walk *w, const char *comp, size_t l, int err) {
        char target[4096], *joined;
        ssize_t n = readlinkat(walk_cur(w), comp, target, sizeof(target) - 1);

        if (n < 0 && (errno == EINVAL || errno == ENOENT) && err == -ELOOP && w->links < 40) {
                /* A symlink a moment ago, and now a file or nothing: renamed over or removed
                 * (an atomic writer replacing a mask). Look at the name again. */
                w->links++;
                w->rest -= l;
                return 0;
        }
        if (n < 0)
                return err; /* no symlink: the error stands */
        if (++w->links > 40)
                return -ELOOP;
        target[n] = 0;
        if (target[0] == '/') {
                close_all(w->dirs, w->depth);
                w->depth = 0;
        }
        if (asprintf(&joined, "%s/%s", target, w->rest) < 0)
                return -ENOMEM;
        free(w->todo);
        w->rest = w->todo = joined;
        return 0;
}

static int walk(Walk *w, int flags) {
        for (;;) {
                char comp[NAME_MAX + 1];
                size_t l;
                bool last;
                int fd, r;

                w->rest += strspn(w->rest, "/");
                if (!*w->rest) { /* the path ends at a directory already walked (or the root) */
                        fd = openat(walk_cur(w), ".", flags | O_CLOEXEC);
                        return fd < 0 ? -errno : fd;
                }
                l = strcspn(w->rest, "/");
                if (l > NAME_MAX)
                        return -ENAMETOOLONG;
                memcpy(comp, w->rest, l);
                comp[l] = 0;
                w->rest += l;
                last = !w->rest[strspn(w->rest, "/")];
                if (streq(comp, "."))
                        continue;
                if (streq(comp, "..")) { /* never above the root */
                        if (w->depth > 0)
                                close(w->dirs[--w->depth]);
                        continue;
                }
                fd = walk_open(w, comp, last, flags);
                if (fd >= 0 && last)
                        return fd;
                if (fd >= 0 && w->depth == WALK_DEPTH) {
                        close(fd);
                        return -ENAMETOOLONG;
                }
                if (fd >= 0) {
                        w->dirs[w->depth++] = fd;
                        continue;
                }
                /* O_NOFOLLOW refused a symlink (or it is no directory): unless the caller
                 * wants a last one left alone, it is read and walked. */
                if ((fd != -ELOOP && fd != -ENOTDIR) || (last && (flags & O_NOFOLLOW)))
                        return fd;
                r = walk_follow(w, comp, l, fd);
                if (r < 0)
                        return r;
        }
}

int fsg_open_in_root_walk(int root_fd, const char *abs, int flags) {
        Walk w = { .root_fd = root_fd, .todo = strdup(abs) };
        int r;

        if (!w.todo)
                return -ENOMEM;
        w.rest = w.todo;
        r = walk(&w, flags);
        close_all(w.dirs, w.depth);
        free(w.todo);
        return r;
}

/* openat2() may be missing: an old kernel, a seccomp filter, valgrind. */
static bool have_openat2 = true;

/* name below dfd: with in_root, dfd is the root and every symlink is resolved inside it; else
 * name is one component and a final symlink is not followed. */
static int open_below(int dfd, const char *name, int flags, bool in_root) {
        struct open_how how = {
                .flags = (uint64_t) (flags | O_CLOEXEC),
                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
        };
        int fd;

        if (!in_root) {
                fd = openat(dfd, name, flags | O_NOFOLLOW | O_CLOEXEC);
                return fd < 0 ? -errno : fd;
        }
        /* The kernel answers EAGAIN when a rename elsewhere raced a ".." walk: it cannot
         * vouch for the result then. Anything else is final. */
        for (unsigned i = 0; have_openat2 && i < 64; i++) {
                fd = (int) syscall(SYS_openat2, dfd, name, &how, sizeof(how));
                if (fd >= 0)
                        return fd;
                if (errno == ENOSYS || errno == EPERM)
                        have_openat2 = false;
                else if (errno != EAGAIN)
                        return -errno;
        }
        return fsg_open_in_root_walk(dfd, name, flags);
}

int fsg_open_in_root(const FsgContext *c, const char *abs, int flags) {
        assert(c);
        assert(abs);

        int fd;

        if (c->root_fd >= 0)
                return open_below(c->root_fd, abs, flags, true);
        fd = open(abs, flags | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

int fsg_open_dir(const FsgContext *c, const char *abs, bool create) {
        assert(c);
        assert(abs);

        _cleanup_free_ char *p = NULL;
        int fd = fsg_open_in_root(c, abs, O_RDONLY | O_DIRECTORY);

        if (fd >= 0 || fd != -ENOENT || !create)
                return fd;
        /* Where the system under the root would make it: along its symlinks (a dangling
         * "etc/modprobe.d -> /usr/lib/x" included), as mkdir -p on the target would. */
        p = fsg_path(c, abs);
        if (!p)
                return -errno;
        memmove(p, p + strlen(c->root), strlen(p + strlen(c->root)) + 1);
        /* One component at a time, made inside the directory found (inside the root) for its
         * parent: a string path would follow a symlink swapped in between. */
        for (char *s = p + 1;; s++) {
                _cleanup_close_ int parent = -1, made = -1;
                char save = *s, *slash;

                if (save && save != '/')
                        continue;
                *s = 0;
                slash = strrchr(p, '/');
                *slash = 0;
                parent = fsg_open_in_root(c, *p ? p : "/", O_PATH | O_DIRECTORY);
                *slash = '/';
                if (parent < 0)
                        return parent;
                if (slash[1] && mkdirat(parent, slash + 1, 0755) == 0) {
                        /* The umask of whoever runs us must not make the directory unreadable. */
                        made = openat(parent, slash + 1, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (made < 0 || fchmod(made, 0755) < 0)
                                return -errno;
                } else if (slash[1] && errno != EEXIST)
                        return -errno;
                *s = save;
                if (!save)
                        break;
        }
        return fsg_open_in_root(c, abs, O_RDONLY | O_DIRECTORY);
}

int fsg_opendir(const FsgContext *c, const char *abs, DIR **ret) {
        assert(c);
        assert(abs);
        assert(ret);

        int fd = fsg_open_dir(c, abs, false), r;

        if (fd < 0)
                return fd;
        *ret = fdopendir(fd);
        if (!*ret) {
                r = -errno;
                close(fd);
                return r;
        }
        return 0;
}

static int check_regular(int fd, uint64_t max, struct stat *st) {
        if (fstat(fd, st) < 0)
                return -errno;
        if (S_ISDIR(st->st_mode))
                return -EISDIR;
        if (!S_ISREG(st->st_mode))
                return -EBADFD;
        if ((uint64_t) st->st_size > max)
                return -EFBIG;
        return 0;
}

/* The file is looked at (O_PATH) before it is opened: opening a device node an image can
 * hold (a watchdog, a tape) has effects of its own, O_NONBLOCK or not. Then exactly that
 * inode is opened through /proc/self/fd; without /proc (a bare chroot), the name again, and
 * it must lead to the same inode. */
static int open_checked(int dfd, const char *name, bool in_root, uint64_t max) {
        _cleanup_close_ int pfd = open_below(dfd, name, O_PATH, in_root), fd = -1;
        char p[sizeof("/proc/self/fd/") + 12];
        struct stat a, b;
        int r;

        if (pfd < 0)
                return pfd;
        r = check_regular(pfd, max, &a);
        if (r < 0)
                return r;
        snprintf(p, sizeof(p), "/proc/self/fd/%d", pfd);
        fd = open(p, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT)
                fd = open_below(dfd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY, in_root);
        else if (fd < 0)
                fd = -errno;
        if (fd < 0)
                return fd;
        r = check_regular(fd, max, &b); /* it may have grown meanwhile */
        if (r < 0)
                return r;
        if (a.st_dev != b.st_dev || a.st_ino != b.st_ino)
                return -ESTALE;
        return TAKE_FD(fd);
}

int fsg_open_regular(const FsgContext *c, const char *abs, uint64_t max) {
        assert(c);
        assert(abs);

        struct stat st;
        int fd, r;

        if (c->root_fd >= 0)
                return open_checked(c->root_fd, abs, true, max);
        /* The running system's own files (/proc tables read for every answer): one open, no
         * allocation; O_NONBLOCK still keeps a FIFO from blocking it. */
        fd = open(abs, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = check_regular(fd, max, &st);
        if (r < 0) {
                close(fd);
                return r;
        }
        return fd;
}

/* The size checked at the open is a snapshot: the file may grow (a sparse gigabyte is one
 * ftruncate() away) before its reader reaches the end. So the stream counts what it hands
 * out and fails with EFBIG, for good, once there is more than max. */
typedef struct CappedStream {
        int fd;
        uint64_t left;
        bool over;
} CappedStream;

static ssize_t capped_read(void *cookie, char *buf, size_t size) {
        CappedStream *cs = cookie;
        /* One byte past the cap is enough to know the file is too large. */
        size_t want = (uint64_t) size > cs->left ? (size_t) cs->left + 1 : size;
        ssize_t n;

        if (cs->over) {
                errno = EFBIG;
                return -1;
        }
        do
                n = read(cs->fd, buf, want);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -1;
        if ((uint64_t) n > cs->left) {
                cs->over = true;
                errno = EFBIG;
                return -1;
        }
        cs->left -= (uint64_t) n;
        return n;
}

static int capped_close(void *cookie) {
        CappedStream *cs = cookie;

        close(cs->fd);
        free(cs);
        return 0;
}

int fsg_fdopen_capped(int fd, uint64_t max, FILE **ret) {
        CappedStream *cs = malloc(sizeof(CappedStream));

        if (cs) {
                *cs = (CappedStream) { .fd = fd, .left = max };
                *ret = fopencookie(cs, "r", (cookie_io_functions_t) { .read = capped_read, .close = capped_close });
                if (*ret)
                        return 0;
        }
        free(cs);
        close(fd);
        return -ENOMEM;
}

int fsg_fopen_regular(const FsgContext *c, const char *abs, uint64_t max, FILE **ret) {
        assert(c);
        assert(abs);
        assert(ret);

        int fd = fsg_open_regular(c, abs, max);

        return fd < 0 ? fd : fsg_fdopen_capped(fd, max, ret);
}

ssize_t fsg_read_line(FILE *f, int delim, size_t max, char **line, size_t *cap) {
        size_t l = 0;
        int ch;

        errno = 0;
        flockfile(f);
        while ((ch = getc_unlocked(f)) != EOF) {
                if (l + 2 > *cap) {
                        /* Grown as getline() would, but never much past what a line may hold. */
                        size_t n = *cap < 64 ? 128 : *cap * 2;
                        char *t;

                        if (n > max + 2)
                                n = max + 2;
                        t = realloc(*line, n);
                        if (!t) {
                                funlockfile(f);
                                return -ENOMEM;
                        }
                        *line = t;
                        *cap = n;
                }
                (*line)[l++] = (char) ch;
                if (ch == delim)
                        break;
                if (l > max) {
                        funlockfile(f);
                        return -EMSGSIZE;
                }
        }
        funlockfile(f);
        if (ch == EOF && ferror(f))
                return errno > 0 ? -errno : -EIO;
        if (l > 0)
                (*line)[l] = 0;
        return (ssize_t) l;
}

int fsg_read_regular(const FsgContext *c, const char *abs, uint64_t max, char **ret, size_t *ret_len) {
        assert(c);
        assert(abs);
        assert(ret);

        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, cap = 0;
        int r = fsg_fopen_regular(c, abs, max, &f);

        if (r < 0)
                return r;
        /* The stream fails with EFBIG before it hands out more than max: the buffer never
         * grows past max and its NUL, however large the file became since the check. */
        for (;;) {
                size_t n;

                if (cap - len < 4096) {
                        size_t want = cap ? 2 * cap : 65536;
                        char *t;

                        if (want > max + 2)
                                want = max + 2;
                        t = want > cap ? realloc(buf, want) : buf;
                        if (!t)
                                return -ENOMEM;
                        buf = t;
                        cap = want;
                }
                n = fread(buf + len, 1, cap - len - 1, f);
                len += n;
                if (n == 0)
                        break;
        }
        if (ferror(f))
                return errno > 0 ? -errno : -EIO;
        buf[len] = 0;
        *ret = TAKE_PTR(buf);
        if (ret_len)
                *ret_len = len;
        return 0;
}

int fsg_open_regular_at(int dfd, const char *name, uint64_t max) {
        return open_checked(dfd, name, false, max);
}

const char *fsg_strerror(int err) {
        switch (err) {
        case EBADFD: return "Not a regular file";
        case EFBIG:  return "File too large";
        case ESTALE: return "Replaced while being opened";
        case EMSGSIZE: return "Line too long";
        default:     return strerror(err);
        }
}


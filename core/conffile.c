/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "conffile.h"
#include "name.h"

/* Large files are certainly not ours; a cap keeps a hostile file from costing memory. */
#define CLASSIFY_MAX 65536

static bool kind_is_ours(FsgFileKind k) {
        return k == FSG_FILE_MASK || k == FSG_FILE_FSGATE || k == FSG_FILE_SUSE_NEVER || k == FSG_FILE_MODIFIABLE;
}

static FsgFileKind classify_content(char *buf, size_t len, const char *module) {
        _cleanup_free_ char *never = NULL;

        buf[len] = 0;
        if (strncmp(buf, FSG_HEADER, strlen(FSG_HEADER)) == 0)
                return FSG_FILE_FSGATE;
        for (char *l = buf; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
                if (strncmp(l, FSG_SUSE_MODIFIABLE, strlen(FSG_SUSE_MODIFIABLE)) == 0)
                        return FSG_FILE_MODIFIABLE;

        /* openSUSE's unblacklist helper writes just this line for "never", after a comment
         * that names itself (suse-module-tools 16.1: "# created by PATH (user wants to never
         * unblacklist this module)"): its sanctioned file for that decision, not a stranger's. */
        if (strncmp(buf, "# created by ", 13) == 0) {
                char *nl = strchr(buf, '\n');
                if (nl && (size_t) (nl - buf) > strlen(FSG_SUSE_NEVER_COMMENT) &&
                    strncmp(nl - strlen(FSG_SUSE_NEVER_COMMENT), FSG_SUSE_NEVER_COMMENT, strlen(FSG_SUSE_NEVER_COMMENT)) == 0) {
                        len -= (size_t) (nl + 1 - buf);
                        memmove(buf, nl + 1, len + 1);
                }
        }
        while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' ' || buf[len - 1] == '\t'))
                buf[--len] = 0;
        if (!module)
                return strncmp(buf, "blacklist ", 10) == 0 && fsg_name_is_valid(buf + 10) ?
                        FSG_FILE_SUSE_NEVER : FSG_FILE_FOREIGN;
        if (asprintf(&never, "blacklist %s", module) >= 0 && streq(buf, never))
                return FSG_FILE_SUSE_NEVER;
        return FSG_FILE_FOREIGN;
}

/* One look: > 0 when the file changed between stat and open (another writer at work). */
static int classify_once(int dfd, const char *name, const char *module, FsgFileId *id) {
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *buf = NULL;
        struct stat st, fst;
        char target[64];
        ssize_t n;
        size_t len = 0;

        *id = (FsgFileId) { .kind = FSG_FILE_FOREIGN };
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno == ENOENT)
                        id->kind = FSG_FILE_ABSENT;
                return 0;
        }
        id->dev = st.st_dev;
        id->ino = st.st_ino;
        id->size = st.st_size;
        id->mtime = st.st_mtim;
        if (S_ISLNK(st.st_mode)) {
                n = readlinkat(dfd, name, target, sizeof(target) - 1);
                if (n < 0)
                        return errno == ENOENT || errno == EINVAL;
                target[n] = 0;
                if (streq(target, "/dev/null"))
                        id->kind = FSG_FILE_MASK;
                return 0;
        }
        if (!S_ISREG(st.st_mode) || st.st_size > CLASSIFY_MAX)
                return 0;

        /* Whatever is there now is opened only if it is a regular file, and judged only if it
         * is the one whose identity goes to the caller. */
        fd = fsg_open_regular_at(dfd, name, CLASSIFY_MAX);
        if (fd < 0 || fstat(fd, &fst) < 0)
                return fd == -ENOENT || fd == -EBADFD || fd == -EFBIG || fd == -ESTALE;
        if (fst.st_dev != st.st_dev || fst.st_ino != st.st_ino)
                return 1;
        buf = malloc(CLASSIFY_MAX + 1);
        if (!buf)
                return 0;
        while (len < CLASSIFY_MAX && (n = read(fd, buf + len, CLASSIFY_MAX - len)) > 0)
                len += n;
        id->kind = classify_content(buf, len, module);
        return 0;
}

FsgFileKind fsg_file_classify_at(int dfd, const char *name, const char *module, FsgFileId *ret) {
        FsgFileId id;

        /* A file replaced or removed under our eyes (an atomic write by another fsgate, say) is
         * looked at again; one that keeps changing is nothing we can vouch for: foreign. */
        for (unsigned i = 0; i < 16 && classify_once(dfd, name, module, &id) > 0; i++)
                id = (FsgFileId) { .kind = FSG_FILE_FOREIGN };
        if (ret)
                *ret = id;
        return id.kind;
}

/* An error opening the directory: a missing one holds no file; anything else (not a
 * directory, a loop) is no file of ours. */
static FsgFileKind classify_in(int dfd, const char *name, const char *module, FsgFileId *ret) {
        if (dfd >= 0)
                return fsg_file_classify_at(dfd, name, module, ret);
        if (ret)
                *ret = (FsgFileId) { .kind = dfd == -ENOENT ? FSG_FILE_ABSENT : FSG_FILE_FOREIGN };
        return dfd == -ENOENT ? FSG_FILE_ABSENT : FSG_FILE_FOREIGN;
}

FsgFileKind fsg_file_classify(const char *fullpath, const char *module) {
        _cleanup_free_ char *dir = strdup(fullpath);
        _cleanup_close_ int dfd = -1;
        char *slash = dir ? strrchr(dir, '/') : NULL;

        if (!slash)
                return FSG_FILE_FOREIGN;
        *slash = 0;
        dfd = open(*dir ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        return classify_in(dfd < 0 ? -errno : dfd, slash + 1, module, NULL);
}

FsgFileKind fsg_target_classify(const FsgContext *c, const char *abs, const char *module, FsgFileId *ret) {
        _cleanup_free_ char *dir = strdup(abs);
        _cleanup_close_ int dfd = -1;
        char *slash = dir ? strrchr(dir, '/') : NULL;

        if (!slash)
                return classify_in(-ENOMEM, "", module, ret);
        *slash = 0;
        dfd = fsg_open_in_root(c, *dir ? dir : "/", O_PATH | O_DIRECTORY);
        return classify_in(dfd, slash + 1, module, ret);
}

char *fsg_deny_file_content(const char *module, const char *types, const char *path, const char *hook) {
        return fsg_deny_file_content_mode(module, types, path, hook, false);
}

char *fsg_deny_file_content_mode(const char *module, const char *types, const char *path, const char *hook,
                                 bool hard) {
        _cleanup_free_ char *routes = NULL, *list = strdup(types ?: "");
        size_t routes_len = 0;
        char *save = NULL, *s;
        FILE *f;

        if (!list || !(f = open_memstream(&routes, &routes_len)))
                return NULL;
        /* kmod checks the blacklist only for the modules an alias names, and a config alias
         * wins over modules.alias: so the kernel's fs-TYPE request runs the hook (which loads
         * nothing), while "modprobe MODULE" by name still loads the module. */
        for (char *t = strtok_r(list, " ", &save); t; t = strtok_r(NULL, " ", &save))
                if (fsg_hook_lines_write(f, hook, &(FsgHookArgs) { .kind = FSG_HOOK_LINE_BLOCKED, .type = t,
                                                                   .module = module, .source = path }) < 0) {
                        fclose(f);
                        return NULL;
                }
        if (fclose(f) == EOF)
                return NULL;
        if ((hard ? asprintf(&s,
                     FSG_HEADER ": loading the %1$s filesystem module is denied (hard deny).\n"
                     "# fsgate may replace or remove this file; undo with: fsgatectl reset %1$s\n"
                     "# An explicit \"modprobe %1$s\" fails too; blocked mounts are still reported.\n"
                     "# No openSUSE marker: its unblacklist helper must never lift a hard deny.\n"
                     "blacklist %1$s\n"
                     "install %1$s " FSG_HARD_COMMAND "\n"
                     "%2$s",
                     module, routes) :
                   asprintf(&s,
                     FSG_HEADER ": automatic loading of the %1$s filesystem module is denied.\n"
                     "# fsgate may replace or remove this file; undo with: fsgatectl reset %1$s\n"
                     "# An explicit \"modprobe %1$s\" by root still loads the module. openSUSE's\n"
                     "# unblacklist helper, answered \"yes\" on a terminal, may replace this file with\n"
                     "# an allow (a soft deny is openSUSE's blacklist, which root may lift that way).\n"
                     FSG_SUSE_MODIFIABLE "\n"
                     "blacklist %1$s\n"
                     "%2$s",
                     module, routes)) < 0)
                return NULL;
        return s;
}

static void random_name(char buf[static 64], const char *prefix) {
        uint64_t r;

        if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
                r = ((uint64_t) random() << 32) ^ (uint64_t) getpid();
        snprintf(buf, 64, "%s%016" PRIx64, prefix, r);
}

static void temp_name(char buf[static 64]) {
        random_name(buf, FSG_TEMP_PREFIX);
}

static bool same_file(const FsgFileId *a, const FsgFileId *b) {
        return a->kind == b->kind && a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
               a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* Someone else's file that came our way (moved aside to be checked) and cannot go back under
 * its name because a new file took it: kept under a name temp cleaning leaves alone. */
static int keep_aside(int dfd, const char *tmp, const char *dir, const char *name, int err, FsgError *e) {
        char kept[64];

        random_name(kept, FSG_KEPT_PREFIX);
        if (renameat2(dfd, tmp, dfd, kept, RENAME_NOREPLACE) < 0)
                snprintf(kept, sizeof(kept), "%s", tmp);
        return fsg_error(e, FSG_ERR_CONCURRENT_CHANGE,
                         "%s/%s changed while fsgate was changing it and could not be put back (%s): "
                         "the file found is kept as %s/%s", dir, name, strerror(err), dir, kept);
}

static int concurrent(FsgError *e, const char *dir, const char *name) {
        return fsg_error(e, FSG_ERR_CONCURRENT_CHANGE,
                         "%s/%s changed while fsgate was changing it; it was left as found, try again", dir, name);
}

/* rename() that never replaces: where the filesystem lacks RENAME_NOREPLACE, link() has the
 * same promise. */
static int rename_noreplace(int dfd, const char *from, const char *to) {
        if (renameat2(dfd, from, dfd, to, RENAME_NOREPLACE) == 0)
                return 0;
        if (errno != EINVAL)
                return -errno;
        if (linkat(dfd, from, dfd, to, 0) < 0)
                return -errno;
        (void) unlinkat(dfd, from, 0);
        return 0;
}

/* The file that was at name now sits at tmp (after an exchange): drop it if it is the one
 * planned, else swap back and drop only the file we made. */
static int drop_displaced(int dfd, const char *tmp, const FsgFileId *mine, const char *dir, const char *name,
                          const FsgFileId *expect, FsgError *e) {
        FsgFileId old, back;

        fsg_file_classify_at(dfd, tmp, NULL, &old);
        if (same_file(&old, expect))
                return unlinkat(dfd, tmp, 0) < 0 ? fsg_error_errno(e, errno, "Failed to remove %s/%s", dir, tmp) : 0;
        if (renameat2(dfd, tmp, dfd, name, RENAME_EXCHANGE) < 0)
                return keep_aside(dfd, tmp, dir, name, errno, e);
        fsg_file_classify_at(dfd, tmp, NULL, &back);
        if (back.dev == mine->dev && back.ino == mine->ino)
                (void) unlinkat(dfd, tmp, 0);
        return concurrent(e, dir, name);
}

/* Moves the finished temp file to name: only into a free name when the plan saw none, only
 * in exchange for the very file the plan saw otherwise. */
static int put_in_place(int dfd, const char *tmp, const FsgFileId *mine, const char *dir, const char *name,
                        const FsgFileId *expect, FsgError *e) {
        FsgFileId now;
        int r;

        if (!expect || expect->kind == FSG_FILE_ABSENT) {
                r = rename_noreplace(dfd, tmp, name);
                if (r < 0) {
                        (void) unlinkat(dfd, tmp, 0);
                        return r == -EEXIST ? concurrent(e, dir, name) :
                                fsg_error_errno(e, -r, "Failed to create %s/%s", dir, name);
                }
        } else if (!kind_is_ours(expect->kind)) {
                (void) unlinkat(dfd, tmp, 0);
                return concurrent(e, dir, name);
        } else if (renameat2(dfd, tmp, dfd, name, RENAME_EXCHANGE) == 0) {
                r = drop_displaced(dfd, tmp, mine, dir, name, expect, e);
                if (r < 0)
                        return r;
        } else {
                int err = errno;
                /* A filesystem without RENAME_EXCHANGE: check, then replace. The window
                 * between the two is all that is lost. */
                if (err == EINVAL) {
                        fsg_file_classify_at(dfd, name, NULL, &now);
                        err = !same_file(&now, expect) ? ENOENT : renameat(dfd, tmp, dfd, name) < 0 ? errno : 0;
                }
                if (err != 0) {
                        (void) unlinkat(dfd, tmp, 0);
                        return err == ENOENT ? concurrent(e, dir, name) :
                                fsg_error_errno(e, err, "Failed to replace %s/%s", dir, name);
                }
        }
        if (fsync(dfd) < 0)
                return fsg_error_errno(e, errno, "Failed to sync %s", dir);
        return 0;
}

int fsg_atomic_write(int dfd, const char *dir, const char *name, const char *content,
                     const FsgFileId *expect, FsgError *e) {
        _cleanup_close_ int fd = -1;
        size_t len = strlen(content), done = 0;
        FsgFileId mine = {};
        struct stat st;
        char tmp[64];
        int err;

        temp_name(tmp);
        fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return fsg_error_errno(e, errno, "Failed to create a file in %s", dir);
        /* kmod run by anyone (modprobe -c, a user's lsmod tools) reads these: 0644, not
         * whatever the caller's umask leaves. */
        if (fchmod(fd, 0644) < 0)
                goto fail;
        while (done < len) {
                ssize_t n = write(fd, content + done, len - done);
                if (n < 0)
                        goto fail;
                done += n;
        }
        if (fsync(fd) < 0 || fstat(fd, &st) < 0)
                goto fail;
        mine = (FsgFileId) { .dev = st.st_dev, .ino = st.st_ino };
        return put_in_place(dfd, tmp, &mine, dir, name, expect, e);
fail:
        err = errno;
        (void) unlinkat(dfd, tmp, 0);
        return fsg_error_errno(e, err, "Failed to write %s/%s", dir, name);
}

int fsg_atomic_symlink(int dfd, const char *dir, const char *name, const char *target,
                       const FsgFileId *expect, FsgError *e) {
        FsgFileId mine = {};
        struct stat st;
        char tmp[64];

        temp_name(tmp);
        if (symlinkat(target, dfd, tmp) < 0)
                return fsg_error_errno(e, errno, "Failed to create a symlink in %s", dir);
        if (fstatat(dfd, tmp, &st, AT_SYMLINK_NOFOLLOW) == 0)
                mine = (FsgFileId) { .dev = st.st_dev, .ino = st.st_ino };
        return put_in_place(dfd, tmp, &mine, dir, name, expect, e);
}

int fsg_durable_unlink(int dfd, const char *dir, const char *name, const FsgFileId *expect, FsgError *e) {
        FsgFileId old;
        char tmp[64];
        int r;

        if (!expect || expect->kind == FSG_FILE_ABSENT)
                return 0;
        if (!kind_is_ours(expect->kind))
                return concurrent(e, dir, name);
        /* Moved aside first: then what is checked is exactly what would be unlinked. */
        temp_name(tmp);
        r = rename_noreplace(dfd, name, tmp);
        if (r == -ENOENT)
                return 0; /* gone already */
        if (r < 0)
                return fsg_error_errno(e, -r, "Failed to remove %s/%s", dir, name);
        fsg_file_classify_at(dfd, tmp, NULL, &old);
        if (!same_file(&old, expect)) {
                r = rename_noreplace(dfd, tmp, name);
                if (r < 0)
                        return keep_aside(dfd, tmp, dir, name, -r, e);
                return concurrent(e, dir, name);
        }
        if (unlinkat(dfd, tmp, 0) < 0)
                return fsg_error_errno(e, errno, "Failed to remove %s/%s", dir, name);
        if (fsync(dfd) < 0)
                return fsg_error_errno(e, errno, "Failed to sync %s", dir);
        return 0;
}

void fsg_clean_temp_files_at(int dfd) {
        int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_closedir_ DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        struct dirent *de;

        if (!d) {
                if (fd >= 0)
                        close(fd);
                return;
        }
        while ((de = readdir(d)))
                if (strncmp(de->d_name, FSG_TEMP_PREFIX, strlen(FSG_TEMP_PREFIX)) == 0)
                        (void) unlinkat(dirfd(d), de->d_name, 0);
}

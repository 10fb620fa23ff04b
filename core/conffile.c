/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>

#include "conffile.h"

const char *fsg_file_kind_to_string(FsgFileKind k) {
        static const char * const n[] = {
                [FSG_FILE_ABSENT] = "absent", [FSG_FILE_MASK] = "mask", [FSG_FILE_FSGATE] = "fsgate",
                [FSG_FILE_SUSE_NEVER] = "opensuse-never", [FSG_FILE_MODIFIABLE] = "modifiable",
                [FSG_FILE_FOREIGN] = "foreign",
        };
        return n[k];
}

/* Large files are certainly not ours; a cap keeps a hostile file from costing memory. */
#define CLASSIFY_MAX 65536

FsgFileKind fsg_file_classify(const char *fullpath, const char *module) {
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *buf = NULL, *never = NULL;
        char target[64];
        struct stat st;
        ssize_t n;
        size_t len = 0;

        if (lstat(fullpath, &st) < 0)
                return errno == ENOENT ? FSG_FILE_ABSENT : FSG_FILE_FOREIGN;
        if (S_ISLNK(st.st_mode)) {
                n = readlink(fullpath, target, sizeof(target) - 1);
                if (n < 0)
                        return FSG_FILE_FOREIGN;
                target[n] = 0;
                return streq(target, "/dev/null") ? FSG_FILE_MASK : FSG_FILE_FOREIGN;
        }
        if (!S_ISREG(st.st_mode) || st.st_size > CLASSIFY_MAX)
                return FSG_FILE_FOREIGN;

        fd = open(fullpath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        buf = malloc(CLASSIFY_MAX + 1);
        if (fd < 0 || !buf)
                return FSG_FILE_FOREIGN;
        while (len < CLASSIFY_MAX && (n = read(fd, buf + len, CLASSIFY_MAX - len)) > 0)
                len += n;
        buf[len] = 0;

        if (strncmp(buf, FSG_HEADER, strlen(FSG_HEADER)) == 0)
                return FSG_FILE_FSGATE;
        for (char *l = buf; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
                if (strncmp(l, FSG_SUSE_MODIFIABLE, strlen(FSG_SUSE_MODIFIABLE)) == 0)
                        return FSG_FILE_MODIFIABLE;

        /* openSUSE's unblacklist helper writes just this line for "never". */
        while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' ' || buf[len - 1] == '\t'))
                buf[--len] = 0;
        if (asprintf(&never, "blacklist %s", module) >= 0 && streq(buf, never))
                return FSG_FILE_SUSE_NEVER;
        return FSG_FILE_FOREIGN;
}

char *fsg_deny_file_content(const char *module, const char *types, const char *path, const char *hook) {
        _cleanup_free_ char *routes = strdup(""), *list = strdup(types ?: "");
        char *save = NULL, *s;

        if (!routes || !list)
                return NULL;
        /* kmod checks the blacklist only for the modules an alias names, and a config alias
         * wins over modules.alias: so the kernel's fs-TYPE request runs the hook (which loads
         * nothing), while "modprobe MODULE" by name still loads the module. */
        for (char *t = strtok_r(list, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
                char *n;
                if (asprintf(&n, "%salias fs-%s " FSG_BLOCKED_PREFIX "%s\n"
                             "install " FSG_BLOCKED_PREFIX "%s %s %s %s %s\n",
                             routes, t, t, t, hook, t, module, path) < 0)
                        return NULL;
                free(routes);
                routes = n;
        }
        if (asprintf(&s,
                     FSG_HEADER ": automatic loading of the %1$s filesystem module is denied.\n"
                     "# fsgate may replace or remove this file; undo with: fsgatectl reset %1$s\n"
                     "# An explicit \"modprobe %1$s\" by root still loads the module.\n"
                     FSG_SUSE_MODIFIABLE "\n"
                     "blacklist %1$s\n"
                     "%2$s",
                     module, routes) < 0)
                return NULL;
        return s;
}

static int fsync_dir(const char *dir) {
        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || fsync(fd) < 0)
                return -errno;
        return 0;
}

static char *temp_name(void) {
        char *s;
        if (asprintf(&s, FSG_TEMP_PREFIX "%08x%08x", (unsigned) random(), (unsigned) getpid()) < 0)
                return NULL;
        return s;
}

static int finish(int dfd, const char *tmp, const char *dir, const char *name, FsgError *e) {
        if (renameat(dfd, tmp, dfd, name) < 0) {
                int err = errno;
                (void) unlinkat(dfd, tmp, 0);
                return fsg_error_errno(e, err, "Failed to replace %s/%s", dir, name);
        }
        if (fsync(dfd) < 0)
                return fsg_error_errno(e, errno, "Failed to sync %s", dir);
        return 0;
}

int fsg_atomic_write(const char *dir, const char *name, const char *content, FsgError *e) {
        _cleanup_close_ int dfd = -1, fd = -1;
        _cleanup_free_ char *tmp = temp_name();
        size_t len = strlen(content), done = 0;

        if (!tmp)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return fsg_error_errno(e, errno, "Failed to open %s", dir);
        fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return fsg_error_errno(e, errno, "Failed to create a file in %s", dir);
        while (done < len) {
                ssize_t n = write(fd, content + done, len - done);
                if (n < 0) {
                        int err = errno;
                        (void) unlinkat(dfd, tmp, 0);
                        return fsg_error_errno(e, err, "Failed to write %s/%s", dir, name);
                }
                done += n;
        }
        if (fsync(fd) < 0) {
                int err = errno;
                (void) unlinkat(dfd, tmp, 0);
                return fsg_error_errno(e, err, "Failed to sync %s/%s", dir, name);
        }
        return finish(dfd, tmp, dir, name, e);
}

int fsg_atomic_symlink(const char *dir, const char *name, const char *target, FsgError *e) {
        _cleanup_close_ int dfd = -1;
        _cleanup_free_ char *tmp = temp_name();

        if (!tmp)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return fsg_error_errno(e, errno, "Failed to open %s", dir);
        if (symlinkat(target, dfd, tmp) < 0)
                return fsg_error_errno(e, errno, "Failed to create a symlink in %s", dir);
        return finish(dfd, tmp, dir, name, e);
}

int fsg_durable_unlink(const char *dir, const char *name, FsgError *e) {
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int r;

        if (dfd < 0)
                return fsg_error_errno(e, errno, "Failed to open %s", dir);
        if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT)
                return fsg_error_errno(e, errno, "Failed to remove %s/%s", dir, name);
        r = fsync_dir(dir);
        if (r < 0)
                return fsg_error_errno(e, -r, "Failed to sync %s", dir);
        return 0;
}

void fsg_clean_temp_files(const char *dir) {
        _cleanup_closedir_ DIR *d = opendir(dir);
        struct dirent *de;

        if (!d)
                return;
        while ((de = readdir(d)))
                if (strncmp(de->d_name, FSG_TEMP_PREFIX, strlen(FSG_TEMP_PREFIX)) == 0)
                        (void) unlinkat(dirfd(d), de->d_name, 0);
}

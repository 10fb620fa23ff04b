/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <assert.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"
#include "open-route.h"

/* auto_unmount: libfuse2 then asks fusermount (the stand-in) at once, without opening
 * /dev/fuse first, which a driver in a unit with PrivateDevices= has not got. */
#define FUSE2FS { "fuse2fs", "/dev/fd/3", FSG_OPEN_SANDBOX_MNT, "-o", "ro,auto_unmount", "-f", "-s" }

/* Measured on Debian 12 (../shared/facts/open-safely.md): each starts in 8-23 ms with under
 * 3 MB resident. squashfuse is libfuse3, fuse2fs libfuse2; the others need more. */
static const FsgOpenRoute routes[] = {
        { "squashfs", "squashfuse",  "squashfuse", FSG_OPEN_START_FD,
          { "squashfuse", "-f", "-s", "-o", "ro", "/dev/fd/3", "/dev/fd/4" } },
        { "ext2",     "fuse2fs",     "fuse2fs",    FSG_OPEN_START_FUSERMOUNT, FUSE2FS },
        { "ext3",     "fuse2fs",     "fuse2fs",    FSG_OPEN_START_FUSERMOUNT, FUSE2FS },
        { "ext4",     "fuse2fs",     "fuse2fs",    FSG_OPEN_START_FUSERMOUNT, FUSE2FS },
        { "ntfs",     "ntfs-3g",     "ntfs-3g",    FSG_OPEN_START_NONE, {} },
        { "ntfs3",    "ntfs-3g",     "ntfs-3g",    FSG_OPEN_START_NONE, {} },
        { "iso9660",  "fuseiso",     "fuseiso",    FSG_OPEN_START_NONE, {} },
        { "exfat",    "exfat-fuse",  "exfat-fuse", FSG_OPEN_START_NONE, {} },
};

const FsgOpenRoute *fsg_open_route_find(const char *type) {
        assert(type);
        for (size_t i = 0; i < ELEMENTSOF(routes); i++)
                if (streq(routes[i].type, type))
                        return &routes[i];
        return NULL;
}

/* A driver fsgated execs as nobody must be what the package installed: root's file that no
 * one else could have replaced. */
static bool driver_ok(int fd) {
        struct stat st;

        return fstat(fd, &st) >= 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111) && st.st_uid == 0 &&
               !(st.st_mode & 0022);
}

int fsg_open_route_driver(const FsgContext *c, const FsgOpenRoute *r, char *ret, size_t size) {
        static const char * const dirs[] = { "/usr/bin", "/usr/sbin", "/bin", "/sbin" };

        assert(r && ret && size > 0);

        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                _cleanup_close_ int fd = -1;
                char path[128];

                snprintf(path, sizeof(path), "%s/%s", dirs[i], r->driver);
                fd = c ? fsg_open_in_root(c, path, O_PATH) : open(path, O_PATH | O_CLOEXEC);
                if (fd >= 0 && driver_ok(fd)) {
                        snprintf(ret, size, "%s", path);
                        return 0;
                }
        }
        return -ENOENT;
}

static const struct {
        const char *type;
        off_t offset;
        const char *magic;
        size_t len;
} magics[] = {
        { "squashfs", 0,        "hsqs",      4 },
        { "ext4",     1024 + 56, "\x53\xef", 2 },
        { "iso9660",  32769,    "CD001",     5 },
        { "ntfs",     3,        "NTFS    ",  8 },
        { "exfat",    3,        "EXFAT   ",  8 },
};

int fsg_open_probe_type(int fd, char *ret, size_t size, FsgError *e) {
        assert(fd >= 0 && ret && size > 0);
        for (size_t i = 0; i < ELEMENTSOF(magics); i++) {
                char buf[8];
                ssize_t n = pread(fd, buf, magics[i].len, magics[i].offset);

                if (n < 0 && errno != EINVAL)
                        return fsg_error(e, FSG_ERR_FAILED, "Cannot read the medium: %s", strerror(errno));
                if (n == (ssize_t) magics[i].len && memcmp(buf, magics[i].magic, magics[i].len) == 0) {
                        snprintf(ret, size, "%s", magics[i].type);
                        return 0;
                }
        }
        return fsg_error(e, FSG_ERR_NO_ROUTE, "The medium holds no filesystem fsgate can open "
                         "(known: squashfs, ext2/3/4, iso9660, ntfs, exfat)");
}

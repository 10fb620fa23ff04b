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

/* The kernel's own driver, read-only at each of its layers: guestmount's --ro (the medium
 * behind a copy-on-write overlay, so not even a journal replay reaches it), the guest's mount
 * option, the FUSE mount fsgated made; the medium's descriptor is read-only besides. */
#define GUESTMOUNT { "guestmount", "--ro", "--format=raw", "-a", FSG_OPEN_VM_MEDIUM, "-m", "/dev/sda:/:ro", \
                     "--no-fork", "-o", "auto_unmount", FSG_OPEN_SANDBOX_MNT }

/* Types no userspace driver in Debian reads, whose module Debian's kernel has (measured:
 * ../shared/facts/open-safely.md). cramfs is not built there. */
static const FsgOpenRoute vm_routes[] = {
        { "hfs",     "guestmount", "libguestfs-tools", FSG_OPEN_START_VM, GUESTMOUNT },
        { "hfsplus", "guestmount", "libguestfs-tools", FSG_OPEN_START_VM, GUESTMOUNT },
        { "minix",   "guestmount", "libguestfs-tools", FSG_OPEN_START_VM, GUESTMOUNT },
        { "udf",     "guestmount", "libguestfs-tools", FSG_OPEN_START_VM, GUESTMOUNT },
        { "f2fs",    "guestmount", "libguestfs-tools", FSG_OPEN_START_VM, GUESTMOUNT },
        { "erofs",   "guestmount", "libguestfs-tools", FSG_OPEN_START_VM, GUESTMOUNT },
};

static const FsgOpenRoute *find_in(const FsgOpenRoute *table, size_t n, const char *type) {
        assert(type);
        for (size_t i = 0; i < n; i++)
                if (streq(table[i].type, type))
                        return &table[i];
        return NULL;
}

const FsgOpenRoute *fsg_open_route_find(const char *type) {
        return find_in(routes, ELEMENTSOF(routes), type);
}

const FsgOpenRoute *fsg_open_route_find_vm(const char *type) {
        return find_in(vm_routes, ELEMENTSOF(vm_routes), type);
}

const FsgOpenRoute *fsg_open_route_find_kind(const char *type, const char *kind) {
        const FsgOpenRoute *r;

        if (kind && streq(kind, FSG_OPEN_ROUTE_VM))
                return fsg_open_route_find_vm(type);
        r = fsg_open_route_find(type);
        if ((kind && *kind) || fsg_open_route_usable(r))
                return r;
        return fsg_open_route_find_vm(type) ?: r;
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
        /* The VM's: HFS's "BD", HFS+'s "H+" and HFSX's "HX" at 1 KiB; minix v1, v2 (14 and 30
         * character names) and v3; f2fs and erofs at 1 KiB; UDF's NSR descriptor in the volume
         * recognition sequence (before ISO 9660's CD001: a UDF disc may carry both). */
        { "hfs",      1024,     "BD",        2 },
        { "hfsplus",  1024,     "H+",        2 },
        { "hfsplus",  1024,     "HX",        2 },
        { "minix",    1024 + 16, "\x7f\x13", 2 },
        { "minix",    1024 + 16, "\x8f\x13", 2 },
        { "minix",    1024 + 16, "\x68\x24", 2 },
        { "minix",    1024 + 16, "\x78\x24", 2 },
        { "minix",    1024 + 24, "\x5a\x4d", 2 },
        { "f2fs",     1024,     "\x10\x20\xf5\xf2", 4 },
        { "erofs",    1024,     "\xe2\xe1\xf5\xe0", 4 },
        { "udf",      32768 + 2048 + 1, "NSR02", 5 },
        { "udf",      32768 + 2048 + 1, "NSR03", 5 },
        { "udf",      32768 + 4096 + 1, "NSR02", 5 },
        { "udf",      32768 + 4096 + 1, "NSR03", 5 },
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
                         "(known: squashfs, ext2/3/4, iso9660, ntfs, exfat, hfs, hfsplus, minix, udf, "
                         "f2fs, erofs)");
}

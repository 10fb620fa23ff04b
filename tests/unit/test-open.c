/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <unistd.h>

#include "open-route.h"
#include "test-util.h"

TEST(routes) {
        const FsgOpenRoute *r = fsg_open_route_find("squashfs");

        ASSERT(r && streq(r->driver, "squashfuse") && streq(r->package, "squashfuse"));
        ASSERT(fsg_open_route_usable(r));
        r = fsg_open_route_find("ext4");
        ASSERT(r && streq(r->driver, "fuse2fs") && fsg_open_route_usable(r) && r->start == FSG_OPEN_START_FUSERMOUNT);
        ASSERT(streq(r->argv[2], FSG_OPEN_SANDBOX_MNT) && streq(r->argv[1], "/dev/fd/3"));
        r = fsg_open_route_find("ntfs");
        ASSERT(r && !fsg_open_route_usable(r));
        ASSERT(!fsg_open_route_find("hfs"));
        ASSERT(!fsg_open_route_find(""));
        ASSERT(!fsg_open_route_usable(NULL));
}

TEST(vm_routes) {
        const FsgOpenRoute *r = fsg_open_route_find_vm("hfs");

        /* The kernel's driver in a VM: guestmount, read-only at its every layer, the medium at
         * the descriptor libguestfs leaves to QEMU. */
        ASSERT(r && streq(r->driver, "guestmount") && r->start == FSG_OPEN_START_VM && fsg_open_route_usable(r));
        ASSERT_STREQ(fsg_open_route_kind(r), FSG_OPEN_ROUTE_VM);
        ASSERT_STREQ(r->argv[1], "--ro");
        ASSERT_STREQ(r->argv[4], FSG_OPEN_VM_MEDIUM);
        /* service/open-fd-preload.c keeps fd 1000 (its VM_MEDIUM_FD) out of libguestfs's reach. */
        ASSERT_STREQ(FSG_OPEN_VM_MEDIUM, "/dev/fd/1000");
        ASSERT(FSG_OPEN_VM_MEDIUM_FD == 1000);
        ASSERT_STREQ(r->argv[6], "/dev/sda:/:ro");
        ASSERT(fsg_open_route_find_vm("minix") && fsg_open_route_find_vm("udf") && fsg_open_route_find_vm("hfsplus"));
        /* Only where no userspace driver reads the type; never cramfs (not in Debian's kernel). */
        ASSERT(!fsg_open_route_find_vm("squashfs") && !fsg_open_route_find_vm("cramfs"));
        /* "" is the best: the FUSE driver where one starts, else the VM. */
        ASSERT(fsg_open_route_find_kind("squashfs", "") == fsg_open_route_find("squashfs"));
        ASSERT(fsg_open_route_find_kind("hfs", NULL) == r);
        ASSERT(fsg_open_route_find_kind("hfs", FSG_OPEN_ROUTE_FUSE) == NULL);
        ASSERT(fsg_open_route_find_kind("squashfs", FSG_OPEN_ROUTE_VM) == NULL);
        ASSERT_STREQ(fsg_open_route_kind(fsg_open_route_find("ext4")), FSG_OPEN_ROUTE_FUSE);
}

/* A medium with magic at offset, in a memfd of size bytes: its probed type. */
static int probe(off_t offset, const char *magic, size_t len, off_t size, char *ret, size_t ret_size, FsgError *e) {
        _cleanup_close_ int fd = memfd_create("medium", MFD_CLOEXEC);

        ASSERT(fd >= 0 && ftruncate(fd, size) == 0);
        ASSERT(pwrite(fd, magic, len, offset) == (ssize_t) len);
        return fsg_open_probe_type(fd, ret, ret_size, e);
}

TEST(probe_types) {
        static const struct {
                off_t offset;
                const char *magic;
                size_t len;
                off_t size;
                const char *type;
        } media[] = {
                { 0,            "hsqs",     4, 4096,  "squashfs" },
                { 1080,         "\x53\xef", 2, 4096,  "ext4" },
                { 32769,        "CD001",    5, 65536, "iso9660" },
                { 3,            "NTFS    ", 8, 4096,  "ntfs" },
                { 1024,         "BD",       2, 8192,  "hfs" },
                { 1024,         "H+",       2, 8192,  "hfsplus" },
                { 1040,         "\x8f\x13", 2, 8192,  "minix" },
                { 32768 + 2049, "NSR02",    5, 65536, "udf" },
        };
        char t[32];
        FsgError e = {};

        for (size_t i = 0; i < ELEMENTSOF(media); i++) {
                ASSERT_OK_E(probe(media[i].offset, media[i].magic, media[i].len, media[i].size, t, sizeof(t), &e), &e);
                ASSERT_STREQ(t, media[i].type);
        }
        /* Nothing known, or a medium too short for the magic: a named error, no type. */
        ASSERT(probe(0, "xxxx", 4, 4096, t, sizeof(t), &e) < 0 && e.code == FSG_ERR_NO_ROUTE);
        ASSERT(probe(0, "hsq", 3, 3, t, sizeof(t), &e) < 0 && e.code == FSG_ERR_NO_ROUTE);
}

TEST(driver_lookup_fixed_dirs) {
        static const FsgOpenRoute fake = { "x", "no-such-driver-fsgate", "none", FSG_OPEN_START_FD, {} };
        char path[128];

        /* $PATH is never read: a driver there is not found. */
        setenv("PATH", "/tmp", 1);
        ASSERT(fsg_open_route_driver(NULL, &fake, path, sizeof(path)) == -ENOENT);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <syslog.h>

#include "bus-reply.h"
#include "fsgate-api.h"
#include "grant.h"
#include "log.h"
#include "open-route.h"
#include "open-medium.h"
#include "open-request.h"
#include "open-sandbox.h"
#include "open-unit.h"
#include "open-vm.h"
#include "polkit-bridge.h"
#include "store.h"
#include "time-util.h"
#include "utf8.h"

void open_request_free(OpenRequest *q) {
        if (q->medium_fd >= 0)
                close(q->medium_fd);
        free(q);
}

/* Whether anything uses the block device: mounted in fsgated's view of the mounts (the
 * host's), or held (a RAID, LVM or dm-crypt under it). Reading a filesystem another driver
 * has mounted read-write gives a torn view of it, and the system's own would be anyone's. */
static bool device_in_use(unsigned ma, unsigned mi) {
        _cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
        _cleanup_free_ char *line = NULL;
        char path[96], want[32];
        size_t cap = 0;
        DIR *d;
        bool used = false;

        snprintf(want, sizeof(want), " %u:%u ", ma, mi);
        while (f && getline(&line, &cap, f) > 0 && !used)
                used = strstr(line, want) != NULL;
        snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/holders", ma, mi);
        d = opendir(path);
        for (struct dirent *de; d && !used && (de = readdir(d));)
                used = de->d_name[0] != '.';
        if (d)
                closedir(d);
        return used;
}

/* As udisks2 tells a stick from the machine's own disks: removable media (the disk's flag; a
 * partition has none of its own), or a device on USB or MMC (a USB disk says "not removable"). */
static bool device_removable(unsigned ma, unsigned mi) {
        char path[96], real[PATH_MAX], c = '0';

        for (int up = 0; up < 2; up++) {
                _cleanup_fclose_ FILE *f = NULL;

                snprintf(path, sizeof(path), "/sys/dev/block/%u:%u%s/removable", ma, mi, up ? "/.." : "");
                f = fopen(path, "re");
                if (f && fread(&c, 1, 1, f) == 1 && c == '1')
                        return true;
        }
        snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", ma, mi);
        return realpath(path, real) && (strstr(real, "/usb") || strstr(real, "/mmc"));
}

/* A block device fsgated opens itself, read-only: "/dev/NAME" as the kernel names it. Under
 * its unit, which has no /dev, the unit's privileged step opens it (checking that it is
 * still this medium), and the type is udev's probe's. */
static int open_device(Manager *m, const char *device, OpenRequest *q, FsgError *e) {
        FsgGrant g = {};
        struct stat st;
        int r = fsg_grant_set_medium(&g, device, e);

        if (r < 0)
                return r;
        if (q->via_unit) {
                if (fsg_grant_medium_fs_type(m->ctx, &g, q->fstype) < 0)
                        return fsg_error(e, FSG_ERR_INVALID_ARGS, "udev found no filesystem on %s", device);
                goto checked;
        }
        q->medium_fd = open(device, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (q->medium_fd < 0)
                return fsg_error(e, FSG_ERR_INVALID_ARGS, "Cannot open %s: %s", device, strerror(errno));
        if (fstat(q->medium_fd, &st) < 0 || !S_ISBLK(st.st_mode) || st.st_rdev != makedev(g.major, g.minor))
                return fsg_error(e, FSG_ERR_INVALID_ARGS, "%s is not the block device /sys names", device);
checked:
        if (device_in_use(g.major, g.minor))
                return fsg_error(e, FSG_ERR_IN_USE, "%s is mounted or in use; fsgate opens only a medium nothing "
                                 "else uses", device);
        q->removable = device_removable(g.major, g.minor);
        q->medium = g;
        snprintf(q->device, sizeof(q->device), "%s", device);
        return 0;
}

/* An image its caller opened (so nobody reads through fsgated what they could not read
 * themselves): readable, a regular file or a block device, not on a FUSE filesystem (whose
 * server, maybe the caller, could stall fsgated's reads), reopened read-only so that the
 * driver cannot write through a descriptor opened for writing. */
static int open_image(int fd, OpenRequest *q, FsgError *e) {
        int flags = fcntl(fd, F_GETFL);
        struct stat st, st2;
        struct statfs sf;
        char path[32];

        if (flags < 0 || (flags & O_PATH) || (flags & O_ACCMODE) == O_WRONLY)
                return fsg_error(e, FSG_ERR_INVALID_ARGS, "The image was not opened for reading");
        if (fstat(fd, &st) < 0 || !(S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)))
                return fsg_error(e, FSG_ERR_INVALID_ARGS, "The image is neither a regular file nor a block device");
        if (fstatfs(fd, &sf) < 0 || sf.f_type == FUSE_SUPER_MAGIC)
                return fsg_error(e, FSG_ERR_INVALID_ARGS, "The image is on a FUSE filesystem; copy it elsewhere first");
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        q->medium_fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (q->medium_fd < 0 || fstat(q->medium_fd, &st2) < 0 || st2.st_dev != st.st_dev || st2.st_ino != st.st_ino)
                return fsg_error(e, FSG_ERR_INVALID_ARGS, "Cannot reopen the image read-only");
        return 0;
}

/* Whether fsgated may mount and start the driver itself (root's capabilities: tests, --root);
 * its unit, data/fsgated.service.in, gives neither CAP_SYS_ADMIN nor the host's mount
 * namespace, and then systemd does it (open-unit.c). Said before polkit is asked. */
static int can_mount(FsgError *e) {
        struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
        struct __user_cap_data_struct d[2] = {};

        if (syscall(SYS_capget, &h, d) < 0 || !(d[0].effective & (1U << CAP_SYS_ADMIN)) ||
            !(d[0].effective & (1U << CAP_SETUID)))
                return fsg_error(e, FSG_ERR_NO_ROUTE, "fsgated may not mount here (it lacks CAP_SYS_ADMIN or CAP_SETUID), and no systemd runs this system to do it");
        return 0;
}

/* The medium, its type and the route for it: everything checked that can be before polkit.
 * 1, or a negative errno: with e filled, a refusal; without, a malformed call. */
int open_request_read(Manager *m, sd_bus_message *call, OpenRequest *q, FsgError *e) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        const char *device, *route;
        uint64_t flags;
        int fd, r;

        r = sd_bus_message_read(call, "shst", &device, &fd, &route, &flags);
        if (r < 0)
                return r;
        if (flags != 0)
                return fsg_error(e, FSG_ERR_INVALID_ARGS, "Flags not valid for OpenSafely: %s", fsg_flags_to_string(flags, false));
        if (*route && !streq(route, FSG_OPEN_ROUTE_FUSE) && !streq(route, FSG_OPEN_ROUTE_VM))
                return fsg_error(e, FSG_ERR_INVALID_ARGS,
                                 "Unknown route \"%.32s\" (known: " FSG_OPEN_ROUTE_FUSE ", " FSG_OPEN_ROUTE_VM ")",
                                 fsg_utf8_is_valid(route) ? route : "?");
        if (sd_bus_query_sender_creds(call, SD_BUS_CREDS_EUID | SD_BUS_CREDS_EGID | SD_BUS_CREDS_AUGMENT, &creds) < 0 ||
            sd_bus_creds_get_euid(creds, &q->uid) < 0 || sd_bus_creds_get_egid(creds, &q->gid) < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Cannot tell who is calling");
        r = can_mount(e);
        if (r < 0 && open_unit_possible()) {
                q->via_unit = true;     /* systemd mounts and runs the driver: open-unit.c */
                *e = (FsgError) {};
                r = 0;
        }
        if (r >= 0)
                r = *device ? open_device(m, device, q, e) : open_image(fd, q, e);
        if (r >= 0 && q->medium_fd >= 0)
                r = fsg_open_probe_type(q->medium_fd, q->fstype, sizeof(q->fstype), e);
        if (r < 0)
                return r;
        const FsgOpenRoute *rt = fsg_open_route_find_kind(q->fstype, route);
        if (streq(route, FSG_OPEN_ROUTE_VM) && !rt)
                return fsg_error(e, FSG_ERR_NO_ROUTE, "The VM route does not read %s (it reads the types no userspace "
                                 "driver does: hfs, hfsplus, minix, udf, f2fs, erofs)", q->fstype);
        if (!fsg_open_route_usable(rt))
                return fsg_error(e, FSG_ERR_NO_ROUTE, "No userspace driver fsgate can start reads %s%s%s%s", q->fstype,
                                 rt ? " yet (" : "", rt ? rt->driver : "", rt ? " is not started by fsgate)" : "");
        if (rt->start == FSG_OPEN_START_VM) {
                /* A transient unit for QEMU is not made yet (open-unit.c): said, never half-done. */
                if (q->via_unit)
                        return fsg_error(e, FSG_ERR_NO_ROUTE, "The VM route is not offered under fsgated's unit yet; "
                                         "%s has no other route", q->fstype);
                r = open_vm_appliance(q->appliance, sizeof(q->appliance), e);
                if (r < 0)
                        return r;
                q->kvm = open_vm_kvm_works();
        }
        if (fsg_open_route_driver(NULL, rt, q->driver_path, sizeof(q->driver_path)) < 0)
                return fsg_error(e, FSG_ERR_NO_ROUTE, "%s reads %s, but it is not installed: install the package %s",
                                 rt->driver, q->fstype, rt->package);
        snprintf(q->driver, sizeof(q->driver), "%s", rt->driver);
        q->route = rt;
        return 1;
}


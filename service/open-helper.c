/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fsgate-open-helper: the steps of an Open safely that fsgated's own sandbox forbids it (the
 * shipped unit has no CAP_SYS_ADMIN, and its mounts would stay in its private namespace), run
 * by systemd in the transient unit fsgated makes for each opened medium (open-unit.c):
 *
 *   mount ID UID GID DRIVER [DEVICE MAJOR:MINOR DISKSEQ]
 *                              ExecStartPre=+  the FUSE mount on /run/fsgate-open/ID, in the
 *                                              host's namespace; its connection handed to
 *                                              systemd's file descriptor store for the driver,
 *                                              and a device's node opened read-only, if it is
 *                                              still that medium, likewise (fsgated has no /dev)
 *   exec [--fusermount] PATH ARGV...
 *                              ExecStart=      the driver, as the unit's dynamic user: the
 *                                              medium (the store's, or an image on stdin) as
 *                                              fd 3, the connection as fd 4, then exec
 *   probe ID UID GID           ExecStartPost=+ the start succeeds once UID can list the mount:
 *                                              the driver has answered
 *   unmount ID                 ExecStopPost=+  detached and removed, however the unit ended
 *
 * fsgated chooses every argument; systemd runs the "+" steps as root outside the unit's
 * sandbox and the driver inside it. Nothing here trusts the medium: the driver alone reads it. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/sysmacros.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "macro.h"
#include "open-route.h"
#include "open-sandbox.h"

static int fail(const char *fmt, ...) _printf_(1, 2);
static int fail(const char *fmt, ...) {
        va_list ap;

        fputs("fsgate-open-helper: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        return 1;
}

/* fsgated's open id: 16 lowercase hex digits, nothing that could leave FSG_OPEN_DIR. */
static bool id_ok(const char *id) {
        return strlen(id) == 16 && strspn(id, "0123456789abcdef") == 16;
}

static bool number(const char *s, unsigned *ret) {
        char *end;
        unsigned long v;

        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno || end == s || *end || v >= UINT_MAX || *s == '-')
                return false;
        *ret = (unsigned) v;
        return true;
}

/* /dev/null over fd: the medium and the connection stay out of what runs as a user. */
static int to_null(int fd) {
        int nul = open("/dev/null", O_RDWR | O_CLOEXEC);

        if (nul < 0 || dup2(nul, fd) < 0)
                return -1;
        if (nul != fd)
                close(nul);
        return 0;
}

/* systemd runs even the "+" steps in a mount namespace of the unit's own (a slave: what is
 * mounted there stays there) when the unit has PrivateTmp= and the like: the mount, its
 * removal and the probe belong to the host's, where the caller looks. */
static int host_namespace(void) {
        _cleanup_close_ int ns = open("/proc/1/ns/mnt", O_RDONLY | O_CLOEXEC);

        if (ns < 0 || setns(ns, CLONE_NEWNS) < 0)
                return fail("cannot enter the host's mount namespace: %m");
        return 0;
}

/* A device's node, read-only, if it is still the medium fsgated checked: its number and the
 * kernel's sequence number of the disk (a new stick in the same port has another). */
static int open_medium(char **argv) {
        unsigned ma, mi;
        unsigned long long seq, have = 0;
        struct stat st;
        int fd;

        if (strncmp(argv[0], "/dev/", 5) != 0 || strchr(argv[0] + 5, '/') || strstr(argv[0], "..") ||
            sscanf(argv[1], "%u:%u", &ma, &mi) != 2 || sscanf(argv[2], "%llu", &seq) != 1)
                return fail("mount: bad device arguments"), -1;
        fd = open(argv[0], O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return fail("cannot open %s: %m", argv[0]), -1;
        if (fstat(fd, &st) < 0 || !S_ISBLK(st.st_mode) || st.st_rdev != makedev(ma, mi) ||
            ioctl(fd, BLKGETDISKSEQ, &have) < 0 || have != seq) {
                close(fd);
                return fail("%s is no longer the medium fsgated was asked to open", argv[0]), -1;
        }
        return fd;
}

static int do_mount(char **argv) {
        _cleanup_close_ int dfd = -1, fuse = -1, medium = -1;
        char path[64], type[48], opts[128];
        unsigned uid, gid;
        struct stat st;
        const char *id = argv[0], *driver = argv[3];

        if (!id_ok(id) || !number(argv[1], &uid) || !number(argv[2], &gid) || strlen(driver) > 31 ||
            !*driver || strspn(driver, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(driver))
                return fail("mount: bad arguments");
        if (host_namespace())
                return 1;
        if (argv[4] && (!argv[5] || !argv[6] || (medium = open_medium(argv + 4)) < 0))
                return argv[5] && argv[6] ? 1 : fail("mount: too few device arguments");
        umask(0022);
        if (mkdir(FSG_OPEN_DIR, 0755) < 0 && errno != EEXIST)
                return fail("cannot make %s: %m", FSG_OPEN_DIR);
        /* Root's alone, as fsgated's in-process mounts want it: nobody else can name a mountpoint. */
        dfd = open(FSG_OPEN_DIR, O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0 || fstat(dfd, &st) < 0 || st.st_uid != 0 || (st.st_mode & 0022))
                return fail("%s is not root's alone", FSG_OPEN_DIR);
        if (mkdirat(dfd, id, 0755) < 0)
                return fail("cannot make a mountpoint in %s: %m", FSG_OPEN_DIR);
        fuse = open("/dev/fuse", O_RDWR | O_CLOEXEC);
        if (fuse < 0)
                return fail("cannot open /dev/fuse: %m%s", errno == ENOENT || errno == ENODEV || errno == ENXIO ?
                            " (is the fuse module denied? fsgatectl status fuse)" : "");
        snprintf(path, sizeof(path), FSG_OPEN_DIR "/%s", id);
        snprintf(type, sizeof(type), "fuse.%s", driver);
        snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=%u,group_id=%u", fuse, uid, gid);
        if (mount("fsgate", path, type, MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, opts) < 0) {
                int r = fail("cannot mount %s: %m", path);
                (void) rmdir(path);
                return r;
        }
        /* systemd keeps the connection for the unit and hands it to ExecStart=. */
        if (sd_pid_notify_with_fds(0, false, "FDSTORE=1\nFDNAME=fuse", &fuse, 1) <= 0 ||
            (medium >= 0 && sd_pid_notify_with_fds(0, false, "FDSTORE=1\nFDNAME=medium", &medium, 1) <= 0)) {
                (void) umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW);
                (void) rmdir(path);
                return fail("cannot hand the connection to systemd (NotifyAccess=all, FileDescriptorStoreMax=1?)");
        }
        return 0;
}

static int do_unmount(char **argv) {
        char path[64];

        if (!id_ok(argv[0]))
                return fail("unmount: bad arguments");
        if (host_namespace())
                return 1;
        snprintf(path, sizeof(path), FSG_OPEN_DIR "/%s", argv[0]);
        if (umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW) < 0 && errno != EINVAL && errno != ENOENT)
                return fail("cannot unmount %s: %m", path);
        if (rmdir(path) < 0 && errno != ENOENT)
                return fail("cannot remove %s: %m", path);
        return 0;
}

static int do_probe(char **argv) {
        char path[64];
        unsigned uid, gid;
        int status;
        pid_t pid;

        if (!id_ok(argv[0]) || !number(argv[1], &uid) || !number(argv[2], &gid))
                return fail("probe: bad arguments");
        if (host_namespace())
                return 1;
        snprintf(path, sizeof(path), FSG_OPEN_DIR "/%s", argv[0]);
        if (to_null(STDIN_FILENO) < 0)
                return fail("probe: %m");
        pid = open_spawn_probe(path, uid, gid);
        if (pid < 0)
                return fail("cannot start the probe: %s", strerror(-pid));
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return fail("probe: %m");
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                return 0;
        return fail("its mount could not be listed (%s)",
                    !WIFEXITED(status) ? "probe killed" : WEXITSTATUS(status) == 2 ? "probe failed to start" :
                    WEXITSTATUS(status) == 3 ? "not mounted" :
                    WEXITSTATUS(status) > 10 ? strerror(WEXITSTATUS(status) - 10) : "empty");
}

/* This program's directory: the driver's helpers (the preload shim, the stand-in fusermount)
 * are installed beside it, as beside fsgated. */
static int own_dir(char *buf, size_t size) {
        ssize_t n = readlink("/proc/self/exe", buf, size - 1);
        char *slash;

        if (n <= 0)
                return -1;
        buf[n] = 0;
        slash = strrchr(buf, '/');
        if (!slash)
                return -1;
        *slash = 0;
        return 0;
}

/* The store's descriptor named name (LISTEN_FDNAMES, in the store's order), or -1. */
static int stored_fd(const char *name) {
        const char *names = getenv("LISTEN_FDNAMES"), *fds = getenv("LISTEN_FDS"), *fdpid = getenv("LISTEN_PID");
        size_t len = strlen(name);
        int i = 0;

        if (!names || !fds || !fdpid || atol(fdpid) != getpid())
                return -1;
        for (const char *p = names; *p; i++) {
                size_t l = strcspn(p, ":");
                if (l == len && strncmp(p, name, len) == 0)
                        return i < atoi(fds) ? SD_LISTEN_FDS_START + i : -1;
                p += l + (p[l] == ':');
        }
        return -1;
}

static int do_exec(char **argv) {
        char dir[PATH_MAX], preload[PATH_MAX + 32], standin[PATH_MAX + 32];
        bool fusermount = argv[0] && streq(argv[0], "--fusermount");
        int fuse, medium;

        if (fusermount)
                argv++;
        if (!argv[0] || !argv[1])
                return fail("exec: bad arguments");
        if (stored_fd("fuse") < 0)
                return fail("exec: no FUSE connection in systemd's store");
        if (own_dir(dir, sizeof(dir)) < 0)
                return fail("exec: cannot find my directory: %m");
        /* The medium (a device's from the store, an image on stdin) and the connection become
         * 3 and 4, as in fsgated's own sandbox (open-sandbox.c), where the route's command line
         * expects them. */
        fuse = fcntl(stored_fd("fuse"), F_DUPFD, 10);
        medium = fcntl(stored_fd("medium") >= 0 ? stored_fd("medium") : STDIN_FILENO, F_DUPFD, 10);
        if (fuse < 0 || medium < 0 || dup2(medium, 3) < 0 || dup2(fuse, 4) < 0 || to_null(STDIN_FILENO) < 0)
                return fail("exec: file descriptors: %m");
        if (syscall(SYS_close_range, 5, ~0U, 0) < 0)
                for (int fd = 5; fd < 1024; fd++)
                        (void) close(fd);
        snprintf(preload, sizeof(preload), "%s/fsgate-open-fd.so", dir);
        (void) unsetenv("LISTEN_FDS");
        (void) unsetenv("LISTEN_PID");
        (void) unsetenv("LISTEN_FDNAMES");
        (void) unsetenv("NOTIFY_SOCKET");
        if (setenv("LD_PRELOAD", preload, 1) < 0 || setenv("LC_ALL", "C.UTF-8", 1) < 0)
                return fail("exec: %m");
        if (fusermount) {
                /* libfuse2 runs /bin/fusermount (the unit binds the stand-in there when it
                 * exists), else "fusermount" on PATH: this one, in the unit's own /tmp. */
                snprintf(standin, sizeof(standin), "%s/fsgate-fusermount", dir);
                if ((mkdir(FSG_OPEN_SANDBOX_MNT, 0700) < 0 && errno != EEXIST) ||
                    (mkdir("/tmp/bin", 0700) < 0 && errno != EEXIST) ||
                    (symlink(standin, "/tmp/bin/fusermount") < 0 && errno != EEXIST) ||
                    setenv("PATH", "/tmp/bin:/usr/bin:/bin", 1) < 0)
                        return fail("exec: the stand-in fusermount: %m");
        } else if (setenv("PATH", "/usr/bin:/bin", 1) < 0)
                return fail("exec: %m");
        execv(argv[0], argv + 1);
        return fail("cannot run %s: %m", argv[0]);
}

int main(int argc, char *argv[]) {
        static const struct {
                const char *verb;
                int args;       /* at least */
                int (*run)(char **argv);
        } verbs[] = {
                { "mount",   4, do_mount   },
                { "exec",    2, do_exec    },
                { "probe",   3, do_probe   },
                { "unmount", 1, do_unmount },
        };

        for (size_t i = 0; argc >= 2 && i < ELEMENTSOF(verbs); i++)
                if (streq(argv[1], verbs[i].verb)) {
                        if (argc - 2 < verbs[i].args)
                                return fail("%s: too few arguments", argv[1]);
                        return verbs[i].run(argv + 2);
                }
        return fail("usage: fsgate-open-helper mount|exec|probe|unmount ARGS... (run by systemd for fsgated)");
}

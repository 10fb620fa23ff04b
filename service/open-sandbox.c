/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <limits.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include "macro.h"
#include "open-route.h"
#include "open-sandbox.h"

#define NOBODY 65534
/* Where the driver finds the shim it preloads (open-fd-preload.c), in its own /tmp. */
#define OPEN_PRELOAD "/tmp/lib/fsgate-open-fd.so"
/* The VM route's: the appliance, bound read-only where LIBGUESTFS_PATH says, and a writable
 * tmpfs of its own for libguestfs's sockets, the overlays that keep the medium and the
 * appliance read-only, and its cache (/var/tmp is hidden). */
#define OPEN_VM_APPLIANCE "/tmp/appliance"
#define OPEN_VM_TMP "/tmp/vm"
#define OPEN_VM_TMP_SIZE (256ULL << 20)

/* A hostile medium may make the driver do anything its code can: what it may then do is
 * bounded here. None of these are needed to read a medium and serve FUSE requests. */
static const int denied_syscalls[] = {
        __NR_mount, __NR_umount2, __NR_pivot_root, __NR_chroot, __NR_unshare, __NR_setns,
        __NR_ptrace, __NR_process_vm_readv, __NR_process_vm_writev, __NR_kexec_load,
        __NR_init_module, __NR_finit_module, __NR_delete_module, __NR_bpf, __NR_perf_event_open,
        __NR_keyctl, __NR_add_key, __NR_request_key, __NR_userfaultfd,
        __NR_socket,    /* socketpair() stays: libfuse2 talks to fusermount over one; the VM
                         * route's socket() is checked apart (install_seccomp) */
        __NR_io_uring_setup, __NR_open_by_handle_at, __NR_name_to_handle_at, __NR_swapon,
        __NR_swapoff, __NR_reboot, __NR_personality, __NR_fanotify_init, __NR_mknod, __NR_mknodat,
        __NR_clone3,    /* ENOSYS below: libc falls back to clone(), whose flags are checked */
};

#if defined(__x86_64__)
#define SANDBOX_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SANDBOX_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

#ifdef SANDBOX_AUDIT_ARCH
/* A deny list, not an allow list: the drivers are several programs of several libraries, and
 * an allow list that misses one call breaks a driver on a medium the tests never had. The
 * other architecture's calls are killed, clone() into new namespaces refused. */
static int install_seccomp(bool vm) {
        struct sock_filter f[16 + 2 * ELEMENTSOF(denied_syscalls)];
        size_t n = 0;

        f[n++] = (struct sock_filter) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
        f[n++] = (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SANDBOX_AUDIT_ARCH, 1, 0);
        f[n++] = (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
        f[n++] = (struct sock_filter) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
#ifdef __x86_64__
        /* The x32 ABI's numbers are the same calls with a bit set: none of them. */
        f[n++] = (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1);
        f[n++] = (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
#endif
        /* The VM route: libguestfs talks to its appliance's daemon and console over Unix
         * sockets it binds in its tmpfs; every other family stays refused (and the network
         * namespace is empty anyway). */
        if (vm) {
                f[n++] = (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 3);
                f[n++] = (struct sock_filter) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]));
                f[n++] = (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1);
                f[n++] = (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
                /* Any other socket(): on to the list, which refuses it; args[0] is in A, not
                 * nr, so reload it. */
                f[n++] = (struct sock_filter) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
        }
        for (size_t i = 0; i < ELEMENTSOF(denied_syscalls); i++) {
                f[n++] = (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, denied_syscalls[i], 0, 1);
                f[n++] = (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO |
                                                       (denied_syscalls[i] == __NR_clone3 ? ENOSYS : EPERM));
        }
        /* clone(): threads and processes, no namespaces (its flags are the first argument, their
         * low word at its offset on a little-endian machine). */
        f[n++] = (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 2);
        f[n++] = (struct sock_filter) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]));
        f[n++] = (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEWNS | CLONE_NEWUSER |
                                               CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |
                                               CLONE_NEWCGROUP, 1, 0);
        f[n++] = (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
        f[n++] = (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
        struct sock_fprog prog = { .len = (unsigned short) n, .filter = f };
        return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}
#else
static int install_seccomp(bool vm) {
        (void) vm;
        return 0;       /* an architecture this filter does not know: namespaces and nobody only */
}
#endif

/* Every fd from first on closed. close_range() where it works; one by one where it fails
 * (valgrind refuses a range over its own descriptors, which it keeps out of reach anyway). */
static void close_from(int first) {
        if (syscall(SYS_close_range, first, ~0U, 0) >= 0)
                return;
        for (int fd = first; fd < 65536; fd++)
                (void) close(fd);
}

static void set_limit(int resource, rlim_t v) {
        struct rlimit rl = { v, v };
        (void) setrlimit(resource, &rl);
}

/* path, an empty file made for it (make) or one there is (else nothing), as a bind mount of
 * the file open in fd: opened (in this mount namespace: a bind from another one is EINVAL)
 * before anything was mounted over where it lives. */
static int bind_fd(int fd, const char *path, bool make) {
        char src[32];

        if (make) {
                int made = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
                if (made < 0)
                        return -1;
                close(made);
        } else if (access(path, F_OK) < 0)
                return 0;
        snprintf(src, sizeof(src), "/proc/self/fd/%d", fd);
        return mount(src, path, "none", MS_BIND, NULL);
}

/* Where people's and other services' files are: empty and read-only for the driver (nobody
 * could read what there is world-readable, and share files there with other nobodies). */
static const char * const hidden_dirs[] = { "/home", "/root", "/run/user", "/var/tmp", "/dev/shm", "/srv", "/media",
                                            "/mnt" };

/* "none" where mount(2) ignores the source or type (a bind, a remount, a propagation change):
 * valgrind reads them as strings whatever the flags. */

/* The driver's own view: an empty tmpfs on /tmp, read-only once made, holding its helpers
 * (OPEN_PRELOAD, and with a stand-in fusermount /tmp/bin/fusermount, first on its PATH, and
 * FSG_OPEN_SANDBOX_MNT, an empty directory for libfuse2 to check before it asks fusermount);
 * every real fusermount libfuse2 would run is the stand-in too; hidden_dirs empty. preload_fd
 * and fusermount (NULL: none) are the helpers, wherever they are installed. */
static int make_view(const char *preload, const char *fusermount, const char *appliance) {
        int preload_fd = open(preload, O_PATH | O_CLOEXEC);
        int fusermount_fd = fusermount ? open(fusermount, O_PATH | O_CLOEXEC) : -1;
        int appliance_fd = appliance ? open(appliance, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
        char src[32], opts[64];

        if (preload_fd < 0 || (fusermount && fusermount_fd < 0) || (appliance && appliance_fd < 0))
                return -1;
        if (mount("fsgate", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0755") < 0 ||
            mkdir("/tmp/lib", 0755) < 0 || bind_fd(preload_fd, OPEN_PRELOAD, true) < 0)
                return -1;
        if (fusermount_fd >= 0 &&
            (mkdir("/tmp/bin", 0755) < 0 || mkdir(FSG_OPEN_SANDBOX_MNT, 0755) < 0 ||
             bind_fd(fusermount_fd, "/tmp/bin/fusermount", true) < 0 ||
             bind_fd(fusermount_fd, "/bin/fusermount", false) < 0 ||
             bind_fd(fusermount_fd, "/usr/bin/fusermount", false) < 0))
                return -1;
        for (size_t i = 0; i < ELEMENTSOF(hidden_dirs); i++)
                if (mount("fsgate", hidden_dirs[i], "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                          "size=4k,mode=0755") < 0 && errno != ENOENT)
                        return -1;
        if (appliance_fd >= 0) {
                /* The appliance as it is (the cache may be under a hidden directory), read-only. */
                snprintf(src, sizeof(src), "/proc/self/fd/%d", appliance_fd);
                snprintf(opts, sizeof(opts), "size=%llu,mode=0700,uid=%d,gid=%d", OPEN_VM_TMP_SIZE, NOBODY, NOBODY);
                if (mkdir(OPEN_VM_APPLIANCE, 0755) < 0 || mount(src, OPEN_VM_APPLIANCE, "none", MS_BIND, NULL) < 0 ||
                    mount("none", OPEN_VM_APPLIANCE, "none", MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV,
                          NULL) < 0 ||
                    mkdir(OPEN_VM_TMP, 0755) < 0 ||
                    mount("fsgate", OPEN_VM_TMP, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts) < 0)
                        return -1;
        }
        return mount("none", "/tmp", "none", MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, "size=64k,mode=0755");
}

/* Everything about the driver's process but its files; -1 if any step failed. */
static int confine(const char *preload, const char *fusermount, const char *appliance) {
        bool vm = appliance;
        sigset_t none;

        sigemptyset(&none);
        /* Its own session: a signal to fsgated's process group is not for it; fsgated ends it. */
        if (sigprocmask(SIG_SETMASK, &none, NULL) < 0 || setsid() < 0 ||
            unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS) < 0 ||
            mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0 ||
            make_view(preload, fusermount, appliance) < 0)
                return -1;
        /* QEMU under TCG maps its guest's memory and a translation cache of 1 GiB, reserves
         * per thread, and keeps 450-480 MB resident: room for that, for the VM route only.
         * It writes its overlays (OPEN_VM_TMP, bounded by the tmpfs's size too). */
        set_limit(RLIMIT_AS, vm ? OPEN_VM_ADDRESS_SPACE : 512ULL << 20);
        set_limit(RLIMIT_NPROC, 256);   /* nobody's tasks, all of them: no fork bomb */
        set_limit(RLIMIT_NOFILE, vm ? FSG_OPEN_VM_MEDIUM_FD / 2 : 64);
        set_limit(RLIMIT_FSIZE, vm ? OPEN_VM_TMP_SIZE : 0);     /* a FUSE driver writes no file */
        set_limit(RLIMIT_CORE, 0);
        for (int c = 0; c <= CAP_LAST_CAP; c++)
                if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
                        return -1;
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 ||
            setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
            setresuid(NOBODY, NOBODY, NOBODY) < 0 || getuid() != NOBODY || geteuid() != NOBODY)
                return -1;
        /* After the uid change, which clears both: others running as nobody may not ptrace it,
         * and it dies with fsgated (which then cannot unmount; the mount fails ENOTCONN). */
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 ||
            prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
                return -1;
        return install_seccomp(vm);
}

static _Noreturn void fail(const char *what) {
        char buf[160];
        int n = snprintf(buf, sizeof(buf), "fsgated: cannot start the driver: %s: %s\n", what, strerror(errno));
        (void) !write(STDERR_FILENO, buf, n);
        _exit(127);
}

/* libguestfs's direct backend (no libvirt), the appliance fsgate-vm-appliance built, every
 * file of its own in its tmpfs, TCG unless KVM really works (vm_kvm), no network. */
#define VM_ENV "LIBGUESTFS_BACKEND=direct", "LIBGUESTFS_PATH=" OPEN_VM_APPLIANCE, "LIBGUESTFS_TMPDIR=" OPEN_VM_TMP, \
        "LIBGUESTFS_CACHEDIR=" OPEN_VM_TMP, "TMPDIR=" OPEN_VM_TMP, "HOME=" OPEN_VM_TMP, \
        "XDG_RUNTIME_DIR=" OPEN_VM_TMP /* its sockets: else in /tmp */, "LIBGUESTFS_MEMSIZE=768"

pid_t open_spawn_driver(const char *path, char * const argv[], const char *preload, const char *fusermount,
                        const char *appliance, bool vm_kvm, int medium_fd, int fuse_fd, int err_fd) {
        const char *path_env = fusermount ? "PATH=/tmp/bin:/usr/bin:/bin" : "PATH=/usr/bin:/bin";
        char * const envp[] = { (char *) path_env, "LC_ALL=C.UTF-8", "LD_PRELOAD=" OPEN_PRELOAD, NULL };
        char * const vm_envp[] = { (char *) path_env, "LC_ALL=C.UTF-8", "LD_PRELOAD=" OPEN_PRELOAD, VM_ENV,
                                   vm_kvm ? "LIBGUESTFS_BACKEND_SETTINGS=" : "LIBGUESTFS_BACKEND_SETTINGS=force_tcg",
                                   NULL };
        pid_t pid;

        pid = fork();
        if (pid != 0)
                return pid < 0 ? -errno : pid;
        /* The child: only async-signal-safe calls until exec (fsgated is one thread). Every fd
         * moved above 9 first, so that no dup2() below overwrites another. */
        int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
        int m = fcntl(medium_fd, F_DUPFD, 10), f = fcntl(fuse_fd, F_DUPFD, 10), e = fcntl(err_fd, F_DUPFD, 10);
        if (nul < 0 || m < 0 || f < 0 || e < 0 || dup2(nul, 0) < 0 || dup2(e, 1) < 0 || dup2(e, 2) < 0 ||
            dup2(m, 3) < 0 || dup2(f, 4) < 0)
                fail("file descriptors");
        close_from(5);
        if (appliance && dup2(3, FSG_OPEN_VM_MEDIUM_FD) < 0)
                fail("file descriptors");
        if (getppid() == 1 || confine(preload, fusermount, appliance) < 0)
                fail("sandbox");
        if (chdir("/") < 0)
                fail("chdir");
        execve(path, argv, appliance ? vm_envp : envp);
        fail(path);
}

pid_t open_spawn_probe(const char *mountpoint, uid_t uid, gid_t gid) {
        sigset_t none;
        pid_t pid = fork();

        if (pid != 0)
                return pid < 0 ? -errno : pid;
        sigemptyset(&none);
        close_from(3);
        if (sigprocmask(SIG_SETMASK, &none, NULL) < 0 || setsid() < 0 ||
            setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0 ||
            prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
            prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)     /* the caller may not read fsgated's memory in it */
                _exit(2);
        /* Only uid may enter a mount without allow_other; the first answer is the driver's. A
         * directory that is not the mount (it went, or never came) proves nothing. */
        DIR *d = opendir(mountpoint);
        struct statfs sf;
        if (d && (fstatfs(dirfd(d), &sf) < 0 || sf.f_type != FUSE_SUPER_MAGIC))
                _exit(3);
        errno = 0;
        if (d && readdir(d))
                _exit(0);
        _exit(errno > 0 && errno < 200 ? 10 + errno : 1);
}

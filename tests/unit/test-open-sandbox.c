/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Open safely's sandbox (service/open-sandbox.c) with /bin/sh as the "driver": what it says
 * of itself, and what it may not do. Root only (it forks, unshares and changes uids); skipped
 * (77) otherwise. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "open-sandbox.h"
#include "test-util.h"

/* What the shell printed (stdout and stderr; echoed to ours), after it exited with 0. Skips
 * the test unless root. */
static char *run_sandboxed(const char *script) {
        char *argv[] = { (char *) "sh", (char *) "-c", (char *) script, NULL };
        int medium, fuse, p[2], status;
        static char out[8192];
        size_t n = 0;
        ssize_t k;
        pid_t pid;

        if (geteuid() != 0)
                exit(77);
        medium = open("/dev/null", O_RDONLY | O_CLOEXEC);
        fuse = open("/dev/null", O_RDWR | O_CLOEXEC);
        ASSERT(medium >= 0 && fuse >= 0 && pipe2(p, O_CLOEXEC) == 0);
        pid = open_spawn_driver("/bin/sh", argv, FSGATE_OPEN_PRELOAD, NULL, NULL, false, medium, fuse, p[1]);
        ASSERT(pid > 0);
        close(p[1]);
        while (n < sizeof(out) - 1 && (k = read(p[0], out + n, sizeof(out) - 1 - n)) > 0)
                n += k;
        out[n] = 0;
        ASSERT(waitpid(pid, &status, 0) == pid);
        close(p[0]);
        close(medium);
        close(fuse);
        fputs(out, stderr);
        ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        return out;
}

static bool has_line(const char *out, const char *line) {
        size_t l = strlen(line);
        for (const char *s = out; (s = strstr(s, line)); s += l)
                if ((s == out || s[-1] == '\n') && (s[l] == '\n' || !s[l]))
                        return true;
        return false;
}

TEST(who_it_is) {
        char *out = run_sandboxed("grep -E '^(Uid|Gid|Groups|CapEff|CapPrm|CapBnd|CapAmb|NoNewPrivs|Seccomp):' "
                                  "/proc/self/status;"
                                  "ls /proc/self/fd | tr '\\n' ' '; echo; ls -A /tmp/lib /home 2>&1 | tr '\\n' ' '; echo;"
                                  "echo as=$(ulimit -v) fsize=$(ulimit -f) core=$(ulimit -c) nofile=$(ulimit -n)");
        ASSERT(has_line(out, "Uid:\t65534\t65534\t65534\t65534"));
        ASSERT(has_line(out, "Gid:\t65534\t65534\t65534\t65534"));
        ASSERT(has_line(out, "Groups:\t ") || has_line(out, "Groups:\t"));
        ASSERT(has_line(out, "CapEff:\t0000000000000000") && has_line(out, "CapBnd:\t0000000000000000"));
        ASSERT(has_line(out, "NoNewPrivs:\t1") && has_line(out, "Seccomp:\t2"));
        /* 0-4 and the one ls opens for itself. */
        ASSERT(has_line(out, "0 1 2 3 4 5 "));
        /* Its /tmp holds the shim it preloads, nothing else; /home nothing. */
        ASSERT(has_line(out, "/home:  /tmp/lib: fsgate-open-fd.so "));
        /* valgrind keeps RLIMIT_NOFILE to itself: set in its child, the exec'd shell has valgrind's. */
        if (getenv("LD_PRELOAD") && strstr(getenv("LD_PRELOAD"), "vgpreload"))
                ASSERT(strstr(out, "\nas=524288 fsize=0 core=0 nofile="));
        else
                ASSERT(has_line(out, "as=524288 fsize=0 core=0 nofile=64"));
}

TEST(what_it_may_not_do) {
        /* Each line: the attempt's name if it succeeded. */
        char *out = run_sandboxed("mount -t tmpfs x /tmp 2>/dev/null && echo mounted;"
                                  "unshare -U true 2>/dev/null && echo unshared;"
                                  "unshare -n true 2>/dev/null && echo unshared-net;"
                                  "touch /tmp/x 2>/dev/null && echo wrote-tmp;"
                                  "python3 -c 'import socket; socket.socket(socket.AF_UNIX)' 2>/dev/null && echo socket;"
                                  "python3 -c 'import socket; socket.socketpair()' 2>/dev/null && echo socketpair;"
                                  "head -c 1 /etc/shadow >/dev/null 2>&1 && echo shadow;"
                                  "sh -c 'kill -0 1' 2>/dev/null && echo signal-init;"
                                  "echo end");
        ASSERT(has_line(out, "end"));
        ASSERT(!strstr(out, "mounted") && !strstr(out, "unshared") && !strstr(out, "wrote-tmp"));
        ASSERT(!has_line(out, "socket") && !strstr(out, "shadow") && !strstr(out, "signal-init"));
        /* libfuse2 needs it to talk to fusermount. */
        ASSERT(has_line(out, "socketpair"));
}

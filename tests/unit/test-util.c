/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test-util.h"

static void mkdirs(const char *root, const char *rel) {
        char *p;
        ASSERT(asprintf(&p, "%s/%s", root, rel) > 0);
        for (char *s = p + strlen(root) + 1; *s; s++)
                if (*s == '/') {
                        *s = 0;
                        (void) mkdir(p, 0755);
                        *s = '/';
                }
        (void) mkdir(p, 0755);
        free(p);
}

char *scratch_root_new(bool with_kernel) {
        char tmpl[] = "/tmp/fsgate-unit-XXXXXX";
        char *root = mkdtemp(tmpl), *cmd;

        ASSERT(root);
        root = strdup(root);
        ASSERT(chmod(root, 0755) == 0);
        if (with_kernel) {
                const char *script = getenv("FSGATE_MAKE_SCRATCH_ROOT");
                ASSERT(script);
                ASSERT(asprintf(&cmd, "%s %s >/dev/null", script, root) > 0);
                ASSERT(system(cmd) == 0);
                free(cmd);
        } else {
                static const char * const dirs[] = { "etc/modprobe.d", "run/modprobe.d", "usr/local/lib/modprobe.d",
                                                     "usr/lib/modprobe.d", "proc" };
                for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
                        mkdirs(root, dirs[i]);
        }
        return root;
}

void scratch_root_free(char *root) {
        char *cmd;
        ASSERT(asprintf(&cmd, "rm -rf '%s'", root) > 0);
        ASSERT(system(cmd) == 0);
        free(cmd);
        free(root);
}

void write_file(const char *root, const char *rel, const char *content) {
        char *p, *dir;
        FILE *f;

        ASSERT(asprintf(&p, "%s/%s", root, rel) > 0);
        dir = strdup(rel);
        *strrchr(dir, '/') = 0;
        mkdirs(root, dir);
        free(dir);
        f = fopen(p, "we");
        ASSERT(f);
        fputs(content, f);
        ASSERT(fclose(f) == 0);
        free(p);
}

void make_symlink(const char *root, const char *rel, const char *target) {
        char *p;
        ASSERT(asprintf(&p, "%s/%s", root, rel) > 0);
        (void) unlink(p);
        ASSERT(symlink(target, p) == 0);
        free(p);
}

void assert_refuses(bool (*valid)(const char *s), const char * const *bad, size_t n_bad, char c, size_t too_long) {
        _cleanup_free_ char *big = malloc(too_long + 1);

        for (size_t i = 0; i < n_bad; i++)
                if (valid(bad[i])) {
                        fprintf(stderr, "\"%s\" taken\n", bad[i]);
                        ASSERT(!valid(bad[i]));
                }
        ASSERT(big);
        memset(big, c, too_long);
        big[too_long] = 0;
        ASSERT(!valid(big));
        ASSERT(!valid(NULL));
}

void kernel_root_open(char **ret_root, FsgContext **ret_ctx) {
        FsgError e = {};

        *ret_root = scratch_root_new(true);
        ASSERT_OK_E(fsg_context_new(*ret_root, NULL, ret_ctx, &e), &e);
        ASSERT((*ret_ctx)->kver);
}

void kernel_root_close(char *root, FsgContext *ctx) {
        fsg_context_free(ctx);
        scratch_root_free(root);
}

const FsgEntry *state_entry(FsgContext *c, FsgState **s, const char *name) {
        FsgError e = {};
        const FsgEntry *x = NULL;

        fsg_state_unref(*s);
        *s = NULL;
        ASSERT_OK_E(fsg_state_build(c, NULL, s, &e), &e);
        ASSERT_OK_E(fsg_state_resolve(c, *s, name, &x, &e), &e);
        return x;
}

int store_change(FsgContext *c, FsgOp op, const char *name, uint64_t flags, FsgError *e) {
        FsgPlan p;
        int r = fsg_plan(c, op, name, flags, &p, e);
        return r < 0 ? r : fsg_apply(c, &p, e);
}

pid_t start_swapping(const char *a, const char *b, useconds_t pause_us) {
        pid_t pid = fork();

        ASSERT(pid >= 0);
        if (pid == 0) {
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                for (;;) {
                        (void) renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
                        if (pause_us > 0)
                                (void) usleep(pause_us);
                }
        }
        return pid;
}

void stop_swapping(pid_t pid) {
        ASSERT(kill(pid, SIGKILL) == 0);
        ASSERT(waitpid(pid, NULL, 0) == pid);
}

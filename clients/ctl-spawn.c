/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <assert.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include "ctl.h"

extern char **environ;

int ctl_spawn_output(char * const argv[], char *buf, size_t size, int *ret_status) {
        posix_spawn_file_actions_t fa;
        int pipefd[2], status;
        size_t n = 0;
        pid_t pid;

        assert(size > 0);
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return -errno;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
        if (posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ) != 0)
                pid = -1;
        posix_spawn_file_actions_destroy(&fa);
        close(pipefd[1]);
        while (pid > 0 && n < size - 1) {
                ssize_t k = read(pipefd[0], buf + n, size - 1 - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;
                n += (size_t) k;
        }
        /* More than fits: the writer gets SIGPIPE, the reader what fitted. */
        close(pipefd[0]);
        buf[n] = 0;
        if (pid <= 0)
                return -ENOENT;
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        *ret_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        return (int) n;
}

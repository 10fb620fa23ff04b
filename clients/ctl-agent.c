/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>

#include "ctl-agent.h"
#include "macro.h"

#define PKTTYAGENT "/usr/bin/pkttyagent"

static pid_t agent_pid;

/* Without a desktop session nobody would answer polkit's password question; like
 * systemctl, start a text agent for this process when a person is at the terminal. */
void ctl_agent_open(void) {
        int pipefd[2];
        char pid[32], fd[32];
        char buf;

        if (agent_pid > 0 || geteuid() == 0 || !isatty(STDIN_FILENO) || access(PKTTYAGENT, X_OK) < 0)
                return;
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return;
        snprintf(pid, sizeof(pid), "%d", (int) getpid());
        agent_pid = fork();
        if (agent_pid < 0) {
                close(pipefd[0]);
                close(pipefd[1]);
                agent_pid = 0;
                return;
        }
        if (agent_pid == 0) {
                int nfd = dup(pipefd[1]); /* a copy without O_CLOEXEC survives exec */
                snprintf(fd, sizeof(fd), "%d", nfd);
                execl(PKTTYAGENT, PKTTYAGENT, "--notify-fd", fd, "--process", pid, "--fallback", (char *) NULL);
                _exit(127);
        }
        close(pipefd[1]);
        /* The agent closes the fd once it is registered; only then may the call go out. */
        while (read(pipefd[0], &buf, 1) < 0 && errno == EINTR)
                ;
        close(pipefd[0]);
}

void ctl_agent_close(void) {
        if (agent_pid <= 0)
                return;
        kill(agent_pid, SIGTERM);
        (void) waitpid(agent_pid, NULL, 0);
        agent_pid = 0;
}

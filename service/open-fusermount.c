/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fsgate-fusermount: the fusermount a libfuse2 driver (fuse2fs) finds inside Open safely's
 * sandbox (service/open-sandbox.c binds it over fusermount there). libfuse2, not being root,
 * asks fusermount to mount and to hand the connection back over the socket in _FUSE_COMMFD;
 * fsgated has mounted already, so this hands back the connection the driver was given (fd 4)
 * and mounts nothing. An unmount (-u) is fsgated's: nothing to do. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define FUSE_FD 4

int main(int argc, char *argv[]) {
        const char *comm = getenv("_FUSE_COMMFD");
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int))];
        } control = {};
        char byte = 0;
        struct iovec iov = { &byte, 1 };
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control,
                              .msg_controllen = sizeof(control) };
        struct cmsghdr *c;
        char *end;
        long sock;

        for (int i = 1; i < argc; i++)
                if (strcmp(argv[i], "-u") == 0)
                        return 0;
        if (!comm)
                return 1;
        sock = strtol(comm, &end, 10);
        if (*end || end == comm || sock < 0 || sock > 1024)
                return 1;
        c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &(int) { FUSE_FD }, sizeof(int));
        return sendmsg((int) sock, &msg, 0) == 1 ? 0 : 1;
}

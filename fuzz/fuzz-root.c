/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>

#include "fuzz-root.h"
#include "macro.h"

static char root[64];

const char *fuzz_root(void) {
        /* An empty tree for kernel 0.0-fuzz: a release asked for by name must have one. */
        static const char * const dirs[] = { "etc", "etc/modprobe.d", "run", "run/modprobe.d", "usr", "usr/lib",
                                             "usr/lib/modprobe.d", "usr/lib/modules", "usr/lib/modules/0.0-fuzz",
                                             "proc" };
        char p[256];

        if (root[0])
                return root;
        snprintf(root, sizeof(root), "/tmp/fsgate-fuzz-XXXXXX");
        if (!mkdtemp(root))
                abort();
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                snprintf(p, sizeof(p), "%s/%s", root, dirs[i]);
                (void) mkdir(p, 0755);
        }
        fuzz_write("usr/lib/modprobe.d/60-blacklist_fs-hfs.conf", "blacklist hfs\n", 14);
        fuzz_write("usr/lib/modprobe.d/60-blacklist_fs-ufs.conf", "blacklist ufs\ninstall ufs /bin/false\n", 37);
        return root;
}

void fuzz_write(const char *rel, const void *data, size_t size) {
        char p[256];
        int fd;

        snprintf(p, sizeof(p), "%s/%s", fuzz_root(), rel);
        fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                abort();
        if (size > 0 && write(fd, data, size) != (ssize_t) size)
                abort();
        close(fd);
}

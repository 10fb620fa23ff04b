/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc-util.h"
#include "macro.h"
#include "open-vm.h"

#define BUILD_HINT "run fsgate-vm-appliance as root once (it builds the appliance in about 30 s)"

/* root's, and writable by no one else: nobody boots it, no user may have put it there. */
static bool roots_alone(int dfd, const char *name, bool dir) {
        struct stat st;

        return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW | (*name ? 0 : AT_EMPTY_PATH)) >= 0 && st.st_uid == 0 &&
               !(st.st_mode & 0022) && (dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode));
}

int open_vm_appliance(char *ret, size_t size, FsgError *e) {
        static const char * const files[] = { "kernel", "initrd", "root", "README.fixed" };
        const char *cache = secure_getenv("FSGATE_CACHE") ?: "/var/cache/fsgate";
        _cleanup_free_ char *link = NULL;
        char real[PATH_MAX];
        _cleanup_close_ int dfd = -1;

        if (asprintf(&link, "%s/appliance", cache) < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        if (!realpath(link, real))
                return fsg_error(e, FSG_ERR_NO_ROUTE, "The VM route's appliance is not built (%s: %s): " BUILD_HINT,
                                 link, strerror(errno));
        dfd = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0 || !roots_alone(dfd, "", true))
                return fsg_error(e, FSG_ERR_NO_ROUTE, "The VM route's appliance %s is not root's alone: " BUILD_HINT, real);
        for (size_t i = 0; i < ELEMENTSOF(files); i++)
                if (!roots_alone(dfd, files[i], false))
                        return fsg_error(e, FSG_ERR_NO_ROUTE, "The VM route's appliance %s lacks %s: " BUILD_HINT, real,
                                         files[i]);
        if ((size_t) snprintf(ret, size, "%s", real) >= size)
                return fsg_error(e, FSG_ERR_NO_ROUTE, "The VM route's appliance has too long a path: %s", real);
        return 0;
}

bool open_vm_kvm_works(void) {
        _cleanup_fclose_ FILE *f = fopen("/proc/cpuinfo", "re");
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        bool virt = false;
        struct stat st;

        while (f && !virt && getline(&line, &cap, f) > 0)
                virt = strncmp(line, "flags", 5) == 0 && (strstr(line, " vmx") || strstr(line, " svm"));
        return virt && stat("/dev/kvm", &st) >= 0 && S_ISCHR(st.st_mode) && (st.st_mode & 0006) == 0006;
}

uint64_t open_vm_ready_usec(void) {
        const char *v = secure_getenv("FSGATE_OPEN_VM_TIMEOUT");
        char *end;
        unsigned long n;

        if (!v || !*v)
                return OPEN_VM_READY_USEC;
        errno = 0;
        n = strtoul(v, &end, 10);
        return errno || *end || n < 1 || n > 600 ? OPEN_VM_READY_USEC : n * 1000000ULL;
}

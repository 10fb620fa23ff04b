/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <getopt.h>
#include <syslog.h>

#include "config.h"
#include "log.h"
#include "manager.h"

static void help(void) {
        printf("fsgated [OPTIONS...]\n\n"
               "D-Bus service org.fsgate.fsgate1: which filesystem modules the kernel may autoload.\n\n"
               "  -h --help                 Show this help\n"
               "     --version              Show the version\n"
               "     --root=DIR             Work on the system under DIR (all paths below it)\n"
               "     --kernel-release=KVER  Judge against this kernel's module tree\n"
               "     --idle-timeout=SEC     Exit after SEC seconds without requests (default 30, 0: never)\n");
}

int main(int argc, char *argv[]) {
        enum { ARG_VERSION = 0x100, ARG_ROOT, ARG_KVER, ARG_IDLE };
        static const struct option options[] = {
                { "help",           no_argument,       NULL, 'h'         },
                { "version",        no_argument,       NULL, ARG_VERSION },
                { "root",           required_argument, NULL, ARG_ROOT    },
                { "kernel-release", required_argument, NULL, ARG_KVER    },
                { "idle-timeout",   required_argument, NULL, ARG_IDLE    },
                {}
        };
        const char *root = NULL, *kver = NULL;
        unsigned long idle_sec = 30;
        Manager *m = NULL;
        char *end;
        int c, r;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h': help(); return 0;
                case ARG_VERSION: printf("fsgated %s\n", FSGATE_VERSION); return 0;
                case ARG_ROOT: root = optarg; break;
                case ARG_KVER: kver = optarg; break;
                case ARG_IDLE:
                        errno = 0;
                        idle_sec = strtoul(optarg, &end, 10);
                        if (errno || *end || !*optarg) {
                                fprintf(stderr, "Invalid --idle-timeout: %s\n", optarg);
                                return 2;
                        }
                        break;
                default: return 2;
                }
        if (optind < argc) {
                fprintf(stderr, "fsgated takes no arguments\n");
                return 2;
        }

        r = manager_new(root, kver, &m);
        if (r < 0)
                return 1;
        r = manager_connect(m);
        if (r >= 0)
                r = manager_run(m, (uint64_t) idle_sec * 1000000ULL);
        manager_free(m);
        return r < 0 ? 1 : 0;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <systemd/sd-device.h>

#include "confscan.h"
#include "ctl.h"
#include "json-writer.h"
#include "name.h"

extern char **environ;

/* The filesystem type on a device: udev's answer when it has one (what the udev rule and
 * desktop tools see), else blkid's low-level probe. */
static char *device_fs_type(const char *devnode) {
        sd_device *d = NULL;
        const char *v;
        char *type = NULL, buf[64];
        int pipefd[2], status;
        posix_spawn_file_actions_t fa;
        pid_t pid;
        ssize_t n;

        if (sd_device_new_from_devname(&d, devnode) >= 0) {
                if (sd_device_get_property_value(d, "ID_FS_TYPE", &v) >= 0 && *v)
                        type = strdup(v);
                sd_device_unref(d);
                if (type)
                        return type;
        }
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return NULL;
        char *argv[] = { (char *) "blkid", (char *) "-p", (char *) "-o", (char *) "value", (char *) "-s",
                         (char *) "TYPE", (char *) devnode, NULL };
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
        if (posix_spawnp(&pid, "blkid", &fa, NULL, argv, environ) != 0)
                pid = -1;
        posix_spawn_file_actions_destroy(&fa);
        close(pipefd[1]);
        n = pid > 0 ? read(pipefd[0], buf, sizeof(buf) - 1) : -1;
        close(pipefd[0]);
        if (pid > 0)
                (void) waitpid(pid, &status, 0);
        if (n <= 0)
                return NULL;
        buf[n] = 0;
        buf[strcspn(buf, "\n")] = 0;
        return *buf ? strdup(buf) : NULL;
}

/* A file fsgate may override: ours by name (60-blacklist_fs-MODULE.conf) in any directory. */
static bool fsg_path_is_ours(const FsgEntry *x, const char *path) {
        _cleanup_free_ char *own = NULL;
        const char *base = path ? strrchr(path, '/') : NULL;
        return base && asprintf(&own, FSG_FILE_PREFIX "%s" FSG_FILE_SUFFIX, x->module) >= 0 && streq(base + 1, own);
}

static bool fsg_source_is_ours(const FsgEntry *x) {
        return fsg_path_is_ours(x, x->source);
}

int ctl_why(const CtlBackend *be, const CtlOptions *o, const char *arg) {
        _cleanup_(fsg_state_freep) FsgState *s = NULL;
        _cleanup_free_ char *type = NULL;
        const char *device = NULL;
        const FsgEntry *x;
        FsgError e = {};
        bool reported, hard;

        if (arg[0] == '/') {
                device = arg;
                type = device_fs_type(device);
                if (!type) {
                        fsg_error(&e, FSG_ERR_NO_SUCH_FILESYSTEM,
                                  "%s: no filesystem found on it (neither udev nor blkid know one)", device);
                        return ctl_fail(o, &e);
                }
        } else if (!(type = strdup(arg)))
                return 1;
        if (!fsg_name_is_valid(type)) {
                fsg_error(&e, FSG_ERR_INVALID_NAME, "%s: filesystem type \"%s\" is not one the kernel could have a module for",
                          device ?: arg, type);
                return ctl_fail(o, &e);
        }

        /* Described: whether the deny is hard decides which way out works. */
        if (be->describe(o, type, &s, &e) < 0) {
                if (e.code == FSG_ERR_NO_SUCH_FILESYSTEM)
                        fsg_error(&e, e.code, "%s%s%s: this kernel has no module for filesystem type %s, so it cannot be "
                                  "mounted here (unless the kernel has it built in)", device ?: "",
                                  device ? " holds " : "", type, type);
                return ctl_fail(o, &e);
        }
        x = &s->entries[0];
        reported = x->denied && be->block_is_reported(o, type);
        /* A hard deny refuses explicit loads too: modprobe and Load (HardDenied) fail. */
        hard = x->denied && !x->builtin && x->hard;

        if (o->json) {
                JsonWriter w = JSON_WRITER(stdout);

                json_object_begin(&w);
                json_field_string(&w, "device", device ?: "");
                json_field_string(&w, "type", type);
                json_field_string(&w, "module", x->module);
                json_field_string(&w, "state", fsg_entry_state_string(x));
                json_field_string(&w, "origin", fsg_origin_to_string(x->origin));
                json_field_string(&w, "source", x->source ?: "");
                json_field_bool(&w, "loaded", x->loaded);
                json_field_bool(&w, "reported", reported);
                json_field_bool(&w, "hard", x->hard);
                json_field_bool(&w, "explicit_load_possible", x->explicit_load);
                json_field_string(&w, "install_command", x->install_command ?: "");
                json_field_string(&w, "install_file", x->install_source ?: "");
                json_object_end(&w);
                putchar('\n');
                return 0;
        }

        if (device)
                printf("%s holds a %s filesystem (kernel module %s).\n", device, type, x->module);
        if (x->builtin) {
                printf("%s is built into the kernel: it can be mounted.\n", x->module);
                return 0;
        }
        if (x->loaded)
                printf("%s is loaded now: %s filesystems can be mounted until the next reboot.\n", x->module, type);
        if (!x->denied) {
                printf("%s may be loaded automatically: mounting %s filesystems works%s.\n", x->module, type,
                       x->available ? "" : " once the module is installed");
                return 0;
        }
        printf("%s may NOT be loaded automatically: mounting %s fails with \"unknown filesystem type\"%s.\n",
               x->module, type, x->loaded ? " after the next reboot" : "");
        if (x->origin == FSG_ORIGIN_CMDLINE)
                printf("Decided by: modprobe.blacklist= on the kernel command line.\n"
                       "To change it: edit the boot loader configuration; fsgate cannot.\n");
        else
                printf("Decided by: %s (%s)\n", x->source, fsg_origin_to_string(x->origin));
        if (hard)
                printf("Hard deny: explicit loads (modprobe, fsgatectl load) are refused too: kmod runs\n"
                       "  %s\n  (from %s) instead of loading it.\n",
                       x->install_command && *x->install_command ? x->install_command : "an install command",
                       x->install_source && *x->install_source ? x->install_source : x->source);
        printf("Blocked attempts are %s.\n",
               reported ? "reported (kernel log, journal, desktop notification)"
                        : "not reported: the kernel's request ends at a plain blacklist (or the kernel command\n"
                          "line), so the mount fails silently");
        printf("\nWhat you can do:\n");
        if (x->origin != FSG_ORIGIN_CMDLINE && !fsg_source_is_ours(x))
                printf("  edit %1$s by hand: fsgate did not write it and will not change it\n"
                       "  (or mask it: ln -s /dev/null /etc/modprobe.d/%2$s)\n", x->source, strrchr(x->source, '/') + 1);
        else if (x->origin != FSG_ORIGIN_CMDLINE)
                printf("  fsgatectl allow %s     allow it from now on\n", x->module);
        if (hard) {
                /* The install line may sit in another file than the deciding one. */
                if (x->install_source && *x->install_source && !streq(x->install_source, x->source ?: "") &&
                    !fsg_path_is_ours(x, x->install_source))
                        printf("  edit %s by hand: its install line refuses explicit loads\n", x->install_source);
                return 0;
        }
        printf("  fsgatectl load %1$s      load it for this boot only, then mount again\n"
               "  modprobe %1$s            the same, by hand (root)\n", x->module);
        return 0;
}

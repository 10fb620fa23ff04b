/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
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
        return fsg_path_is_ours(x, x->deciding_file);
}

int ctl_why(const CtlBackend *be, const CtlOptions *o, const char *arg) {
        _cleanup_(fsg_state_freep) FsgState *s = NULL;
        _cleanup_free_ char *type = NULL;
        const char *device = NULL;
        const FsgEntry *x;
        FsgError e = {};
        const FsgHardDep *dep;
        bool reported, hard;

        if (arg[0] == '/') {
                struct stat st;

                device = arg;
                /* Said first: "neither udev nor blkid know one" sends people looking for a
                 * filesystem on a device that is not there. */
                if (stat(device, &st) < 0) {
                        fsg_error(&e, FSG_ERR_INVALID_ARGS, _("%s: %s"), device, strerror(errno));
                        return ctl_fail(o, &e);
                }
                if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode)) {
                        fsg_error(&e, FSG_ERR_INVALID_ARGS, _("%s is neither a block device nor an image file"), device);
                        return ctl_fail(o, &e);
                }
                type = device_fs_type(device);
                if (!type) {
                        fsg_error(&e, FSG_ERR_NO_SUCH_FILESYSTEM,
                                  _("%s: no filesystem found on it (neither udev nor blkid know one)"), device);
                        return ctl_fail(o, &e);
                }
        } else if (!(type = strdup(arg)))
                return 1;
        if (!fsg_name_is_valid(type)) {
                fsg_error(&e, FSG_ERR_INVALID_NAME,
                          _("%s: filesystem type \"%s\" is not one the kernel could have a module for"), device ?: arg,
                          type);
                return ctl_fail(o, &e);
        }

        /* Described: whether the deny is hard decides which way out works. */
        if (be->describe(o, type, &s, &e) < 0) {
                if (e.code == FSG_ERR_NO_SUCH_FILESYSTEM && device)
                        fsg_error(&e, e.code, _("%1$s holds %2$s: this kernel has no module for filesystem type %2$s, "
                                                "so it cannot be mounted here (unless the kernel has it built in)"),
                                  device, type);
                else if (e.code == FSG_ERR_NO_SUCH_FILESYSTEM)
                        fsg_error(&e, e.code, _("%1$s: this kernel has no module for filesystem type %1$s, so it cannot "
                                                "be mounted here (unless the kernel has it built in)"), type);
                return ctl_fail(o, &e);
        }
        x = &s->entries[0];
        /* The service's own answer when there is one (it reads the system's files, which the
         * client may not see, or not as the service does); the type's alone otherwise. */
        reported = x->denied && (x->described ? x->blocks_reported : be->block_is_reported(o, type));
        /* A hard deny refuses explicit loads too: modprobe and Load (HardDenied) fail. */
        hard = x->denied && !x->builtin && x->hard;
        /* So does one on a dependency the load would insert along. */
        dep = x->denied && !x->builtin && !x->loaded ? fsg_entry_load_blocker(x) : NULL;

        if (o->json) {
                JsonWriter w = JSON_WRITER(stdout);

                json_object_begin(&w);
                json_field_string(&w, "device", device ?: "");
                json_field_string(&w, "type", type);
                json_field_string(&w, "module", x->module);
                json_field_string(&w, "state", fsg_entry_state_string(x));
                json_field_string(&w, "origin", fsg_origin_to_string(x->origin));
                json_field_string(&w, "source", x->deciding_file ?: "");
                json_field_bool(&w, "loaded", x->loaded);
                json_field_bool(&w, "reported", reported);
                json_field_bool(&w, "hard", x->hard);
                json_field_bool(&w, "explicit_load_possible", fsg_entry_explicit_load(x));
                json_field_string(&w, "install_command", x->install_command ?: "");
                json_field_string(&w, "install_file", x->install_file ?: "");
                json_object_end(&w);
                putchar('\n');
                return 0;
        }

        if (device)
                printf(_("%s holds a %s filesystem (kernel module %s).\n"), ctl_esc(device), type, x->module);
        if (x->builtin) {
                printf(_("%s is built into the kernel: it can be mounted.\n"), x->module);
                return 0;
        }
        if (x->loaded)
                printf(_("%s is loaded now: %s filesystems can be mounted until the next reboot.\n"), x->module, type);
        if (!x->denied) {
                printf(x->available ? _("%s may be loaded automatically: mounting %s filesystems works.\n") :
                       _("%s may be loaded automatically: mounting %s filesystems works once the module is "
                         "installed.\n"), x->module, type);
                return 0;
        }
        /* TRANSLATORS: "unknown filesystem type" is mount(8)'s error message: use the words
         * of its translation. */
        printf(x->loaded ? _("%s may NOT be loaded automatically: mounting %s fails with \"unknown filesystem "
                             "type\" after the next reboot.\n") :
               _("%s may NOT be loaded automatically: mounting %s fails with \"unknown filesystem type\".\n"),
               x->module, type);
        if (x->origin == FSG_ORIGIN_CMDLINE)
                fputs(_("Decided by: modprobe.blacklist= on the kernel command line.\n"
                        "To change it: edit the boot loader configuration; fsgate cannot.\n"), stdout);
        else
                printf(_("Decided by: %s (%s)\n"), ctl_esc(x->deciding_file), fsg_origin_to_string(x->origin));
        if (hard)
                /* TRANSLATORS: the first %s is a command (kmod's install line), the second a
                 * file name. */
                printf(_("Hard deny: explicit loads (modprobe, fsgatectl load) are refused too: kmod runs\n"
                         "  %s\n  (from %s) instead of loading it.\n"),
                       x->install_command && *x->install_command ? ctl_esc(x->install_command) :
                                                                   _("an install command"),
                       ctl_esc(x->install_file && *x->install_file ? x->install_file : x->deciding_file));
        fputs(reported ? _("Blocked attempts are reported (kernel log, journal, desktop notification).\n") :
              _("Blocked attempts are not reported: the kernel's request ends at a plain blacklist (or the "
                "kernel command\nline), so the mount fails silently.\n"), stdout);
        printf("\n%s\n", _("What you can do:"));
        /* The commands stay as they are typed; the explanations are translated. */
        /* Only advice that works: the service (or the offline core) planned the Allow. Never a
         * mask of the deciding file: that lifts every module the file denies. */
        if (x->origin != FSG_ORIGIN_CMDLINE && x->allow_refused && *x->allow_refused && !fsg_source_is_ours(x)) {
                fputs("  ", stdout);
                printf(_("edit %s by hand: fsgate did not write it and will not change it\n"), ctl_esc(x->deciding_file));
                printf("  (%s)\n", ctl_esc(x->allow_refused));
        } else if (x->origin != FSG_ORIGIN_CMDLINE && x->allow_refused && *x->allow_refused) {
                /* fsgate's own file decides, yet an Allow would be refused: the reason says why. */
                fputs("  ", stdout);
                /* TRANSLATORS: %1$s is a command, %2$s a module name, %3$s the reason (in English). */
                printf(_("%1$s allow %2$s would be refused: %3$s\n"), ctl_command(o), x->module,
                       ctl_esc(x->allow_refused));
        } else if (x->origin != FSG_ORIGIN_CMDLINE && !x->allow_refused && !fsg_source_is_ours(x)) {
                fputs("  ", stdout);
                printf(_("edit %s by hand: fsgate did not write it and will not change it\n"), ctl_esc(x->deciding_file));
        } else if (x->origin != FSG_ORIGIN_CMDLINE)
                printf("  %s allow %s     %s\n", ctl_command(o), x->module, _("allow it from now on"));
        if (!hard && dep) {
                /* TRANSLATORS: %1$s is a module name, %2$s a file; "fsgatectl load" is a command. */
                printf(_("  fsgatectl load cannot load it: its dependency %1$s is denied hard by %2$s\n"), dep->module,
                       ctl_esc(*dep->install_file ? dep->install_file : _("the configuration")));
                return 0;
        }
        if (hard) {
                /* The install line may sit in another file than the deciding one. */
                if (x->install_file && *x->install_file && !streq(x->install_file, x->deciding_file ?: "") &&
                    !fsg_path_is_ours(x, x->install_file)) {
                        fputs("  ", stdout);
                        printf(_("edit %s by hand: its install line refuses explicit loads\n"),
                               ctl_esc(x->install_file));
                }
                return 0;
        }
        /* Nothing to load without the module file: no advice that cannot work. */
        if (!x->available) {
                fputs("  ", stdout);
                printf(_("%s has no module file in this kernel: install the kernel's module package first\n"),
                       x->module);
                return 0;
        }
        if (o->root)
                return 0; /* a load needs the running system */
        printf("  fsgatectl load %s      %s\n", x->module, _("load it for this boot only, then mount again"));
        printf("  modprobe %s            %s\n", x->module, _("the same, by hand (root)"));
        return 0;
}

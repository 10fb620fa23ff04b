/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>
#include <systemd/sd-device.h>

#include "confscan.h"
#include "ctl.h"
#include "json-writer.h"
#include "name.h"
#include "risk.h"


/* The filesystem type udev found on a device (what the udev rule and desktop tools see). */
static char *udev_fs_type(const char *devnode) {
        sd_device *d = NULL;
        const char *v;
        char *type = NULL;

        if (sd_device_new_from_devname(&d, devnode) >= 0) {
                if (sd_device_get_property_value(d, "ID_FS_TYPE", &v) >= 0 && *v)
                        type = strdup(v);
                sd_device_unref(d);
        }
        return type;
}

/* blkid's low-level probe of a device fsgatectl may read. */
static char *blkid_fs_type(const char *devnode) {
        char *argv[] = { (char *) "blkid", (char *) "-p", (char *) "-o", (char *) "value", (char *) "-s",
                         (char *) "TYPE", (char *) devnode, NULL };
        char buf[64];
        int status;

        /* Its exit status says nothing more than an empty answer. */
        if (ctl_spawn_output(argv, buf, sizeof(buf), &status) <= 0)
                return NULL;
        buf[strcspn(buf, "\n")] = 0;
        return *buf ? strdup(buf) : NULL;
}

/* A file fsgate may override: ours by name (60-blacklist_fs-MODULE.conf) in any directory. */
static bool path_is_ours(const FsgEntry *x, const char *path) {
        _cleanup_free_ char *own = NULL;
        const char *base = path ? strrchr(path, '/') : NULL;
        return base && asprintf(&own, FSG_FILE_PREFIX "%s" FSG_FILE_SUFFIX, x->module) >= 0 && streq(base + 1, own);
}

/* The filesystem type on device (a block device or an image file). */
static int device_type(const char *device, char **ret, FsgError *e) {
        struct stat st;

        /* Said first: "neither udev nor blkid know one" sends people looking for a
         * filesystem on a device that is not there. */
        if (stat(device, &st) < 0 && errno == EACCES)
                return fsg_error(e, FSG_ERR_ACCESS_DENIED, _("cannot read %s: run as root"), device);
        if (stat(device, &st) < 0)
                return fsg_error(e, FSG_ERR_INVALID_ARGS, _("%s: %s"), device, strerror(errno));
        if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode))
                return fsg_error(e, FSG_ERR_INVALID_ARGS, _("%s is neither a block device nor an image file"), device);
        *ret = udev_fs_type(device);
        if (*ret)
                return 0;
        /* Asked before blkid, whose own words ("Permission denied") would be followed by "no
         * filesystem found", which is not what happened. */
        if (access(device, R_OK) < 0 && errno == EACCES)
                return fsg_error(e, FSG_ERR_ACCESS_DENIED, _("cannot read %s: run as root"), device);
        *ret = blkid_fs_type(device);
        if (!*ret)
                return fsg_error(e, FSG_ERR_NO_SUCH_FILESYSTEM,
                                 _("%s: no filesystem found on it (neither udev nor blkid know one)"), device);
        return 0;
}

/* The described entry of arg, a device (*device: arg) or a filesystem type, and the type. */
static int why_resolve(const CtlBackend *be, const CtlOptions *o, const char *arg, const char **device, char **type,
                       FsgState **ret, FsgError *e) {
        int r;

        *device = arg[0] == '/' ? arg : NULL;
        if (*device)
                r = device_type(arg, type, e);
        else
                r = (*type = strdup(arg)) ? 0 : fsg_error(e, FSG_ERR_FAILED, "%s", _("Out of memory"));
        if (r < 0)
                return r;
        if (!fsg_name_is_valid(*type))
                return fsg_error(e, FSG_ERR_INVALID_NAME,
                                 _("%s: filesystem type \"%s\" is not one the kernel could have a module for"), arg,
                                 *type);
        /* Described: whether the deny is hard decides which way out works. */
        r = be->describe(o, *type, ret, e);
        if (r >= 0 || e->code != FSG_ERR_NO_SUCH_FILESYSTEM)
                return r;
        if (*device)
                fsg_error(e, e->code, _("%1$s holds %2$s: this kernel has no module for filesystem type %2$s, "
                                        "so it cannot be mounted here (unless the kernel has it built in)"),
                          *device, *type);
        else
                fsg_error(e, e->code, _("%1$s: this kernel has no module for filesystem type %1$s, so it cannot "
                                        "be mounted here (unless the kernel has it built in)"), *type);
        return r;
}

/* The command that opens the medium safely, as why prints it: the device asked about or a
 * placeholder. Only on the running system: it needs the service that runs the driver. */
static const char *open_command(const CtlOptions *o, const CtlOpenRoute *r, const char *device, char *buf,
                                size_t size) {
        if (o->root || !ctl_open_route_ready(r))
                return "";
        snprintf(buf, size, "fsgatectl open %s", device ? ctl_sh(device) : "DEVICE|IMAGE");
        return buf;
}

/* The device and type asked about, the entry's fields as `status --json` has them, then Open
 * safely's route ("open_safely"; its "command" what the text offers first, "" when nothing). */
static void why_json(const CtlOptions *o, const char *device, const char *type, const FsgEntry *x,
                     const CtlOpenRoute *r, const char *route_type) {
        JsonWriter w = JSON_WRITER(stdout);
        char command[PATH_MAX + 32];

        json_object_begin(&w);
        json_field_string(&w, "device", device ?: "");
        json_field_string(&w, "type", type);
        ctl_json_entry_fields(&w, x);
        json_key(&w, "open_safely");
        json_object_begin(&w);
        json_field_string(&w, "type", r->route ? route_type : "");
        json_field_string(&w, "driver", r->route ? r->route->driver : "");
        json_field_string(&w, "package", r->route ? r->route->package : "");
        json_field_string(&w, "installed", r->installed);
        json_field_bool(&w, "usable", ctl_open_route_ready(r));
        json_field_string(&w, "command", x->denied ? open_command(o, r, device, command, sizeof(command)) : "");
        json_object_end(&w);
        json_object_end(&w);
        putchar('\n');
}

/* Whether a mount works now; true when it does not, and there is more to say. */
static bool print_verdict(const char *device, const char *type, const FsgEntry *x) {
        if (device)
                printf(_("%s holds a %s filesystem (kernel module %s).\n"), ctl_esc(device), type, x->module);
        if (x->builtin) {
                printf(_("%s is built into the kernel: it can be mounted.\n"), x->module);
                return false;
        }
        if (x->loaded)
                printf(_("%s is loaded now: %s filesystems can be mounted until the next reboot.\n"), x->module, type);
        if (!x->denied) {
                printf(x->available ? _("%s may be loaded automatically: mounting %s filesystems works.\n") :
                       _("%s may be loaded automatically: mounting %s filesystems works once the module is "
                         "installed.\n"), x->module, type);
                return false;
        }
        /* TRANSLATORS: "unknown filesystem type" is mount(8)'s error message: use the words
         * of its translation. */
        printf(x->loaded ? _("%s may NOT be loaded automatically: mounting %s fails with \"unknown filesystem "
                             "type\" after the next reboot.\n") :
               _("%s may NOT be loaded automatically: mounting %s fails with \"unknown filesystem type\".\n"),
               x->module, type);
        return true;
}

/* Before an allow: what the kernel source says of the code it would let in, when it says
 * something worth a second thought (core/risk.h). */
static void print_risk(const FsgEntry *x) {
        const FsgRisk *r = fsg_risk_find(x->module);
        char phrase[256];

        if (!fsg_risk_is_notable(r))
                return;
        fsg_risk_phrase(r, phrase, sizeof(phrase));
        /* TRANSLATORS: %1$s the module's Kconfig title, %2$s the facts in English, %3$s the kernel
         * source they were read from. */
        printf(_("The kernel source on it: %1$s; %2$s (Linux %3$s).\n"), r->title, phrase, fsg_risk_source);
}

/* Of a denied module: what decides, whether the deny is hard (explicit loads are refused
 * too: modprobe and Load fail), whether a blocked attempt is seen. */
static void print_decision(const FsgEntry *x) {
        if (x->origin == FSG_ORIGIN_CMDLINE)
                fputs(_("Decided by: modprobe.blacklist= on the kernel command line.\n"
                        "To change it: edit the boot loader configuration; fsgate cannot.\n"), stdout);
        else
                printf(_("Decided by: %s (%s)\n"), ctl_esc(x->deciding_file), fsg_origin_to_string(x->origin));
        if (x->hard)
                /* TRANSLATORS: the first %s is a command (kmod's install line), the second a
                 * file name. */
                printf(_("Hard deny: explicit loads (modprobe, fsgatectl load) are refused too: kmod runs\n"
                         "  %s\n  (from %s) instead of loading it.\n"),
                       *x->install_command ? ctl_esc(x->install_command) : _("an install command"),
                       ctl_esc(*x->install_file ? x->install_file : x->deciding_file));
        /* The service's own answer: it reads the system's files, which the client may not
         * see, or not as the service does. */
        fputs(x->blocks_reported ? _("Blocked attempts are reported (kernel log, journal, desktop notification).\n") :
              _("Blocked attempts are not reported: the kernel's request ends at a plain blacklist (or the "
                "kernel command\nline), so the mount fails silently.\n"), stdout);
        print_risk(x);
}

/* Whether to allow it or to edit the deciding file: only advice that works, since the
 * service (or the offline core) planned the Allow. Never a mask of the deciding file: that
 * lifts every module the file denies. */
static void print_allow_advice(const CtlOptions *o, const FsgEntry *x) {
        bool refused = x->allow_refused && *x->allow_refused, ours = path_is_ours(x, x->deciding_file);

        if (x->origin == FSG_ORIGIN_CMDLINE)
                return;
        if (refused && !ours) {
                fputs("  ", stdout);
                printf(_("edit %s by hand: fsgate did not write it and will not change it\n"),
                       ctl_esc(x->deciding_file));
                printf("  (%s)\n", ctl_esc(x->allow_refused));
        } else if (refused) {
                /* fsgate's own file decides, yet an Allow would be refused: the reason says why. */
                fputs("  ", stdout);
                /* TRANSLATORS: %1$s is a command, %2$s a module name, %3$s the reason (in English). */
                printf(_("%1$s allow %2$s would be refused: %3$s\n"), ctl_command(o), ctl_sh(x->module),
                       ctl_esc(x->allow_refused));
        } else if (!x->allow_refused && !ours) {
                fputs("  ", stdout);
                printf(_("edit %s by hand: fsgate did not write it and will not change it\n"),
                       ctl_esc(x->deciding_file));
        } else
                printf("  %s allow %s     %s\n", ctl_command(o), ctl_sh(x->module), _("allow it from now on"));
}

/* The safest way of all, first: the medium's files read-only through a userspace driver,
 * the module still off (Open safely). Offered where the type has a route fsgated starts and
 * its driver is installed; where only the package is missing, which one adds it. */
static void print_open_safely(const CtlOptions *o, const CtlOpenRoute *r, const char *device) {
        char command[PATH_MAX + 32];

        if (o->root || !fsg_open_route_usable(r->route))
                return;
        fputs("  ", stdout);
        if (ctl_open_route_ready(r)) {
                printf("%s      ", open_command(o, r, device, command, sizeof(command)));
                /* TRANSLATORS: %s is a program (squashfuse). */
                printf(_("open safely: its files read-only through %s, the module still off\n"), r->route->driver);
        } else
                /* TRANSLATORS: %1$s is a program (squashfuse), %2$s a package name. */
                printf(_("open safely (its files read-only, the module still off) needs %1$s: install the "
                         "package %2$s\n"), r->route->driver, r->route->package);
}

/* The ways that leave the module denied for everything else, narrowest first: for this
 * medium only, for a while, for this boot. */
static void print_scoped(const CtlOptions *o, const FsgEntry *x, const char *device) {
        if (device)
                printf("  fsgatectl allow --device=%s %s      %s\n", ctl_sh(device), ctl_sh(x->module),
                       _("load it while this medium is there (a day at most), then unload it"));
        printf("  fsgatectl allow --for=1h %s      %s\n", ctl_sh(x->module),
               _("load it for an hour, then unload it once unused"));
        printf("  fsgatectl load %s      %s\n", ctl_sh(x->module), _("load it for this boot only, then mount again"));
        printf("  modprobe %s            %s\n", ctl_sh(x->module), _("the same, by hand (root)"));
}

/* "What you can do" for a denied module, the scoped ways first and the permanent allow last.
 * The commands stay as they are typed; the explanations are translated. */
static void print_way_out(const CtlOptions *o, const FsgEntry *x, const char *device, const CtlOpenRoute *r) {
        /* A hard deny on a dependency the load would insert along refuses the load too. */
        const FsgHardDep *dep = x->loaded ? NULL : fsg_entry_load_blocker(x);

        printf("\n%s\n", _("What you can do:"));
        /* Whatever the deny: it loads nothing, so no deny refuses it. */
        print_open_safely(o, r, device);
        /* The scoped ways load the module: only where a load can work, on the running system. */
        if (!x->hard && !dep && x->available && !o->root)
                print_scoped(o, x, device);
        print_allow_advice(o, x);
        if (!x->hard && dep) {
                /* TRANSLATORS: %1$s is a module name, %2$s a file; "fsgatectl load" is a command. */
                printf(_("  fsgatectl load cannot load it: its dependency %1$s is denied hard by %2$s\n"), dep->module,
                       ctl_esc(*dep->install_file ? dep->install_file : _("the configuration")));
                return;
        }
        if (x->hard) {
                /* The install line may sit in another file than the deciding one. */
                if (*x->install_file && !streq(x->install_file, x->deciding_file) &&
                    !path_is_ours(x, x->install_file)) {
                        fputs("  ", stdout);
                        printf(_("edit %s by hand: its install line refuses explicit loads\n"),
                               ctl_esc(x->install_file));
                }
                return;
        }
        /* Nothing to load without the module file: no advice that cannot work. */
        if (!x->available) {
                fputs("  ", stdout);
                printf(_("%s has no module file in this kernel: install the kernel's module package first\n"),
                       x->module);
        }
}

int ctl_why(const CtlBackend *be, const CtlOptions *o, const char *arg) {
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        _cleanup_(fsg_context_freep) FsgContext *c = NULL;
        _cleanup_free_ char *type = NULL;
        const char *device, *route_type;
        CtlOpenRoute r;
        FsgError e = {};

        if (why_resolve(be, o, arg, &device, &type, &s, &e) < 0)
                return ctl_fail(o, &e);
        if (ctl_open_context(o, &c, &e) < 0)
                return ctl_fail(o, &e);
        ctl_open_route_of_entry(c, &s->entries[0], type, &r, &route_type);
        if (device && !*device)
                device = NULL;
        if (o->json)
                why_json(o, device, type, &s->entries[0], &r, route_type);
        else if (print_verdict(device, type, &s->entries[0])) {
                print_decision(&s->entries[0]);
                print_way_out(o, &s->entries[0], device, &r);
        }
        return 0;
}

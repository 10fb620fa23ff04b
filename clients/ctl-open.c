/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl.h"
#include "open-route.h"
#include "strv.h"

/* fsgatectl routes, open and close: Open safely (org.fsgate.fsgate1(5), OpenSafely). */

/* route (NULL: none) and where its driver is installed. */
static void route_of(const FsgContext *c, const FsgOpenRoute *route, CtlOpenRoute *ret) {
        *ret = (CtlOpenRoute) { .route = route };
        if (ret->route)
                (void) fsg_open_route_driver(c, ret->route, ret->installed, sizeof(ret->installed));
}

void ctl_open_route(const FsgContext *c, const char *type, CtlOpenRoute *ret) {
        route_of(c, fsg_open_route_find(type), ret);
}

void ctl_open_route_of_entry(const FsgContext *c, const FsgEntry *x, const char *type, CtlOpenRoute *ret,
                             const char **ret_type) {
        CtlOpenRoute known = {};
        const char *known_type = NULL;

        /* The type asked about (what the medium holds) first: "ext4" rather than the module's
         * "ext2" row. A module name that is no type (isofs) goes by its types. */
        if (type) {
                ctl_open_route(c, type, ret);
                *ret_type = type;
                if (ret->route)
                        return;
        }
        for (char **t = x->types; t && *t; t++) {
                ctl_open_route(c, *t, ret);
                *ret_type = *t;
                if (ctl_open_route_ready(ret))
                        return;
                if (ret->route && !known.route) {
                        known = *ret;
                        known_type = *t;
                }
        }
        *ret = known;
        *ret_type = known_type ?: type;
}

int ctl_open_context(const CtlOptions *o, FsgContext **ret, FsgError *e) {
        *ret = NULL;
        return o->root ? fsg_context_new(o->root, o->kernel_release, ret, e) : 0;
}

/* The drivers as installed here (or under --root). */
int ctl_open_routes_of_types(const CtlOptions *o, const FsgEntry *x, CtlOpenRoute **ret) {
        _cleanup_(fsg_context_freep) FsgContext *c = NULL;
        size_t n = strv_length(x->types);
        FsgError e = {};

        *ret = NULL;
        if (ctl_open_context(o, &c, &e) < 0)
                return 0;       /* the root was read a moment ago: nothing to say rather than a guess */
        *ret = calloc(n + 1, sizeof(CtlOpenRoute));
        if (!*ret)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                ctl_open_route(c, x->types[i], &(*ret)[i]);
        return 0;
}


static void route_json(JsonWriter *w, const char *type, const FsgEntry *x, const CtlOpenRoute *r,
                       const CtlOpenRoute *vm) {
        json_object_begin(w);
        json_field_string(w, "type", type);
        json_field_string(w, "module", x->module);
        json_field_string(w, "driver", r->route ? r->route->driver : "");
        json_field_string(w, "package", r->route ? r->route->package : "");
        json_field_string(w, "installed", r->installed);
        json_field_bool(w, "usable", ctl_open_route_ready(r));
        /* Whether installing the package would make it usable: fsgated starts this driver. */
        json_field_bool(w, "started", fsg_open_route_usable(r->route));
        /* The kernel's driver in a VM (fsgatectl open --route=vm): its driver and package, or
         * "" where the VM route does not read the type. */
        json_field_string(w, "vm_driver", vm->route ? vm->route->driver : "");
        json_field_string(w, "vm_package", vm->route ? vm->route->package : "");
        json_field_string(w, "vm_installed", vm->installed);
        json_object_end(w);
}

static const char *route_status(const CtlOpenRoute *r, const CtlOpenRoute *vm) {
        if (!r->route && vm->route)
                return *vm->installed ? _("in a VM (--route=vm), installed") : _("in a VM (--route=vm), not installed");
        if (!r->route)
                return _("none known");
        if (!*r->installed)
                return _("not installed");
        return fsg_open_route_usable(r->route) ? _("installed") : _("installed, not started by fsgate yet");
}

int ctl_routes(const CtlBackend *be, const CtlOptions *o) {
        _cleanup_(fsg_context_freep) FsgContext *c = NULL;
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        JsonWriter w = JSON_WRITER(stdout);
        FsgError e = {};

        if (be->list(o, &s, &e) < 0)
                return ctl_fail(o, &e);
        if (ctl_open_context(o, &c, &e) < 0)
                return ctl_fail(o, &e);
        if (o->json)
                json_array_begin(&w);
        else
                printf("%-12s %-12s %-12s %-12s %s\n", "TYPE", "MODULE", "DRIVER", "PACKAGE", "ROUTE");
        for (size_t i = 0; i < s->n; i++)
                for (char **t = s->entries[i].types; t && *t; t++) {
                        CtlOpenRoute r, vm;

                        ctl_open_route(c, *t, &r);
                        /* The VM's, where no userspace driver reads the type. */
                        route_of(c, fsg_open_route_find_vm(*t), &vm);
                        /* The userspace driver's where there is one, else the VM's. */
                        const CtlOpenRoute *shown = r.route ? &r : &vm;
                        if (o->json)
                                route_json(&w, *t, &s->entries[i], &r, &vm);
                        else
                                printf("%-12s %-12s %-12s %-12s %s\n", ctl_esc(*t), ctl_esc(s->entries[i].module),
                                       shown->route ? shown->route->driver : "-",
                                       shown->route ? shown->route->package : "-", route_status(&r, &vm));
                }
        if (o->json) {
                json_array_end(&w);
                putchar('\n');
        }
        return 0;
}

/* The kernel's name (/dev/NAME) of a block device arg names (/dev/disk/by-label/STICK, or any
 * link to its node), or NULL: fsgated knows devices by that name only. */
static const char *device_name(const char *arg, char *buf, size_t size) {
        char real[PATH_MAX];
        struct stat st;

        if (!realpath(arg, real) || strncmp(real, "/dev/", 5) != 0 ||
            strchr(real + 5, '/') || stat(real, &st) < 0 || !S_ISBLK(st.st_mode))
                return NULL;
        snprintf(buf, size, "%s", real);
        return buf;
}

/* A block device below /dev goes by name: fsgated opens it. Anything else is an image the
 * caller opens here, as themselves, and hands over open: fsgated never opens a caller's path. */
int ctl_open(const CtlBackend *be, const CtlOptions *o, const char *arg, const char *route) {
        _cleanup_free_ char *mountpoint = NULL, *id = NULL;
        _cleanup_close_ int fd = -1;
        char node[PATH_MAX];
        FsgError e = {};
        const char *device = device_name(arg, node, sizeof(node));

        if (!device) {
                fd = open(arg, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
                if (fd < 0) {
                        fsg_error(&e, FSG_ERR_INVALID_ARGS, _("Cannot open %s: %s"), arg, strerror(errno));
                        return ctl_fail(o, &e);
                }
        } else
                fd = open("/dev/null", O_RDONLY | O_CLOEXEC);   /* the call always carries one */
        if (be->open_safely(o, device ?: "", fd, route ?: "", &mountpoint, &id, &e) < 0)
                return ctl_fail(o, &e);
        if (o->json) {
                JsonWriter w = JSON_WRITER(stdout);

                json_object_begin(&w);
                json_field_string(&w, "mountpoint", mountpoint);
                json_field_string(&w, "id", id);
                json_object_end(&w);
                putchar('\n');
        } else {
                puts(ctl_esc(mountpoint));
                fprintf(stderr, _("The files of %s are at %s, read-only, for you only; no kernel module was loaded.\n"
                                  "Close with: fsgatectl close %s\n"), ctl_esc(arg), ctl_esc(mountpoint), ctl_sh(mountpoint));
        }
        return 0;
}

int ctl_close(const CtlBackend *be, const CtlOptions *o, const char *arg) {
        FsgError e = {};

        if (be->close_safely(o, arg, &e) < 0)
                return ctl_fail(o, &e);
        if (o->json) {
                JsonWriter w = JSON_WRITER(stdout);

                json_object_begin(&w);
                json_field_string(&w, "closed", arg);
                json_object_end(&w);
                putchar('\n');
        }
        return 0;
}

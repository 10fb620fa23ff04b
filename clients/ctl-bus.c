/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <systemd/sd-bus.h>

#include "ctl-agent.h"
#include "ctl.h"
#include "entry-fields.h"
#include "fsgate-api.h"
#include "grant.h"
#include "profile.h"
#include "strv.h"

/* No bus or no service: what a person does next, not sd-bus's errno (which says nothing
 * more to them: "No such file or directory" of a socket they never heard of). */
static int unreachable(FsgError *e) {
        return fsg_error(e, FSG_ERR_UNREACHABLE, "%s",
                         _("fsgate's service cannot be reached: is fsgate installed and D-Bus running? For an image "
                           "use --root=DIR."));
}

static int connect_bus(const CtlOptions *o, sd_bus **ret, FsgError *e) {
        int r = sd_bus_open_system(ret);
        if (r < 0)
                return unreachable(e);
        /* Lets the desktop's (or a pkttyagent's) polkit agent ask for a password. */
        (void) sd_bus_set_allow_interactive_authorization(*ret, o->ask_password);
        return 0;
}

static int bus_failed(const sd_bus_error *error, int r, FsgError *e) {
        /* Not for a call that timed out (a password never typed): that one was reached. */
        if (sd_bus_error_is_set(error) && fsg_error_from_dbus_name(error->name) == FSG_ERR_UNREACHABLE &&
            !sd_bus_error_has_name(error, SD_BUS_ERROR_NO_REPLY))
                return unreachable(e);
        if (sd_bus_error_is_set(error))
                return fsg_error(e, fsg_error_from_dbus_name(error->name), "%s", error->message ?: error->name);
        /* sd-bus connects on the first call: a missing or refusing socket shows here. */
        if (r == -ENOENT || r == -ECONNREFUSED)
                return unreachable(e);
        return fsg_error(e, FSG_ERR_FAILED, _("D-Bus call failed: %s"), strerror(-r));
}

static int call(const CtlOptions *o, sd_bus **bus, sd_bus_message **reply, FsgError *e, const char *method,
                const char *types, ...) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        va_list ap;
        int r;

        r = connect_bus(o, bus, e);
        if (r < 0)
                return r;
        r = sd_bus_message_new_method_call(*bus, &m, FSGATE_BUS_NAME, FSGATE_BUS_PATH, FSGATE_BUS_IFACE, method);
        if (r >= 0) {
                va_start(ap, types);
                r = sd_bus_message_appendv(m, types, ap);
                va_end(ap);
        }
        if (r >= 0)
                r = sd_bus_message_set_allow_interactive_authorization(m, o->ask_password);
        if (r < 0)
                return fsg_error(e, FSG_ERR_FAILED, _("Failed to build D-Bus message: %s"), strerror(-r));
        if (o->ask_password && !streq(method, "ListFilesystems") && !streq(method, "GetFilesystem") &&
            !streq(method, "Describe") && !streq(method, "DescribeAll") && !streq(method, "AuditProfile"))
                ctl_agent_open();
        /* Generous: a person may be typing a password into a polkit agent. */
        r = sd_bus_call(*bus, m, 600 * 1000000ULL, &error, reply);
        ctl_agent_close();
        if (r < 0) {
                r = bus_failed(&error, r, e);
                sd_bus_error_free(&error);
                return r;
        }
        return 0;
}

/* a(ss) as the list that holds the pairs one after the other. */
static int read_pairs(sd_bus_message *m, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        const char *a, *b;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "(ss)");
        while (r >= 0 && (r = sd_bus_message_read(m, "(ss)", &a, &b)) > 0)
                if (strv_extend(&l, a) < 0 || strv_extend(&l, b) < 0)
                        return -ENOMEM;
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        if (r >= 0)
                *ret = TAKE_PTR(l);
        return r;
}

/* One value of an entry's field (entry-fields.h), of the D-Bus type its row names. The caller
 * checked the type: an entry's by its signature, a description's value by peeking. */
static int read_field_value(sd_bus_message *m, FsgEntry *x, const FsgEntryField *f) {
        char **l = NULL;
        const char *str;
        int r, b;

        switch (f->signature[0]) {
        case 's':
                r = sd_bus_message_read_basic(m, 's', &str);
                return r <= 0 ? r ?: -EBADMSG : fsg_entry_field_set_string(x, f, str);
        case 'b':
                r = sd_bus_message_read_basic(m, 'b', &b);
                if (r > 0)
                        fsg_entry_field_set_bool(x, f, b);
                return r ?: -EBADMSG;
        }
        r = streq(f->signature, "as") ? sd_bus_message_read_strv(m, &l) : read_pairs(m, &l);
        if (r >= 0)
                fsg_entry_field_take_strv(x, f, l);
        return r;
}

static int read_entry(sd_bus_message *m, FsgEntry *x) {
        int r;

        r = sd_bus_message_enter_container(m, 'r', "sassssbbbb");
        if (r <= 0)
                return r;
        for (size_t i = 0; r >= 0 && i < fsg_entry_fields_n; i++)
                if (fsg_entry_fields[i].flags & FSG_FIELD_ENTRY)
                        r = read_field_value(m, x, &fsg_entry_fields[i]);
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        return r < 0 ? r : 1;
}

static int state_new(size_t n, FsgState **ret) {
        FsgState *s = fsg_state_new();
        if (!s || !(s->entries = calloc(n + 1, sizeof(FsgEntry)))) {
                free(s);
                return -ENOMEM;
        }
        *ret = s;
        return 0;
}

/* The files the service could not read, which the output names: without them the answer
 * may be incomplete. A service too old to have the property has nothing to say. */
static void read_unreadable(sd_bus *bus, FsgState *s) {
        _cleanup_free_ char *kver = NULL;

        (void) sd_bus_get_property_strv(bus, FSGATE_BUS_NAME, FSGATE_BUS_PATH, FSGATE_BUS_IFACE, "UnreadableFiles",
                                        NULL, &s->unreadable);
        /* "" when the service has no module tree to judge against. */
        if (sd_bus_get_property_string(bus, FSGATE_BUS_NAME, FSGATE_BUS_PATH, FSGATE_BUS_IFACE, "KernelRelease", NULL,
                                       &kver) >= 0)
                s->kernel_unknown = !*kver;
}

/* The Grants property onto the entries (an older fsgated has none: nothing). */
static void read_grants(sd_bus *bus, FsgState *s) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *id, *module, *device;
        uint64_t since, until;
        uint32_t uid;
        int r;

        r = sd_bus_get_property(bus, FSGATE_BUS_NAME, FSGATE_BUS_PATH, FSGATE_BUS_IFACE, "Grants", NULL, &reply,
                                "a(ssutts)");
        if (r < 0)
                return;
        r = sd_bus_message_enter_container(reply, 'a', "(ssutts)");
        while (r > 0 && (r = sd_bus_message_read(reply, "(ssutts)", &id, &module, &uid, &since, &until, &device)) > 0) {
                FsgEntry *x = NULL;
                char buf[32];

                for (size_t k = 0; k < s->n && !x; k++)
                        if (streq(s->entries[k].module, module))
                                x = &s->entries[k];
                /* Sorted by end: the last one of a module is its latest. */
                if (!x)
                        continue;
                free(x->granted_until);
                x->granted_until = strdup(fsg_grant_time_string(until, buf));
                if (*device) {
                        free(x->granted_device);
                        x->granted_device = strdup(device);
                }
        }
}

static int bus_list(const CtlOptions *o, FsgState **ret, FsgError *e) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        size_t cap = 64;
        int r;

        r = call(o, &bus, &reply, e, "ListFilesystems", "");
        if (r < 0)
                return r;
        if (state_new(cap, &s) < 0)
                return fsg_error(e, FSG_ERR_FAILED, "%s", _("Out of memory"));
        r = sd_bus_message_enter_container(reply, 'a', "(sassssbbbb)");
        while (r >= 0) {
                if (s->n == cap) {
                        FsgEntry *t = realloc(s->entries, sizeof(FsgEntry) * (cap *= 2));
                        if (!t)
                                return fsg_error(e, FSG_ERR_FAILED, "%s", _("Out of memory"));
                        s->entries = t;
                }
                memset(&s->entries[s->n], 0, sizeof(FsgEntry));
                r = read_entry(reply, &s->entries[s->n]);
                if (r <= 0) {
                        fsg_entry_done(&s->entries[s->n]); /* what a malformed one had */
                        break;
                }
                s->n++;
        }
        if (r < 0)
                return fsg_error(e, FSG_ERR_FAILED, _("Malformed reply: %s"), strerror(-r));
        read_unreadable(bus, s);
        read_grants(bus, s);
        *ret = TAKE_PTR(s);
        return 0;
}

/* A one-entry state from a method that answers for one module; read returns > 0 when it
 * read the entry. */
static int bus_one(const CtlOptions *o, const char *method, const char *name,
                   int (*read)(sd_bus_message *m, FsgEntry *x), FsgState **ret, FsgError *e) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        int r;

        r = call(o, &bus, &reply, e, method, "s", name);
        if (r < 0)
                return r;
        if (state_new(1, &s) < 0)
                return fsg_error(e, FSG_ERR_FAILED, "%s", _("Out of memory"));
        s->n = 1;
        r = read(reply, &s->entries[0]);
        if (r <= 0)
                return fsg_error(e, FSG_ERR_FAILED, _("Malformed reply from %s: %s"), method,
                                 r < 0 ? strerror(-r) : _("no entry"));
        read_unreadable(bus, s);
        *ret = TAKE_PTR(s);
        return 0;
}

static int bus_get(const CtlOptions *o, const char *name, FsgState **ret, FsgError *e) {
        return bus_one(o, "GetFilesystem", name, read_entry, ret, e);
}

/* One a{sv} value: what this fsgatectl knows; other keys (and known keys of another type)
 * are skipped, as the interface asks. */
static int read_description_field(sd_bus_message *m, FsgEntry *x, const char *key) {
        const FsgEntryField *f = fsg_entry_field_find(key);
        const char *contents;
        int r;

        r = sd_bus_message_peek_type(m, NULL, &contents);
        if (r < 0)
                return r;
        if (!f || !streq(contents, f->signature))
                return sd_bus_message_skip(m, "v");
        r = sd_bus_message_enter_container(m, 'v', f->signature);
        if (r >= 0)
                r = read_field_value(m, x, f);
        return r < 0 ? r : sd_bus_message_exit_container(m);
}

static int read_description(sd_bus_message *m, FsgEntry *x) {
        const char *key;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                r = sd_bus_message_read(m, "s", &key);
                if (r >= 0)
                        r = read_description_field(m, x, key);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        if (r >= 0)
                r = fsg_entry_fields_complete(x);
        if (r < 0)
                return r;
        x->described = true;
        r = sd_bus_message_exit_container(m);
        return r < 0 ? r : 1;
}

static int bus_describe(const CtlOptions *o, const char *name, FsgState **ret, FsgError *e) {
        return bus_one(o, "Describe", name, read_description, ret, e);
}

static int bus_change(const CtlOptions *o, FsgOp op, const char *name, uint64_t flags, FsgError *e) {
        static const char * const methods[] = { [FSG_OP_ALLOW] = "Allow", [FSG_OP_DENY] = "Deny", [FSG_OP_RESET] = "Reset" };
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        return call(o, &bus, &reply, e, methods[op], "st", name, flags);
}

static int bus_load(const CtlOptions *o, const char *name, FsgError *e) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        return call(o, &bus, &reply, e, "Load", "s", name);
}

static int bus_grant(const CtlOptions *o, const char *name, uint64_t seconds, const char *device, char **ret,
                     FsgError *e) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *id;
        int r;

        if (seconds && device)
                r = call(o, &bus, &reply, e, "Grant", "sa{sv}t", name, 2, "seconds", "t", seconds, "device", "s", device,
                         UINT64_C(0));
        else if (device)
                r = call(o, &bus, &reply, e, "Grant", "sa{sv}t", name, 1, "device", "s", device, UINT64_C(0));
        else
                r = call(o, &bus, &reply, e, "Grant", "sa{sv}t", name, 1, "seconds", "t", seconds, UINT64_C(0));
        if (r < 0)
                return r;
        r = sd_bus_message_read(reply, "s", &id);
        if (r < 0)
                return fsg_error(e, FSG_ERR_FAILED, _("Malformed reply: %s"), strerror(-r));
        *ret = strdup(id);
        return *ret ? 0 : fsg_error(e, FSG_ERR_FAILED, "Out of memory");
}

static int bus_exempt(const CtlOptions *o, char ***ret, FsgError *e) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = call(o, &bus, &reply, e, "ExemptLoaded", "");
        if (r < 0)
                return r;
        r = sd_bus_message_read_strv(reply, ret);
        if (r < 0)
                return fsg_error(e, FSG_ERR_FAILED, _("Malformed reply: %s"), strerror(-r));
        return 0;
}

/* sbba(sbbbs): the audit as the core's type, so that both backends print alike. */
static int bus_audit_profile(const CtlOptions *o, const char *name, bool hard, FsgAudit **ret, FsgError *e) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(fsg_audit_freep) FsgAudit *a = NULL;
        const char *profile, *module, *why;
        int compliant, denied, is_hard, hard_required, all;
        size_t cap = 0;
        int r;

        r = call(o, &bus, &reply, e, "AuditProfile", "st", name, (uint64_t) (hard ? FSG_FLAG_HARD : 0));
        if (r < 0)
                return r;
        a = calloc(1, sizeof(FsgAudit));
        if (!a)
                return fsg_error(e, FSG_ERR_FAILED, "%s", _("Out of memory"));
        r = sd_bus_message_read(reply, "sbb", &profile, &hard_required, &all);
        if (r >= 0) {
                snprintf(a->profile, sizeof(a->profile), "%s", profile);
                a->hard_required = hard_required;
                r = sd_bus_message_enter_container(reply, 'a', "(sbbbs)");
        }
        while (r >= 0 && (r = sd_bus_message_read(reply, "(sbbbs)", &module, &compliant, &denied, &is_hard, &why)) > 0) {
                if (a->n == cap) {
                        FsgAuditItem *t = reallocarray(a->items, cap = cap * 2 + 8, sizeof(FsgAuditItem));
                        if (!t)
                                return fsg_error(e, FSG_ERR_FAILED, "%s", _("Out of memory"));
                        a->items = t;
                }
                FsgAuditItem *it = &a->items[a->n];
                *it = (FsgAuditItem) { .module = strdup(module), .why = strdup(why), .compliant = compliant,
                                       .denied = denied, .hard = is_hard };
                a->n++;
                if (!it->module || !it->why)
                        return fsg_error(e, FSG_ERR_FAILED, "%s", _("Out of memory"));
                a->n_compliant += compliant;
        }
        if (r < 0 || (bool) all != (a->n_compliant == a->n))
                return fsg_error(e, FSG_ERR_FAILED, _("Malformed reply: %s"), r < 0 ? strerror(-r) : "compliant");
        *ret = TAKE_PTR(a);
        return 0;
}

/* One (module, change, file) of ApplyProfile or UndoProfile into pp: an undo's module left
 * alone among the kept, anything else a plan. */
static int read_change(FsgProfilePlan *pp, const char *module, const char *change, const char *file) {
        FsgPlan p;

        if (strncmp(change, "kept-", 5) == 0)
                return fsg_undo_kept_add(pp, streq(change, "kept-edited") ? FSG_UNDO_KEPT_EDITED : FSG_UNDO_KEPT_BY_HAND,
                                         module, file);
        p = streq(change, "reset") ?
                (FsgPlan) { .op = FSG_OP_RESET, .write = FSG_WRITE_REMOVE, .action = FSG_ACTION_ALLOW } :
                (FsgPlan) { .op = FSG_OP_DENY, .write = FSG_WRITE_DENY, .action = FSG_ACTION_DENY,
                            .flags = streq(change, "deny-hard") ? FSG_FLAG_HARD :
                                     streq(change, "observe") ? FSG_FLAG_OBSERVE : 0 };
        return fsg_profile_plan_add(pp, p, module, file);
}

/* a(sss): module, change, file; read back into plans so that both backends print alike. */
static int bus_profile_changes(const CtlOptions *o, const char *method, const char *name, uint64_t flags,
                               FsgProfilePlan **ret, FsgError *e) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(fsg_profile_plan_freep) FsgProfilePlan *pp = NULL;
        const char *module, *change, *file;
        int r;

        r = call(o, &bus, &reply, e, method, "st", name, flags);
        if (r < 0)
                return r;
        pp = calloc(1, sizeof(FsgProfilePlan));
        if (!pp)
                return fsg_error(e, FSG_ERR_FAILED, "%s", _("Out of memory"));
        snprintf(pp->profile, sizeof(pp->profile), "%s", name);
        pp->flags = flags;
        pp->undo = streq(method, "UndoProfile");
        r = sd_bus_message_enter_container(reply, 'a', "(sss)");
        while (r >= 0 && (r = sd_bus_message_read(reply, "(sss)", &module, &change, &file)) > 0)
                r = read_change(pp, module, change, file);
        if (r < 0)
                return fsg_error(e, FSG_ERR_FAILED, _("Malformed reply: %s"), strerror(-r));
        *ret = TAKE_PTR(pp);
        return 0;
}

static int bus_apply_profile(const CtlOptions *o, const char *name, uint64_t flags, FsgProfilePlan **ret,
                             FsgError *e) {
        return bus_profile_changes(o, "ApplyProfile", name, flags, ret, e);
}

static int bus_undo_profile(const CtlOptions *o, const char *name, uint64_t flags, FsgProfilePlan **ret,
                            FsgError *e) {
        return bus_profile_changes(o, "UndoProfile", name, flags, ret, e);
}

static int bus_open_safely(const CtlOptions *o, const char *device, int image_fd, const char *route,
                           char **ret_mountpoint, char **ret_id, FsgError *e) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *mountpoint, *id;
        int r;

        r = call(o, &bus, &reply, e, "OpenSafely", "shst", device, image_fd, route, UINT64_C(0));
        if (r < 0)
                return r;
        r = sd_bus_message_read(reply, "ss", &mountpoint, &id);
        if (r < 0)
                return fsg_error(e, FSG_ERR_FAILED, _("Malformed reply: %s"), strerror(-r));
        *ret_mountpoint = strdup(mountpoint);
        *ret_id = strdup(id);
        return *ret_mountpoint && *ret_id ? 0 : fsg_error(e, FSG_ERR_FAILED, "Out of memory");
}

static int bus_close_safely(const CtlOptions *o, const char *what, FsgError *e) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        return call(o, &bus, &reply, e, "CloseSafely", "s", what);
}

static int bus_get_observation(const CtlOptions *o, FsgObservation **ret, FsgError *e) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(fsg_observation_freep) FsgObservation *ob = calloc(1, sizeof(FsgObservation));
        const char *profile;
        int r;

        if (!ob)
                return fsg_error(e, FSG_ERR_FAILED, "%s", _("Out of memory"));
        r = call(o, &bus, &reply, e, "GetObservation", "");
        if (r < 0)
                return r;
        r = sd_bus_message_read(reply, "st", &profile, &ob->since_usec);
        if (r >= 0)
                r = sd_bus_message_read_strv(reply, &ob->modules);
        if (r < 0)
                return fsg_error(e, FSG_ERR_FAILED, _("Malformed reply: %s"), strerror(-r));
        snprintf(ob->profile, sizeof(ob->profile), "%s", profile);
        *ret = *profile ? TAKE_PTR(ob) : NULL;
        return 0;
}

static int bus_stop_observing(const CtlOptions *o, char **ret, FsgError *e) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *profile;
        int r;

        r = call(o, &bus, &reply, e, "StopObserving", "");
        if (r < 0)
                return r;
        r = sd_bus_message_read(reply, "s", &profile);
        if (r < 0)
                return fsg_error(e, FSG_ERR_FAILED, _("Malformed reply: %s"), strerror(-r));
        *ret = strdup(profile);
        return *ret ? 0 : fsg_error(e, FSG_ERR_FAILED, "%s", _("Out of memory"));
}

const CtlBackend ctl_backend_bus = {
        .list = bus_list,
        .get = bus_get,
        .describe = bus_describe,
        .change = bus_change,
        .load = bus_load,
        .grant = bus_grant,
        .open_safely = bus_open_safely,
        .close_safely = bus_close_safely,
        .exempt = bus_exempt,
        .apply_profile = bus_apply_profile,
        .undo_profile = bus_undo_profile,
        .get_observation = bus_get_observation,
        .stop_observing = bus_stop_observing,
        .audit_profile = bus_audit_profile,
};

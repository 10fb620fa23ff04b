/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <linux/capability.h>
#include <syslog.h>

#include "block-reports.h"
#include "bus-object.h"
#include "bus-grant.h"
#include "bus-reply.h"
#include "bus-request.h"
#include "bus-open.h"
#include "bus-profile.h"
#include "config.h"
#include "entry-fields.h"
#include "grants.h"
#include "lock.h"
#include "log.h"
#include "manager.h"
#include "name.h"
#include "polkit-bridge.h"
#include "profile-apply.h"
#include "profile-audit.h"
#include "routes.h"
#include "state-cache.h"
#include "state.h"
#include "load.h"
#include "store.h"
#include "strv.h"
#include "utf8.h"

/* Every method is one block: its handler (arguments → validate and plan against the kept
 * state, with named errors and nothing touched → reply at once if nothing would change), the
 * polkit actions it needs with their messages, and what it does once authorized (apply →
 * log → signal → reply). The request (bus-request.h) carries that last step and its own data;
 * the answers are built by bus-reply.h. Grant is bus-grant.c's, the opens bus-open.c's, the
 * profiles' bus-profile.c's. */

static int method_list(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        return bus_reply_all_entries(call, userdata, "(sassssbbbb)", bus_append_entry);
}


/* What a method on one module does once the call's name found its entry (x's state is held
 * meanwhile: the step may rebuild the cache's); its reply ends the call. */
typedef int (*EntryStep)(Manager *m, sd_bus_message *call, const FsgEntry *x);

/* GetFilesystem, Describe, Load: the module the call names, or the error replied. */
static int method_on_entry(sd_bus_message *call, Manager *m, EntryStep step) {
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        const FsgEntry *x;
        FsgError e = {};
        int r;

        r = request_read_entry(m, call, &s, &x, &e);
        if (r <= 0)
                return r < 0 ? r : manager_reply_error(call, &e);
        return step(m, call, x);
}

/* x alone, in the given form, as the reply. */
static int reply_entry(sd_bus_message *call, const FsgEntry *x,
                       int (*append)(sd_bus_message *reply, const FsgEntry *x)) {
        sd_bus_message *reply = NULL;
        int r = sd_bus_message_new_method_return(call, &reply);

        if (r >= 0)
                r = append(reply, x);
        return bus_send_reply(reply, r);
}

static int get_entry(Manager *m, sd_bus_message *call, const FsgEntry *x) {
        return reply_entry(call, x, bus_append_entry);
}

static int method_get(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        return method_on_entry(call, userdata, get_entry);
}

/* -- Describe, DescribeAll: everything fsgate knows of a module, extensible --------------- */

typedef struct Refusal {
        char *allow, *reset;
} Refusal;

static void refusal_done(Refusal *r) {
        free(r->allow);
        free(r->reset);
}

/* Why an Allow, and a Reset, of x would be refused now ("" if it would be done, or for a
 * Reset if nothing of fsgate's decides), valid UTF-8 on the bus as every string from files
 * (a refusal may quote a line of one). x's state is the caller's to hold. */
static int plan_refusals(Manager *m, const FsgEntry *x, Refusal *ret) {
        FsgError allow, reset;

        manager_plan_refusals(m, x, &allow, &reset);
        ret->allow = fsg_utf8_escape(allow.message);
        ret->reset = fsg_utf8_escape(reset.message);
        return ret->allow && ret->reset ? 0 : -ENOMEM;
}

/* With allow_refused and reset_refused: whether those would be done now, so that a client
 * offers only what works. */
static int describe_entry(Manager *m, sd_bus_message *call, const FsgEntry *x) {
        _cleanup_(refusal_done) Refusal refused = {};
        FsgEntry copy;

        if (plan_refusals(m, x, &refused) < 0)
                return -ENOMEM;
        copy = *x;
        copy.allow_refused = refused.allow;
        copy.reset_refused = refused.reset;
        return reply_entry(call, &copy, bus_append_description);
}

static int method_describe(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        return method_on_entry(call, userdata, describe_entry);
}

typedef struct Refusals {
        Refusal *refusal;       /* one for each entry of the state described */
        size_t n;
} Refusals;

static void refusals_done(Refusals *r) {
        for (size_t i = 0; i < r->n; i++)
                refusal_done(&r->refusal[i]);
        free(r->refusal);
}

/* Describe's allow_refused and reset_refused too, for every module: a client shows only the
 * buttons that can work. */
static int method_describe_all(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        _cleanup_(refusals_done) Refusals rs = {};
        sd_bus_message *reply = NULL;
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        FsgError e = {};
        int r;

        if (manager_state(m, &s, &e) < 0)
                return manager_reply_error(call, &e);
        rs.refusal = calloc(s->n + 1, sizeof(Refusal));
        if (!rs.refusal)
                return -ENOMEM;
        rs.n = s->n;
        for (size_t i = 0; i < s->n; i++)
                if (plan_refusals(m, &s->entries[i], &rs.refusal[i]) < 0)
                        return -ENOMEM;
        r = sd_bus_message_new_method_return(call, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "{sa{sv}}");
        for (size_t i = 0; r >= 0 && i < s->n; i++) {
                FsgEntry copy = s->entries[i];

                copy.allow_refused = rs.refusal[i].allow;
                copy.reset_refused = rs.refusal[i].reset;
                r = bus_append_named_description(reply, &copy);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return bus_send_reply(reply, r);
}

/* -- Load: this boot only, no configuration change ---------------------------------------- */

static const char load_message[] = N_("Authentication is required to load the $(module) filesystem module now.");

static int load_authorized(Manager *m, sd_bus_message *call, Request *req) {
        FsgError e = {};

        if (fsg_load(m->ctx, req->module, NULL, &e) < 0)
                return manager_reply_error(call, &e);
        log_request(call, FSGATE_MESSAGE_MODULE_LOADED, LOG_NOTICE, req->module, "Loaded %s for this boot", req->module);
        return sd_bus_reply_method_return(call, NULL);
}

static int load_entry(Manager *m, sd_bus_message *call, const FsgEntry *x) {
        Request req = { .authorized = load_authorized };
        FsgError e = {};

        if (x->loaded || x->builtin)
                return sd_bus_reply_method_return(call, NULL);
        if (!x->available) {
                fsg_error(&e, FSG_ERR_LOAD_FAILED, "No module file for %s in kernel %s", x->module, m->ctx->kver ?: "(none)");
                return manager_reply_error(call, &e);
        }
        /* Refused before polkit is asked: no password for a load that cannot happen (asked
         * again after it, by fsg_load(), against the files of that moment). */
        if (fsg_load_refused(x, &e) < 0)
                return manager_reply_error(call, &e);
        snprintf(req.module, sizeof(req.module), "%s", x->module);
        request_need(&req, FSG_ACTION_LOAD, load_message);
        return request_start(m, call, &req);
}

static int method_load(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        return method_on_entry(call, userdata, load_entry);
}

/* -- Allow, Deny, Reset: one module's file ------------------------------------------------- */

static const char allow_message[] =
        N_("Authentication is required to let the kernel load the $(module) filesystem module automatically.");
static const char deny_message[] =
        N_("Authentication is required to stop the kernel from loading the $(module) filesystem module automatically.");

static const char end_grant_message[] =
        N_("Authentication is required to end the grant of the $(module) filesystem module now.");

static int change_authorized(Manager *m, sd_bus_message *call, Request *req) {
        static const char * const done[] = { [FSG_WRITE_MASK] = "masked with /dev/null (allowed)",
                                             [FSG_WRITE_DENY] = "written (denied)",
                                             [FSG_WRITE_REMOVE] = "removed (reset)",
                                             [FSG_WRITE_OVERRIDE] = "written (an override of a vendor file)" };
        FsgError e = {};

        if (fsg_apply_locked(m->ctx, &req->change.plan, &e) < 0) {
                log_request(call, FSGATE_MESSAGE_REFUSED, LOG_WARNING, req->module, "Change to %s failed: %s",
                            req->module, e.message);
                return manager_reply_error(call, &e);
        }
        if (req->change.plan.write != FSG_WRITE_NOTHING) {
                log_request(call, FSGATE_MESSAGE_CONFIG_CHANGED, LOG_NOTICE, req->module, "%s %s",
                            req->change.plan.target, done[req->change.plan.write]);
                (void) manager_emit_changed(m, req->module);
                manager_update_routes_locked(m);
        }
        /* Written: other writers need not wait for the unloads and loads below. */
        req->lock_fd = fsg_unlock(m->ctx, req->lock_fd);
        /* The admin decided: a grant does not outlive a change of its module. After a
         * permanent allow it stays loaded; otherwise it is unloaded once unused. */
        if (req->change.end_grants || (req->change.plan.write != FSG_WRITE_NOTHING && manager_module_granted(m, req->module)))
                (void) manager_grants_end_module(m, req->module, req->change.plan.op == FSG_OP_ALLOW ? "allowed" :
                                                                 req->change.plan.op == FSG_OP_DENY ? "denied" : "reset");
        /* Only with the load authorization: a module that was loaded when the request came
         * (so none was asked for) stays unloaded if it went away. */
        if (req->change.load)
                return load_authorized(m, call, req);
        return sd_bus_reply_method_return(call, NULL);
}

/* LOAD_NOW asks for the load authorization only when there is something to load. */
static bool needs_load(Manager *m, const char *module) {
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        const FsgEntry *x;

        if (manager_state(m, &s, NULL) < 0 || !(x = fsg_state_find(s, module)))
                return true; /* cannot tell: asking once more is the safe side */
        return !x->loaded && !x->builtin;
}

static int method_change(sd_bus_message *call, Manager *m, FsgOp op) {
        Request req = { .authorized = change_authorized, .kind = REQUEST_CHANGE };
        const char *name;
        uint64_t flags;
        FsgError e = {};
        int r;

        r = sd_bus_message_read(call, "st", &name, &flags);
        if (r < 0)
                return r;
        if (manager_plan(m, op, name, flags, &req.change.plan, &e) < 0)
                return manager_reply_error(call, &e);
        /* A dry run is a question (would this be done?): nothing to authorize, write or load. */
        if (flags & FSG_FLAG_DRY_RUN)
                return sd_bus_reply_method_return(call, NULL);
        snprintf(req.module, sizeof(req.module), "%s", req.change.plan.module);
        req.writes = req.change.plan.write != FSG_WRITE_NOTHING;
        if (req.writes)
                request_need(&req, req.change.plan.action,
                             req.change.plan.action == FSG_ACTION_ALLOW ? allow_message : deny_message);
        if ((flags & FSG_FLAG_LOAD_NOW) && needs_load(m, req.change.plan.module)) {
                request_need(&req, FSG_ACTION_LOAD, load_message);
                req.change.load = true;
        }
        /* "reset" and "deny" end a grant early even where the files have nothing to change:
         * that ends a load, so it is the deny authorization's. */
        if (op != FSG_OP_ALLOW && manager_module_granted(m, req.change.plan.module)) {
                req.change.end_grants = true;
                if (req.n_needs == 0 || req.needs[0].action != FSG_ACTION_DENY)
                        if (req.n_needs < ELEMENTSOF(req.needs))
                                request_need(&req, FSG_ACTION_DENY, end_grant_message);
        }
        if (req.n_needs == 0)
                return sd_bus_reply_method_return(call, NULL);
        return request_start(m, call, &req);
}

static int method_allow(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        return method_change(call, userdata, FSG_OP_ALLOW);
}
static int method_deny(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        return method_change(call, userdata, FSG_OP_DENY);
}
static int method_reset(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        return method_change(call, userdata, FSG_OP_RESET);
}

/* -- ExemptLoaded: package scripts keep what is in use working --------------------------- */

static const char exempt_message[] =
        N_("Authentication is required to let the kernel keep loading every filesystem module in use now.");

static int exempt_authorized(Manager *m, sd_bus_message *call, Request *req) {
        _cleanup_strv_free_ char **done = NULL, **failed = NULL, **unmounted = NULL;
        sd_bus_message *reply = NULL;
        FsgError e = {};
        int r = fsg_exempt_loaded_locked(m->ctx, &done, &failed, &unmounted, &e);

        /* What was written before a failure is announced all the same. */
        for (char **d = done; d && *d; d++) {
                log_request(call, FSGATE_MESSAGE_CONFIG_CHANGED, LOG_NOTICE, *d,
                            "%s is in use: allowed so that it keeps working", *d);
                (void) manager_emit_changed(m, *d);
        }
        if (done)
                manager_update_routes_locked(m);
        for (char **f = failed; f && *f; f++) {
                /* "MODULE: reason" (fsg_exempt_loaded()); names never contain ':'. */
                char module[64];
                snprintf(module, sizeof(module), "%.*s", (int) strcspn(*f, ":"), *f);
                log_request(call, FSGATE_MESSAGE_REFUSED, LOG_WARNING, module, "Not exempted: %s", *f);
        }
        /* The reply stays the list of what was allowed; who needs one of these allows it. */
        for (char **u = unmounted; u && *u; u++)
                log_request(call, FSGATE_MESSAGE_REFUSED, LOG_NOTICE, *u,
                            "%s is loaded but nothing is mounted with it: not exempted; "
                            "if this system needs it, fsgatectl allow %s", *u, *u);
        if (r < 0) {
                log_request(call, FSGATE_MESSAGE_REFUSED, LOG_WARNING, NULL, "ExemptLoaded failed: %s", e.message);
                return manager_reply_error(call, &e);
        }
        r = sd_bus_message_new_method_return(call, &reply);
        if (r >= 0)
                r = sd_bus_message_append_strv(reply, done);
        return bus_send_reply(reply, r);
}

/* Whether ExemptLoaded has anything to exempt: a module a vendor file denies that is mounted
 * now. Without one it is a no-op, and no-ops ask polkit nothing. (Root, whom polkit is not
 * asked about, still gets the journal lines for modules only loaded; for anyone else those
 * lines would be a way to write the journal without authorization.) */
static bool exempt_has_work(const FsgState *s) {
        for (size_t i = 0; i < s->n; i++) {
                const FsgEntry *x = &s->entries[i];
                if (x->denied && !x->builtin && x->origin == FSG_ORIGIN_VENDOR && x->mounted)
                        return true;
        }
        return false;
}

static int method_exempt(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        Request req = { .authorized = exempt_authorized, .writes = true };
        Manager *m = userdata;
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        FsgError e = {};

        if (manager_state(m, &s, &e) < 0)
                return manager_reply_error(call, &e);
        if (!exempt_has_work(s) && sd_bus_query_sender_privilege(call, CAP_SYS_ADMIN) <= 0)
                return sd_bus_reply_method_return(call, "as", 0);
        request_need(&req, FSG_ACTION_ALLOW, exempt_message);
        return request_start(userdata, call, &req);
}

/* -- Properties ----------------------------------------------------------------------------- */

static int property_version(sd_bus *bus, const char *path, const char *interface, const char *property,
                            sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", FSGATE_VERSION);
}

static int property_kernel_release(sd_bus *bus, const char *path, const char *interface, const char *property,
                                   sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        return sd_bus_message_append(reply, "s", m->ctx->kver ?: "");
}

/* Not an error: one unreadable file must not silence every answer, but whoever reads one
 * must be able to learn that it may be incomplete, and why. */
static int property_grants(sd_bus *bus, const char *path, const char *interface, const char *property,
                           sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return manager_append_grants(userdata, reply);
}

static int property_unreadable_files(sd_bus *bus, const char *path, const char *interface, const char *property,
                                     sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        FsgError e = {};

        if (manager_state(m, &s, &e) < 0)
                return sd_bus_error_set(error, fsg_error_dbus_name(e.code), e.message);
        return sd_bus_message_append_strv(reply, s->unreadable);
}

const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Version", "s", property_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("KernelRelease", "s", property_kernel_release, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("UnreadableFiles", "as", property_unreadable_files, 0, 0),
        SD_BUS_PROPERTY("Grants", "a(ssutts)", property_grants, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("OpenMedia", "a(sssusst)", property_open_media, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_METHOD_WITH_NAMES("ListFilesystems", "", "", "a(sassssbbbb)", SD_BUS_PARAM(filesystems),
                                 method_list, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("GetFilesystem", "s", SD_BUS_PARAM(name), "(sassssbbbb)", SD_BUS_PARAM(filesystem),
                                 method_get, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("Describe", "s", SD_BUS_PARAM(name), "a{sv}", SD_BUS_PARAM(description),
                                 method_describe, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("DescribeAll", "", "", "a{sa{sv}}", SD_BUS_PARAM(descriptions),
                                 method_describe_all, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("Allow", "st", SD_BUS_PARAM(name) SD_BUS_PARAM(flags), "", "",
                                 method_allow, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("Deny", "st", SD_BUS_PARAM(name) SD_BUS_PARAM(flags), "", "",
                                 method_deny, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("Reset", "st", SD_BUS_PARAM(name) SD_BUS_PARAM(flags), "", "",
                                 method_reset, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("Load", "s", SD_BUS_PARAM(name), "", "",
                                 method_load, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("Grant", "sa{sv}t", SD_BUS_PARAM(name) SD_BUS_PARAM(scope) SD_BUS_PARAM(flags),
                                 "s", SD_BUS_PARAM(grant), method_grant, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("OpenSafely", "shst",
                                 SD_BUS_PARAM(device) SD_BUS_PARAM(image) SD_BUS_PARAM(route) SD_BUS_PARAM(flags),
                                 "ss", SD_BUS_PARAM(mountpoint) SD_BUS_PARAM(id), method_open_safely,
                                 SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("CloseSafely", "s", SD_BUS_PARAM(what), "", "", method_close_safely,
                                 SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("ExemptLoaded", "", "", "as", SD_BUS_PARAM(modules),
                                 method_exempt, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("ApplyProfile", "st", SD_BUS_PARAM(name) SD_BUS_PARAM(flags),
                                 "a(sss)", SD_BUS_PARAM(changes), method_apply_profile, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("UndoProfile", "st", SD_BUS_PARAM(name) SD_BUS_PARAM(flags),
                                 "a(sss)", SD_BUS_PARAM(changes), method_undo_profile, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("StopObserving", "", "", "s", SD_BUS_PARAM(profile), method_stop_observing,
                                 SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("GetObservation", "", "", "stas",
                                 SD_BUS_PARAM(profile) SD_BUS_PARAM(since) SD_BUS_PARAM(modules),
                                 method_get_observation, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("AuditProfile", "st", SD_BUS_PARAM(name) SD_BUS_PARAM(flags), "sbba(sbbbs)",
                                 SD_BUS_PARAM(profile) SD_BUS_PARAM(hard_required) SD_BUS_PARAM(compliant)
                                 SD_BUS_PARAM(modules), method_audit_profile, SD_BUS_VTABLE_UNPRIVILEGED),
        /* Root only (no UNPRIVILEGED flag): what fsgate-blocked posts. */
        SD_BUS_METHOD_WITH_NAMES("ReportBlocked", "ss", SD_BUS_PARAM(type) SD_BUS_PARAM(module), "", "",
                                 method_report_blocked, 0),
        SD_BUS_METHOD_WITH_NAMES("ReportDevice", "ss", SD_BUS_PARAM(device) SD_BUS_PARAM(type), "", "",
                                 method_report_device, 0),
        SD_BUS_SIGNAL_WITH_NAMES("FilesystemChanged", "sss",
                                 SD_BUS_PARAM(module) SD_BUS_PARAM(state) SD_BUS_PARAM(origin), 0),
        SD_BUS_SIGNAL_WITH_NAMES("GrantEnded", "sss", SD_BUS_PARAM(grant) SD_BUS_PARAM(module) SD_BUS_PARAM(reason), 0),
        SD_BUS_SIGNAL_WITH_NAMES("Blocked", "sssa{sv}",
                                 SD_BUS_PARAM(type) SD_BUS_PARAM(module) SD_BUS_PARAM(device) SD_BUS_PARAM(details), 0),
        SD_BUS_VTABLE_END
};

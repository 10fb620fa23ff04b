/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <syslog.h>

#include "blocked.h"
#include "config.h"
#include "log.h"
#include "manager.h"
#include "polkit.h"
#include "state.h"
#include "store.h"
#include "strv.h"
#include "utf8.h"

/* Every handler reads the same way: arguments → validate and plan (named errors, nothing
 * touched) → return early if nothing would change → polkit → apply → signal → reply. */

typedef enum RequestKind {
        REQUEST_CHANGE,
        REQUEST_LOAD,
        REQUEST_EXEMPT,
} RequestKind;

typedef struct Request {
        RequestKind kind;
        FsgPlan plan;           /* REQUEST_CHANGE */
        char module[64];
        FsgAction actions[2];   /* authorizations still to obtain, in order */
        size_t n_actions;
        bool load;              /* REQUEST_CHANGE: FSG_ACTION_LOAD is among them */
        size_t next;
} Request;

static int reply_error(sd_bus_message *call, const FsgError *e) {
        /* Messages quote paths and names, which need not be UTF-8; D-Bus strings must be. */
        _cleanup_free_ char *msg = fsg_utf8_escape(e->message);
        return sd_bus_reply_method_errorf(call, fsg_error_dbus_name(e->code), "%s", msg ?: "Out of memory");
}

/* Runs for every entry of every List: sd_bus_message_append_basic() directly, without the
 * format string that sd_bus_message_append() would parse again for each entry. */
static int append_entry(sd_bus_message *reply, const FsgEntry *x) {
        const char * const strings[] = { fsg_entry_state_string(x), fsg_origin_to_string(x->origin), x->source ?: "" };
        const int flags[] = { x->available, x->builtin, x->loaded, x->mounted };
        int r = sd_bus_message_open_container(reply, 'r', "sassssbbbb");

        if (r >= 0)
                r = sd_bus_message_append_basic(reply, 's', x->module);
        if (r >= 0)
                r = sd_bus_message_append_strv(reply, x->types);
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(strings); i++)
                r = sd_bus_message_append_basic(reply, 's', strings[i]);
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(flags); i++)
                r = sd_bus_message_append_basic(reply, 'b', &flags[i]);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r;
}

static int emit_changed(Manager *m, const char *module) {
        const FsgState *s;
        const FsgEntry *x;

        if (manager_state(m, &s, NULL) < 0 || !(x = fsg_state_find(s, module)))
                return -EIO;
        return sd_bus_emit_signal(m->bus, FSGATE_BUS_PATH, FSGATE_BUS_IFACE, "FilesystemChanged", "sss",
                                  x->module, fsg_entry_state_string(x), fsg_origin_to_string(x->origin));
}

static int method_list(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        const FsgState *s;
        sd_bus_message *reply = NULL;
        FsgError e = {};
        int r;

        if (manager_state(m, &s, &e) < 0)
                return reply_error(call, &e);
        r = sd_bus_message_new_method_return(call, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(sassssbbbb)");
        for (size_t i = 0; r >= 0 && i < s->n; i++)
                r = append_entry(reply, &s->entries[i]);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_send(NULL, reply, NULL);
        sd_bus_message_unref(reply);
        return r;
}

static int method_get(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        const FsgState *s;
        sd_bus_message *reply = NULL;
        const FsgEntry *x;
        const char *name;
        FsgError e = {};
        int r;

        r = sd_bus_message_read(call, "s", &name);
        if (r < 0)
                return r;
        if (manager_state(m, &s, &e) < 0 || fsg_state_resolve(m->ctx, s, name, &x, &e) < 0)
                return reply_error(call, &e);
        r = sd_bus_message_new_method_return(call, &reply);
        if (r >= 0)
                r = append_entry(reply, x);
        if (r >= 0)
                r = sd_bus_send(NULL, reply, NULL);
        sd_bus_message_unref(reply);
        return r;
}

static const char *polkit_message(FsgAction a, const char *module) {
        if (!*module)
                return "Authentication is required to let the kernel keep loading every filesystem module in use now.";
        switch (a) {
        case FSG_ACTION_ALLOW: return "Authentication is required to let the kernel load the $(module) filesystem module automatically.";
        case FSG_ACTION_DENY:  return "Authentication is required to stop the kernel from loading the $(module) filesystem module automatically.";
        default:               return "Authentication is required to load the $(module) filesystem module now.";
        }
}

static int execute(Manager *m, sd_bus_message *call, Request *req) {
        _cleanup_strv_free_ char **done = NULL, **failed = NULL;
        FsgError e = {};

        switch (req->kind) {
        case REQUEST_CHANGE:
                if (fsg_apply(m->ctx, &req->plan, &e) < 0) {
                        log_request(call, FSGATE_MESSAGE_REFUSED, LOG_WARNING, req->module, "Change to %s failed: %s",
                                    req->module, e.message);
                        return reply_error(call, &e);
                }
                if (req->plan.write != FSG_WRITE_NOTHING) {
                        static const char * const verbs[] = { [FSG_WRITE_MASK] = "masked with /dev/null (allowed)",
                                                              [FSG_WRITE_DENY] = "written (denied)",
                                                              [FSG_WRITE_REMOVE] = "removed (reset)" };
                        log_request(call, FSGATE_MESSAGE_CONFIG_CHANGED, LOG_NOTICE, req->module, "%s %s",
                                    req->plan.target, verbs[req->plan.write]);
                        (void) emit_changed(m, req->module);
                }
                /* Only with the load authorization: a module that was loaded when the
                 * request came (so none was asked for) stays unloaded if it went away. */
                if (!req->load)
                        break;
                _fallthrough_;
        case REQUEST_LOAD:
                if (fsg_load(m->ctx, req->module, NULL, &e) < 0)
                        return reply_error(call, &e);
                log_request(call, FSGATE_MESSAGE_MODULE_LOADED, LOG_NOTICE, req->module, "Loaded %s for this boot",
                            req->module);
                break;
        case REQUEST_EXEMPT: {
                int r = fsg_exempt_loaded(m->ctx, &done, &failed, &e);

                /* What was written before a failure is announced all the same. */
                for (char **d = done; d && *d; d++) {
                        log_request(call, FSGATE_MESSAGE_CONFIG_CHANGED, LOG_NOTICE, *d,
                                    "%s is in use: allowed so that it keeps working", *d);
                        (void) emit_changed(m, *d);
                }
                for (char **f = failed; f && *f; f++) {
                        /* "MODULE: reason" (fsg_exempt_loaded()); names never contain ':'. */
                        char module[64];
                        snprintf(module, sizeof(module), "%.*s", (int) strcspn(*f, ":"), *f);
                        log_request(call, FSGATE_MESSAGE_REFUSED, LOG_WARNING, module, "Not exempted: %s", *f);
                }
                if (r < 0) {
                        log_request(call, FSGATE_MESSAGE_REFUSED, LOG_WARNING, NULL, "ExemptLoaded failed: %s",
                                    e.message);
                        return reply_error(call, &e);
                }
                sd_bus_message *reply = NULL;
                r = sd_bus_message_new_method_return(call, &reply);
                if (r >= 0)
                        r = sd_bus_message_append_strv(reply, done);
                if (r >= 0)
                        r = sd_bus_send(NULL, reply, NULL);
                sd_bus_message_unref(reply);
                return r;
        }
        }
        return sd_bus_reply_method_return(call, NULL);
}

static void authorize_next(Manager *m, sd_bus_message *call, Request *req);

static void on_authorized(Manager *m, sd_bus_message *call, bool granted, const sd_bus_error *error, void *userdata) {
        Request *req = userdata;

        if (!granted) {
                log_request(call, FSGATE_MESSAGE_REFUSED, LOG_INFO, req->module, "Refused %s %s%s: %s",
                            fsg_action_id(req->actions[req->next]), *req->module ? "on " : "for ",
                            *req->module ? req->module : "ExemptLoaded", error->message);
                (void) sd_bus_reply_method_error(call, error);
                free(req);
                return;
        }
        req->next++;
        authorize_next(m, call, req);
}

static void authorize_next(Manager *m, sd_bus_message *call, Request *req) {
        FsgAction a;

        if (req->next >= req->n_actions) {
                (void) execute(m, call, req);
                free(req);
                return;
        }
        a = req->actions[req->next];
        (void) polkit_check_async(m, call, fsg_action_id(a), req->module, polkit_message(a, req->module), on_authorized, req);
}

static int start_request(Manager *m, sd_bus_message *call, const Request *template) {
        Request *req = malloc(sizeof(Request));
        if (!req)
                return -ENOMEM;
        *req = *template;
        authorize_next(m, call, req);
        return 1;
}

/* LOAD_NOW asks for the load authorization only when there is something to load. */
static bool needs_load(Manager *m, const char *module) {
        const FsgState *s;
        const FsgEntry *x;

        if (manager_state(m, &s, NULL) < 0 || !(x = fsg_state_find(s, module)))
                return true; /* cannot tell: asking once more is the safe side */
        return !x->loaded && !x->builtin;
}

static int method_change(sd_bus_message *call, Manager *m, FsgOp op) {
        Request req = { .kind = REQUEST_CHANGE };
        const char *name;
        uint64_t flags;
        FsgError e = {};
        int r;

        r = sd_bus_message_read(call, "st", &name, &flags);
        if (r < 0)
                return r;
        if (fsg_plan(m->ctx, op, name, flags, &req.plan, &e) < 0)
                return reply_error(call, &e);
        snprintf(req.module, sizeof(req.module), "%s", req.plan.module);
        if (req.plan.write != FSG_WRITE_NOTHING)
                req.actions[req.n_actions++] = req.plan.action;
        if ((flags & FSG_FLAG_LOAD_NOW) && needs_load(m, req.plan.module)) {
                req.actions[req.n_actions++] = FSG_ACTION_LOAD;
                req.load = true;
        }
        if (req.n_actions == 0)
                return sd_bus_reply_method_return(call, NULL);
        return start_request(m, call, &req);
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

static int method_load(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        const FsgState *s;
        Request req = { .kind = REQUEST_LOAD, .actions = { FSG_ACTION_LOAD }, .n_actions = 1 };
        const FsgEntry *x;
        const char *name;
        FsgError e = {};
        int r;

        r = sd_bus_message_read(call, "s", &name);
        if (r < 0)
                return r;
        if (manager_state(m, &s, &e) < 0 || fsg_state_resolve(m->ctx, s, name, &x, &e) < 0)
                return reply_error(call, &e);
        if (x->loaded || x->builtin)
                return sd_bus_reply_method_return(call, NULL);
        if (!x->available)
                return sd_bus_reply_method_errorf(call, fsg_error_dbus_name(FSG_ERR_LOAD_FAILED),
                                                  "No module file for %s in kernel %s", x->module, m->ctx->kver ?: "(none)");
        snprintf(req.module, sizeof(req.module), "%s", x->module);
        return start_request(m, call, &req);
}

static int method_exempt(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        Request req = { .kind = REQUEST_EXEMPT, .actions = { FSG_ACTION_ALLOW }, .n_actions = 1, .module = "" };
        return start_request(userdata, call, &req);
}

static int property_version(sd_bus *bus, const char *path, const char *interface, const char *property,
                            sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", FSGATE_VERSION);
}

static int property_kernel_release(sd_bus *bus, const char *path, const char *interface, const char *property,
                                   sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        return sd_bus_message_append(reply, "s", m->ctx->kver ?: "");
}

const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Version", "s", property_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("KernelRelease", "s", property_kernel_release, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_METHOD_WITH_NAMES("ListFilesystems", "", "", "a(sassssbbbb)", SD_BUS_PARAM(filesystems),
                                 method_list, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("GetFilesystem", "s", SD_BUS_PARAM(name), "(sassssbbbb)", SD_BUS_PARAM(filesystem),
                                 method_get, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("Allow", "st", SD_BUS_PARAM(name) SD_BUS_PARAM(flags), "", "",
                                 method_allow, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("Deny", "st", SD_BUS_PARAM(name) SD_BUS_PARAM(flags), "", "",
                                 method_deny, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("Reset", "st", SD_BUS_PARAM(name) SD_BUS_PARAM(flags), "", "",
                                 method_reset, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("Load", "s", SD_BUS_PARAM(name), "", "",
                                 method_load, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("ExemptLoaded", "", "", "as", SD_BUS_PARAM(modules),
                                 method_exempt, SD_BUS_VTABLE_UNPRIVILEGED),
        /* Root only (no UNPRIVILEGED flag): what fsgate-blocked posts. */
        SD_BUS_METHOD_WITH_NAMES("ReportBlocked", "ss", SD_BUS_PARAM(type) SD_BUS_PARAM(module), "", "",
                                 method_report_blocked, 0),
        SD_BUS_METHOD_WITH_NAMES("ReportDevice", "ss", SD_BUS_PARAM(device) SD_BUS_PARAM(type), "", "",
                                 method_report_device, 0),
        SD_BUS_SIGNAL_WITH_NAMES("FilesystemChanged", "sss",
                                 SD_BUS_PARAM(module) SD_BUS_PARAM(state) SD_BUS_PARAM(origin), 0),
        SD_BUS_SIGNAL_WITH_NAMES("Blocked", "sssa{sv}",
                                 SD_BUS_PARAM(type) SD_BUS_PARAM(module) SD_BUS_PARAM(device) SD_BUS_PARAM(details), 0),
        SD_BUS_VTABLE_END
};

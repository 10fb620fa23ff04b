/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <linux/capability.h>
#include <syslog.h>

#include "block-reports.h"
#include "bus-object.h"
#include "bus-open.h"
#include "config.h"
#include "entry-fields.h"
#include "grants.h"
#include "lock-wait.h"
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
 * log → signal → reply). The request carries that last step. */

typedef struct Request Request;
typedef int (*AuthorizedFn)(Manager *m, sd_bus_message *call, Request *req);

struct Request {
        AuthorizedFn authorized;
        char module[64];        /* "" when the request is not about one module */
        FsgPlan plan;           /* changes only */
        bool load;              /* changes only: a load was asked for and must follow */
        bool end_grants;        /* changes only: a Deny or Reset of a granted module ends its grants */
        uint64_t seconds;       /* Grant: how long */
        FsgGrant medium;        /* Grant: the medium it is for (device fields only; "" for none) */
        FsgProfilePlan *profile; /* ApplyProfile: the list authorized (owned) */
        bool writes;            /* authorized runs with the writers' lock held, in lock_fd */
        int lock_fd;
        char subject[80];       /* what the logs name when module is "" */
        struct {
                FsgAction action;
                const char *message;
        } needs[2];             /* authorizations still to obtain, in order */
        size_t n_needs;
        size_t next;
};

static void request_need(Request *req, FsgAction action, const char *message) {
        assert(req->n_needs < ELEMENTSOF(req->needs));
        req->needs[req->n_needs].action = action;
        req->needs[req->n_needs++].message = message;
}

int manager_reply_error(sd_bus_message *call, const FsgError *e) {
        /* Messages quote paths and names, which need not be UTF-8; D-Bus strings must be. */
        _cleanup_free_ char *msg = fsg_utf8_escape(e->message);
        return sd_bus_reply_method_errorf(call, fsg_error_dbus_name(e->code), "%s", msg ?: "Out of memory");
}

/* The end of every method that builds its reply: sent if all went well, freed either way. */
static int send_reply(sd_bus_message *reply, int r) {
        if (r >= 0)
                r = sd_bus_send(NULL, reply, NULL);
        sd_bus_message_unref(reply);
        return r;
}

/* One value of an entry's field (entry-fields.h), of the D-Bus type its row names. */
static int append_field_value(sd_bus_message *reply, const FsgEntry *x, const FsgEntryField *f) {
        int r, b;

        switch (f->signature[0]) {
        case 's':
                return sd_bus_message_append_basic(reply, 's', fsg_entry_field_string(x, f));
        case 'b':
                b = fsg_entry_field_bool(x, f);
                return sd_bus_message_append_basic(reply, 'b', &b);
        }
        if (streq(f->signature, "as"))
                return sd_bus_message_append_strv(reply, fsg_entry_field_strv(x, f));
        /* a(ss): the list holds the pairs one after the other. */
        r = sd_bus_message_open_container(reply, 'a', "(ss)");
        for (char **p = fsg_entry_field_strv(x, f); r >= 0 && p && p[0] && p[1]; p += 2)
                r = sd_bus_message_append(reply, "(ss)", p[0], p[1]);
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

/* Runs for every entry of every List: sd_bus_message_append_basic() directly, without the
 * format string that sd_bus_message_append() would parse again for each entry. */
static int append_entry(sd_bus_message *reply, const FsgEntry *x) {
        int r = sd_bus_message_open_container(reply, 'r', "sassssbbbb");

        for (size_t i = 0; r >= 0 && i < fsg_entry_fields_n; i++)
                if (fsg_entry_fields[i].flags & FSG_FIELD_ENTRY)
                        r = append_field_value(reply, x, &fsg_entry_fields[i]);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r;
}

static int emit_changed(Manager *m, const char *module) {
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        const FsgEntry *x;

        if (manager_state(m, &s, NULL) < 0 || !(x = fsg_state_find(s, module)))
                return -EIO;
        return sd_bus_emit_signal(m->bus, FSGATE_BUS_PATH, FSGATE_BUS_IFACE, "FilesystemChanged", "sss",
                                  x->module, fsg_entry_state_string(x), fsg_origin_to_string(x->origin));
}

/* After a change of fsgate's, under the same lock as its write: a deny of its own now reports
 * what a route did (two aliases would run the hook twice), a reset may leave another file's
 * deny silent again. */
static void update_routes_locked(Manager *m) {
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        FsgError e = {};

        /* The state is asked for with the lock held: inotify has queued every change made
         * before it, so the cache is rebuilt if one came since (fsg_routes_refresh()). */
        if (manager_state(m, &s, &e) < 0 || fsg_routes_write_locked(m->ctx, s, NULL, &e) < 0)
                log_plain(LOG_WARNING, "Could not update %s%s: %s", m->ctx->root, FSG_ROUTES_PATH, e.message);
}

/* Every entry of the state, each appended by append into an array of signature "a" type. */
static int reply_all_entries(sd_bus_message *call, void *userdata, const char *type,
                             int (*append)(sd_bus_message *reply, const FsgEntry *x)) {
        Manager *m = userdata;
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        sd_bus_message *reply = NULL;
        FsgError e = {};
        int r;

        if (manager_state(m, &s, &e) < 0)
                return manager_reply_error(call, &e);
        r = sd_bus_message_new_method_return(call, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', type);
        for (size_t i = 0; r >= 0 && i < s->n; i++)
                r = append(reply, &s->entries[i]);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return send_reply(reply, r);
}

static int method_list(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        return reply_all_entries(call, userdata, "(sassssbbbb)", append_entry);
}

/* The entry a method's name argument names, in the state *ret_state (the caller's reference,
 * which keeps the entry valid): > 0 found, 0 not (*e says why, for the caller), < 0 a
 * malformed call. */
static int read_entry_arg(Manager *m, sd_bus_message *call, FsgState **ret_state, const FsgEntry **ret,
                          FsgError *e) {
        const char *name;
        int r;

        assert(!*ret_state);
        r = sd_bus_message_read(call, "s", &name);
        if (r < 0)
                return r;
        if (manager_state(m, ret_state, e) < 0 || fsg_state_resolve(m->ctx, *ret_state, name, ret, e) < 0)
                return 0;
        return 1;
}

/* GetFilesystem and Describe: one module named by the call, answered in the given form. */
static int reply_one_entry(sd_bus_message *call, void *userdata,
                           int (*append)(sd_bus_message *reply, const FsgEntry *x)) {
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        sd_bus_message *reply = NULL;
        const FsgEntry *x;
        FsgError e = {};
        int r;

        r = read_entry_arg(userdata, call, &s, &x, &e);
        if (r <= 0)
                return r < 0 ? r : manager_reply_error(call, &e);
        r = sd_bus_message_new_method_return(call, &reply);
        if (r >= 0)
                r = append(reply, x);
        return send_reply(reply, r);
}

static int method_get(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        return reply_one_entry(call, userdata, append_entry);
}

/* -- Describe, DescribeAll: everything fsgate knows of a module, extensible --------------- */

/* a{sv}: every field of the entry under its name. A client must ignore keys it does not
 * know: new ones will come. */
static int append_description(sd_bus_message *reply, const FsgEntry *x) {
        int r = sd_bus_message_open_container(reply, 'a', "{sv}");

        for (size_t i = 0; r >= 0 && i < fsg_entry_fields_n; i++) {
                const FsgEntryField *f = &fsg_entry_fields[i];

                if ((f->flags & FSG_FIELD_OPTIONAL) && !fsg_entry_field_string(x, f))
                        continue;
                r = sd_bus_message_open_container(reply, 'e', "sv");
                if (r >= 0)
                        r = sd_bus_message_append_basic(reply, 's', f->key);
                if (r >= 0)
                        r = sd_bus_message_open_container(reply, 'v', f->signature);
                if (r >= 0)
                        r = append_field_value(reply, x, f);
                for (unsigned k = 0; r >= 0 && k < 2; k++)
                        r = sd_bus_message_close_container(reply);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r;
}

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
        FsgError allow = {}, reset = {};
        uint64_t flags;
        FsgPlan p;

        if (fsg_refusal_wants_plan(x, FSG_OP_ALLOW, &flags))
                (void) manager_plan(m, FSG_OP_ALLOW, x->module, flags, &p, &allow);
        if (fsg_refusal_wants_plan(x, FSG_OP_RESET, &flags))
                (void) manager_plan(m, FSG_OP_RESET, x->module, flags, &p, &reset);
        ret->allow = fsg_utf8_escape(allow.message);
        ret->reset = fsg_utf8_escape(reset.message);
        return ret->allow && ret->reset ? 0 : -ENOMEM;
}

/* With allow_refused and reset_refused: whether those would be done now, so that a client
 * offers only what works. The entry's state is held: the plans may rebuild the cache's. */
static int method_describe(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        sd_bus_message *reply = NULL;
        _cleanup_(refusal_done) Refusal refused = {};
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        const FsgEntry *x;
        FsgEntry copy;
        FsgError e = {};
        int r;

        r = read_entry_arg(m, call, &s, &x, &e);
        if (r <= 0)
                return r < 0 ? r : manager_reply_error(call, &e);
        if (plan_refusals(m, x, &refused) < 0)
                return -ENOMEM;
        copy = *x;
        copy.allow_refused = refused.allow;
        copy.reset_refused = refused.reset;
        r = sd_bus_message_new_method_return(call, &reply);
        if (r >= 0)
                r = append_description(reply, &copy);
        return send_reply(reply, r);
}

static int append_named_description(sd_bus_message *reply, const FsgEntry *x) {
        int r = sd_bus_message_open_container(reply, 'e', "sa{sv}");
        if (r >= 0)
                r = sd_bus_message_append_basic(reply, 's', x->module);
        if (r >= 0)
                r = append_description(reply, x);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r;
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
                r = append_named_description(reply, &copy);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return send_reply(reply, r);
}

static void authorize_next(Manager *m, sd_bus_message *call, Request *req);

static void request_free(Manager *m, Request *req) {
        fsg_profile_plan_free(req->profile);
        (void) fsg_unlock(m->ctx, req->lock_fd);
        free(req);
}

static void on_locked(Manager *m, sd_bus_message *call, int lock_fd, const FsgError *error, void *userdata) {
        Request *req = userdata;

        if (lock_fd < 0) {
                log_request(call, FSGATE_MESSAGE_REFUSED, LOG_WARNING, *req->module ? req->module : NULL,
                            "Change %s%s failed: %s", *req->module ? "to " : "of ",
                            *req->module ? req->module : *req->subject ? req->subject : "ExemptLoaded", error->message);
                (void) manager_reply_error(call, error);
        } else {
                req->lock_fd = lock_fd;
                (void) req->authorized(m, call, req);
        }
        request_free(m, req);
}

static int compare_strings(const void *a, const void *b) {
        return strcmp(*(const char * const *) a, *(const char * const *) b);
}

static void on_authorized(Manager *m, sd_bus_message *call, bool granted, const sd_bus_error *error, void *userdata) {
        Request *req = userdata;

        if (!granted) {
                /* Refusals for too many waiting requests are counted in polkit-bridge.c,
                 * not logged one by one. */
                if (!sd_bus_error_has_name(error, SD_BUS_ERROR_LIMITS_EXCEEDED))
                        log_refusal(call, req->module, "Refused %s %s%s: %s",
                                    fsg_action_id(req->needs[req->next].action), *req->module ? "on " : "for ",
                                    *req->module ? req->module : *req->subject ? req->subject : "ExemptLoaded",
                                    error->message);
                (void) sd_bus_reply_method_error(call, error);
                request_free(m, req);
                return;
        }
        req->next++;
        authorize_next(m, call, req);
}

/* The modules a profile's plan writes, space-separated and sorted (a rule may compare the
 * string; the plan lists "unused" notable first): a computed profile names other modules on
 * another day, so its name alone does not say what a grant covers. */
static char *profile_modules(const FsgProfilePlan *pp) {
        _cleanup_free_ const char **names = calloc(pp->n + 1, sizeof(char *));
        size_t size = 1, l = 0;
        char *s;

        if (!names)
                return NULL;
        for (size_t i = 0; i < pp->n; i++) {
                names[i] = pp->plans[i].module;
                size += strlen(names[i]) + 1;
        }
        qsort(names, pp->n, sizeof(char *), compare_strings);
        s = malloc(size);
        if (!s)
                return NULL;
        s[0] = 0;
        for (size_t i = 0; i < pp->n; i++)
                l += sprintf(s + l, "%s%s", i ? " " : "", names[i]);
        return s;
}

static void authorize_next(Manager *m, sd_bus_message *call, Request *req) {
        _cleanup_free_ char *modules = NULL;
        char seconds[24];

        if (req->next >= req->n_needs) {
                /* A change waits for the lock in the loop, never in place (lock-wait.c). */
                if (req->writes) {
                        manager_lock_async(m, call, on_locked, req);
                        return;
                }
                (void) req->authorized(m, call, req);
                request_free(m, req);
                return;
        }
        /* What rules scope a grant by and the dialog names: the module, or the profile and
         * the modules it would deny (no "module": it is not about one). */
        if (req->profile) {
                modules = profile_modules(req->profile);
                if (!modules) {
                        sd_bus_error error = SD_BUS_ERROR_MAKE_CONST(SD_BUS_ERROR_NO_MEMORY, "Out of memory");
                        on_authorized(m, call, false, &error, req);
                        return;
                }
        }
        /* A grant's rules may judge its length and its medium too ("" for none): what the
         * medium holds and whether it is removable. */
        snprintf(seconds, sizeof(seconds), "%" PRIu64, req->seconds);
        polkit_check_async(m, call, fsg_action_id(req->needs[req->next].action),
                                  req->profile ? (const char * const[]) { "profile", req->profile->profile,
                                                                          "modules", modules, NULL }
                                  : req->seconds ? (const char * const[]) { "module", req->module, "seconds", seconds,
                                                                            "device", req->medium.device,
                                                                            "fstype", req->medium.fstype,
                                                                            "removable", !*req->medium.device ? "" :
                                                                            req->medium.removable ? "true" : "false",
                                                                            NULL }
                                               : (const char * const[]) { "module", req->module, NULL },
                                  req->needs[req->next].message, on_authorized, req);
}

static int start_request(Manager *m, sd_bus_message *call, const Request *template) {
        Request *req = malloc(sizeof(Request));
        if (!req)
                return -ENOMEM;
        *req = *template;
        req->lock_fd = -1;
        authorize_next(m, call, req);
        return 1;
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

static int method_load(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        Request req = { .authorized = load_authorized };
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        const FsgEntry *x;
        FsgError e = {};
        int r;

        r = read_entry_arg(m, call, &s, &x, &e);
        if (r <= 0)
                return r < 0 ? r : manager_reply_error(call, &e);
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
        return start_request(m, call, &req);
}

/* -- Grant: a load that ends by itself ----------------------------------------------------- */

static const char grant_message[] =
        N_("Authentication is required to load the $(module) filesystem module for a while.");

/* What a grant of module loads with it, as its record's deps= ("" for nothing): refused with
 * DependencyDenied when a deny keeps one of them out. */
static int grant_dependencies(Manager *m, const char *module, char deps[static FSG_GRANT_DEPS_MAX], FsgError *e) {
        _cleanup_strv_free_ char **l = NULL;
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        size_t n = 0;
        int r;

        r = fsg_load_new_dependencies(m->ctx, module, &l, e);
        if (r >= 0)
                r = manager_state(m, &s, e);
        if (r >= 0)
                r = fsg_load_refuse_denied_dependencies(s, module, l, e);
        if (r < 0)
                return r;
        deps[0] = 0;
        for (char **d = l; d && *d; d++) {
                int k = snprintf(deps + n, FSG_GRANT_DEPS_MAX - n, "%s%s", n ? " " : "", *d);

                if (k < 0 || (size_t) k >= FSG_GRANT_DEPS_MAX - n)
                        return fsg_error(e, FSG_ERR_FAILED, "%s has more dependencies than a grant records", module);
                n += k;
        }
        return 0;
}

static int grant_authorized(Manager *m, sd_bus_message *call, Request *req) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        const FsgEntry *x;
        char until[32];
        uid_t uid = 0;
        FsgGrant g;
        FsgError e = {};
        int r;

        if (sd_bus_query_sender_creds(call, SD_BUS_CREDS_EUID | SD_BUS_CREDS_AUGMENT, &creds) >= 0)
                (void) sd_bus_creds_get_euid(creds, &uid);
        if (manager_grants_of_uid(m, uid) >= FSG_GRANTS_PER_UID_MAX)
                return sd_bus_reply_method_errorf(call, SD_BUS_ERROR_LIMITS_EXCEEDED,
                                                  "uid %u has %u grants already, the most one user may have",
                                                  (unsigned) uid, FSG_GRANTS_PER_UID_MAX);
        /* Loaded meanwhile (a Load, an admin's modprobe) while polkit asked: a grant would
         * unload at its end what was there before it. */
        if (manager_state(m, &s, &e) >= 0 && (x = fsg_state_find_module(s, req->module)) && x->loaded &&
            !manager_module_granted(m, req->module))
                return sd_bus_reply_method_return(call, "s", "");
        r = fsg_grant_new(req->module, uid, fsg_realtime_usec(), fsg_boottime_usec(), req->seconds, &g, &e);
        /* Again: a deny of a dependency may have come while polkit asked. Recorded before the
         * load, as the grant itself, so that its end unloads them. */
        if (r >= 0 && !manager_module_granted(m, req->module))
                r = grant_dependencies(m, req->module, g.deps, &e);
        /* The medium again: another one may have taken its place while polkit asked. */
        if (r >= 0 && *req->medium.device) {
                r = fsg_grant_set_medium(&g, req->medium.device, &e);
                if (r >= 0 && (g.diskseq != req->medium.diskseq || g.major != req->medium.major ||
                               g.minor != req->medium.minor))
                        r = fsg_error(&e, FSG_ERR_CONCURRENT_CHANGE,
                                      "%s holds another medium than when the grant was asked for; nothing was granted",
                                      req->medium.device);
        }
        /* The record first: a crash between it and the load leaves a grant whose end finds
         * nothing to unload, never a load without an end. */
        if (r >= 0)
                r = manager_grant_add(m, &g, &e);
        if (r >= 0 && (r = fsg_load(m->ctx, req->module, NULL, &e)) < 0)
                manager_grant_end_id(m, g.id, "failed");
        if (r < 0) {
                log_request(call, FSGATE_MESSAGE_REFUSED, LOG_WARNING, req->module, "Grant of %s failed: %s",
                            req->module, e.message);
                return manager_reply_error(call, &e);
        }
        log_request(call, FSGATE_MESSAGE_MODULE_LOADED, LOG_NOTICE, req->module,
                    "Loaded %s until %s%s%s%s (grant %s): then unloaded once unused", req->module,
                    fsg_grant_time_string(g.until_usec, until), *g.device ? " or until " : "", g.device,
                    *g.device ? " is removed" : "", g.id);
        return sd_bus_reply_method_return(call, "s", g.id);
}

/* The scope a{sv}: "seconds" (t) and "device" (s), at least one; any other key is refused by
 * name, so that a caller asking for a scope this service does not know never gets a wider
 * grant. > 0 read, 0 refused (*e says why), < 0 a malformed call. */
static int read_grant_scope(sd_bus_message *call, uint64_t *ret_seconds, FsgGrant *ret_medium, FsgError *e) {
        const char *device = NULL;
        uint64_t seconds = 0;
        bool has_seconds = false;
        int r;

        r = sd_bus_message_enter_container(call, 'a', "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(call, 'e', "sv")) > 0) {
                const char *key;

                r = sd_bus_message_read(call, "s", &key);
                if (r < 0)
                        return r;
                if (streq(key, "seconds")) {
                        r = sd_bus_message_read(call, "v", "t", &seconds);
                        has_seconds = true;
                } else if (streq(key, "device"))
                        r = sd_bus_message_read(call, "v", "s", &device);
                else {
                        _cleanup_free_ char *k = fsg_utf8_escape(key);
                        fsg_error(e, FSG_ERR_INVALID_ARGS, "Unknown scope of a grant: \"%.64s\" (known: seconds, device)",
                                  k ?: "?");
                        return 0;
                }
                if (r < 0) {
                        fsg_error(e, FSG_ERR_INVALID_ARGS, "The scope \"%s\" of a grant is of type %s", key,
                                  streq(key, "seconds") ? "t" : "s");
                        return 0;
                }
                r = sd_bus_message_exit_container(call);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        r = sd_bus_message_exit_container(call);
        if (r < 0)
                return r;
        if (!has_seconds && !device) {
                fsg_error(e, FSG_ERR_INVALID_ARGS, "A grant needs a scope: seconds, device, or both");
                return 0;
        }
        if (!has_seconds)
                seconds = FSG_GRANT_DEVICE_SECONDS_DEFAULT;
        if (seconds < 1 || seconds > FSG_GRANT_SECONDS_MAX) {
                fsg_error(e, FSG_ERR_INVALID_ARGS, "A grant lasts from 1 to %" PRIu64 " seconds (7 days); asked: %" PRIu64,
                          FSG_GRANT_SECONDS_MAX, seconds);
                return 0;
        }
        if (device) {
                _cleanup_free_ char *d = fsg_utf8_escape(device);

                if (!d || fsg_grant_set_medium(ret_medium, d, e) < 0)
                        return d ? 0 : -ENOMEM;
        }
        *ret_seconds = seconds;
        return 1;
}

static int method_grant(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        Request req = { .authorized = grant_authorized };
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        const FsgEntry *x;
        uint64_t flags;
        FsgError e = {};
        int r;

        r = read_entry_arg(m, call, &s, &x, &e);
        if (r < 0)
                return r;
        /* The rest of the call is read whether the name was found or not: a malformed call
         * is a malformed call. */
        if (r == 0) {
                FsgError name_error = e;
                FsgGrant ignored_medium = {};
                uint64_t ignored;

                r = read_grant_scope(call, &ignored, &ignored_medium, &e);
                return r < 0 ? r : manager_reply_error(call, &name_error);
        }
        snprintf(req.module, sizeof(req.module), "%s", x->module);
        r = read_grant_scope(call, &req.seconds, &req.medium, &e);
        if (r <= 0)
                return r < 0 ? r : manager_reply_error(call, &e);
        if (*req.medium.device && fsg_grant_check_medium(m->ctx, &req.medium, x->types, x->module, &e) < 0)
                return manager_reply_error(call, &e);
        r = sd_bus_message_read(call, "t", &flags);
        if (r < 0)
                return r;
        if (flags != 0) {
                fsg_error(&e, FSG_ERR_INVALID_ARGS, "Flags not valid for Grant: %s", fsg_flags_to_string(flags, false));
                return manager_reply_error(call, &e);
        }
        /* Nothing to grant: the kernel has it or may load it already. An empty id says so;
         * no grant is made, so none ends (and unloads) what was there before. */
        if (x->builtin || !x->denied || (x->loaded && !manager_module_granted(m, x->module)))
                return sd_bus_reply_method_return(call, "s", "");
        if (!x->available) {
                fsg_error(&e, FSG_ERR_LOAD_FAILED, "No module file for %s in kernel %s", x->module, m->ctx->kver ?: "(none)");
                return manager_reply_error(call, &e);
        }
        if (fsg_load_refused(x, &e) < 0)
                return manager_reply_error(call, &e);
        /* Refused before polkit is asked, by name: a dependency another deny keeps out. */
        if (!x->loaded) {
                char deps[FSG_GRANT_DEPS_MAX];

                if (grant_dependencies(m, req.module, deps, &e) < 0)
                        return manager_reply_error(call, &e);
        }
        if (m->n_grants >= FSG_GRANTS_MAX)
                return sd_bus_reply_method_errorf(call, SD_BUS_ERROR_LIMITS_EXCEEDED,
                                                  "There are %u grants already, the most fsgated keeps", FSG_GRANTS_MAX);
        request_need(&req, FSG_ACTION_GRANT, grant_message);
        return start_request(m, call, &req);
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

        if (fsg_apply_locked(m->ctx, &req->plan, &e) < 0) {
                log_request(call, FSGATE_MESSAGE_REFUSED, LOG_WARNING, req->module, "Change to %s failed: %s",
                            req->module, e.message);
                return manager_reply_error(call, &e);
        }
        if (req->plan.write != FSG_WRITE_NOTHING) {
                log_request(call, FSGATE_MESSAGE_CONFIG_CHANGED, LOG_NOTICE, req->module, "%s %s",
                            req->plan.target, done[req->plan.write]);
                (void) emit_changed(m, req->module);
                update_routes_locked(m);
        }
        /* Written: other writers need not wait for the unloads and loads below. */
        req->lock_fd = fsg_unlock(m->ctx, req->lock_fd);
        /* The admin decided: a grant does not outlive a change of its module. After a
         * permanent allow it stays loaded; otherwise it is unloaded once unused. */
        if (req->end_grants || (req->plan.write != FSG_WRITE_NOTHING && manager_module_granted(m, req->module)))
                (void) manager_grants_end_module(m, req->module, req->plan.op == FSG_OP_ALLOW ? "allowed" :
                                                                 req->plan.op == FSG_OP_DENY ? "denied" : "reset");
        /* Only with the load authorization: a module that was loaded when the request came
         * (so none was asked for) stays unloaded if it went away. */
        if (req->load)
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
        Request req = { .authorized = change_authorized };
        const char *name;
        uint64_t flags;
        FsgError e = {};
        int r;

        r = sd_bus_message_read(call, "st", &name, &flags);
        if (r < 0)
                return r;
        if (manager_plan(m, op, name, flags, &req.plan, &e) < 0)
                return manager_reply_error(call, &e);
        /* A dry run is a question (would this be done?): nothing to authorize, write or load. */
        if (flags & FSG_FLAG_DRY_RUN)
                return sd_bus_reply_method_return(call, NULL);
        snprintf(req.module, sizeof(req.module), "%s", req.plan.module);
        req.writes = req.plan.write != FSG_WRITE_NOTHING;
        if (req.writes)
                request_need(&req, req.plan.action,
                             req.plan.action == FSG_ACTION_ALLOW ? allow_message : deny_message);
        if ((flags & FSG_FLAG_LOAD_NOW) && needs_load(m, req.plan.module)) {
                request_need(&req, FSG_ACTION_LOAD, load_message);
                req.load = true;
        }
        /* "reset" and "deny" end a grant early even where the files have nothing to change:
         * that ends a load, so it is the deny authorization's. */
        if (op != FSG_OP_ALLOW && manager_module_granted(m, req.plan.module)) {
                req.end_grants = true;
                if (req.n_needs == 0 || req.needs[0].action != FSG_ACTION_DENY)
                        if (req.n_needs < ELEMENTSOF(req.needs))
                                request_need(&req, FSG_ACTION_DENY, end_grant_message);
        }
        if (req.n_needs == 0)
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
                (void) emit_changed(m, *d);
        }
        if (done)
                update_routes_locked(m);
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
        return send_reply(reply, r);
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
        return start_request(userdata, call, &req);
}

/* -- ApplyProfile: many denies, one authorization, all or nothing --------------------------- */

static const char profile_message[] =
        N_("Authentication is required to stop the kernel from loading the filesystem modules of the profile "
           "$(profile).");

/* a(sss): module, change ("deny" or "deny-hard"), the file written. */
static int reply_profile(sd_bus_message *call, const FsgProfilePlan *pp) {
        sd_bus_message *reply = NULL;
        int r = sd_bus_message_new_method_return(call, &reply);

        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(sss)");
        for (size_t i = 0; r >= 0 && i < pp->n; i++)
                r = sd_bus_message_append(reply, "(sss)", pp->plans[i].module,
                                          fsg_profile_change_string(&pp->plans[i]), pp->plans[i].target);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return send_reply(reply, r);
}

static int profile_authorized(Manager *m, sd_bus_message *call, Request *req) {
        FsgError e = {};

        if (fsg_profile_apply_locked(m->ctx, req->profile, &e) < 0) {
                log_request(call, FSGATE_MESSAGE_REFUSED, LOG_WARNING, NULL, "%s failed: %s", req->subject, e.message);
                return manager_reply_error(call, &e);
        }
        for (size_t i = 0; i < req->profile->n; i++) {
                const FsgPlan *p = &req->profile->plans[i];
                log_request(call, FSGATE_MESSAGE_CONFIG_CHANGED, LOG_NOTICE, p->module, "%s written (%s, profile %s)",
                            p->target, fsg_profile_change_string(p), req->profile->profile);
                (void) emit_changed(m, p->module);
        }
        update_routes_locked(m);
        return reply_profile(call, req->profile);
}

static int method_apply_profile(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        Request req = { .authorized = profile_authorized, .writes = true };
        _cleanup_(fsg_profile_plan_freep) FsgProfilePlan *pp = NULL;
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        const char *name;
        uint64_t flags;
        FsgError e = {};
        int r;

        r = sd_bus_message_read(call, "st", &name, &flags);
        if (r < 0)
                return r;
        /* Every module planned against the kept state before polkit is asked: a refusal, a
         * conflict or a dry run costs no authorization and writes nothing. (A Deny plan asks
         * no "what if": no memo.) */
        if (manager_state(m, &s, &e) < 0 || fsg_profile_plan(m->ctx, s, NULL, name, flags, &pp, &e) < 0)
                return manager_reply_error(call, &e);
        if (pp->n == 0 || (flags & FSG_FLAG_DRY_RUN))
                return reply_profile(call, pp);
        snprintf(req.subject, sizeof(req.subject), "ApplyProfile %s", pp->profile);
        request_need(&req, FSG_ACTION_DENY, profile_message);
        req.profile = TAKE_PTR(pp);
        r = start_request(m, call, &req);
        if (r < 0)
                fsg_profile_plan_free(req.profile);
        return r;
}

/* -- AuditProfile: a read, no polkit; the service's own view, so that `fsgatectl audit` asks
 * the same source as `status`. ------------------------------------------------------------- */

static int method_audit_profile(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        sd_bus_message *reply = NULL;   /* send_reply() frees it */
        _cleanup_(fsg_audit_freep) FsgAudit *a = NULL;
        Manager *m = userdata;
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        const char *name;
        uint64_t flags;
        FsgError e = {};
        int r;

        r = sd_bus_message_read(call, "st", &name, &flags);
        if (r < 0)
                return r;
        if (flags & ~FSG_FLAG_HARD) {
                fsg_error(&e, FSG_ERR_INVALID_ARGS, "Flags not valid for AuditProfile: %s",
                          fsg_flags_to_string(flags & ~FSG_FLAG_HARD, false));
                return manager_reply_error(call, &e);
        }
        /* The kernel check first: without a tree the cached state is empty, not compliant. */
        if (fsg_context_require_kernel(m->ctx, &e) < 0 || manager_state(m, &s, &e) < 0 ||
            fsg_profile_audit(m->ctx, s, name, flags & FSG_FLAG_HARD, &a, &e) < 0)
                return manager_reply_error(call, &e);
        r = sd_bus_message_new_method_return(call, &reply);
        if (r >= 0)
                r = sd_bus_message_append(reply, "sbb", a->profile, a->hard_required, a->n_compliant == a->n);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(sbbbs)");
        for (size_t i = 0; r >= 0 && i < a->n; i++)
                r = sd_bus_message_append(reply, "(sbbbs)", a->items[i].module, a->items[i].compliant,
                                          a->items[i].denied, a->items[i].hard, a->items[i].why);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return send_reply(reply, r);
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

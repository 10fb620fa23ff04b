/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A request on its way from its method's checks to what it does once authorized: the polkit
 * actions it needs, one after the other (each a question with its details), then the
 * writers' lock for a change (waited for in the loop, lock-wait.c), then its step. */
#include <inttypes.h>
#include <syslog.h>

#include "bus-reply.h"
#include "bus-request.h"
#include "lock-wait.h"
#include "lock.h"
#include "log.h"
#include "polkit-bridge.h"
#include "state-cache.h"

void request_need(Request *req, FsgAction action, const char *message) {
        assert(req->n_needs < ELEMENTSOF(req->needs));
        req->needs[req->n_needs].action = action;
        req->needs[req->n_needs++].message = message;
}

static void authorize_next(Manager *m, sd_bus_message *call, Request *req);

/* What the logs name a request by: its module, else its subject (ExemptLoaded has neither). */
static const char *request_name(const Request *req) {
        return *req->module ? req->module : *req->subject ? req->subject : "ExemptLoaded";
}

static void request_free(Manager *m, Request *req) {
        if (req->kind == REQUEST_PROFILE)
                fsg_profile_plan_free(req->profile.plan);
        (void) fsg_unlock(m->ctx, req->lock_fd);
        free(req);
}

static void on_locked(Manager *m, sd_bus_message *call, int lock_fd, const FsgError *error, void *userdata) {
        Request *req = userdata;

        if (lock_fd < 0) {
                log_request(call, FSGATE_MESSAGE_REFUSED, LOG_WARNING, *req->module ? req->module : NULL,
                            "Change %s%s failed: %s", *req->module ? "to " : "of ",
                            request_name(req), error->message);
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
                                    request_name(req), error->message);
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
        if (req->kind == REQUEST_PROFILE) {
                modules = profile_modules(req->profile.plan);
                if (!modules) {
                        sd_bus_error error = SD_BUS_ERROR_MAKE_CONST(SD_BUS_ERROR_NO_MEMORY, "Out of memory");
                        on_authorized(m, call, false, &error, req);
                        return;
                }
        }
        /* A grant's rules may judge its length and its medium too ("" for none): what the
         * medium holds and whether it is removable. */
        snprintf(seconds, sizeof(seconds), "%" PRIu64, req->kind == REQUEST_GRANT ? req->grant.seconds : 0);
        polkit_check_async(m, call, fsg_action_id(req->needs[req->next].action),
                           req->kind == REQUEST_PROFILE ?
                                (const char * const[]) { "profile", req->profile.plan->profile, "modules", modules, NULL } :
                           req->kind == REQUEST_GRANT ?
                                (const char * const[]) { "module", req->module, "seconds", seconds,
                                                         "device", req->grant.medium.device,
                                                         "fstype", req->grant.medium.fstype,
                                                         "removable", !*req->grant.medium.device ? "" :
                                                                      req->grant.medium.removable ? "true" : "false",
                                                         NULL } :
                                (const char * const[]) { "module", req->module, NULL },
                           req->needs[req->next].message, on_authorized, req);
}

int request_start(Manager *m, sd_bus_message *call, const Request *template) {
        Request *req = malloc(sizeof(Request));
        if (!req)
                return -ENOMEM;
        *req = *template;
        req->lock_fd = -1;
        authorize_next(m, call, req);
        return 1;
}

/* The entry a method's name argument names, in the state *ret_state (the caller's reference,
 * which keeps the entry valid): > 0 found, 0 not (*e says why, for the caller), < 0 a
 * malformed call. */
int request_read_entry(Manager *m, sd_bus_message *call, FsgState **ret_state, const FsgEntry **ret,
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

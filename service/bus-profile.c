/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <syslog.h>

#include "bus-profile.h"
#include "bus-reply.h"
#include "bus-request.h"
#include "fsg-i18n.h"
#include "log.h"
#include "manager.h"
#include "observe.h"
#include "profile-apply.h"
#include "profile-write.h"
#include "profile-audit.h"
#include "profile-undo.h"
#include "state-cache.h"
#include "strv.h"

/* The profiles' methods: ApplyProfile (enforce, or observe with FSG_FLAG_OBSERVE),
 * StopObserving, GetObservation and AuditProfile. Shaped as bus-object.c's blocks. */

/* -- ApplyProfile: many denies, one authorization, all or nothing --------------------------- */

static const char profile_message[] =
        N_("Authentication is required to stop the kernel from loading the filesystem modules of the profile "
           "$(profile).");
/* Observing changes what the kernel's requests run (fsgate's hook, as root): the same action. */
static const char observe_message[] =
        N_("Authentication is required to observe what the profile $(profile) would block.");
static const char stop_observing_message[] =
        N_("Authentication is required to end the observation of the profile $(profile).");

/* Undoing changes what may load: the allow action, as Reset to allowed. */
static const char undo_message[] =
        N_("Authentication is required to let the kernel load the filesystem modules the profile $(profile) "
           "denied.");

/* a(sss): module, change ("deny", "deny-hard", "observe"; an undo's "reset", "kept-edited",
 * "kept-by-hand"), the file written (or left alone). */
static int reply_profile(sd_bus_message *call, const FsgProfilePlan *pp) {
        sd_bus_message *reply = NULL;
        int r = sd_bus_message_new_method_return(call, &reply);

        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(sss)");
        for (size_t i = 0; r >= 0 && i < pp->n; i++)
                r = sd_bus_message_append(reply, "(sss)", pp->plans[i].module,
                                          fsg_profile_change_string(&pp->plans[i]), pp->plans[i].target);
        for (size_t i = 0; r >= 0 && i < pp->n_kept; i++)
                r = sd_bus_message_append(reply, "(sss)", pp->kept[i].module, fsg_undo_kept_string(pp->kept[i].why),
                                          pp->kept[i].file);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return bus_send_reply(reply, r);
}

static int profile_authorized(Manager *m, sd_bus_message *call, Request *req) {
        FsgError e = {};

        if (fsg_profile_apply_locked(m->ctx, req->profile.plan, &e) < 0) {
                log_request(call, FSGATE_MESSAGE_REFUSED, LOG_WARNING, NULL, "%s failed: %s", req->subject, e.message);
                return manager_reply_error(call, &e);
        }
        for (size_t i = 0; i < req->profile.plan->n; i++) {
                const FsgPlan *p = &req->profile.plan->plans[i];
                log_request(call, FSGATE_MESSAGE_CONFIG_CHANGED, LOG_NOTICE, p->module, "%s %s (%s, profile %s)",
                            p->target, p->write == FSG_WRITE_REMOVE ? "removed" : "written",
                            fsg_profile_change_string(p), req->profile.plan->profile);
                (void) manager_emit_changed(m, p->module);
        }
        if (req->profile.plan->ends_observation)
                log_request(call, FSGATE_MESSAGE_CONFIG_CHANGED, LOG_NOTICE, NULL, "Observation of profile %s ended (%s)",
                            req->profile.plan->profile, req->profile.plan->n > 0 ? "enforced" : "stopped");
        manager_update_routes_locked(m);
        if (req->profile.plan->stop_only)
                return sd_bus_reply_method_return(call, "s", req->profile.plan->profile);
        return reply_profile(call, req->profile.plan);
}

/* Hands the plan to a request that asks polkit once, then writes it under the lock
 * (profile_authorized()). The request owns the plan from here on, also on failure. */
static int profile_request_start(Manager *m, sd_bus_message *call, FsgProfilePlan *pp, const char *method,
                                 FsgAction action, const char *message) {
        Request req = { .authorized = profile_authorized, .kind = REQUEST_PROFILE, .writes = true };
        int r;

        snprintf(req.subject, sizeof(req.subject), "%s %s", method, pp->profile);
        request_need(&req, action, message);
        req.profile.plan = pp;
        r = request_start(m, call, &req);
        if (r < 0)
                fsg_profile_plan_free(pp);
        return r;
}

/* How ApplyProfile and UndoProfile plan a profile's writes for its (name, flags). */
typedef int (*ProfilePlanFn)(Manager *m, const char *name, uint64_t flags, FsgProfilePlan **ret, FsgError *e);

typedef struct ProfileWrite {
        const char *method;                     /* as the logs name it */
        ProfilePlanFn plan;
        FsgAction action;
        const char *message, *observe_message;  /* polkit's; the second with FSG_FLAG_OBSERVE */
} ProfileWrite;

/* ApplyProfile and UndoProfile: every module planned before polkit is asked, so that a
 * refusal, a conflict, nothing to do or a dry run costs no authorization and writes nothing
 * (what it would write is the reply then); the rest is profile_request_start()'s. */
static int method_profile_write(sd_bus_message *call, Manager *m, const ProfileWrite *w) {
        _cleanup_(fsg_profile_plan_freep) FsgProfilePlan *pp = NULL;
        const char *name;
        uint64_t flags;
        FsgError e = {};
        int r;

        r = sd_bus_message_read(call, "st", &name, &flags);
        if (r < 0)
                return r;
        if (w->plan(m, name, flags, &pp, &e) < 0)
                return manager_reply_error(call, &e);
        if (!fsg_profile_plan_writes(pp))
                return reply_profile(call, pp);
        return profile_request_start(m, call, TAKE_PTR(pp), w->method, w->action,
                                     flags & FSG_FLAG_OBSERVE ? w->observe_message : w->message);
}

/* Against the kept state. (A Deny plan asks no "what if": no memo.) */
static int plan_apply(Manager *m, const char *name, uint64_t flags, FsgProfilePlan **ret, FsgError *e) {
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        int r = manager_state(m, &s, e);

        return r < 0 ? r : fsg_profile_plan(m->ctx, s, NULL, name, flags, ret, e);
}

int method_apply_profile(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        static const ProfileWrite apply = { "ApplyProfile", plan_apply, FSG_ACTION_DENY, profile_message,
                                            observe_message };

        return method_profile_write(call, userdata, &apply);
}

/* -- UndoProfile: the files the profile's apply wrote, as it wrote them, removed ------------ */

static int plan_undo(Manager *m, const char *name, uint64_t flags, FsgProfilePlan **ret, FsgError *e) {
        return fsg_profile_plan_undo(m->ctx, name, flags, ret, e);
}

int method_undo_profile(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        /* Modules may load again afterwards: the allow action. */
        static const ProfileWrite undo = { "UndoProfile", plan_undo, FSG_ACTION_ALLOW, undo_message, undo_message };

        return method_profile_write(call, userdata, &undo);
}

/* -- AuditProfile: a read, no polkit; the service's own view, so that `fsgatectl audit` asks
 * the same source as `status`. ------------------------------------------------------------- */

int method_audit_profile(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        sd_bus_message *reply = NULL;   /* bus_send_reply() frees it */
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
        if (fsg_flags_check(FSG_FLAGS_AUDIT_PROFILE, flags, &e) < 0)
                return manager_reply_error(call, &e);
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
        return bus_send_reply(reply, r);
}

/* -- StopObserving: the observation ends, nothing is enforced ------------------------------ */

int method_stop_observing(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        _cleanup_(fsg_profile_plan_freep) FsgProfilePlan *pp = NULL;
        FsgError e = {};

        if (fsg_profile_plan_stop_observing(m->ctx, &pp, &e) < 0)
                return manager_reply_error(call, &e);
        /* Nothing observed: nothing to authorize. */
        if (!pp->ends_observation)
                return sd_bus_reply_method_return(call, "s", "");
        return profile_request_start(m, call, TAKE_PTR(pp), "StopObserving", FSG_ACTION_DENY, stop_observing_message);
}

/* -- GetObservation: a read; ("", 0, []) when nothing is observed ---------------------------- */

int method_get_observation(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        _cleanup_(fsg_observation_freep) FsgObservation *o = NULL;
        sd_bus_message *reply = NULL;
        Manager *m = userdata;
        FsgError e = {};
        int r;

        if (fsg_observation_read(m->ctx, &o, &e) < 0)
                return manager_reply_error(call, &e);
        r = sd_bus_message_new_method_return(call, &reply);
        if (r >= 0)
                r = sd_bus_message_append(reply, "st", o ? o->profile : "", o ? o->since_usec : 0);
        if (r >= 0)
                r = sd_bus_message_append_strv(reply, o ? o->modules : NULL);
        return bus_send_reply(reply, r);
}

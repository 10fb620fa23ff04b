/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "ctl.h"
#include "profile.h"
#include "profile-undo.h"
#include "profile-write.h"
#include "strv.h"

/* Offline: the same core the daemon uses, on an image's files, with no bus and no polkit
 * (whoever can write the image decides). */

static int open_ctx(const CtlOptions *o, FsgContext **ret, FsgError *e) {
        return fsg_context_new(o->root, o->kernel_release, ret, e);
}

static int offline_list(const CtlOptions *o, FsgState **ret, FsgError *e) {
        _cleanup_(fsg_context_freep) FsgContext *c = NULL;
        int r = open_ctx(o, &c, e);

        return r < 0 ? r : fsg_state_build(c, NULL, ret, e);
}

static int offline_get(const CtlOptions *o, const char *name, FsgState **ret, FsgError *e) {
        _cleanup_(fsg_context_freep) FsgContext *c = NULL;
        int r = open_ctx(o, &c, e);

        return r < 0 ? r : fsg_state_build_one(c, name, ret, e);
}

/* As the service's Describe: with whether an Allow would be done now. */
static int offline_describe(const CtlOptions *o, const char *name, FsgState **ret, FsgError *e) {
        _cleanup_(fsg_context_freep) FsgContext *c = NULL;
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        FsgError refusal, reset_refusal;
        FsgEntry *x;
        int r = open_ctx(o, &c, e);

        if (r >= 0)
                r = fsg_state_build_one(c, name, &s, e);
        if (r < 0)
                return r;
        x = &s->entries[0];
        fsg_plan_refusals(c, NULL, NULL, x, &refusal, &reset_refusal);
        x->allow_refused = strdup(refusal.message);
        x->reset_refused = strdup(reset_refusal.message);
        if (!x->allow_refused || !x->reset_refused)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        *ret = TAKE_PTR(s);
        return 0;
}

static int offline_change(const CtlOptions *o, FsgOp op, const char *name, uint64_t flags, FsgError *e) {
        _cleanup_(fsg_context_freep) FsgContext *c = NULL;
        FsgPlan p;
        int r;

        if (flags & FSG_FLAG_LOAD_NOW)
                return fsg_error(e, FSG_ERR_INVALID_ARGS, "%s",
                                 _("--load needs the running system; it cannot be used with --root"));
        r = open_ctx(o, &c, e);
        if (r < 0)
                return r;
        r = fsg_plan(c, op, name, flags, &p, e);
        if (r < 0)
                return r;
        return fsg_apply(c, &p, e);
}

static int offline_load(const CtlOptions *o, const char *name, FsgError *e) {
        return fsg_error(e, FSG_ERR_INVALID_ARGS, "%s",
                         _("load needs the running system; it cannot be used with --root"));
}

static int offline_grant(const CtlOptions *o, const char *name, uint64_t seconds, const char *device, char **ret,
                         FsgError *e) {
        return fsg_error(e, FSG_ERR_INVALID_ARGS, "%s",
                         _("allow --for and --device need the running service, which ends the grant; they cannot be used with --root"));
}

static int offline_open_safely(const CtlOptions *o, const char *device, int image_fd, const char *route,
                               char **ret_mountpoint, char **ret_id, FsgError *e) {
        return fsg_error(e, FSG_ERR_INVALID_ARGS, "%s", _("open and close need the running service; they cannot be used with --root"));
}

static int offline_close_safely(const CtlOptions *o, const char *what, FsgError *e) {
        return offline_open_safely(o, NULL, -1, NULL, NULL, NULL, e);
}

static int offline_exempt(const CtlOptions *o, char ***ret, FsgError *e) {
        _cleanup_(fsg_context_freep) FsgContext *c = NULL;
        _cleanup_strv_free_ char **failed = NULL, **unmounted = NULL;
        int r;

        r = open_ctx(o, &c, e);
        if (r < 0)
                return r;
        r = fsg_exempt_loaded(c, ret, &failed, &unmounted, e);
        if (r < 0)
                return r;
        for (char **f = failed; f && *f; f++)
                fprintf(stderr, _("Not exempted: %s\n"), ctl_esc(*f));
        /* The package scripts run this: their log is where an administrator finds it. */
        for (char **u = unmounted; u && *u; u++)
                fprintf(stderr,
                        /* TRANSLATORS: %1$s a module name, %2$s a command (fsgatectl --root=DIR). */
                        _("%1$s is loaded but nothing is mounted with it: not exempted; if this system needs it, "
                          "%2$s allow %1$s\n"),
                        ctl_sh(*u), ctl_command(o));
        return 0;
}

/* A profile's planner: fsg_profile_plan(), fsg_profile_plan_undo() or
 * fsg_profile_plan_stop_observing(), as one type. */
typedef int (*ProfilePlanner)(const FsgContext *c, const char *name, uint64_t flags, FsgProfilePlan **ret,
                              FsgError *e);

static int plan_enforce(const FsgContext *c, const char *name, uint64_t flags, FsgProfilePlan **ret, FsgError *e) {
        return fsg_profile_plan(c, NULL, NULL, name, flags, ret, e);
}

static int plan_stop_observing(const FsgContext *c, const char *name, uint64_t flags, FsgProfilePlan **ret,
                               FsgError *e) {
        return fsg_profile_plan_stop_observing(c, ret, e);
}

/* The same plan and apply as the service's, with no polkit. */
static int plan_and_apply(const CtlOptions *o, ProfilePlanner planner, const char *name, uint64_t flags,
                          FsgProfilePlan **ret, FsgError *e) {
        _cleanup_(fsg_context_freep) FsgContext *c = NULL;
        _cleanup_(fsg_profile_plan_freep) FsgProfilePlan *pp = NULL;
        int r;

        r = open_ctx(o, &c, e);
        if (r >= 0)
                r = planner(c, name, flags, &pp, e);
        if (r >= 0)
                r = fsg_profile_apply(c, pp, e);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(pp);
        return 0;
}

static int offline_apply_profile(const CtlOptions *o, const char *name, uint64_t flags, FsgProfilePlan **ret,
                                 FsgError *e) {
        return plan_and_apply(o, plan_enforce, name, flags, ret, e);
}

static int offline_undo_profile(const CtlOptions *o, const char *name, uint64_t flags, FsgProfilePlan **ret,
                                FsgError *e) {
        return plan_and_apply(o, fsg_profile_plan_undo, name, flags, ret, e);
}

static int offline_audit_profile(const CtlOptions *o, const char *name, bool hard, FsgAudit **ret, FsgError *e) {
        _cleanup_(fsg_context_freep) FsgContext *c = NULL;
        int r = open_ctx(o, &c, e);

        return r < 0 ? r : fsg_profile_audit(c, NULL, name, hard, ret, e);
}

static int offline_get_observation(const CtlOptions *o, FsgObservation **ret, FsgError *e) {
        _cleanup_(fsg_context_freep) FsgContext *c = NULL;
        int r = open_ctx(o, &c, e);

        return r < 0 ? r : fsg_observation_read(c, ret, e) < 0 ? -1 : 0;
}

static int offline_stop_observing(const CtlOptions *o, char **ret, FsgError *e) {
        _cleanup_(fsg_profile_plan_freep) FsgProfilePlan *pp = NULL;
        int r = plan_and_apply(o, plan_stop_observing, NULL, 0, &pp, e);

        if (r < 0)
                return r;
        *ret = strdup(pp->ends_observation ? pp->profile : "");
        return *ret ? 0 : fsg_error(e, FSG_ERR_FAILED, "%s", _("Out of memory"));
}

const CtlBackend ctl_backend_offline = {
        .list = offline_list,
        .get = offline_get,
        .describe = offline_describe,   /* the core's entries are always described */
        .change = offline_change,
        .load = offline_load,
        .grant = offline_grant,
        .open_safely = offline_open_safely,
        .close_safely = offline_close_safely,
        .exempt = offline_exempt,
        .apply_profile = offline_apply_profile,
        .undo_profile = offline_undo_profile,
        .audit_profile = offline_audit_profile,
        .get_observation = offline_get_observation,
        .stop_observing = offline_stop_observing,
};

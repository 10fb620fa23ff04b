/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>

#include "alloc-util.h"
#include "ctl-evidence.h"
#include "ctl-journal.h"
#include "ctl.h"
#include "strv.h"

/* An observation (core/observe.h) as fsgatectl shows and uses it: stop-observing, a line in
 * status, and the check apply makes before it enforces what was observed. */

int ctl_stop_observing(const CtlBackend *be, const CtlOptions *o) {
        _cleanup_free_ char *profile = NULL;
        FsgError e = {};

        if (be->stop_observing(o, &profile, &e) < 0)
                return ctl_fail(o, &e);
        if (*profile)
                /* TRANSLATORS: %s is a profile name. */
                printf(_("The observation of profile %s ended; nothing was denied.\n"), ctl_esc(profile));
        else
                puts(_("No profile is being observed; nothing to stop."));
        return 0;
}

void ctl_observation_status(const CtlBackend *be, const CtlOptions *o, const char *module) {
        _cleanup_(fsg_observation_freep) FsgObservation *ob = NULL;
        FsgError e = {};
        char since[32];

        /* An older service has no GetObservation: then nothing is said, as before. */
        if (be->get_observation(o, &ob, &e) < 0 || !ob || !strv_contains(ob->modules, module))
                return;
        ctl_format_time(ob->since_usec, false, since);
        /* TRANSLATORS: %1$s a profile, %2$s a time, %3$s a command. */
        printf(_("   Observed: profile %1$s would deny it (observing since %2$s: its autoloads go ahead and are "
                 "recorded; see %3$s audit %1$s)\n"),
               ctl_esc(ob->profile), since, ctl_command(o));
}

static void print_used(const char *name, const CtlObserved * const *used, size_t n) {
        printf(ngettext("While profile %s was observed, %zu module it would now deny was used:\n",
                        "While profile %s was observed, %zu modules it would now deny were used:\n", n),
               ctl_esc(name), n);
        for (size_t i = 0; i < n; i++)
                ctl_observed_print(used[i], "  ");
}

/* The modules of pp (a dry run of the apply) that the evidence saw used, in out; how many. */
static size_t used_modules(const CtlEvidence *ev, const FsgProfilePlan *pp, const CtlObserved **out) {
        size_t n = 0;

        for (size_t i = 0; i < pp->n; i++) {
                const CtlObserved *x = ctl_evidence_find(ev, pp->plans[i].module);
                if (x)
                        out[n++] = x;
        }
        return n;
}

int ctl_observation_gate(const CtlBackend *be, const CtlOptions *o, const char *name, uint64_t flags, FsgError *e) {
        _cleanup_(fsg_observation_freep) FsgObservation *ob = NULL;
        _cleanup_(ctl_evidence_freep) CtlEvidence *ev = NULL;
        _cleanup_(fsg_profile_plan_freep) FsgProfilePlan *pp = NULL;
        _cleanup_free_ const CtlObserved **used = NULL;
        size_t n;
        int r;

        /* An image's observation was recorded by its own journal, not this system's. */
        if ((flags & FSG_FLAG_OBSERVE) || o->root)
                return 0;
        r = be->get_observation(o, &ob, e);
        if (r < 0 || !ob || !streq(ob->profile, name))
                return r < 0 ? r : 0;
        r = ctl_evidence_read(name, ob->since_usec, &ev, e);
        if (r < 0)
                return r;
        r = be->apply_profile(o, name, flags | FSG_FLAG_DRY_RUN, &pp, e);
        if (r < 0)
                return r;
        used = calloc(pp->n + 1, sizeof(*used));
        if (!used)
                return fsg_error(e, FSG_ERR_FAILED, "%s", _("Out of memory"));
        n = used_modules(ev, pp, used);
        if (n == 0)
                return 0;
        /* The lines are for a person; --json output stays one document (the refusal's error
         * names the rule; `audit --json` has the evidence itself). */
        if (!o->json)
                print_used(name, used, n);
        if ((flags & FSG_FLAG_FORCE) || (flags & FSG_FLAG_DRY_RUN))
                return 0;
        return fsg_error(e, FSG_ERR_OBSERVED_USE,
                         _("Nothing was changed: enforcing profile %1$s would block what was used while it was "
                           "observed. To enforce it all the same: %2$s apply --force %3$s"),
                         name, ctl_command(o), ctl_sh(name));
}


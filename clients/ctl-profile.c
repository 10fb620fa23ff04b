/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>

#include "ctl.h"
#include "json-writer.h"
#include "profile.h"

/* `fsgatectl apply PROFILE` and `fsgatectl audit PROFILE`. */

int ctl_apply_profile(const CtlBackend *be, const CtlOptions *o, const char *name, uint64_t flags) {
        _cleanup_(fsg_profile_plan_freep) FsgProfilePlan *pp = NULL;
        bool dry = flags & FSG_FLAG_DRY_RUN;
        FsgError e = {};

        if (be->apply_profile(o, name, flags, &pp, &e) < 0)
                return ctl_fail(o, &e);
        if (o->json) {
                JsonWriter w = JSON_WRITER(stdout);

                json_object_begin(&w);
                json_field_string(&w, "profile", name);
                json_field_bool(&w, "dry_run", dry);
                json_key(&w, "changes");
                json_array_begin(&w);
                for (size_t i = 0; i < pp->n; i++) {
                        json_object_begin(&w);
                        json_field_string(&w, "module", pp->plans[i].module);
                        json_field_string(&w, "change", fsg_profile_change_string(&pp->plans[i]));
                        json_field_string(&w, "file", pp->plans[i].target);
                        json_object_end(&w);
                }
                json_array_end(&w);
                json_object_end(&w);
                putchar('\n');
                return 0;
        }
        for (size_t i = 0; i < pp->n; i++)
                printf("%-10s %-12s %s\n", fsg_profile_change_string(&pp->plans[i]), pp->plans[i].module,
                       pp->plans[i].target);
        if (pp->n == 0)
                printf("Profile %s: nothing to change.\n", name);
        else
                printf("Profile %s: %zu file%s %s.\n", name, pp->n, pp->n == 1 ? "" : "s",
                       dry ? "would be written (dry run: nothing was written)" : "written");
        return 0;
}

int ctl_audit_profile(const CtlOptions *o, const char *name, bool hard) {
        _cleanup_(fsg_context_freep) FsgContext *c = NULL;
        _cleanup_(fsg_audit_freep) FsgAudit *a = NULL;
        FsgError e = {};

        /* A read of world-readable files, through the same core as the service: no call, no
         * polkit. Without --root, the running system's. */
        if (fsg_context_new(o->root, o->kernel_release, &c, &e) < 0 || fsg_profile_audit(c, name, hard, &a, &e) < 0)
                return ctl_fail(o, &e);
        if (o->json) {
                JsonWriter w = JSON_WRITER(stdout);

                json_object_begin(&w);
                json_field_string(&w, "profile", a->profile);
                json_field_bool(&w, "hard_required", a->hard_required);
                json_field_bool(&w, "compliant", a->n_compliant == a->n);
                json_key(&w, "modules");
                json_array_begin(&w);
                for (size_t i = 0; i < a->n; i++) {
                        json_object_begin(&w);
                        json_field_string(&w, "module", a->items[i].module);
                        json_field_bool(&w, "compliant", a->items[i].compliant);
                        json_field_bool(&w, "denied", a->items[i].denied);
                        json_field_bool(&w, "hard", a->items[i].hard);
                        json_field_string(&w, "why", a->items[i].why);
                        json_object_end(&w);
                }
                json_array_end(&w);
                json_object_end(&w);
                putchar('\n');
        } else {
                printf("Profile %s%s\n", a->profile, a->hard_required ? " (hard deny required)" : "");
                for (size_t i = 0; i < a->n; i++)
                        printf("  %-12s %-14s %s\n", a->items[i].module,
                               a->items[i].compliant ? "compliant" : "NOT compliant", a->items[i].why);
                printf("%zu of %zu modules compliant.\n", a->n_compliant, a->n);
        }
        /* Its own status: a script must tell "not compliant" from "could not audit". */
        return a->n_compliant == a->n ? 0 : CTL_EXIT_NOT_COMPLIANT;
}

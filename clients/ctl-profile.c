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
        /* The change is a word of the --json output (deny, deny-hard): not translated. */
        for (size_t i = 0; i < pp->n; i++)
                printf("%-10s %-12s %s\n", fsg_profile_change_string(&pp->plans[i]), ctl_esc(pp->plans[i].module),
                       ctl_esc(pp->plans[i].target));
        if (pp->n == 0)
                printf(_("Profile %s: nothing to change.\n"), name);
        else if (dry)
                printf(ngettext("Profile %s: %zu file would be written (dry run: nothing was written).\n",
                                "Profile %s: %zu files would be written (dry run: nothing was written).\n", pp->n),
                       name, pp->n);
        else
                printf(ngettext("Profile %s: %zu file written.\n", "Profile %s: %zu files written.\n", pp->n), name,
                       pp->n);
        return 0;
}

int ctl_audit_profile(const CtlBackend *be, const CtlOptions *o, const char *name, bool hard) {
        _cleanup_(fsg_audit_freep) FsgAudit *a = NULL;
        FsgError e = {};

        /* A read: no polkit. The service's answer without --root, as for status. */
        if (be->audit_profile(o, name, hard, &a, &e) < 0)
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
                const char *yes = _("compliant"), *no = _("NOT compliant");
                /* The English width, or wider for a longer translation (one blank after it). */
                size_t w = ctl_max_width(ctl_max_width(13, yes), no) + 1;
                printf(a->hard_required ? _("Profile %s (hard deny required)\n") : _("Profile %s\n"), a->profile);
                for (size_t i = 0; i < a->n; i++) {
                        printf("  %-12s ", ctl_esc(a->items[i].module));
                        ctl_pad(a->items[i].compliant ? yes : no, w);
                        printf(" %s\n", ctl_esc(a->items[i].why));
                }
                /* TRANSLATORS: "3 of 5 modules compliant"; the plural follows the second number. */
                printf(ngettext("%zu of %zu module compliant.\n", "%zu of %zu modules compliant.\n", a->n),
                       a->n_compliant, a->n);
        }
        /* Its own status: a script must tell "not compliant" from "could not audit". */
        return a->n_compliant == a->n ? 0 : CTL_EXIT_NOT_COMPLIANT;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>

#include "ctl.h"
#include "json-writer.h"

/* `fsgatectl undo PROFILE`: the deny files the profile's apply wrote, as it wrote them,
 * removed; the modules left alone named, each with why. */

static void undo_json(const char *name, const FsgProfilePlan *pp) {
        JsonWriter w = JSON_WRITER(stdout);

        json_object_begin(&w);
        json_field_string(&w, "profile", name);
        json_field_bool(&w, "dry_run", pp->flags & FSG_FLAG_DRY_RUN);
        json_key(&w, "changes");
        json_array_begin(&w);
        for (size_t i = 0; i < pp->n; i++) {
                json_object_begin(&w);
                json_field_string(&w, "module", pp->plans[i].module);
                json_field_string(&w, "change", "reset");
                json_field_string(&w, "file", pp->plans[i].target);
                json_object_end(&w);
        }
        json_array_end(&w);
        json_key(&w, "kept");
        json_array_begin(&w);
        for (size_t i = 0; i < pp->n_kept; i++) {
                json_object_begin(&w);
                json_field_string(&w, "module", pp->kept[i].module);
                json_field_string(&w, "change", fsg_undo_kept_string(pp->kept[i].why));
                json_field_string(&w, "file", pp->kept[i].file);
                json_object_end(&w);
        }
        json_array_end(&w);
        json_object_end(&w);
        putchar('\n');
}

static void undo_text(const CtlOptions *o, const char *name, const FsgProfilePlan *pp) {
        /* "reset" is a word of the --json output: not translated. */
        for (size_t i = 0; i < pp->n; i++)
                printf("%-10s %-12s %s\n", "reset", ctl_esc(pp->plans[i].module), ctl_esc(pp->plans[i].target));
        if (pp->n_kept > 0)
                /* TRANSLATORS: %s is a profile name. */
                printf(_("Left alone, as changed since profile %s wrote them:\n"), name);
        for (size_t i = 0; i < pp->n_kept; i++) {
                const FsgUndoKept *k = &pp->kept[i];
                printf("  %-12s %s: %s\n", ctl_esc(k->module), ctl_esc(k->file),
                       k->why == FSG_UNDO_KEPT_EDITED ? _("edited since") :
                                                        _("denied by hand (fsgatectl deny), not by the profile"));
        }
        if (pp->n == 0)
                printf(_("Profile %s: nothing to undo.\n"), name);
        else if (pp->flags & FSG_FLAG_DRY_RUN)
                printf(ngettext("Profile %s: %zu deny would be reset (dry run: nothing was changed).\n",
                                "Profile %s: %zu denies would be reset (dry run: nothing was changed).\n", pp->n),
                       name, pp->n);
        else
                printf(ngettext("Profile %s: %zu deny reset.\n", "Profile %s: %zu denies reset.\n", pp->n), name,
                       pp->n);
        if (pp->n_kept > 0)
                /* TRANSLATORS: %s is a command (fsgatectl). */
                printf(_("To reset those too: %s reset MODULE...\n"), ctl_command(o));
}

int ctl_undo_profile(const CtlBackend *be, const CtlOptions *o, const char *name, uint64_t flags) {
        _cleanup_(fsg_profile_plan_freep) FsgProfilePlan *pp = NULL;
        FsgError e = {};

        if (be->undo_profile(o, name, flags, &pp, &e) < 0)
                return ctl_fail(o, &e);
        if (o->json)
                undo_json(name, pp);
        else
                undo_text(o, name, pp);
        return 0;
}

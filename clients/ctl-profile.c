/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <time.h>

#include "ctl-evidence.h"
#include "ctl-journal.h"
#include "ctl.h"
#include "json-writer.h"
#include "on-demand.h"
#include "profile.h"
#include "strv.h"

/* `fsgatectl apply PROFILE` and `fsgatectl audit PROFILE`. */

/* What including the types people need on demand would add: the modules a second dry run
 * with FSG_FLAG_INCLUDE_ON_DEMAND writes and pp does not. Asked as a dry run of its own (no
 * polkit, nothing written), so that the bus and --root answer alike with no new reply. */
static int on_demand_kept(const CtlBackend *be, const CtlOptions *o, const char *name, const FsgProfilePlan *pp,
                          char ***ret, FsgError *e) {
        _cleanup_(fsg_profile_plan_freep) FsgProfilePlan *with = NULL;
        _cleanup_strv_free_ char **kept = NULL;

        if (be->apply_profile(o, name, pp->flags | FSG_FLAG_INCLUDE_ON_DEMAND, &with, e) < 0)
                return -1;
        for (size_t i = 0; i < with->n; i++) {
                bool planned = false;

                for (size_t j = 0; j < pp->n && !planned; j++)
                        planned = streq(pp->plans[j].module, with->plans[i].module);
                if (!planned && strv_extend(&kept, with->plans[i].module) < 0)
                        return fsg_error(e, FSG_ERR_FAILED, "%s", _("Out of memory"));
        }
        *ret = TAKE_PTR(kept);
        return 0;
}

/* Who would be refused were module denied; a module that is no row (fat, sunrpc) is kept for
 * one that is. Untranslated for --json. */
static const char *on_demand_refused(const char *module, bool translate) {
        const FsgOnDemand *d = fsg_on_demand_find(module);
        const char *s = d ? d->refused : N_("needed by a filesystem kept on demand");

        return translate ? _(s) : s;
}

static void apply_json(const char *name, const FsgProfilePlan *pp, char **kept, const FsgError *kept_error,
                       bool ended) {
        JsonWriter w = JSON_WRITER(stdout);

        json_object_begin(&w);
        json_field_string(&w, "profile", name);
        json_field_bool(&w, "dry_run", pp->flags & FSG_FLAG_DRY_RUN);
        json_field_bool(&w, "include_on_demand", pp->flags & FSG_FLAG_INCLUDE_ON_DEMAND);
        json_field_bool(&w, "observe", pp->flags & FSG_FLAG_OBSERVE);
        json_field_bool(&w, "observation_ended", ended);
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
        json_key(&w, "kept_on_demand");
        json_array_begin(&w);
        for (char **m = kept; m && *m; m++) {
                const FsgOnDemand *d = fsg_on_demand_find(*m);

                json_object_begin(&w);
                json_field_string(&w, "module", *m);
                json_field_string(&w, "type", d ? d->type : "");
                json_field_string(&w, "refused", on_demand_refused(*m, false));
                json_object_end(&w);
        }
        json_array_end(&w);
        json_field_string(&w, "kept_on_demand_error", kept_error->message);
        json_object_end(&w);
        putchar('\n');
}

static void apply_text_on_demand(const CtlOptions *o, const char *name, char **kept, const FsgError *kept_error) {
        if (*kept_error->message)
                /* TRANSLATORS: %s says why (an error message). */
                printf(_("Including the filesystems people need on demand would fail: %s\n"),
                       ctl_esc(kept_error->message));
        if (!kept)
                return;
        /* TRANSLATORS: %1$s %2$s is the command that includes them, e.g. "fsgatectl apply
         * --include-on-demand unused". */
        printf(_("Kept, as people need them on demand (%1$s apply --include-on-demand %2$s denies them too):\n"),
               ctl_command(o), ctl_sh(name));
        for (char **m = kept; *m; m++) {
                const FsgOnDemand *d = fsg_on_demand_find(*m);

                if (d && !streq(d->type, d->module))
                        printf("  %s (%s): %s\n", ctl_esc(*m), d->type, on_demand_refused(*m, true));
                else
                        printf("  %s: %s\n", ctl_esc(*m), on_demand_refused(*m, true));
        }
}

static void apply_text(const CtlOptions *o, const char *name, const FsgProfilePlan *pp) {
        /* The change is a word of the --json output (deny, deny-hard): not translated. */
        for (size_t i = 0; i < pp->n; i++)
                printf("%-10s %-12s %s\n", fsg_profile_change_string(&pp->plans[i]), ctl_esc(pp->plans[i].module),
                       ctl_esc(pp->plans[i].target));
        if (pp->n == 0)
                printf(_("Profile %s: nothing to change.\n"), name);
        else if (pp->flags & FSG_FLAG_DRY_RUN)
                printf(ngettext("Profile %s: %zu file would be written (dry run: nothing was written).\n",
                                "Profile %s: %zu files would be written (dry run: nothing was written).\n", pp->n),
                       name, pp->n);
        else
                printf(ngettext("Profile %s: %zu file written.\n", "Profile %s: %zu files written.\n", pp->n), name,
                       pp->n);
}

static int print_observe_outcome(const CtlOptions *o, const char *name, size_t n, bool dry) {
        if (n == 0)
                /* TRANSLATORS: %s is a profile name. */
                printf(_("Profile %s: nothing to observe: every module it names is denied already, built in or not "
                         "in this kernel.\n"), name);
        else if (dry)
                printf(ngettext("Profile %s: %zu module would be observed (dry run: nothing was written).\n",
                                "Profile %s: %zu modules would be observed (dry run: nothing was written).\n", n),
                       name, n);
        else {
                printf(ngettext("Profile %s: observing %zu module. Nothing is denied: each autoload it would block "
                                "goes ahead and is recorded in the journal.\n",
                                "Profile %s: observing %zu modules. Nothing is denied: each autoload it would block "
                                "goes ahead and is recorded in the journal.\n", n),
                       name, n);
                /* TRANSLATORS: %1$s a command (fsgatectl), %2$s a profile name. */
                printf(_("What it would have blocked: %1$s audit %2$s. To enforce it: %1$s apply %2$s. "
                         "To end it: %1$s stop-observing\n"), ctl_command(o), ctl_sh(name));
        }
        return 0;
}

/* Whether this apply ended an observation of the profile: observed before, not after. */
static bool observation_ended(const CtlBackend *be, const CtlOptions *o, const char *name,
                              const FsgObservation *before) {
        _cleanup_(fsg_observation_freep) FsgObservation *after = NULL;
        FsgError e = {};

        return before && streq(before->profile, name) && be->get_observation(o, &after, &e) >= 0 && !after;
}

int ctl_apply_profile(const CtlBackend *be, const CtlOptions *o, const char *name, uint64_t flags) {
        _cleanup_(fsg_profile_plan_freep) FsgProfilePlan *pp = NULL;
        _cleanup_(fsg_observation_freep) FsgObservation *before = NULL;
        _cleanup_strv_free_ char **kept = NULL;
        bool observe = flags & FSG_FLAG_OBSERVE, ended;
        FsgError e = {}, kept_error = {};

        if (ctl_observation_gate(be, o, name, flags, &e) < 0)
                return ctl_fail(o, &e);
        if (!observe && !(flags & FSG_FLAG_DRY_RUN) && be->get_observation(o, &before, &e) < 0)
                before = NULL;
        if (be->apply_profile(o, name, flags, &pp, &e) < 0)
                return ctl_fail(o, &e);
        ended = observation_ended(be, o, name, before);
        if (observe) {
                if (o->json)
                        apply_json(name, pp, NULL, &kept_error, false);
                return o->json ? 0 : print_observe_outcome(o, name, pp->n, flags & FSG_FLAG_DRY_RUN);
        }
        /* What the dry run leaves out on purpose is part of its answer: who reviews it sees the
         * cost of including it. A listed profile has none: the second plan is the first. */
        if ((flags & FSG_FLAG_DRY_RUN) && !(flags & FSG_FLAG_INCLUDE_ON_DEMAND))
                (void) on_demand_kept(be, o, name, pp, &kept, &kept_error);
        if (o->json)
                apply_json(name, pp, kept, &kept_error, ended);
        else {
                if (ended)
                        printf(_("The observation of profile %s ended: it is enforced now.\n"), name);
                apply_text(o, name, pp);
                apply_text_on_demand(o, name, kept, &kept_error);
        }
        return 0;
}

/* The profile's modules on which the initramfs disagrees with the configuration: at most
 * a->n, in out. */
static size_t initramfs_disagreements(const CtlInitramfs *k, const FsgAudit *a,
                                      const CtlInitramfsDisagreement **out) {
        size_t n = 0;

        for (size_t i = 0; k && i < a->n; i++)
                if ((out[n] = ctl_initramfs_disagreement(k, a->items[i].module)))
                        n++;
        return n;
}

static void initramfs_json(JsonWriter *w, const CtlInitramfs *k, const FsgError *why,
                           const CtlInitramfsDisagreement * const *d, size_t n) {
        json_key(w, "initramfs");
        json_object_begin(w);
        json_field_bool(w, "checked", k);
        json_field_string(w, "reason", k ? "" : why->message);
        json_field_string(w, "image", k ? ctl_initramfs_image(k) : "");
        json_key(w, "disagreements");
        json_array_begin(w);
        for (size_t i = 0; i < n; i++)
                ctl_initramfs_json_disagreement(w, k, d[i]);
        json_array_end(w);
        json_field_string(w, "command", n ? ctl_initramfs_command(k) : "");
        json_object_end(w);
}

static void initramfs_text(const CtlInitramfs *k, const FsgError *why, bool nothing_to_check,
                           const CtlInitramfsDisagreement * const *d, size_t n) {
        if (!k) {
                /* No generator, no module tree: there is nothing it could disagree on. */
                if (!nothing_to_check)
                        /* TRANSLATORS: %s says why (an error message). */
                        printf(_("Warning (not part of the verdict): the initramfs was not checked: %s\n"),
                               ctl_esc(why->message));
                return;
        }
        if (n == 0)
                return;
        /* TRANSLATORS: %1$s the initramfs image; the plural follows %2$zu. */
        printf(ngettext("Warning (not part of the verdict): the initramfs %1$s disagrees on %2$zu module of the profile:\n",
                        "Warning (not part of the verdict): the initramfs %1$s disagrees on %2$zu modules of the profile:\n",
                        n),
               ctl_esc(ctl_initramfs_image(k)), n);
        for (size_t i = 0; i < n; i++)
                ctl_initramfs_print_disagreement(d[i]);
        /* TRANSLATORS: %s is a command (update-initramfs -u -k KVER). */
        printf(_("To make it again from the configuration as it is now: %s\n"), ctl_esc(ctl_initramfs_command(k)));
}

static void evidence_text(const FsgObservation *ob, const CtlEvidence *ev, const FsgError *why) {
        bool on = ob && ev && streq(ob->profile, ev->profile);
        char since[32];

        if (on) {
                ctl_format_time(ob->since_usec, false, since);
                /* TRANSLATORS: %1$s a profile, %2$s a time. */
                printf(_("Observed (not part of the verdict): profile %1$s is being observed since %2$s.\n"),
                       ctl_esc(ob->profile), since);
        }
        if (!ev) {
                if (*why->message)
                        /* TRANSLATORS: %s says why (an error message). */
                        printf(_("What was observed could not be read: %s\n"), ctl_esc(why->message));
                return;
        }
        if (ev->n == 0) {
                if (on)
                        puts(_("  Nothing it would block was asked for so far."));
                return;
        }
        puts(_("Would have been blocked while observed:"));
        for (size_t i = 0; i < ev->n; i++)
                ctl_observed_print(&ev->items[i], "  ");
        if (ev->walk_limit)
                puts(_("  (the journal holds more than was read: older ones are not counted)"));
}

int ctl_audit_profile(const CtlBackend *be, const CtlOptions *o, const char *name, bool hard) {
        _cleanup_(fsg_audit_freep) FsgAudit *a = NULL;
        _cleanup_(ctl_initramfs_freep) CtlInitramfs *k = NULL;
        _cleanup_free_ const CtlInitramfsDisagreement **d = NULL;
        _cleanup_(fsg_observation_freep) FsgObservation *ob = NULL;
        _cleanup_(ctl_evidence_freep) CtlEvidence *ev = NULL;
        FsgError e = {}, why = {}, ev_error = {};
        bool nothing_to_check;
        size_t n;

        /* A read: no polkit. The service's answer without --root, as for status. */
        if (be->audit_profile(o, name, hard, &a, &e) < 0)
                return ctl_fail(o, &e);
        /* What the initramfs holds loads before the real root is mounted: said beside the
         * verdict, never part of it (CIS audits the configuration). */
        nothing_to_check = ctl_initramfs_check(o, &k, &why) == 0 ? !k : why.code == FSG_ERR_NO_KERNEL;
        if (!k && !*why.message)
                fsg_error(&why, FSG_ERR_FAILED, "%s", _("no initramfs generator (initramfs-tools, dracut) is installed"));
        d = calloc(a->n + 1, sizeof(*d));
        if (!d) {
                fsg_error(&e, FSG_ERR_FAILED, "%s", _("Out of memory"));
                return ctl_fail(o, &e);
        }
        n = initramfs_disagreements(k, a, d);
        /* What an observation of the profile recorded, beside the verdict and never part of it:
         * since the observation began, or, with none on, all the journal holds. */
        if (!o->root && be->get_observation(o, &ob, &ev_error) >= 0)
                (void) ctl_evidence_read(name, ob && streq(ob->profile, name) ? ob->since_usec : 0, &ev, &ev_error);
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
                initramfs_json(&w, k, &why, d, n);
                if (ev)
                        ctl_evidence_json(&w, ev);
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
                initramfs_text(k, &why, nothing_to_check, d, n);
                evidence_text(ob, ev, &ev_error);
        }
        /* Its own status: a script must tell "not compliant" from "could not audit". */
        return a->n_compliant == a->n ? 0 : CTL_EXIT_NOT_COMPLIANT;
}

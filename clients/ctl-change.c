/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The change verbs of several names (allow, deny, reset; allow --for/--device): planned all
 * first, then made one by one, and what each did said in words. */
#define _GNU_SOURCE
#include <stdio.h>

#include "ctl-change.h"
#include "fsg-i18n.h"
#include "grant.h"
#include "json-writer.h"
#include "strv.h"

/* The directory of x's deciding file if that has the name fsgate gives its own files in a
 * directory it writes, else NULL. */
static const char *own_file_dir(const FsgEntry *x) {
        static const char * const dirs[] = { "/etc/modprobe.d", "/run/modprobe.d" };
        char own[256];

        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                snprintf(own, sizeof(own), "%s/" FSG_FILE_PREFIX "%s" FSG_FILE_SUFFIX, dirs[i], x->module);
                if (streq(x->deciding_file, own))
                        return dirs[i];
        }
        return NULL;
}

/* After a change, where things stand now, so that a no-op is visible as such. */
static void print_changed(Ctl *c, FsgOp op, const FsgState *s) {
        if (!c->o.json) {
                const FsgEntry *x = &s->entries[0];

                /* TRANSLATORS: after a change: "MODULE: STATE (ORIGIN FILE)"; the second form
                 * for a hard deny. */
                printf(x->hard ? _("%s: %s, hard (%s%s%s)\n") : _("%s: %s (%s%s%s)\n"), x->module,
                       ctl_state_word(x), fsg_origin_to_string(x->origin), *x->deciding_file ? " " : "", ctl_esc(x->deciding_file));
                /* A deny (--force) of what is in use keeps nothing out that is in already, and
                 * an audit counts a loaded module against the profile. */
                if (op == FSG_OP_DENY && x->denied && (x->mounted || x->loaded))
                        printf(x->mounted ? _("%s is denied, but stays loaded until it is unmounted: an audit fails "
                                              "until then.\n") :
                                            _("%s is denied, but stays loaded until it is unloaded (modprobe -r): an "
                                              "audit fails until then.\n"), x->module);
                /* A plain deny leaves a hard deny as it is: say how to weaken it, if fsgate can. */
                if (op == FSG_OP_DENY && x->hard && !(c->flags & (FSG_FLAG_HARD | FSG_FLAG_SOFT)) &&
                    streq(x->install_file, x->deciding_file) && own_file_dir(x) != NULL)
                        /* TRANSLATORS: %1$s is "fsgatectl" (with its --root= option when
                         * offline), %2$s "--runtime " or nothing, %3$s a module name. */
                        printf(_("The hard deny stays; to make it soft: %1$s deny %2$s--soft %3$s\n"),
                               ctl_command(&c->o), streq(own_file_dir(x), "/run/modprobe.d") ? "--runtime " : "",
                               ctl_sh(x->module));
        }
}

/* The names changed before a failure, at the end of its message (text and --json alike). */
static void error_add_changed(FsgError *e, char **names, size_t n) {
        size_t l = strlen(e->message);

        if (n == 0)
                return;
        /* TRANSLATORS: after the message of a failure, before the names changed until then. */
        l += snprintf(e->message + l, l < sizeof(e->message) ? sizeof(e->message) - l : 0, " %s",
                      _("Changed before this failure:"));
        for (size_t i = 0; i < n && l < sizeof(e->message); i++)
                l += snprintf(e->message + l, sizeof(e->message) - l, " %s", names[i]);
}

/* Allow --load whose allow was written but whose load failed: *e says both, and the exit
 * status tells it from a load refused before anything was written (7). */
static int allow_written_load_failed(Ctl *c, const char *name, FsgState **after, FsgError *e) {
        FsgError d = {};
        char msg[sizeof(e->message)];
        const FsgEntry *x;

        if (c->be->describe(&c->o, name, after, &d) < 0 || (x = &(*after)->entries[0])->denied)
                return -1;
        snprintf(msg, sizeof(msg), "%s", e->message);
        /* TRANSLATORS: %1$s a module, %2$s the file that allows it, %3$s why the load failed. */
        fsg_error(e, FSG_ERR_LOAD_FAILED, _("%1$s is allowed (%2$s); loading it failed: %3$s"), x->module,
                  *x->deciding_file ? x->deciding_file : fsg_origin_to_string(x->origin), msg);
        return CTL_EXIT_CHANGED_LOAD_FAILED;
}

/* One name changed and described into *after: 0; CTL_EXIT_CHANGED_LOAD_FAILED when allowed
 * but not loaded; -1 when it failed (*e says why). */
static int change_one(Ctl *c, FsgOp op, const char *name, FsgState **after, FsgError *e) {
        _cleanup_(fsg_state_unrefp) FsgState *before = NULL;
        bool allow_load = op == FSG_OP_ALLOW && (c->flags & FSG_FLAG_LOAD_NOW);
        bool was_denied = false;

        /* Whether the allow writes anything is known from the state before it only. */
        if (allow_load) {
                if (c->be->describe(&c->o, name, &before, e) < 0)
                        return -1;
                was_denied = before->entries[0].denied;
        }
        if (c->be->change(&c->o, op, name, c->flags, e) >= 0)
                return c->be->describe(&c->o, name, after, e) >= 0 ? 0 : -1;
        if (allow_load && was_denied && e->code == FSG_ERR_LOAD_FAILED)
                return allow_written_load_failed(c, name, after, e);
        return -1;
}

/* Several names: each is first asked as a dry run (would it be done?), so that a name that
 * would fail changes nothing at all; then each is changed. A dry run asks polkit nothing: a
 * refusal by polkit (it is asked name by name), a held lock or a failed write can still stop it
 * midway, and then the error names what was changed. */
int ctl_change_names(Ctl *c, FsgOp op, char **names, size_t n) {
        FsgState **after = NULL;
        FsgError e = {};
        size_t changed = 0;
        int r = 0;

        for (size_t i = 0; n > 1 && i < n; i++)
                if (c->be->change(&c->o, op, names[i], c->flags | FSG_FLAG_DRY_RUN, &e) < 0) {
                        r = ctl_fail(&c->o, &e);
                        if (!c->o.json)
                                /* TRANSLATORS: after the error of one of several names. */
                                fprintf(stderr, _("Nothing was changed (%s would fail).\n"), ctl_esc(names[i]));
                        return r;
                }
        after = calloc(n, sizeof(FsgState *));
        if (!after) {
                fsg_error(&e, FSG_ERR_FAILED, "Out of memory");
                return ctl_fail(&c->o, &e);
        }
        for (size_t i = 0; i < n && r == 0; i++) {
                int k = change_one(c, op, names[i], &after[i], &e);

                if (k == 0) {
                        changed++;
                        continue;
                }
                if (k == CTL_EXIT_CHANGED_LOAD_FAILED)
                        changed++;
                error_add_changed(&e, names, n > 1 ? changed : 0);
                r = ctl_fail(&c->o, &e);
                if (k == CTL_EXIT_CHANGED_LOAD_FAILED)
                        r = k;
        }
        if (r == 0 && c->o.json)
                ctl_print_json_states(after, n, n == 1);
        for (size_t i = 0; i < n; i++) {
                if (r == 0) {
                        ctl_warn_unreadable(after[i]);
                        print_changed(c, op, after[i]);
                }
                fsg_state_unref(after[i]);
        }
        free(after);
        return r;
}

/* Why a grant was not needed, from the entry as it is now. */
static void print_not_granted(const FsgEntry *x) {
        if (x->builtin)
                printf(_("%s is built into the kernel: nothing to grant.\n"), x->module);
        else if (!x->denied)
                /* TRANSLATORS: %2$s the origin and file that allow the module. */
                printf(_("%1$s is allowed already (%2$s): nothing to grant.\n"), x->module,
                       *x->deciding_file ? ctl_esc(x->deciding_file) : fsg_origin_to_string(x->origin));
        else
                printf(_("%s is loaded already: nothing to grant (a grant never unloads what was there before it).\n"),
                       x->module);
}

/* allow --for: a grant each, one after the other (no dry run: a grant changes no file). */
int ctl_grant_names(Ctl *c, char **names, size_t n) {
        for (size_t i = 0; i < n; i++) {
                _cleanup_(fsg_state_unrefp) FsgState *after = NULL;
                _cleanup_free_ char *id = NULL;
                const FsgEntry *x;
                FsgError e = {};

                if (c->be->grant(&c->o, names[i], c->grant_usec / 1000000, c->grant_device, &id, &e) < 0 ||
                    c->be->describe(&c->o, names[i], &after, &e) < 0)
                        return ctl_fail(&c->o, &e);
                x = &after->entries[0];
                if (c->o.json) {
                        JsonWriter w = JSON_WRITER(stdout);

                        json_object_begin(&w);
                        json_field_string(&w, "module", x->module);
                        json_field_string(&w, "grant", id);
                        json_field_string(&w, "granted_until", *id && x->granted_until ? x->granted_until : "");
                        json_field_string(&w, "device", c->grant_device ?: "");
                        json_object_end(&w);
                        putchar('\n');
                } else if (!*id)
                        print_not_granted(x);
                else if (c->grant_device)
                        /* TRANSLATORS: %1$s a module, %2$s a time (UTC), %3$s a device node; the command is
                         * run as written. */
                        printf(_("%1$s: loaded until %2$s or until %3$s is removed, then unloaded once unused; to end "
                                 "it now: fsgatectl deny %1$s\n"),
                               ctl_sh(x->module), x->granted_until ? ctl_esc(x->granted_until) : "?", ctl_esc(c->grant_device));
                else
                        /* TRANSLATORS: %1$s a module, %2$s a time (UTC); the command is run as written. */
                        printf(_("%1$s: loaded until %2$s, then unloaded once unused; to end it now: fsgatectl deny %1$s\n"),
                               ctl_sh(x->module), x->granted_until ? ctl_esc(x->granted_until) : "?");
        }
        return 0;
}


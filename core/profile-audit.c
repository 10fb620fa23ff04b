/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <stdarg.h>

#include "profile-audit.h"
#include "strv.h"

/* Auditing a profile: whether the system complies, module by module, judged by fsgate's state
 * (what kmod would do). */

FsgAudit *fsg_audit_free(FsgAudit *a) {
        if (!a)
                return NULL;
        for (size_t i = 0; i < a->n; i++) {
                free(a->items[i].module);
                free(a->items[i].why);
        }
        free(a->items);
        free(a);
        return NULL;
}

static int audit_add(FsgAudit *a, const char *module, bool compliant, bool denied, bool hard, const char *fmt, ...)
        _printf_(6, 7);
static int audit_add(FsgAudit *a, const char *module, bool compliant, bool denied, bool hard, const char *fmt, ...) {
        FsgAuditItem *it = &a->items[a->n];
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&it->why, fmt, ap);
        va_end(ap);
        if (r < 0 || !(it->module = strdup(module)))
                return -ENOMEM;
        it->compliant = compliant;
        it->denied = denied;
        it->hard = hard;
        a->n++;
        a->n_compliant += compliant;
        return 0;
}

int fsg_profile_audit(const FsgContext *c, const FsgState *current, const char *name, bool hard, FsgAudit **ret,
                      FsgError *e) {
        assert(c);
        assert(name);
        assert(ret);

        _cleanup_(fsg_state_unrefp) FsgState *built = NULL;
        const FsgState *s = current;
        _cleanup_(fsg_profile_freep) FsgProfile *p = NULL;
        _cleanup_(fsg_audit_freep) FsgAudit *a = NULL;
        int r;

        /* The state says what kmod would do: the deny, and (hard) whether the install command
         * it would run for `modprobe MODULE` loads nothing. */
        r = fsg_context_require_kernel(c, e);
        if (r < 0)
                return r;
        r = fsg_profile_load_current(c, &s, &built, name, false, &p, e);
        if (r < 0)
                return r;
        a = calloc(1, sizeof(FsgAudit));
        if (!a || !(a->items = calloc(strv_length(p->modules) + 1, sizeof(FsgAuditItem))))
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        snprintf(a->profile, sizeof(a->profile), "%s", p->name);
        a->hard_required = hard || p->hard;

        for (char **m = p->modules; m && *m; m++) {
                const FsgEntry *x = fsg_state_find_module(s, *m);
                const char *src, *cmd;
                bool refused;

                if (!x) {
                        /* kmod finds nothing to load, whatever the files say. */
                        if (audit_add(a, *m, true, false, true, "not in kernel %s and named by no file: nothing to load",
                                      c->kver ?: "(none)") < 0)
                                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
                        continue;
                }
                src = x->deciding_file && *x->deciding_file ? x->deciding_file : fsg_origin_to_string(x->origin);

                cmd = x->install_command && *x->install_command ? x->install_command : NULL;
                refused = x->hard || !x->available;
                /* Built in: the kernel asks modprobe for nothing, so a soft profile (no
                 * autoload from a stick) holds; a hard one (the code must not be there) cannot. */
                if (x->builtin)
                        r = audit_add(a, x->module, !a->hard_required, false, false,
                                      "built into kernel %s: never autoloaded, and no file can deny it",
                                      c->kver ?: "");
                else if (!x->available)
                        r = audit_add(a, x->module, true, x->denied, true,
                                      "no module file in kernel %s: nothing to load", c->kver ?: "");
                else if (!x->denied)
                        r = audit_add(a, x->module, false, false, refused,
                                      "the kernel may load it on its own (%s)", src);
                else if (x->loaded || x->mounted)
                        r = audit_add(a, x->module, false, true, refused,
                                      "denied by %s, but %s now: a deny unloads nothing", src,
                                      x->mounted ? "mounted" : "loaded");
                else if (a->hard_required && !refused)
                        r = audit_add(a, x->module, false, true, false,
                                      "soft deny only (%s): `modprobe %s` by root still loads it%s%s", src, x->module,
                                      cmd ? "; install command: " : "", cmd ?: "");
                else if (refused)
                        r = audit_add(a, x->module, true, true, true, "denied by %s; explicit loads run `%s`", src, cmd);
                else
                        r = audit_add(a, x->module, true, true, false, "denied by %s", src);
                if (r < 0)
                        return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        }
        *ret = TAKE_PTR(a);
        return 0;
}

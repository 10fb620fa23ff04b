/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <libkmod.h>

#include "autoload.h"
#include "modtree.h"
#include "name.h"
#include "load.h"
#include "store.h"
#include "strv.h"
#include "usage.h"

int fsg_hard_denied(const char *module, const char *install_command, const char *install_file, FsgError *e) {
        assert(module);

        return fsg_error(e, FSG_ERR_HARD_DENIED,
                         "%s may not be loaded at all: for \"modprobe %s\" kmod runs \"%s\" from %s, which refuses "
                         "explicit loads (a hard deny). If fsgate wrote that file, allow it first (fsgatectl allow %s); "
                         "otherwise edit that file by hand",
                         module, module, install_command, *install_file ? install_file : "the configuration", module);
}

int fsg_hard_denied_dependency(const char *module, const FsgHardDep *d, FsgError *e) {
        assert(module);
        assert(d);

        return fsg_error(e, FSG_ERR_HARD_DENIED,
                         "%s may not be loaded at all: its dependency %s is denied hard by %s (for \"modprobe %s\" kmod "
                         "runs \"%s\", which refuses explicit loads), and loading %s would load %s too. If fsgate wrote "
                         "that file, allow %s first (fsgatectl allow %s); otherwise edit that file by hand",
                         module, d->module, *d->install_file ? d->install_file : "the configuration", d->module,
                         d->install_command, module, d->module, d->module, d->module);
}

int fsg_load_refused(const FsgEntry *x, FsgError *e) {
        assert(x);

        const FsgHardDep *d;

        if (x->builtin || x->loaded)
                return 0;
        if (x->hard)
                return fsg_hard_denied(x->module, x->install_command, x->install_file, e);
        d = fsg_entry_load_blocker(x);
        return d ? fsg_hard_denied_dependency(x->module, d, e) : 0;
}

static void collect_module(void *userdata, unsigned column, char *word) {
        char ***live = userdata;

        if (column == 0) {
                fsg_name_normalize(word);
                (void) strv_extend(live, word);
        }
}

int fsg_load_new_dependencies(const FsgContext *c, const char *module, char ***ret, FsgError *e) {
        assert(c);
        assert(module);
        assert(ret);

        _cleanup_(fsg_kmod_unrefp) struct kmod_ctx *k = NULL;
        _cleanup_(fsg_modtree_freep) FsgModTree *t = NULL;
        _cleanup_strv_free_ char **chain = NULL, **live = NULL, **deps = NULL;
        int r;

        *ret = NULL;
        r = fsg_kmod_new_plain(c, &k, e);
        if (r < 0 || !k)
                return r;
        r = fsg_kmod_load_chain(k, module, &chain);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Cannot tell which modules a load of %s inserts: %s", module,
                                 strerror(-r));
        r = fsg_modtree_load(c, &t, e);
        if (r < 0)
                return r;
        r = fsg_read_table(c, "/proc/modules", collect_module, &live);
        if (r < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Cannot read %s/proc/modules: %s", c->root, strerror(-r));
        for (char **m = chain; m && *m; m++) {
                if (fsg_modtree_is_builtin(t, *m) || strv_contains(live, *m))
                        continue;
                if (strv_extend(&deps, *m) < 0)
                        return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        }
        *ret = TAKE_PTR(deps);
        return 0;
}

int fsg_load_refuse_denied_dependencies(const FsgState *s, const char *module, char * const *deps, FsgError *e) {
        assert(s);
        assert(module);

        for (char * const *d = deps; d && *d; d++) {
                const FsgEntry *x = fsg_state_find_module(s, *d);

                if (x && x->denied && !x->loaded && !x->builtin)
                        return fsg_error(e, FSG_ERR_DEPENDENCY_DENIED,
                                         "%s needs %s, which is denied (%s): a grant loads nothing another deny keeps "
                                         "out; allow %s first, or grant it too", module, x->module,
                                         *x->deciding_file ? x->deciding_file : "the kernel command line",
                                         x->module);
        }
        return 0;
}

int fsg_load_possible(const FsgContext *c, const char *module, FsgError *e) {
        assert(c);
        assert(module);

        if (fsg_context_is_running_system(c))
                return 0;
        return fsg_error(e, FSG_ERR_LOAD_FAILED,
                         "%s was not loaded: fsgate works on the image %s, and never loads a module into the "
                         "running kernel from an image; load it on the system that boots the image",
                         module, c->root);
}

/* "Allow once": insert the module for this boot only. KMOD_PROBE_IGNORE_COMMAND skips
 * install lines (a hard deny's is checked first, the module's own and every dependency's the
 * insert takes along) and, since we load by name rather than by alias, the blacklist does not
 * apply either — the same as an admin typing "modprobe --ignore-install NAME". The context
 * reads no configuration, so that no install command can run from here. */
int fsg_load(const FsgContext *c, const char *name, char **ret_module, FsgError *e) {
        assert(c);
        assert(name);

        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        _cleanup_(fsg_kmod_unrefp) struct kmod_ctx *k = NULL;
        struct kmod_module *m = NULL;
        const FsgEntry *x;
        int r;

        /* Built now, with ROOT/proc/modules read now: the chain's hard denies and which of its
         * modules are live are those of this moment, right before the insert. */
        r = fsg_state_build_one(c, name, &s, e);
        if (r < 0)
                return r;
        x = &s->entries[0];
        if (ret_module && !(*ret_module = strdup(x->module)))
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        if (x->builtin || x->loaded)
                return 0;
        /* Loading past the install command is what "allow once" means for a soft deny; for a
         * hard one, the module's or a dependency's, it would undo exactly what its author asked
         * for. */
        r = fsg_load_refused(x, e);
        if (r < 0)
                return r;
        if (!x->available)
                return fsg_error(e, FSG_ERR_LOAD_FAILED, "No module file for %s in kernel %s", x->module,
                                 c->kver ?: "(none)");
        r = fsg_load_possible(c, x->module, e);
        if (r < 0)
                return r;

        r = fsg_kmod_new_plain(c, &k, e);
        if (r < 0)
                return r;
        r = k ? kmod_module_new_from_name(k, x->module, &m) : -ENOENT; /* no tree: never available */
        if (r >= 0)
                r = kmod_module_probe_insert_module(m, KMOD_PROBE_IGNORE_COMMAND, NULL, NULL, NULL, NULL);
        if (m)
                kmod_module_unref(m);
        if (r < 0)
                return fsg_error(e, FSG_ERR_LOAD_FAILED, "Failed to load %s: %s", x->module, strerror(-r));
        if (r > 0)
                return fsg_error(e, FSG_ERR_LOAD_FAILED, "Failed to load %s (kmod refused, code %d)", x->module, r);
        return 0;
}

int fsg_unload(const FsgContext *c, const char *module, FsgError *e) {
        assert(c);
        assert(module);

        _cleanup_(fsg_kmod_unrefp) struct kmod_ctx *k = NULL;
        struct kmod_module *m = NULL;
        int r;

        if (!fsg_context_is_running_system(c)) {
                fsg_error(e, FSG_ERR_FAILED, "%s is not unloaded: fsgate works on the image %s, and never unloads "
                          "a module of the running kernel for an image", module, c->root);
                return -EOPNOTSUPP;
        }
        r = fsg_kmod_new_plain(c, &k, e);
        if (r < 0)
                return r;
        if (!k)
                return fsg_error(e, FSG_ERR_NO_KERNEL, "%s is not unloaded: no module tree for kernel %s", module,
                                 c->kver ?: "(none)");
        r = kmod_module_new_from_name(k, module, &m);
        /* KMOD_REMOVE_NOWAIT is O_NONBLOCK: a module in use answers at once instead of the
         * kernel waiting for it to be free. */
        if (r >= 0)
                r = kmod_module_remove_module(m, KMOD_REMOVE_NOWAIT);
        if (m)
                kmod_module_unref(m);
        if (r == -ENOENT)
                return 0;
        if (r == -EBUSY || r == -EAGAIN || r == -EWOULDBLOCK) {
                fsg_error(e, FSG_ERR_IN_USE, "%s is in use", module);
                return -EBUSY;
        }
        if (r < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Failed to unload %s: %s", module, strerror(-r));
        return 0;
}

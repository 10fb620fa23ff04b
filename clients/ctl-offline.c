/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "ctl.h"
#include "strv.h"

/* Offline: the same core the daemon uses, on an image's files, with no bus and no polkit
 * (whoever can write the image decides). */

static int open_ctx(const CtlOptions *o, FsgContext **ret, FsgError *e) {
        return fsg_context_new(o->root, o->kernel_release, ret, e);
}

static int offline_list(const CtlOptions *o, FsgState **ret, FsgError *e) {
        _cleanup_(fsg_context_freep) FsgContext *c = NULL;
        if (open_ctx(o, &c, e) < 0)
                return -1;
        return fsg_state_build(c, NULL, ret, e);
}

static int offline_get(const CtlOptions *o, const char *name, FsgState **ret, FsgError *e) {
        _cleanup_(fsg_context_freep) FsgContext *c = NULL;
        _cleanup_(fsg_state_freep) FsgState *s = NULL;
        const FsgEntry *x;

        if (open_ctx(o, &c, e) < 0 || fsg_state_build(c, NULL, &s, e) < 0 ||
            fsg_state_resolve(c, s, name, &x, e) < 0)
                return -1;
        /* Keep just the one entry: move it to the front and shrink. */
        FsgEntry keep = *x, first = s->entries[0];
        s->entries[x - s->entries] = first;
        s->entries[0] = keep;
        for (size_t i = 1; i < s->n; i++) {
                free(s->entries[i].module);
                strv_free(s->entries[i].types);
                free(s->entries[i].source);
        }
        s->n = 1;
        *ret = TAKE_PTR(s);
        return 0;
}

static int offline_change(const CtlOptions *o, FsgOp op, const char *name, uint64_t flags, FsgError *e) {
        _cleanup_(fsg_context_freep) FsgContext *c = NULL;
        FsgPlan p;

        if (flags & FSG_FLAG_LOAD_NOW)
                return fsg_error(e, FSG_ERR_INVALID_ARGS, "--load needs the running system; it cannot be used with --root");
        if (open_ctx(o, &c, e) < 0 || fsg_plan(c, op, name, flags, &p, e) < 0)
                return -1;
        return fsg_apply(c, &p, e);
}

static int offline_load(const CtlOptions *o, const char *name, FsgError *e) {
        return fsg_error(e, FSG_ERR_INVALID_ARGS, "load needs the running system; it cannot be used with --root");
}

static int offline_exempt(const CtlOptions *o, char ***ret, FsgError *e) {
        _cleanup_(fsg_context_freep) FsgContext *c = NULL;
        _cleanup_strv_free_ char **failed = NULL;

        if (open_ctx(o, &c, e) < 0 || fsg_exempt_loaded(c, ret, &failed, e) < 0)
                return -1;
        for (char **f = failed; f && *f; f++)
                fprintf(stderr, "Not exempted: %s\n", *f);
        return 0;
}

const CtlBackend ctl_backend_offline = {
        .list = offline_list,
        .get = offline_get,
        .change = offline_change,
        .load = offline_load,
        .exempt = offline_exempt,
};

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE

#include "attribution.h"
#include "autoload.h"
#include "modtree.h"
#include "name.h"
#include "state.h"
#include "strv.h"
#include "usage.h"

/* One entry: its types from the tree, the kernel's answer for each (autoload.h), then the
 * file that decides it (attribution.h). */
static int entry_fill(FsgEntry *x, struct kmod_ctx *k, const FsgConfig *cfg, const FsgModTree *t) {
        _cleanup_strv_free_ char **denied_types = NULL;
        int r;

        for (size_t i = 0; i < t->n; i++)
                if (streq(t->modules[i], x->module) && strv_extend(&x->types, t->types[i]) < 0)
                        return -ENOMEM;
        strv_sort(x->types);

        x->builtin = fsg_modtree_is_builtin(t, x->module);
        x->available = !x->builtin && fsg_kmod_module_available(k, x->module);

        x->source = strdup("");
        if (!x->source)
                return -ENOMEM;
        x->described = true;
        r = fsg_config_mentions(cfg, x->module, x->types, &x->mentions);
        if (r < 0)
                return r;
        r = fsg_kmod_install_command(k, x->module, &x->install_command);
        if (r < 0)
                return r;
        x->install_source = strdup("");
        if (!x->install_source)
                return -ENOMEM;
        if (x->install_command) {
                const size_t *idx;
                size_t n = fsg_config_rules_named(cfg, x->module, &idx);

                /* kmod runs the first install line it read for the name. */
                for (size_t i = 0; i < n; i++)
                        if (cfg->rules[idx[i]].kind == FSG_RULE_INSTALL) {
                                free(x->install_source);
                                x->install_source = strdup(cfg->files[cfg->rules[idx[i]].file].path);
                                if (!x->install_source)
                                        return -ENOMEM;
                                break;
                        }
                x->hard = !fsg_install_command_loads(x->install_command, x->module);
        } else if (!(x->install_command = strdup("")))
                return -ENOMEM;
        x->explicit_load = x->builtin || (x->available && !x->hard);

        if (x->builtin)
                return 0; /* the kernel never asks modprobe for what it already has */

        if (!x->types) {
                /* Named by a rule but absent from this kernel: judge the rules alone. */
                x->denied = fsg_config_blacklists(cfg, x->module) || fsg_config_names_module(cfg, x->module);
        } else {
                for (char **ty = x->types; *ty; ty++)
                        if (!fsg_autoload_loads(k, cfg, t, *ty, x->module) && strv_extend(&denied_types, *ty) < 0)
                                return -ENOMEM;
                x->denied = denied_types != NULL;
        }
        /* Reported when every type whose request is blocked runs the hook. */
        x->blocks_reported = denied_types != NULL;
        for (char **ty = denied_types; ty && *ty; ty++)
                x->blocks_reported = x->blocks_reported && fsg_type_block_is_reported_in(k, cfg, *ty);
        return fsg_entry_attribute(x, cfg, denied_types);
}

static int cmp_type_refs(const void *a, const void *b) {
        return strcmp(((const FsgTypeRef *) a)->type, ((const FsgTypeRef *) b)->type);
}

static int index_types(FsgState *s) {
        size_t n = 0;

        for (size_t i = 0; i < s->n; i++)
                n += strv_length(s->entries[i].types);
        if (n == 0)
                return 0;
        s->by_type = calloc(n, sizeof(FsgTypeRef));
        if (!s->by_type)
                return -ENOMEM;
        for (size_t i = 0; i < s->n; i++)
                for (char **ty = s->entries[i].types; ty && *ty; ty++)
                        s->by_type[s->n_types++] = (FsgTypeRef) { .type = *ty, .entry = &s->entries[i] };
        qsort(s->by_type, s->n_types, sizeof(FsgTypeRef), cmp_type_refs);
        return 0;
}

static int cmp_module_key(const void *key, const void *e) {
        return strcmp(key, ((const FsgEntry *) e)->module);
}

static int cmp_type_key(const void *key, const void *t) {
        return strcmp(key, ((const FsgTypeRef *) t)->type);
}

FsgEntry *fsg_state_find_module(const FsgState *s, const char *normalized) {
        return s->n > 0 ? bsearch(normalized, s->entries, s->n, sizeof(FsgEntry), cmp_module_key) : NULL;
}

FsgEntry *fsg_state_find_type(const FsgState *s, const char *type) {
        FsgTypeRef *t = s->n_types > 0 ? bsearch(type, s->by_type, s->n_types, sizeof(FsgTypeRef), cmp_type_key) : NULL;
        return t ? t->entry : NULL;
}

static int cmp_entries(const void *a, const void *b) {
        return strcmp(((const FsgEntry *) a)->module, ((const FsgEntry *) b)->module);
}

int fsg_state_build(const FsgContext *c, const FsgOverride *ov, FsgState **ret, FsgError *e) {
        _cleanup_(fsg_config_freep) FsgConfig *cfg = NULL;
        _cleanup_(fsg_modtree_freep) FsgModTree *t = NULL;
        _cleanup_(fsg_kmod_unrefp) struct kmod_ctx *k = NULL;
        _cleanup_strv_free_ char **modules = NULL;
        _cleanup_(fsg_state_freep) FsgState *s = NULL;
        int r;

        r = fsg_config_load(c, ov, &cfg, e);
        if (r < 0)
                return r;
        r = fsg_modtree_load(c, &t, e);
        if (r < 0)
                return r;
        r = fsg_kmod_new(c, cfg, &k, e);
        if (r < 0)
                return r;

        for (size_t i = 0; i < t->n; i++)
                if (strv_extend(&modules, t->modules[i]) < 0)
                        goto oom;
        for (char **m = cfg->named_modules; m && *m; m++)
                if (fsg_kmod_may_be_filesystem(k, t, *m) && strv_extend(&modules, *m) < 0)
                        goto oom;
        strv_sort_unique(modules);

        s = calloc(1, sizeof(FsgState));
        if (!s)
                goto oom;
        s->entries = calloc(strv_length(modules) + 1, sizeof(FsgEntry));
        if (!s->entries)
                goto oom;
        for (char **m = modules; m && *m; m++) {
                FsgEntry *x = &s->entries[s->n++];
                x->module = strdup(*m);
                if (!x->module)
                        goto oom;
                r = entry_fill(x, k, cfg, t);
                if (r < 0)
                        goto oom;
        }
        qsort(s->entries, s->n, sizeof(FsgEntry), cmp_entries);
        if (index_types(s) < 0)
                goto oom;
        r = fsg_state_update_loaded(c, s);
        if (r < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Failed to read %s/proc/modules: %s", c->root, fsg_strerror(-r));
        r = fsg_state_update_mounted(c, s);
        if (r < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Failed to read %s/proc/mounts: %s", c->root, fsg_strerror(-r));
        s->unreadable = TAKE_PTR(cfg->unreadable);
        *ret = TAKE_PTR(s);
        return 0;
oom:
        return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
}

int fsg_state_current_or_build(const FsgContext *c, const FsgState **current, FsgState **built, FsgError *e) {
        int r;

        if (*current)
                return 0;
        r = fsg_state_build(c, NULL, built, e);
        if (r >= 0)
                *current = *built;
        return r;
}

int fsg_state_build_one(const FsgContext *c, const char *name, FsgState **ret, FsgError *e) {
        _cleanup_(fsg_state_freep) FsgState *all = NULL, *one = NULL;
        const FsgEntry *x;
        FsgEntry *from;
        int r;

        r = fsg_state_build(c, NULL, &all, e);
        if (r < 0)
                return r;
        r = fsg_state_resolve(c, all, name, &x, e);
        if (r < 0)
                return r;
        one = calloc(1, sizeof(FsgState));
        if (!one || !(one->entries = calloc(1, sizeof(FsgEntry))))
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        /* Moved, not copied: the full state is freed without it. */
        from = &all->entries[x - all->entries];
        one->entries[0] = *from;
        *from = (FsgEntry) {};
        one->n = 1;
        /* Said of all the entries: kept, since it may be this one's module. */
        one->loaded_transient = all->loaded_transient;
        one->unreadable = TAKE_PTR(all->unreadable);
        if (index_types(one) < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        *ret = TAKE_PTR(one);
        return 0;
}

void fsg_entry_done(FsgEntry *x) {
        free(x->module);
        strv_free(x->types);
        free(x->source);
        free(x->install_command);
        free(x->install_source);
        strv_free(x->mentions);
        *x = (FsgEntry) {};
}

FsgState *fsg_state_free(FsgState *s) {
        if (!s)
                return NULL;
        for (size_t i = 0; i < s->n; i++)
                fsg_entry_done(&s->entries[i]);
        free(s->entries);
        free(s->by_type);
        strv_free(s->unreadable);
        free(s);
        return NULL;
}

const FsgEntry *fsg_state_find(const FsgState *s, const char *name) {
        char norm[FSG_NAME_MAX + 1];
        size_t l = strlen(name);
        const FsgEntry *x;

        if (l > FSG_NAME_MAX)
                return NULL; /* no entry has a longer name: modules and types are valid names */
        memcpy(norm, name, l + 1);
        fsg_name_normalize(norm);
        x = fsg_state_find_module(s, norm);
        return x ?: fsg_state_find_type(s, name);
}

int fsg_state_resolve(const FsgContext *c, const FsgState *s, const char *name, const FsgEntry **ret, FsgError *e) {
        const FsgEntry *x;

        if (!fsg_name_is_valid(name))
                return fsg_error(e, FSG_ERR_INVALID_NAME,
                                 "Not a valid module or filesystem type name (1-%d characters of A-Z a-z 0-9 _ -)",
                                 FSG_NAME_MAX);
        x = fsg_state_find(s, name);
        if (x) {
                *ret = x;
                return 0;
        }
        if (fsg_kmod_is_module(c, name))
                return fsg_error(e, FSG_ERR_NOT_A_FILESYSTEM,
                                 "%s is a kernel module but not a filesystem; fsgate manages filesystem modules only", name);
        return fsg_error(e, FSG_ERR_NO_SUCH_FILESYSTEM,
                         "No filesystem module or type named %s for kernel %s", name, c->kver ?: "(none)");
}

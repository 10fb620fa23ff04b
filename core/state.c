/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <libkmod.h>

#include "conffile.h"
#include "modtree.h"
#include "name.h"
#include "state.h"
#include "strv.h"

static void kmod_unrefp(struct kmod_ctx **k) {
        if (*k)
                kmod_unref(*k);
}
static void kmod_list_unrefp(struct kmod_list **l) {
        if (*l)
                kmod_module_unref_list(*l);
}
static void kmod_module_unrefp(struct kmod_module **m) {
        if (*m)
                kmod_module_unref(*m);
}

static void log_silent(void *data, int priority, const char *file, int line, const char *fn,
                       const char *format, va_list args) {
}

/* A fresh kmod context per build: kmod reads its config once per context, and a new one is
 * the only way to see files changed behind our back. We hand it our own list of effective
 * files so that "what if" questions use exactly the same reader. */
static int kmod_open(const FsgContext *c, const FsgConfig *cfg, struct kmod_ctx **ret) {
        _cleanup_strv_free_ char **paths = fsg_config_kmod_paths(cfg);
        static const char * const none[] = { "/dev/null/none", NULL };
        _cleanup_free_ char *nodir = NULL;
        struct kmod_ctx *k;

        if (!paths)
                return -ENOMEM;
        if (!c->moddir && !(nodir = fsg_path(c, "/usr/lib/modules/none")))
                return -ENOMEM;
        /* An empty list would make kmod fall back to the host's default directories. */
        k = kmod_new(c->moddir ?: nodir, paths[0] ? (const char * const *) paths : none);
        if (!k)
                return -ENOMEM;
        kmod_set_log_fn(k, log_silent, NULL);
        *ret = k;
        return 0;
}

/* Whether inserting m (as kmod's probe list does it) puts target into the kernel: first
 * m's dependencies, each with its soft dependencies, then m between its own pre and post
 * soft dependencies. Dependencies are not filtered by the blacklist. A module with an
 * install command runs the command instead — unless it has soft dependencies: kmod 30 then
 * ignores its install command (so `install btrfs /bin/false` does not stop btrfs, which
 * has a softdep in Debian's modules.softdep). */
static bool probe_inserts(struct kmod_module *m, const char *target, bool ignorecmd, const FsgModTree *t,
                          char ***visited, unsigned depth);

static bool module_inserted(struct kmod_module *m, bool ignorecmd, const FsgModTree *t) {
        const char *name = kmod_module_get_name(m);
        if (!ignorecmd && kmod_module_get_install_commands(m))
                return false;
        return strv_contains(t->builtin, name) || kmod_module_get_path(m);
}

static bool softdeps_insert(struct kmod_list *l, const char *target, const FsgModTree *t, char ***visited,
                            unsigned depth) {
        struct kmod_list *i;
        kmod_list_foreach(i, l) {
                _cleanup_(kmod_module_unrefp) struct kmod_module *d = kmod_module_get_module(i);
                if (probe_inserts(d, target, false, t, visited, depth + 1))
                        return true;
        }
        return false;
}

static bool with_softdeps_inserts(struct kmod_module *m, const char *target, bool ignorecmd, const FsgModTree *t,
                                  char ***visited, unsigned depth) {
        _cleanup_(kmod_list_unrefp) struct kmod_list *pre = NULL, *post = NULL;
        bool found;

        (void) kmod_module_get_softdeps(m, &pre, &post);
        if (softdeps_insert(pre, target, t, visited, depth))
                return true;
        found = streq(kmod_module_get_name(m), target) && module_inserted(m, ignorecmd || pre || post, t);
        return found || softdeps_insert(post, target, t, visited, depth);
}

static bool probe_inserts(struct kmod_module *m, const char *target, bool ignorecmd, const FsgModTree *t,
                          char ***visited, unsigned depth) {
        _cleanup_(kmod_list_unrefp) struct kmod_list *deps = NULL;
        struct kmod_list *l;

        if (depth > 32 || strv_contains(*visited, kmod_module_get_name(m)) ||
            strv_extend(visited, kmod_module_get_name(m)) < 0)
                return false;
        deps = kmod_module_get_dependencies(m);
        kmod_list_foreach(l, deps) {
                _cleanup_(kmod_module_unrefp) struct kmod_module *d = kmod_module_get_module(l);
                if (with_softdeps_inserts(d, target, false, t, visited, depth))
                        return true;
        }
        return with_softdeps_inserts(m, target, ignorecmd, t, visited, depth);
}

/* Would the kernel's request for fs-TYPE end with MODULE in the kernel? This mirrors
 * modprobe: alias lookup (config aliases first), the blacklist applied to the modules the
 * alias names (not to their dependencies), install commands run instead of loading. */
static bool autoload_loads(struct kmod_ctx *k, const FsgConfig *cfg, const FsgModTree *t,
                           const char *type, const char *module) {
        _cleanup_(kmod_list_unrefp) struct kmod_list *list = NULL;
        _cleanup_free_ char *alias = NULL;
        struct kmod_list *l;

        if (asprintf(&alias, "fs-%s", type) < 0)
                return false;
        if (kmod_module_new_from_lookup(k, alias, &list) < 0 || !list)
                return false;
        kmod_list_foreach(l, list) {
                _cleanup_(kmod_module_unrefp) struct kmod_module *m = kmod_module_get_module(l);
                _cleanup_strv_free_ char **visited = NULL;

                if (fsg_config_blacklists(cfg, kmod_module_get_name(m)))
                        continue;
                if (probe_inserts(m, module, false, t, &visited, 0))
                        return true;
        }
        return false;
}

static int entry_set_source(FsgEntry *x, const FsgConfig *cfg, size_t file) {
        x->origin = cfg->files[file].origin;
        free(x->source);
        x->source = strdup(cfg->files[file].path);
        return x->source ? 0 : -ENOMEM;
}

/* The file an admin has to look at: for a blacklist, the highest-precedence file naming the
 * module (blacklists add up, so any of them denies); otherwise the rule that routes the
 * kernel's request elsewhere. */
static int attribute_denied(FsgEntry *x, const FsgConfig *cfg, char * const *denied_types) {
        ssize_t best = -1;

        for (size_t i = 0; i < cfg->n_rules; i++) {
                const FsgRule *r = &cfg->rules[i];
                if (r->kind == FSG_RULE_BLACKLIST && streq(r->name, x->module) &&
                    (best < 0 || cfg->files[r->file].origin > cfg->files[best].origin))
                        best = r->file;
        }
        if (best >= 0)
                return entry_set_source(x, cfg, best);
        if (strv_contains(cfg->cmdline_blacklist, x->module)) {
                x->origin = FSG_ORIGIN_CMDLINE;
                return 0;
        }
        for (size_t i = 0; i < cfg->n_rules; i++) {
                const FsgRule *r = &cfg->rules[i];
                if (r->kind == FSG_RULE_INSTALL && streq(r->name, x->module))
                        return entry_set_source(x, cfg, r->file);
        }
        for (char * const *t = denied_types; t && *t; t++) {
                _cleanup_free_ char *alias = NULL;
                if (asprintf(&alias, "fs-%s", *t) < 0)
                        return -ENOMEM;
                fsg_name_normalize(alias);
                for (size_t i = 0; i < cfg->n_rules; i++) {
                        const FsgRule *r = &cfg->rules[i];
                        if ((r->kind == FSG_RULE_ALIAS || r->kind == FSG_RULE_INSTALL) && streq(r->name, alias))
                                return entry_set_source(x, cfg, r->file);
                }
        }
        return 0; /* nothing configured: the module is just not there */
}

static bool rules_name(const FsgRule *rules, size_t n, const char *module) {
        for (size_t i = 0; i < n; i++)
                if ((rules[i].kind == FSG_RULE_BLACKLIST || rules[i].kind == FSG_RULE_INSTALL) &&
                    streq(rules[i].name, module))
                        return true;
        return false;
}

/* An allowed module is "decided" by a mask only if the mask hides a file that would deny it. */
static int attribute_allowed(FsgEntry *x, const FsgConfig *cfg) {
        _cleanup_free_ char *own = NULL;

        if (asprintf(&own, FSG_FILE_PREFIX "%s" FSG_FILE_SUFFIX, x->module) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < cfg->n_files; i++) {
                const FsgConfFile *f = &cfg->files[i];
                FsgRule *rules = NULL;
                size_t n = 0;
                bool hit;

                if (!f->mask)
                        continue;
                if (streq(f->name, own))
                        return entry_set_source(x, cfg, i);
                if (!f->shadowed || fsg_conf_parse_file(f->shadowed, 0, &rules, &n) < 0)
                        continue;
                hit = rules_name(rules, n, x->module);
                fsg_rules_free(rules, n);
                if (hit)
                        return entry_set_source(x, cfg, i);
        }
        return 0;
}

static int entry_fill(FsgEntry *x, struct kmod_ctx *k, const FsgConfig *cfg, const FsgModTree *t) {
        _cleanup_strv_free_ char **denied_types = NULL;
        _cleanup_(kmod_module_unrefp) struct kmod_module *m = NULL;
        const char *path;

        for (size_t i = 0; i < t->n; i++)
                if (streq(t->modules[i], x->module) && strv_extend(&x->types, t->types[i]) < 0)
                        return -ENOMEM;
        strv_sort(x->types);

        x->builtin = strv_contains(t->builtin, x->module);
        if (!x->builtin && kmod_module_new_from_name(k, x->module, &m) >= 0 &&
            (path = kmod_module_get_path(m)))
                x->available = access(path, F_OK) == 0;

        x->source = strdup("");
        if (!x->source)
                return -ENOMEM;

        if (x->builtin)
                return 0; /* the kernel never asks modprobe for what it already has */

        if (!x->types) {
                /* Named by a rule but absent from this kernel: judge the rules alone. */
                x->denied = fsg_config_blacklists(cfg, x->module) || rules_name(cfg->rules, cfg->n_rules, x->module);
        } else {
                for (char **ty = x->types; *ty; ty++)
                        if (!autoload_loads(k, cfg, t, *ty, x->module) && strv_extend(&denied_types, *ty) < 0)
                                return -ENOMEM;
                x->denied = denied_types != NULL;
        }
        return x->denied ? attribute_denied(x, cfg, denied_types) : attribute_allowed(x, cfg);
}

static int cmp_entries(const void *a, const void *b) {
        return strcmp(((const FsgEntry *) a)->module, ((const FsgEntry *) b)->module);
}

/* Named by a 60-blacklist_fs-M.conf file but not found through an fs- alias: listed unless
 * the tree knows M as a module outside fs/ (a file named after usb_storage does not make it
 * a filesystem). Absent (exofs), built in (pstore) and alias-less (orangefs: its type pvfs2
 * has none) filesystem modules are listed. */
static bool named_module_wanted(struct kmod_ctx *k, const FsgModTree *t, const char *m) {
        _cleanup_(kmod_module_unrefp) struct kmod_module *mod = NULL;
        const char *path;

        if (strv_contains(t->builtin, m))
                return strv_contains(t->builtin_fs, m);
        if (kmod_module_new_from_name(k, m, &mod) < 0)
                return true;
        path = kmod_module_get_path(mod);
        return !path || strstr(path, "/kernel/fs/");
}

int fsg_state_build(const FsgContext *c, const FsgOverride *ov, FsgState **ret, FsgError *e) {
        _cleanup_(fsg_config_freep) FsgConfig *cfg = NULL;
        _cleanup_(fsg_modtree_freep) FsgModTree *t = NULL;
        _cleanup_(kmod_unrefp) struct kmod_ctx *k = NULL;
        _cleanup_strv_free_ char **modules = NULL;
        _cleanup_(fsg_state_freep) FsgState *s = NULL;
        int r;

        if (fsg_config_load(c, ov, &cfg, e) < 0 || fsg_modtree_load(c, &t, e) < 0)
                return -1;
        if (kmod_open(c, cfg, &k) < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Failed to set up libkmod");

        for (size_t i = 0; i < t->n; i++)
                if (strv_extend_unique(&modules, t->modules[i]) < 0)
                        goto oom;
        for (char **m = cfg->named_modules; m && *m; m++)
                if (named_module_wanted(k, t, *m) && strv_extend_unique(&modules, *m) < 0)
                        goto oom;

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
        if (fsg_state_update_usage(c, s) < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Failed to read %s/proc", c->root);
        *ret = TAKE_PTR(s);
        return 0;
oom:
        return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
}

/* Loaded and mounted change without any file event we could watch, so a cached state
 * gets them read again for every answer. */
int fsg_state_update_usage(const FsgContext *c, FsgState *s) {
        _cleanup_strv_free_ char **loaded = NULL, **mounted = NULL;
        int r;

        r = fsg_read_loaded_modules(c, &loaded);
        if (r >= 0)
                r = fsg_read_mounted_types(c, &mounted);
        if (r < 0)
                return r;
        for (size_t i = 0; i < s->n; i++) {
                FsgEntry *x = &s->entries[i];
                x->loaded = strv_contains(loaded, x->module);
                x->mounted = false;
                for (char **ty = x->types; ty && *ty; ty++)
                        x->mounted = x->mounted || strv_contains(mounted, *ty);
        }
        return 0;
}

bool fsg_type_block_is_reported(const FsgContext *c, const char *type) {
        _cleanup_(fsg_config_freep) FsgConfig *cfg = NULL;
        _cleanup_(kmod_unrefp) struct kmod_ctx *k = NULL;
        _cleanup_(kmod_list_unrefp) struct kmod_list *list = NULL;
        _cleanup_free_ char *alias = NULL, *hook = NULL;
        struct kmod_list *l;

        if (fsg_config_load(c, NULL, &cfg, NULL) < 0 || kmod_open(c, cfg, &k) < 0)
                return false;
        if (asprintf(&alias, "fs-%s", type) < 0 || asprintf(&hook, FSG_BLOCKED_PREFIX "%s", type) < 0)
                return false;
        fsg_name_normalize(hook);
        if (kmod_module_new_from_lookup(k, alias, &list) < 0)
                return false;
        kmod_list_foreach(l, list) {
                _cleanup_(kmod_module_unrefp) struct kmod_module *m = kmod_module_get_module(l);
                if (streq(kmod_module_get_name(m), hook) && !fsg_config_blacklists(cfg, hook) &&
                    kmod_module_get_install_commands(m))
                        return true;
        }
        return false;
}

FsgState *fsg_state_free(FsgState *s) {
        if (!s)
                return NULL;
        for (size_t i = 0; i < s->n; i++) {
                free(s->entries[i].module);
                strv_free(s->entries[i].types);
                free(s->entries[i].source);
        }
        free(s->entries);
        free(s);
        return NULL;
}

const FsgEntry *fsg_state_find(const FsgState *s, const char *name) {
        _cleanup_free_ char *norm = strdup(name);

        if (!norm)
                return NULL;
        fsg_name_normalize(norm);
        for (size_t i = 0; i < s->n; i++)
                if (streq(s->entries[i].module, norm))
                        return &s->entries[i];
        for (size_t i = 0; i < s->n; i++)
                if (strv_contains(s->entries[i].types, name))
                        return &s->entries[i];
        return NULL;
}

int fsg_state_resolve(const FsgContext *c, const FsgState *s, const char *name, const FsgEntry **ret, FsgError *e) {
        _cleanup_(kmod_unrefp) struct kmod_ctx *k = NULL;
        _cleanup_(kmod_module_unrefp) struct kmod_module *m = NULL;
        static const char * const none[] = { "/dev/null/none", NULL };
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
        if (c->moddir && (k = kmod_new(c->moddir, none))) {
                kmod_set_log_fn(k, log_silent, NULL);
                if (kmod_module_new_from_name(k, name, &m) >= 0 && kmod_module_get_path(m))
                        return fsg_error(e, FSG_ERR_NOT_A_FILESYSTEM,
                                         "%s is a kernel module but not a filesystem; fsgate manages filesystem modules only", name);
        }
        return fsg_error(e, FSG_ERR_NO_SUCH_FILESYSTEM,
                         "No filesystem module or type named %s for kernel %s", name, c->kver ?: "(none)");
}

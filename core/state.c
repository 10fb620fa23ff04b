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
        /* kmod inserts each file into its list sorted by name, walking the list from the
         * start to the first name not smaller: given in descending order every insertion stops
         * at the first element, and reading n files costs O(n), not O(n²) (a third of a second
         * at 10 000 files). The names are distinct, so the order changes nothing else. */
        for (size_t i = 0, n = strv_length(paths); i < n / 2; i++) {
                char *tmp = paths[i];
                paths[i] = paths[n - 1 - i];
                paths[n - 1 - i] = tmp;
        }
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
        return fsg_modtree_is_builtin(t, name) || kmod_module_get_path(m);
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
        const size_t *idx;
        size_t n = fsg_config_rules_named(cfg, x->module, &idx);
        ssize_t best = -1;

        /* The rules naming the module, in read order: as a walk over all of them would see them. */
        for (size_t i = 0; i < n; i++) {
                const FsgRule *r = &cfg->rules[idx[i]];
                if (r->kind == FSG_RULE_BLACKLIST &&
                    (best < 0 || cfg->files[r->file].origin > cfg->files[best].origin))
                        best = r->file;
        }
        if (best >= 0)
                return entry_set_source(x, cfg, best);
        if (strv_contains(cfg->cmdline_blacklist, x->module)) {
                x->origin = FSG_ORIGIN_CMDLINE;
                return 0;
        }
        for (size_t i = 0; i < n; i++) {
                const FsgRule *r = &cfg->rules[idx[i]];
                if (r->kind == FSG_RULE_INSTALL)
                        return entry_set_source(x, cfg, r->file);
        }
        for (char * const *t = denied_types; t && *t; t++) {
                _cleanup_free_ char *alias = NULL;
                if (asprintf(&alias, "fs-%s", *t) < 0)
                        return -ENOMEM;
                fsg_name_normalize(alias);
                n = fsg_config_rules_named(cfg, alias, &idx);
                for (size_t i = 0; i < n; i++) {
                        const FsgRule *r = &cfg->rules[idx[i]];
                        if (r->kind == FSG_RULE_ALIAS || r->kind == FSG_RULE_INSTALL)
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

static bool config_rules_name(const FsgConfig *cfg, const char *module) {
        const size_t *idx;
        size_t n = fsg_config_rules_named(cfg, module, &idx);

        for (size_t i = 0; i < n; i++)
                if (cfg->rules[idx[i]].kind == FSG_RULE_BLACKLIST || cfg->rules[idx[i]].kind == FSG_RULE_INSTALL)
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

        x->builtin = fsg_modtree_is_builtin(t, x->module);
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
                x->denied = fsg_config_blacklists(cfg, x->module) || config_rules_name(cfg, x->module);
        } else {
                for (char **ty = x->types; *ty; ty++)
                        if (!autoload_loads(k, cfg, t, *ty, x->module) && strv_extend(&denied_types, *ty) < 0)
                                return -ENOMEM;
                x->denied = denied_types != NULL;
        }
        return x->denied ? attribute_denied(x, cfg, denied_types) : attribute_allowed(x, cfg);
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

static FsgEntry *find_module(const FsgState *s, const char *normalized) {
        return s->n > 0 ? bsearch(normalized, s->entries, s->n, sizeof(FsgEntry), cmp_module_key) : NULL;
}

static FsgEntry *find_type(const FsgState *s, const char *type) {
        FsgTypeRef *t = s->n_types > 0 ? bsearch(type, s->by_type, s->n_types, sizeof(FsgTypeRef), cmp_type_key) : NULL;
        return t ? t->entry : NULL;
}

typedef struct LoadedScan {
        FsgState *s;
        FsgEntry *line;         /* the entry the current line of /proc/modules names, if any */
        bool transient;
} LoadedScan;

/* /proc/modules: "NAME SIZE REFS DEPS STATE ADDRESS"; STATE is Live, Loading or Unloading. */
static void loaded_word(void *userdata, unsigned column, char *word) {
        LoadedScan *ls = userdata;

        if (column == 0) {
                fsg_name_normalize(word);
                ls->line = find_module(ls->s, word);
                if (ls->line)
                        ls->line->loaded = true;
        } else if (column == 4 && ls->line && !streq(word, "Live"))
                ls->transient = true;
}

int fsg_state_update_loaded(const FsgContext *c, FsgState *s) {
        LoadedScan ls = { .s = s };
        int r;

        for (size_t i = 0; i < s->n; i++)
                s->entries[i].loaded = false;
        r = fsg_read_table(c, "/proc/modules", loaded_word, &ls);
        if (r < 0)
                return r;
        s->loaded_transient = ls.transient;
        return ls.transient;
}

/* /proc/mounts: "SOURCE TARGET TYPE OPTIONS 0 0". */
static void mounted_word(void *userdata, unsigned column, char *word) {
        FsgEntry *x;

        if (column == 2 && (x = find_type(userdata, word)))
                x->mounted = true;
}

int fsg_state_update_mounted(const FsgContext *c, FsgState *s) {
        for (size_t i = 0; i < s->n; i++)
                s->entries[i].mounted = false;
        return fsg_read_table(c, "/proc/mounts", mounted_word, s);
}

int fsg_state_update_usage(const FsgContext *c, FsgState *s) {
        int r = fsg_state_update_loaded(c, s), q;

        if (r < 0)
                return r;
        q = fsg_state_update_mounted(c, s);
        return q < 0 ? q : r;
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

        if (fsg_modtree_is_builtin(t, m))
                return fsg_modtree_is_builtin_fs(t, m);
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
                if (strv_extend(&modules, t->modules[i]) < 0)
                        goto oom;
        for (char **m = cfg->named_modules; m && *m; m++)
                if (named_module_wanted(k, t, *m) && strv_extend(&modules, *m) < 0)
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
        x = find_module(s, norm);
        return x ?: find_type(s, name);
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

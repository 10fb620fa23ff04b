/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <assert.h>

#include "alloc-util.h"
#include "attribution.h"
#include "autoload.h"
#include "modtree.h"
#include "name.h"
#include "grant.h"
#include "state.h"
#include "strv.h"
#include "usage.h"
#include "utf8.h"

/* The file of the first install line kmod read for module (it runs that one), "" if none. */
static char *install_file_of(const FsgConfig *cfg, const char *module) {
        const size_t *idx;
        size_t n = fsg_config_rules_named(cfg, module, &idx);

        for (size_t i = 0; i < n; i++)
                if (cfg->rules[idx[i]].kind == FSG_RULE_INSTALL)
                        return strdup(cfg->files[cfg->rules[idx[i]].file].path);
        return strdup("");
}

static int hard_dep_add(FsgEntry *x, const char *module, char *cmd, const FsgConfig *cfg) {
        FsgHardDep *deps = reallocarray(x->hard_deps, x->n_hard_deps + 1, sizeof(FsgHardDep));
        FsgHardDep *d;

        if (!deps) {
                free(cmd);
                return -ENOMEM;
        }
        x->hard_deps = deps;
        d = &deps[x->n_hard_deps++];
        *d = (FsgHardDep) { .module = strdup(module), .install_command = cmd, .install_file = install_file_of(cfg, module) };
        return d->module && d->install_file ? 0 : -ENOMEM;
}

/* The modules a load of x inserts first, judged as "modprobe DEPENDENCY" would be: kmod loads
 * dependencies by name and runs their install commands, so a hard deny of one refuses root's
 * "modprobe x". The chain is walked over both contexts: plain is the one fsg_load() inserts
 * with (the tree's modules.softdep only), k the configured one modprobe reads (softdep lines
 * of the configuration too, which may replace the tree's). */
static int hard_deps_fill(FsgEntry *x, struct kmod_ctx *k, struct kmod_ctx *plain, const FsgModTree *t,
                          const FsgConfig *cfg) {
        _cleanup_strv_free_ char **chain = NULL;
        int r;

        r = fsg_kmod_load_chain(k, x->module, &chain);
        if (r >= 0 && plain)
                r = fsg_kmod_load_chain(plain, x->module, &chain);
        if (r == -ENOENT)
                return 0; /* kmod knows no such module: nothing is loaded */
        if (r == -ELOOP) {
                /* Soft dependencies nested deeper than any tree has them: refused, since what
                 * the rest of the chain holds is unknown. */
                char *cmd = strdup("(soft dependencies nested too deep to check)");
                return cmd ? hard_dep_add(x, chain ? chain[strv_length(chain) - 1] : x->module, cmd, cfg) : -ENOMEM;
        }
        if (r < 0)
                return r;
        for (char **m = chain; m && *m; m++) {
                char *cmd = NULL;

                /* What the kernel has built in is never inserted, whatever the files say. */
                if (fsg_modtree_is_builtin(t, *m))
                        continue;
                r = fsg_kmod_install_command(k, *m, &cmd);
                if (r < 0)
                        return r;
                if (!cmd || fsg_install_command_loads(cmd, *m)) {
                        free(cmd);
                        continue;
                }
                r = hard_dep_add(x, *m, cmd, cfg);
                if (r < 0)
                        return r;
        }
        return 0;
}

static bool type_is_aliased(const FsgConfig *cfg, const char *type) {
        _cleanup_free_ char *alias = NULL;
        const size_t *ix;
        size_t n;

        if (asprintf(&alias, "fs-%s", type) < 0)
                return true; /* out of memory: claim nothing */
        fsg_name_normalize(alias);
        n = fsg_config_rules_named(cfg, alias, &ix);
        for (size_t i = 0; i < n; i++)
                if (cfg->rules[ix[i]].kind == FSG_RULE_ALIAS)
                        return true;
        return false;
}

static bool type_is_routed(const FsgConfig *cfg, const char *type) {
        char t[FSG_NAME_MAX + 1];

        if (strlen(type) > FSG_NAME_MAX)
                return false;
        strcpy(t, type);
        fsg_name_normalize(t);
        return strv_contains(cfg->routed_types, t);
}

/* Reported when every type whose request is blocked runs the hook: through a deny of
 * fsgate's, or through its routes file. A blocked type whose request nothing of that kind
 * catches is silent, and the routes file's to catch, unless an alias of some file already
 * sends the request elsewhere (a second alias would run both). */
static int silent_types_fill(FsgEntry *x, struct kmod_ctx *k, const FsgConfig *cfg, char * const *denied_types) {
        x->blocks_reported = denied_types != NULL;
        for (char * const *ty = denied_types; ty && *ty; ty++) {
                if (fsg_type_block_is_reported_in(k, cfg, *ty))
                        continue;
                if (x->available && !type_is_aliased(cfg, *ty) && strv_extend(&x->silent_types, *ty) < 0)
                        return -ENOMEM;
                x->blocks_reported = x->blocks_reported && type_is_routed(cfg, *ty);
        }
        return 0;
}

/* One entry: its types from the tree, the kernel's answer for each (autoload.h), then the
 * file that decides it (attribution.h). */
static int entry_fill(FsgEntry *x, struct kmod_ctx *k, struct kmod_ctx *plain, const FsgConfig *cfg,
                      const FsgModTree *t) {
        _cleanup_strv_free_ char **denied_types = NULL;
        int r;

        for (size_t i = 0; i < t->n; i++)
                if (streq(t->modules[i], x->module) && strv_extend(&x->types, t->types[i]) < 0)
                        return -ENOMEM;
        strv_sort(x->types);

        x->builtin = fsg_modtree_is_builtin(t, x->module);
        x->available = !x->builtin && fsg_kmod_module_available(k, x->module);
        x->install_ignored = !x->builtin && fsg_kmod_has_softdeps(k, x->module);

        x->deciding_file = strdup("");
        if (!x->deciding_file)
                return -ENOMEM;
        x->described = true;
        r = fsg_config_mentions(cfg, x->module, x->types, &x->mentions);
        if (r < 0)
                return r;
        r = fsg_kmod_install_command(k, x->module, &x->install_command);
        if (r < 0)
                return r;
        x->install_file = install_file_of(cfg, x->module);
        if (!x->install_file)
                return -ENOMEM;
        if (x->install_command)
                x->hard = !fsg_install_command_loads(x->install_command, x->module);
        else if (!(x->install_command = strdup("")))
                return -ENOMEM;
        x->explicit_load = x->builtin || (x->available && !x->hard);

        if (x->builtin)
                return 0; /* the kernel never asks modprobe for what it already has */
        if (x->available) {
                r = hard_deps_fill(x, k, plain, t, cfg);
                if (r < 0)
                        return r;
        }

        if (!x->types) {
                /* Named by a rule but absent from this kernel: judge the rules alone. */
                x->denied = fsg_config_blacklists(cfg, x->module) || fsg_config_names_module(cfg, x->module);
        } else {
                for (char **ty = x->types; *ty; ty++)
                        if (!fsg_autoload_loads(k, cfg, t, *ty, x->module) && strv_extend(&denied_types, *ty) < 0)
                                return -ENOMEM;
                x->denied = denied_types != NULL;
        }
        r = silent_types_fill(x, k, cfg, denied_types);
        if (r < 0)
                return r;
        return fsg_entry_attribute(x, cfg, denied_types);
}

static int utf8_or_escaped(char **s) {
        char *t;

        if (!*s || fsg_utf8_is_valid(*s))
                return 0;
        t = fsg_utf8_escape(*s);
        if (!t)
                return -ENOMEM;
        free(*s);
        *s = t;
        return 0;
}

/* What an entry quotes from files (an install line, a line that names the module, a file
 * name) is any bytes; a D-Bus string must be UTF-8, or sd-bus refuses the whole reply. So
 * every string enters the model as error messages leave the service: a byte that is not
 * UTF-8 as "\xNN". Names are valid names already. */
static int entry_escape(FsgEntry *x) {
        char **fields[] = { &x->deciding_file, &x->install_command, &x->install_file, &x->override_of };
        int r = 0;

        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(fields); i++)
                r = utf8_or_escaped(fields[i]);
        for (char **m = x->mentions; r >= 0 && m && *m; m++)
                r = utf8_or_escaped(m);
        for (size_t i = 0; r >= 0 && i < x->n_hard_deps; i++) {
                r = utf8_or_escaped(&x->hard_deps[i].install_command);
                if (r >= 0)
                        r = utf8_or_escaped(&x->hard_deps[i].install_file);
        }
        return r;
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

static int cmp_hard_dep_refs(const void *a, const void *b) {
        return strcmp((*(FsgHardDep * const *) a)->module, (*(FsgHardDep * const *) b)->module);
}

static int index_hard_deps(FsgState *s) {
        size_t n = 0;

        for (size_t i = 0; i < s->n; i++)
                n += s->entries[i].n_hard_deps;
        if (n == 0)
                return 0;
        s->hard_deps = calloc(n, sizeof(FsgHardDep *));
        if (!s->hard_deps)
                return -ENOMEM;
        for (size_t i = 0; i < s->n; i++)
                for (size_t j = 0; j < s->entries[i].n_hard_deps; j++)
                        s->hard_deps[s->n_hard_deps++] = &s->entries[i].hard_deps[j];
        qsort(s->hard_deps, s->n_hard_deps, sizeof(FsgHardDep *), cmp_hard_dep_refs);
        return 0;
}

static int cmp_hard_dep_key(const void *key, const void *d) {
        return strcmp(key, (*(FsgHardDep * const *) d)->module);
}

size_t fsg_state_find_hard_deps(const FsgState *s, const char *normalized, FsgHardDep ***ret) {
        FsgHardDep **d = s->n_hard_deps > 0 ?
                bsearch(normalized, s->hard_deps, s->n_hard_deps, sizeof(FsgHardDep *), cmp_hard_dep_key) : NULL;
        FsgHardDep **end = s->hard_deps + s->n_hard_deps;
        FsgHardDep **first = d;

        if (!d)
                return 0;
        /* bsearch lands on any of the equal ones: widen to all of them. */
        while (first > s->hard_deps && streq(first[-1]->module, normalized))
                first--;
        while (d + 1 < end && streq(d[1]->module, normalized))
                d++;
        *ret = first;
        return d - first + 1;
}

static int cmp_module_key(const void *key, const void *e) {
        return strcmp(key, ((const FsgEntry *) e)->module);
}

static int cmp_type_key(const void *key, const void *t) {
        return strcmp(key, ((const FsgTypeRef *) t)->type);
}

FsgEntry *fsg_state_find_module(const FsgState *s, const char *normalized) {
        assert(s);
        assert(normalized);

        return s->n > 0 ? bsearch(normalized, s->entries, s->n, sizeof(FsgEntry), cmp_module_key) : NULL;
}

FsgEntry *fsg_state_find_type(const FsgState *s, const char *type) {
        assert(s);
        assert(type);

        FsgTypeRef *t = s->n_types > 0 ? bsearch(type, s->by_type, s->n_types, sizeof(FsgTypeRef), cmp_type_key) : NULL;
        return t ? t->entry : NULL;
}

static int cmp_entries(const void *a, const void *b) {
        return strcmp(((const FsgEntry *) a)->module, ((const FsgEntry *) b)->module);
}

int fsg_state_update_grants(const FsgContext *c, FsgState *s, FsgError *e) {
        assert(c);
        assert(s);

        _cleanup_free_ FsgGrant *g = NULL;
        size_t n;
        int r = fsg_grants_read(c, &g, &n, NULL, e);

        if (r < 0)
                return r;
        for (size_t i = 0; i < s->n; i++) {
                free(s->entries[i].granted_until);
                free(s->entries[i].granted_device);
                s->entries[i].granted_until = s->entries[i].granted_device = NULL;
        }
        /* Sorted by end: the last one of a module is its latest. Only those in force: a
         * record fsgated did not end (it was stopped) is no grant. */
        uint64_t now = fsg_boottime_usec();
        for (size_t i = 0; i < n; i++) {
                FsgEntry *x = fsg_grant_in_force(&g[i], now) ? fsg_state_find_module(s, g[i].module) : NULL;
                char buf[32];

                if (!x)
                        continue;
                free(x->granted_until);
                x->granted_until = strdup(fsg_grant_time_string(g[i].until_usec, buf));
                if (!x->granted_until)
                        return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
                if (*g[i].device) {
                        free(x->granted_device);
                        x->granted_device = strdup(g[i].device);
                        if (!x->granted_device)
                                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
                }
        }
        return 0;
}

int fsg_state_build(const FsgContext *c, const FsgOverride *ov, FsgState **ret, FsgError *e) {
        assert(c);
        assert(ret);

        _cleanup_(fsg_config_freep) FsgConfig *cfg = NULL;
        _cleanup_(fsg_modtree_freep) FsgModTree *t = NULL;
        _cleanup_(fsg_kmod_unrefp) struct kmod_ctx *k = NULL, *plain = NULL;
        _cleanup_strv_free_ char **modules = NULL;
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        int r;

        r = fsg_config_load(c, ov, &cfg, e);
        if (r < 0)
                return r;
        r = fsg_modtree_load(c, &t, e);
        if (r < 0)
                return r;
        r = fsg_kmod_new(c, cfg, &k, e);
        if (r >= 0)
                r = fsg_kmod_new_plain(c, &plain, e);
        if (r < 0)
                return r;

        for (size_t i = 0; i < t->n; i++)
                if (strv_extend(&modules, t->modules[i]) < 0)
                        goto oom;
        for (char **m = cfg->named_modules; m && *m; m++)
                if (fsg_kmod_may_be_filesystem(k, t, *m) && strv_extend(&modules, *m) < 0)
                        goto oom;
        if (!c->kver && ov && ov->module) {
                char norm[FSG_NAME_MAX + 1];

                if (!fsg_name_is_valid(ov->module))
                        return fsg_error(e, FSG_ERR_INVALID_NAME, "Not a valid module name: %s", ov->module);
                snprintf(norm, sizeof(norm), "%s", ov->module);
                fsg_name_normalize(norm);
                if (strv_extend(&modules, norm) < 0)
                        goto oom;
        }
        strv_sort_unique(modules);

        s = fsg_state_new();
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
                r = entry_fill(x, k, plain, cfg, t);
                if (r >= 0)
                        r = entry_escape(x);
                if (r < 0)
                        goto oom;
        }
        qsort(s->entries, s->n, sizeof(FsgEntry), cmp_entries);
        if (index_types(s) < 0 || index_hard_deps(s) < 0)
                goto oom;
        r = fsg_state_update_loaded(c, s);
        if (r < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Failed to read %s/proc/modules: %s", c->root, fsg_strerror(-r));
        r = fsg_state_update_mounted(c, s);
        if (r < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Failed to read %s/proc/mounts: %s", c->root, fsg_strerror(-r));
        r = fsg_state_update_grants(c, s, e);
        if (r < 0)
                return r;
        s->unreadable = TAKE_PTR(cfg->unreadable);
        s->kernel_unknown = !c->kver;
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

int fsg_state_resolve_unknown_kernel(const FsgContext *c, const FsgState *s, const char *name,
                                     FsgState **built, const FsgEntry **ret, FsgError *e) {
        FsgOverride ov = { .module = name };
        FsgError first = {};
        int r = fsg_state_resolve(c, s, name, ret, &first);

        if (r >= 0)
                return r;
        if (c->kver || first.code != FSG_ERR_NO_SUCH_FILESYSTEM) {
                if (e)
                        *e = first;
                return r;
        }
        /* No kernel to ask: the name is taken as a module's, with what the files say of it. */
        fsg_state_unref(*built);
        *built = NULL;
        r = fsg_state_build(c, &ov, built, e);
        if (r < 0)
                return r;
        return fsg_state_resolve(c, *built, name, ret, e);
}

int fsg_state_build_one(const FsgContext *c, const char *name, FsgState **ret, FsgError *e) {
        assert(c);
        assert(name);
        assert(ret);

        _cleanup_(fsg_state_unrefp) FsgState *all = NULL, *one = NULL;
        const FsgEntry *x;
        FsgEntry *from;
        int r;

        r = fsg_state_build(c, NULL, &all, e);
        if (r < 0)
                return r;
        r = fsg_state_resolve_unknown_kernel(c, all, name, &all, &x, e);
        if (r < 0)
                return r;
        one = fsg_state_new();
        if (!one || !(one->entries = calloc(1, sizeof(FsgEntry))))
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        /* Moved, not copied: the full state is freed without it. */
        from = &all->entries[x - all->entries];
        one->entries[0] = *from;
        *from = (FsgEntry) {};
        one->n = 1;
        /* Said of all the entries: kept, since it may be this one's module. */
        one->loaded_transient = all->loaded_transient;
        one->kernel_unknown = all->kernel_unknown;
        one->unreadable = TAKE_PTR(all->unreadable);
        if (index_types(one) < 0 || index_hard_deps(one) < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        *ret = TAKE_PTR(one);
        return 0;
}

void fsg_entry_done_hard_deps(FsgEntry *x) {
        for (size_t i = 0; i < x->n_hard_deps; i++) {
                free_many(x->hard_deps[i].module, x->hard_deps[i].install_command,
                          x->hard_deps[i].install_file);
        }
        free(x->hard_deps);
        x->hard_deps = NULL;
        x->n_hard_deps = 0;
}

void fsg_entry_done(FsgEntry *x) {
        free_many(x->module, x->deciding_file, x->override_of, x->granted_until, x->granted_device,
                  x->allow_refused, x->reset_refused, x->install_command, x->install_file);
        strv_free_many(x->types, x->mentions, x->silent_types);
        fsg_entry_done_hard_deps(x);
        *x = (FsgEntry) {};
}

FsgState *fsg_state_new(void) {
        FsgState *s = calloc(1, sizeof(FsgState));

        if (s)
                s->n_ref = 1;
        return s;
}

FsgState *fsg_state_ref(FsgState *s) {
        assert(s && s->n_ref > 0);
        s->n_ref++;
        return s;
}

FsgState *fsg_state_unref(FsgState *s) {
        if (!s)
                return NULL;
        assert(s->n_ref > 0);
        if (--s->n_ref > 0)
                return NULL;
        for (size_t i = 0; i < s->n; i++)
                fsg_entry_done(&s->entries[i]);
        strv_free(s->unreadable);
        free_many(s->entries, s->by_type, s->hard_deps, s);
        return NULL;
}

const FsgEntry *fsg_state_find(const FsgState *s, const char *name) {
        assert(s);
        assert(name);

        char norm[FSG_NAME_MAX + 1];
        const FsgEntry *x;

        if (!fsg_name_normalize_into(name, norm))
                return NULL; /* no entry has a longer name: modules and types are valid names */
        x = fsg_state_find_module(s, norm);
        return x ?: fsg_state_find_type(s, name);
}

int fsg_state_resolve(const FsgContext *c, const FsgState *s, const char *name, const FsgEntry **ret, FsgError *e) {
        assert(c);
        assert(s);
        assert(name);
        assert(ret);

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

/* -- what is in use: the entries' loaded and mounted flags, from ROOT/proc ---------------- */

typedef struct LoadedScan {
        FsgState *s;
        FsgEntry *line;         /* the entry the current line of /proc/modules names, if any */
        FsgHardDep **deps;      /* the hard-denied dependencies it names, if any */
        size_t n_deps;
        bool transient;
} LoadedScan;

/* /proc/modules: "NAME SIZE REFS DEPS STATE ADDRESS"; STATE is Live, Loading or Unloading. */
static void loaded_word(void *userdata, unsigned column, char *word) {
        LoadedScan *ls = userdata;

        if (column == 0) {
                fsg_name_normalize(word);
                ls->line = fsg_state_find_module(ls->s, word);
                if (ls->line)
                        ls->line->loaded = true;
                ls->n_deps = fsg_state_find_hard_deps(ls->s, word, &ls->deps);
        } else if (column == 4 && (ls->line || ls->n_deps > 0)) {
                bool live = streq(word, "Live");

                if (!live)
                        ls->transient = true;
                /* Only a live dependency is left alone by kmod (module_is_inkernel()): one
                 * half loaded or half unloaded would be inserted again. */
                for (size_t i = 0; live && i < ls->n_deps; i++)
                        ls->deps[i]->loaded = true;
                /* Said of this line only (a next one whose name is skipped must not inherit it). */
                ls->line = NULL;
                ls->n_deps = 0;
        }
}

int fsg_state_update_loaded(const FsgContext *c, FsgState *s) {
        assert(c);
        assert(s);

        LoadedScan ls = { .s = s };
        int r;

        for (size_t i = 0; i < s->n; i++)
                s->entries[i].loaded = false;
        for (size_t i = 0; i < s->n_hard_deps; i++)
                s->hard_deps[i]->loaded = false;
        r = fsg_read_table(c, "/proc/modules", loaded_word, &ls);
        if (r < 0)
                return r;
        s->loaded_transient = ls.transient;
        return ls.transient;
}

/* /proc/mounts: "SOURCE TARGET TYPE OPTIONS 0 0". */
static void mounted_word(void *userdata, unsigned column, char *word) {
        FsgEntry *x;

        if (column == 2 && (x = fsg_state_find_type(userdata, word)))
                x->mounted = true;
}

int fsg_state_update_mounted(const FsgContext *c, FsgState *s) {
        assert(c);
        assert(s);

        for (size_t i = 0; i < s->n; i++)
                s->entries[i].mounted = false;
        return fsg_read_table(c, "/proc/mounts", mounted_word, s);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <libkmod.h>

#include "autoload.h"
#include "conffile.h"
#include "name.h"
#include "strv.h"

static void kmod_list_unrefp(struct kmod_list **l) {
        if (*l)
                kmod_module_unref_list(*l);
}

static void kmod_module_unrefp(struct kmod_module **m) {
        if (*m)
                kmod_module_unref(*m);
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

/* This mirrors modprobe: alias lookup (config aliases first), the blacklist applied to the
 * modules the alias names (not to their dependencies), install commands run instead of
 * loading. */
bool fsg_autoload_loads(struct kmod_ctx *k, const FsgConfig *cfg, const FsgModTree *t, const char *type,
                        const char *module) {
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

/* kmod 30's probe list, as __kmod_module_get_probe_list() and __kmod_module_fill_softdep()
 * build it: a module "visited" once, its dependencies (modules.dep holds them all, the
 * dependencies' own included) each with its soft dependencies around it. */
static int chain_probe(struct kmod_module *m, bool top, char ***chain, char ***visited, unsigned depth);

static int chain_append(char ***chain, const char *name) {
        return strv_contains(*chain, name) ? 0 : strv_extend(chain, name);
}

static int chain_softdeps(struct kmod_list *l, char ***chain, char ***visited, unsigned depth) {
        struct kmod_list *i;
        int r = 0;

        kmod_list_foreach(i, l) {
                _cleanup_(kmod_module_unrefp) struct kmod_module *d = kmod_module_get_module(i);
                r = chain_probe(d, false, chain, visited, depth + 1);
                if (r < 0)
                        break;
        }
        return r;
}

static int chain_with_softdeps(struct kmod_module *m, char ***chain, char ***visited, unsigned depth) {
        _cleanup_(kmod_list_unrefp) struct kmod_list *pre = NULL, *post = NULL;
        int r;

        (void) kmod_module_get_softdeps(m, &pre, &post);
        r = chain_softdeps(pre, chain, visited, depth);
        if (r >= 0)
                r = chain_append(chain, kmod_module_get_name(m));
        if (r >= 0)
                r = chain_softdeps(post, chain, visited, depth);
        return r;
}

static int chain_probe(struct kmod_module *m, bool top, char ***chain, char ***visited, unsigned depth) {
        _cleanup_(kmod_list_unrefp) struct kmod_list *deps = NULL;
        struct kmod_list *l;
        int r = 0;

        if (strv_contains(*visited, kmod_module_get_name(m)))
                return 0;
        if (depth > FSG_CHAIN_DEPTH_MAX)
                return -ELOOP;
        if (strv_extend(visited, kmod_module_get_name(m)) < 0)
                return -ENOMEM;
        deps = kmod_module_get_dependencies(m);
        kmod_list_foreach(l, deps) {
                _cleanup_(kmod_module_unrefp) struct kmod_module *d = kmod_module_get_module(l);
                r = chain_with_softdeps(d, chain, visited, depth);
                if (r < 0)
                        return r;
        }
        /* The top module alone: with its install command ignored, kmod leaves out its soft
         * dependencies too. */
        return top ? 0 : chain_with_softdeps(m, chain, visited, depth);
}

int fsg_kmod_load_chain(struct kmod_ctx *k, const char *module, char ***chain) {
        _cleanup_(kmod_module_unrefp) struct kmod_module *m = NULL;
        _cleanup_strv_free_ char **visited = NULL;
        int r;

        r = kmod_module_new_from_name(k, module, &m);
        if (r < 0)
                return r;
        return chain_probe(m, true, chain, &visited, 0);
}

bool fsg_kmod_module_available(struct kmod_ctx *k, const char *module) {
        _cleanup_(kmod_module_unrefp) struct kmod_module *m = NULL;

        return kmod_module_new_from_name(k, module, &m) >= 0 && fsg_kmod_module_file_exists(k, m);
}

bool fsg_kmod_may_be_filesystem(struct kmod_ctx *k, const FsgModTree *t, const char *m) {
        _cleanup_(kmod_module_unrefp) struct kmod_module *mod = NULL;
        _cleanup_free_ char *path = NULL;

        if (fsg_modtree_is_builtin(t, m))
                return fsg_modtree_is_builtin_fs(t, m);
        if (kmod_module_new_from_name(k, m, &mod) < 0)
                return true;
        path = fsg_kmod_module_path(k, mod);
        return !path || strstr(path, "/kernel/fs/");
}

bool fsg_kmod_is_module(const FsgContext *c, const char *name) {
        _cleanup_(fsg_kmod_unrefp) struct kmod_ctx *k = NULL;
        _cleanup_(kmod_module_unrefp) struct kmod_module *m = NULL;

        if (fsg_kmod_new_plain(c, &k, NULL) < 0 || !k)
                return false;
        return kmod_module_new_from_name(k, name, &m) >= 0 && kmod_module_get_path(m);
}

bool fsg_type_block_is_reported_in(struct kmod_ctx *k, const FsgConfig *cfg, const char *type) {
        _cleanup_(kmod_list_unrefp) struct kmod_list *list = NULL;
        _cleanup_free_ char *alias = NULL, *hook = NULL;
        struct kmod_list *l;

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

int fsg_kmod_install_command(struct kmod_ctx *k, const char *module, char **ret) {
        _cleanup_(kmod_module_unrefp) struct kmod_module *m = NULL;
        _cleanup_(kmod_list_unrefp) struct kmod_list *pre = NULL, *post = NULL;
        const char *cmd;

        *ret = NULL;
        if (kmod_module_new_from_name(k, module, &m) < 0)
                return 0;
        cmd = kmod_module_get_install_commands(m);
        if (!cmd)
                return 0;
        /* kmod 30 marks a module with soft dependencies "ignore command" while building its
         * probe list: modprobe loads it as if no install line existed. */
        (void) kmod_module_get_softdeps(m, &pre, &post);
        if (pre || post)
                return 0;
        *ret = strdup(cmd);
        return *ret ? 0 : -ENOMEM;
}

/* argv[0] of a simple command, without its directory: "modprobe" for /sbin/modprobe. */
static const char *command_name(const char *word) {
        const char *slash = strrchr(word, '/');
        return slash ? slash + 1 : word;
}

static bool word_names_module(const char *word, const char *module) {
        char buf[FSG_NAME_MAX + 1];
        size_t l = strlen(word);

        /* The shell passes these on as the module's name. */
        if (streq(word, "$MODPROBE_MODULE") || streq(word, "${MODPROBE_MODULE}") ||
            streq(word, "\"$MODPROBE_MODULE\"") || streq(word, "\"${MODPROBE_MODULE}\""))
                return true;
        if (l > FSG_NAME_MAX || !fsg_name_is_valid(word))
                return false;
        memcpy(buf, word, l + 1);
        fsg_name_normalize(buf);
        return streq(buf, module);
}

/* One simple command (no separators), split at blanks: does it load module? */
static bool simple_command_loads(char *cmd, const char *module) {
        char *save = NULL, *w = strtok_r(cmd, " \t", &save);
        bool ignore_install = false, names = false;

        /* Leading "exec" and VAR=value assignments do not change what runs. */
        while (w && (streq(w, "exec") || (strchr(w, '=') && w[0] != '-' && w[0] != '=')))
                w = strtok_r(NULL, " \t", &save);
        if (!w)
                return false;
        if (streq(command_name(w), "insmod"))
                return true;
        if (!streq(command_name(w), "modprobe"))
                return false;
        for (w = strtok_r(NULL, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
                if (streq(w, "--ignore-install") || (w[0] == '-' && w[1] != '-' && strchr(w, 'i')))
                        ignore_install = true;
                else if (w[0] != '-' && word_names_module(w, module))
                        names = true;
        }
        /* Without --ignore-install, modprobe would run the same install command again. */
        return ignore_install && names;
}

bool fsg_install_command_loads(const char *cmd, const char *module) {
        _cleanup_free_ char *copy = strdup(cmd);
        char *p, *start;

        if (!copy)
                return false;
        /* Split at the shell's command separators; a quoted one is rare enough in these lines
         * to be taken as a separator all the same. */
        for (p = start = copy; ; p++) {
                bool end = *p == 0;
                if (end || strchr(";&|\n()`", *p)) {
                        *p = 0;
                        if (simple_command_loads(start, module))
                                return true;
                        if (end)
                                return false;
                        start = p + 1;
                }
        }
}

bool fsg_kmod_has_softdeps(struct kmod_ctx *k, const char *module) {
        _cleanup_(kmod_module_unrefp) struct kmod_module *m = NULL;
        _cleanup_(kmod_list_unrefp) struct kmod_list *pre = NULL, *post = NULL;

        if (kmod_module_new_from_name(k, module, &m) < 0)
                return false;
        (void) kmod_module_get_softdeps(m, &pre, &post);
        return pre || post;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a loaded configuration says of one module: the paths kmod reads, whether a blacklist
 * or any rule names it, every line that does. confscan.c reads the configuration. */
#define _GNU_SOURCE
#include <stdio.h>

#include "alloc-util.h"
#include "confscan.h"
#include "name.h"
#include "strv.h"

char **fsg_config_kmod_paths(const FsgConfig *cfg) {
        char **l = calloc(cfg->n_files + 1, sizeof(char *));
        size_t n = 0;

        if (!l)
                return NULL;
        for (size_t i = 0; i < cfg->n_files; i++) {
                if (cfg->files[i].mask)
                        continue;
                l[n] = strdup(cfg->files[i].fullpath);
                if (!l[n++])
                        return strv_free(l);
        }
        return l;
}

bool fsg_config_blacklists(const FsgConfig *cfg, const char *module) {
        const size_t *idx;
        size_t n;

        if (strv_contains(cfg->cmdline_blacklist, module))
                return true;
        n = fsg_config_rules_named(cfg, module, &idx);
        for (size_t i = 0; i < n; i++)
                if (cfg->rules[idx[i]].kind == FSG_RULE_BLACKLIST)
                        return true;
        return false;
}

bool fsg_config_names_module(const FsgConfig *cfg, const char *module) {
        const size_t *idx;
        size_t n = fsg_config_rules_named(cfg, module, &idx);

        for (size_t i = 0; i < n; i++)
                if (cfg->rules[idx[i]].kind == FSG_RULE_BLACKLIST || cfg->rules[idx[i]].kind == FSG_RULE_INSTALL)
                        return true;
        return false;
}

typedef struct Mention {
        size_t rule;
        const char *shown;      /* the name as the line shows it (fs-TYPE, not kmod's fs_TYPE) */
} Mention;

static int mention_add(Mention **l, size_t *n, size_t rule, const char *shown) {
        Mention *t;

        for (size_t i = 0; i < *n; i++)
                if ((*l)[i].rule == rule)
                        return 0;
        t = fsg_grow_one(*l, *n, sizeof(Mention));
        if (!t)
                return -ENOMEM;
        *l = t;
        t[(*n)++] = (Mention) { .rule = rule, .shown = shown };
        return 0;
}

static int cmp_mentions(const void *a, const void *b) {
        size_t i = ((const Mention *) a)->rule, j = ((const Mention *) b)->rule;
        return (i > j) - (i < j);
}

static int mentions_named(const FsgConfig *cfg, const char *name, const char *shown, Mention **l, size_t *n) {
        const size_t *idx;
        size_t k = fsg_config_rules_named(cfg, name, &idx);

        for (size_t i = 0; i < k; i++) {
                const FsgRule *r = &cfg->rules[idx[i]];
                int ret = mention_add(l, n, idx[i], shown);
                if (ret < 0)
                        return ret;
                /* A route: the install line of the name it routes to tells what runs. */
                if (r->kind == FSG_RULE_ALIAS && !streq(r->value, name)) {
                        const size_t *to;
                        size_t m = fsg_config_rules_named(cfg, r->value, &to);
                        for (size_t j = 0; j < m; j++)
                                if (cfg->rules[to[j]].kind == FSG_RULE_INSTALL &&
                                    (ret = mention_add(l, n, to[j], NULL)) < 0)
                                        return ret;
                }
        }
        return 0;
}

static int push_pair(char ***l, const char *path, char *line) {
        if (!line || strv_extend(l, path) < 0)
                return free(line), -ENOMEM;
        return strv_push(l, line);
}

int fsg_config_mentions(const FsgConfig *cfg, const char *module, char * const *types, char ***ret) {
        _cleanup_strv_free_ char **l = NULL, **aliases = NULL;
        _cleanup_free_ Mention *m = NULL;
        _cleanup_free_ char *own = NULL;
        size_t n = 0;
        int r;

        if (asprintf(&own, FSG_FILE_PREFIX "%s" FSG_FILE_SUFFIX, module) < 0)
                return -ENOMEM;
        /* An Allow is a mask: it says nothing, yet it is what decides. */
        for (size_t i = 0; i < cfg->n_files; i++)
                if (cfg->files[i].mask && streq(cfg->files[i].name, own)) {
                        r = push_pair(&l, cfg->files[i].path,
                                      strdup(cfg->files[i].shadowed ? "(mask: hides the file of the same name below)" :
                                                                      "(mask: empty or a link to /dev/null)"));
                        if (r < 0)
                                return r;
                }

        r = mentions_named(cfg, module, module, &m, &n);
        for (char * const *t = types; r >= 0 && t && *t; t++) {
                char *shown, *key;
                if (asprintf(&shown, "fs-%s", *t) < 0)
                        return -ENOMEM;
                r = strv_push(&aliases, shown);
                if (r < 0 || !(key = strdup(shown)))
                        return -ENOMEM;
                fsg_name_normalize(key);
                r = strv_push(&aliases, key);
                if (r >= 0)
                        r = mentions_named(cfg, key, shown, &m, &n);
        }
        if (r < 0)
                return r;
        if (n > 0)
                qsort(m, n, sizeof(Mention), cmp_mentions);
        for (size_t i = 0; i < n; i++) {
                const FsgRule *rule = &cfg->rules[m[i].rule];
                const char *name = m[i].shown ?: rule->name;
                char *line = NULL;

                switch (rule->kind) {
                case FSG_RULE_BLACKLIST:
                        r = asprintf(&line, "blacklist %s", name);
                        break;
                case FSG_RULE_INSTALL:
                        r = asprintf(&line, "install %s %s", name, rule->value);
                        break;
                case FSG_RULE_ALIAS:
                        r = asprintf(&line, "alias %s %s", name, rule->value);
                        break;
                }
                r = push_pair(&l, cfg->files[rule->file].path, r < 0 ? NULL : line);
                if (r < 0)
                        return r;
        }
        if (strv_contains(cfg->cmdline_blacklist, module)) {
                char *line;
                r = push_pair(&l, "/proc/cmdline", asprintf(&line, "modprobe.blacklist=%s", module) < 0 ? NULL : line);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

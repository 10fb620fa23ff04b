/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE

#include "attribution.h"
#include "autoload.h"
#include "name.h"
#include "strv.h"

static int entry_set_source(FsgEntry *x, const FsgConfig *cfg, size_t file) {
        const FsgConfFile *f = &cfg->files[file];

        x->origin = f->origin;
        free(x->deciding_file);
        x->deciding_file = strdup(f->path);
        free(x->override_of);
        x->override_of = f->override_of ? strdup(f->override_of) : NULL;
        x->override_stale = f->override_of && f->override_stale;
        return x->deciding_file && (x->override_of || !f->override_of) ? 0 : -ENOMEM;
}

/* The file an admin has to look at. Where several deny, the one that would still deny with
 * fsgate's own file name (60-blacklist_fs-M.conf, in any directory) masked, as Allow masks it:
 * then status names the same file as Allow's ForeignConfig. In that order: an install line
 * that refuses loads (the first one kmod would read, a hard deny: a blacklist keeps
 * autoloads away but only the install line refuses every load), a blacklist (the
 * highest-precedence file: blacklists add up, so any of them denies), the command line; then
 * fsgate's own file; otherwise the rule that routes the kernel's request elsewhere. */
static int attribute_denied(FsgEntry *x, const FsgConfig *cfg, char * const *denied_types) {
        _cleanup_free_ char *own = NULL;
        const size_t *idx;
        size_t n = fsg_config_rules_named(cfg, x->module, &idx);
        ssize_t best = -1, own_install = -1, own_blacklist = -1;
        bool install_seen = false;

        if (asprintf(&own, FSG_FILE_PREFIX "%s" FSG_FILE_SUFFIX, x->module) < 0)
                return -ENOMEM;
        /* The rules naming the module, in read order: as a walk over all of them would see them. */
        for (size_t i = 0; i < n; i++) {
                const FsgRule *r = &cfg->rules[idx[i]];
                bool ours = streq(cfg->files[r->file].name, own);

                if (r->kind == FSG_RULE_INSTALL && ours && own_install < 0 && !install_seen)
                        own_install = r->file;
                else if (r->kind == FSG_RULE_INSTALL && !ours && !install_seen) {
                        install_seen = true;
                        if (!fsg_install_command_loads(r->value, x->module))
                                return entry_set_source(x, cfg, r->file);
                } else if (r->kind == FSG_RULE_BLACKLIST && ours)
                        own_blacklist = r->file;
                else if (r->kind == FSG_RULE_BLACKLIST &&
                         (best < 0 || cfg->files[r->file].origin > cfg->files[best].origin))
                        best = r->file;
        }
        if (best >= 0)
                return entry_set_source(x, cfg, best);
        if (strv_contains(cfg->cmdline_blacklist, x->module)) {
                x->origin = FSG_ORIGIN_CMDLINE;
                return 0;
        }
        if (x->hard && own_install >= 0)
                return entry_set_source(x, cfg, own_install);
        if (own_blacklist >= 0)
                return entry_set_source(x, cfg, own_blacklist);
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
                if (!f->shadowed)
                        continue;
                /* A hidden file that cannot be read denies nothing we can name. */
                hit = fsg_conf_parse_file(f->shadowed, 0, &rules, &n) >= 0 && rules_name(rules, n, x->module);
                fsg_rules_free(rules, n);
                if (hit)
                        return entry_set_source(x, cfg, i);
        }
        /* Allowed by fsgate's override of a vendor file: that is what decides, and what a
         * Reset undoes. */
        for (size_t i = 0; i < cfg->n_files; i++)
                if (strv_contains(cfg->files[i].override_allows, x->module))
                        return entry_set_source(x, cfg, i);
        return 0;
}

int fsg_entry_attribute(FsgEntry *x, const FsgConfig *cfg, char * const *denied_types) {
        return x->denied ? attribute_denied(x, cfg, denied_types) : attribute_allowed(x, cfg);
}

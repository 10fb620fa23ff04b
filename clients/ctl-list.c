/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <string.h>

#include "alloc-util.h"
#include "macro.h"
#include "ctl.h"
#include "strv.h"

static const char *origin_word(unsigned i) {
        return i < _FSG_ORIGIN_MAX ? fsg_origin_to_string(i) : NULL;
}

static const char *state_word(unsigned i) {
        return ctl_state_to_string(i);
}

void ctl_filter_print_words(bool origins) {
        const char *(*word)(unsigned) = origins ? origin_word : state_word;

        for (unsigned i = 0; word(i); i++)
                puts(word(i));
}

/* "denied,admin"-style lists, as systemd's --state= takes them: each word sets its bit;
 * an empty word (a trailing comma) is skipped. */
static int parse_words(const char *arg, const char *(*word)(unsigned), const char *option, unsigned *mask,
                       FsgError *e) {
        _cleanup_free_ char *copy = strdup(arg), *valid = NULL;
        char *save = NULL;

        if (!copy)
                return fsg_error(e, FSG_ERR_FAILED, "%s", _("Out of memory"));
        for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
                unsigned i;

                for (i = 0; word(i) && !streq(word(i), w); i++)
                        ;
                if (word(i)) {
                        *mask |= 1u << i;
                        continue;
                }
                for (unsigned k = 0; word(k); k++) {
                        char *v = NULL;
                        if (asprintf(&v, "%s%s%s", valid ?: "", valid ? ", " : "", word(k)) < 0)
                                return fsg_error(e, FSG_ERR_FAILED, "%s", _("Out of memory"));
                        free(valid);
                        valid = v;
                }
                /* TRANSLATORS: %1$s is an option (--state=), %2$s what was typed, %3$s the valid words. */
                return fsg_error(e, FSG_ERR_INVALID_ARGS, _("Invalid %1$s%2$s: one of %3$s, or a comma-separated list"),
                                 option, ctl_esc(w), valid);
        }
        return 0;
}

int ctl_filter_parse_states(CtlFilter *f, const char *arg, FsgError *e) {
        return parse_words(arg, state_word, "--state=", &f->states, e);
}

int ctl_filter_parse_origins(CtlFilter *f, const char *arg, FsgError *e) {
        return parse_words(arg, origin_word, "--origin=", &f->origins, e);
}

/* A module name matches with either spelling of '-' and '_', as the kernel takes it. */
static bool name_matches(char * const *patterns, const char *module) {
        _cleanup_free_ char *dashed = strdup(module);

        for (char *p = dashed; p && *p; p++)
                if (*p == '_')
                        *p = '-';
        for (char * const *p = patterns; *p; p++)
                if (fnmatch(*p, module, 0) == 0 || (dashed && fnmatch(*p, dashed, 0) == 0))
                        return true;
        return false;
}

/* The first of x's types a pattern matches, NULL if none. */
static const char *type_matched(char * const *patterns, const FsgEntry *x) {
        for (char * const *p = patterns; *p; p++)
                for (char **t = x->types; t && *t; t++)
                        if (fnmatch(*p, *t, 0) == 0)
                                return *t;
        return NULL;
}

/* Whether x is shown, and through which type when its name did not match: names first, so
 * that "hfs" shows hfs as itself and ib_qib (type ipathfs) not at all. */
static bool select_entry(const CtlFilter *f, const FsgEntry *x, const char **ret_type) {
        *ret_type = NULL;
        if (f->states && !(f->states & (1u << ctl_entry_state(x))))
                return false;
        if (f->origins && !(f->origins & (1u << x->origin)))
                return false;
        if (strv_isempty(f->patterns) || name_matches(f->patterns, x->module))
                return true;
        *ret_type = type_matched(f->patterns, x);
        return *ret_type != NULL;
}

int ctl_select(const FsgState *s, const CtlFilter *f, CtlRow **ret, size_t *ret_n) {
        _cleanup_free_ CtlRow *rows = NULL;
        size_t n = 0;

        /* One more than needed, so that an empty selection still allocates. */
        rows = calloc(s->n + 1, sizeof(CtlRow));
        if (!rows)
                return -ENOMEM;
        for (size_t i = 0; i < s->n; i++) {
                const char *type;

                if (select_entry(f, &s->entries[i], &type))
                        rows[n++] = (CtlRow) { .entry = &s->entries[i], .matched_type = type };
        }
        *ret = TAKE_PTR(rows);
        *ret_n = n;
        return 0;
}

int ctl_list(const CtlBackend *be, const CtlOptions *o, const CtlFilter *f) {
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        _cleanup_free_ CtlRow *rows = NULL;
        size_t n;
        FsgError e = {};

        if (be->list(o, &s, &e) < 0)
                return ctl_fail(o, &e);
        ctl_warn_unreadable(s);
        if (ctl_select(s, f, &rows, &n) < 0) {
                fsg_error(&e, FSG_ERR_FAILED, "%s", _("Out of memory"));
                return ctl_fail(o, &e);
        }
        if (o->json)
                ctl_print_json_rows(rows, n, !strv_isempty(f->patterns));
        else if (o->risk)
                ctl_print_risk_table(rows, n);
        else
                ctl_print_table(s, rows, n);
        return 0;
}

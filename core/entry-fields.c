/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>

#include "entry-fields.h"
#include "risk.h"
#include "strv.h"

static const char *state_get(const FsgEntry *x) {
        return fsg_entry_state_string(x);
}

static int state_set(FsgEntry *x, const char *value) {
        x->denied = streq(value, "denied");
        return 0;
}

static const char *origin_get(const FsgEntry *x) {
        return fsg_origin_to_string(x->origin);
}

static int origin_set(FsgEntry *x, const char *value) {
        x->origin = fsg_origin_from_string(value);
        return 0;
}

/* What a reader of "explicit_load_possible" keeps: the service has judged the load chain
 * already, and a dependency it names refuses the load again (fsg_entry_explicit_load()). */
static void explicit_load_set(FsgEntry *x, bool value) {
        x->explicit_load = value;
}

/* The risk facts are compiled into the service and every reader alike: a reader finds them
 * again from the module's name, so what the service sends is not stored. */
static int risk_set(FsgEntry *x, const char *value) {
        (void) x;
        (void) value;
        return 0;
}

static void risk_set_bool(FsgEntry *x, bool value) {
        (void) x;
        (void) value;
}

#define RISK_STRING(name, member)                                       \
        static const char *name(const FsgEntry *x) {                    \
                const FsgRisk *r = fsg_risk_find(x->module);            \
                return r ? r->member : "";                              \
        }
RISK_STRING(risk_title_get, title)
RISK_STRING(risk_maintainers_get, maintainers)
RISK_STRING(risk_section_get, section)
RISK_STRING(risk_deprecated_get, deprecated)
RISK_STRING(risk_upstream_get, upstream)
RISK_STRING(risk_upstream_source_get, upstream_source)

static bool risk_userns_get(const FsgEntry *x) {
        const FsgRisk *r = fsg_risk_find(x->module);
        return r && r->userns_mount;
}

/* Valid until the next call: every walker of the table uses a value before it asks the next. */
static const char *risk_summary_get(const FsgEntry *x) {
        static char buf[256];

        fsg_risk_phrase(fsg_risk_find(x->module), buf, sizeof(buf));
        return buf;
}

static const char *risk_source_get(const FsgEntry *x) {
        return fsg_risk_find(x->module) ? fsg_risk_source : "";
}

#define STORED(k, sig, member, fl) { .key = k, .signature = sig, .flags = fl, .offset = offsetof(FsgEntry, member) }
#define COMPUTED_STRING(k, get, set, fl) { .key = k, .signature = "s", .flags = fl, .get_string = get, .set_string = set }
#define HARD_DEP(k, member) \
        { .key = k, .signature = "s", .flags = FSG_FIELD_HARD_DEP, .offset = offsetof(FsgHardDep, member) }

const FsgEntryField fsg_entry_fields[] = {
        STORED("module", "s", module, FSG_FIELD_ENTRY),
        STORED("types", "as", types, FSG_FIELD_ENTRY),
        COMPUTED_STRING("state", state_get, state_set, FSG_FIELD_ENTRY),
        COMPUTED_STRING("origin", origin_get, origin_set, FSG_FIELD_ENTRY),
        STORED("deciding_file", "s", deciding_file, FSG_FIELD_ENTRY),
        STORED("available", "b", available, FSG_FIELD_ENTRY),
        STORED("builtin", "b", builtin, FSG_FIELD_ENTRY),
        STORED("loaded", "b", loaded, FSG_FIELD_ENTRY),
        STORED("mounted", "b", mounted, FSG_FIELD_ENTRY),
        STORED("hard", "b", hard, 0),
        { .key = "explicit_load_possible", .signature = "b", .get_bool = fsg_entry_explicit_load,
          .set_bool = explicit_load_set },
        STORED("blocks_reported", "b", blocks_reported, 0),
        STORED("install_command", "s", install_command, 0),
        STORED("install_file", "s", install_file, 0),
        HARD_DEP("hard_denied_dependency", module),
        HARD_DEP("hard_denied_dependency_command", install_command),
        HARD_DEP("hard_denied_dependency_file", install_file),
        STORED("override_of", "s", override_of, 0),
        STORED("override_stale", "b", override_stale, 0),
        /* Only while a grant (grant.h) allows the module: when the latest one ends. */
        STORED("granted_until", "s", granted_until, FSG_FIELD_OPTIONAL),
        STORED("granted_device", "s", granted_device, FSG_FIELD_OPTIONAL),
        /* Describe and DescribeAll only (a plan each, memoised by the service until the
         * configuration changes), not in lists. */
        STORED("allow_refused", "s", allow_refused, FSG_FIELD_OPTIONAL),
        STORED("reset_refused", "s", reset_refused, FSG_FIELD_OPTIONAL),
        STORED("files", "a(ss)", mentions, 0),
        /* What the kernel source says of the module (core/risk.h); "" for one it did not have. */
        COMPUTED_STRING("risk_summary", risk_summary_get, risk_set, FSG_FIELD_STATIC),
        COMPUTED_STRING("risk_title", risk_title_get, risk_set, FSG_FIELD_STATIC),
        COMPUTED_STRING("risk_maintainers", risk_maintainers_get, risk_set, FSG_FIELD_STATIC),
        COMPUTED_STRING("risk_maintainers_section", risk_section_get, risk_set, FSG_FIELD_STATIC),
        { .key = "risk_userns_mount", .signature = "b", .get_bool = risk_userns_get, .set_bool = risk_set_bool,
          .flags = FSG_FIELD_STATIC },
        COMPUTED_STRING("risk_deprecated", risk_deprecated_get, risk_set, FSG_FIELD_STATIC),
        COMPUTED_STRING("risk_upstream", risk_upstream_get, risk_set, FSG_FIELD_STATIC),
        COMPUTED_STRING("risk_upstream_source", risk_upstream_source_get, risk_set, FSG_FIELD_STATIC),
        COMPUTED_STRING("risk_facts_source", risk_source_get, risk_set, FSG_FIELD_STATIC),
};

const size_t fsg_entry_fields_n = ELEMENTSOF(fsg_entry_fields);

const FsgEntryField *fsg_entry_field_find(const char *key) {
        for (size_t i = 0; i < ELEMENTSOF(fsg_entry_fields); i++)
                if (streq(fsg_entry_fields[i].key, key))
                        return &fsg_entry_fields[i];
        return NULL;
}

/* Where f lives: in x, or in the dependency that refuses x's load now (NULL: none). */
static const void *field_in(const FsgEntry *x, const FsgEntryField *f) {
        const FsgHardDep *dep;

        if (!(f->flags & FSG_FIELD_HARD_DEP))
                return (const char *) x + f->offset;
        dep = x->builtin || x->loaded ? NULL : fsg_entry_load_blocker(x);
        return dep ? (const char *) dep + f->offset : NULL;
}

const char *fsg_entry_field_string(const FsgEntry *x, const FsgEntryField *f) {
        const char * const *at;

        if (f->get_string)
                return f->get_string(x);
        at = field_in(x, f);
        if (at && *at)
                return *at;
        return f->flags & FSG_FIELD_OPTIONAL ? NULL : "";
}

bool fsg_entry_field_bool(const FsgEntry *x, const FsgEntryField *f) {
        return f->get_bool ? f->get_bool(x) : *(const bool *) field_in(x, f);
}

char **fsg_entry_field_strv(const FsgEntry *x, const FsgEntryField *f) {
        return *(char ** const *) field_in(x, f);
}

/* Where a reader stores f: for a dependency's field, the entry's one hard-denied dependency,
 * made on first sight. NULL when out of memory. */
static void *field_to(FsgEntry *x, const FsgEntryField *f) {
        if (!(f->flags & FSG_FIELD_HARD_DEP))
                return (char *) x + f->offset;
        if (x->n_hard_deps == 0) {
                x->hard_deps = calloc(1, sizeof(FsgHardDep));
                if (!x->hard_deps)
                        return NULL;
                x->n_hard_deps = 1;
        }
        return (char *) &x->hard_deps[0] + f->offset;
}

int fsg_entry_field_set_string(FsgEntry *x, const FsgEntryField *f, const char *value) {
        char **to, *copy;

        if (f->set_string)
                return f->set_string(x, value);
        to = field_to(x, f);
        copy = strdup(value);
        if (!to || !copy) {
                free(copy);
                return -ENOMEM;
        }
        free(*to);
        *to = copy;
        return 0;
}

/* Out of memory for a hard dependency's row (field_to() NULL), a value is dropped: a reader
 * then finds the field missing, as from an older service. */
void fsg_entry_field_set_bool(FsgEntry *x, const FsgEntryField *f, bool value) {
        bool *to;

        if (f->set_bool)
                f->set_bool(x, value);
        else if ((to = field_to(x, f)))
                *to = value;
}

void fsg_entry_field_take_strv(FsgEntry *x, const FsgEntryField *f, char **value) {
        char ***to = field_to(x, f);

        if (!to) {
                strv_free(value);
                return;
        }
        strv_free(*to);
        /* No list and an empty one say the same: none (a module this kernel lacks). */
        if (value && !value[0])
                value = strv_free(value);
        *to = value;
}

static int default_empty(char **s) {
        return *s || (*s = strdup("")) ? 0 : -ENOMEM;
}

int fsg_entry_fields_complete(FsgEntry *x) {
        FsgHardDep *d = x->n_hard_deps > 0 ? &x->hard_deps[0] : NULL;

        if (!x->module || !x->deciding_file)
                return -EBADMSG;
        if (default_empty(&x->install_command) < 0 || default_empty(&x->install_file) < 0)
                return -ENOMEM;
        if (d && (!d->module || !*d->module))
                fsg_entry_done_hard_deps(x);
        else if (d && (default_empty(&d->install_command) < 0 || default_empty(&d->install_file) < 0))
                return -ENOMEM;
        return 0;
}

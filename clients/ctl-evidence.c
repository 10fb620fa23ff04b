/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc-util.h"
#include "ctl-evidence.h"
#include "ctl-journal.h"
#include "ctl.h"
#include "journal-ids.h"
#include "open-route.h"
#include "strv.h"

/* Entries read at most, whatever the journal holds: an observation's evidence costs a bounded
 * time (the hook writes a few lines per type and window, so this is weeks of a storm). */
#define EVIDENCE_WALK_MAX 200000
/* Modules at most: more than any kernel has filesystem modules. */
#define EVIDENCE_MODULES_MAX 1024

void ctl_evidence_free(CtlEvidence *ev) {
        for (size_t i = 0; i < ev->n; i++) {
                CtlObserved *x = &ev->items[i];
                free_many(x->module, x->types, x->last_device, x->last_label, x->last_user,
                          x->last_session, x->last_comm);
        }
        free_many(ev->items, ev->profile, ev);
}

static CtlObserved *item_get(CtlEvidence *ev, const char *module) {
        CtlObserved *x;

        for (size_t i = 0; i < ev->n; i++)
                if (streq(ev->items[i].module, module))
                        return &ev->items[i];
        if (ev->n >= EVIDENCE_MODULES_MAX)
                return NULL;
        x = reallocarray(ev->items, ev->n + 1, sizeof(CtlObserved));
        if (!x)
                return NULL;
        ev->items = x;
        x = &ev->items[ev->n];
        *x = (CtlObserved) { .module = strdup(module), .types = strdup(""), .last_uid = -1 };
        if (!x->module || !x->types)
                return NULL;
        ev->n++;
        return x;
}

static int add_type(CtlObserved *x, const char *type) {
        _cleanup_strv_free_ char **l = strv_split_spaces(x->types);
        char *joined;

        if (!l)
                return -ENOMEM;
        if (!*type || strv_contains(l, type))
                return 0;
        if (asprintf(&joined, "%s%s%s", x->types, *x->types ? " " : "", type) < 0)
                return -ENOMEM;
        free(x->types);
        x->types = joined;
        return 0;
}

/* One entry, walking from the newest: the first that names who asked is the last one's. */
static int note(CtlEvidence *ev, sd_journal *j, uint64_t usec) {
        _cleanup_free_ char *module = ctl_journal_field(j, "FSGATE_MODULE"), *type = ctl_journal_field(j, "FSGATE_TYPE"),
                            *count = ctl_journal_field(j, "FSGATE_COUNT"), *uid = ctl_journal_field(j, "FSGATE_REQUEST_UID");
        CtlObserved *x;
        uint64_t n;

        if (!module || !type || !count || !uid)
                return -ENOMEM;
        if (!*module)
                return 0;
        x = item_get(ev, module);
        if (!x)
                return -ENOMEM;
        n = strtoull(count, NULL, 10);
        x->count += n > 0 ? n : 1;
        if (!x->last_usec)
                x->last_usec = usec;
        x->first_usec = usec;
        if (add_type(x, type) < 0)
                return -ENOMEM;
        if (x->last_device || !*uid || streq(uid, "-1"))
                return 0;
        x->last_uid = atoi(uid);
        x->last_device = ctl_journal_field(j, "FSGATE_DEVICE");
        x->last_label = ctl_journal_field(j, "FSGATE_LABEL");
        x->last_user = ctl_journal_field(j, "FSGATE_USER");
        x->last_session = ctl_journal_field(j, "FSGATE_SESSION");
        x->last_comm = ctl_journal_field(j, "FSGATE_REQUEST_COMM");
        return x->last_device && x->last_label && x->last_user && x->last_session && x->last_comm ? 0 : -ENOMEM;
}

static int compare_items(const void *a, const void *b) {
        return strcmp(((const CtlObserved *) a)->module, ((const CtlObserved *) b)->module);
}

int ctl_evidence_read(const char *profile, uint64_t since_usec, CtlEvidence **ret, FsgError *e) {
        _cleanup_(ctl_evidence_freep) CtlEvidence *ev = calloc(1, sizeof(CtlEvidence));
        _cleanup_free_ char *match = NULL;
        sd_journal *j = NULL;
        unsigned walked = 0;
        int r;

        if (!ev || !(ev->profile = strdup(profile)) || asprintf(&match, "FSGATE_PROFILE=%s", profile) < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        ev->since_usec = since_usec;
        r = ctl_journal_open(&j, e);
        if (r < 0)
                return r;
        /* Any process may send the id: only root's entries are the hook's (_UID is journald's). */
        if ((r = sd_journal_add_match(j, "MESSAGE_ID=" FSGATE_MESSAGE_WOULD_BLOCK, 0)) < 0 ||
            (r = sd_journal_add_match(j, match, 0)) < 0 || (r = sd_journal_add_match(j, "_UID=0", 0)) < 0 ||
            (r = sd_journal_seek_tail(j)) < 0) {
                sd_journal_close(j);
                return fsg_error(e, FSG_ERR_FAILED, _("Failed to read the journal: %s"), strerror(-r));
        }
        while ((r = sd_journal_previous(j)) > 0) {
                uint64_t usec;

                if (++walked > EVIDENCE_WALK_MAX) {
                        ev->walk_limit = true;
                        break;
                }
                if (sd_journal_get_realtime_usec(j, &usec) < 0 || usec < since_usec)
                        continue;
                if (note(ev, j, usec) < 0) {
                        r = -ENOMEM;
                        break;
                }
        }
        sd_journal_close(j);
        if (r < 0)
                return fsg_error(e, FSG_ERR_FAILED, _("Failed to read the journal: %s"), strerror(-r));
        if (ev->n > 0)
                qsort(ev->items, ev->n, sizeof(CtlObserved), compare_items);
        *ret = TAKE_PTR(ev);
        return 0;
}

const CtlObserved *ctl_evidence_find(const CtlEvidence *ev, const char *module) {
        for (size_t i = 0; ev && i < ev->n; i++)
                if (streq(ev->items[i].module, module))
                        return &ev->items[i];
        return NULL;
}

const char *ctl_observed_open_route(const CtlObserved *x) {
        _cleanup_strv_free_ char **types = strv_split_spaces(x->types);
        char path[PATH_MAX];

        for (char **t = types; t && *t; t++) {
                const FsgOpenRoute *r = fsg_open_route_find(*t);
                if (fsg_open_route_usable(r) && fsg_open_route_driver(NULL, r, path, sizeof(path)) >= 0)
                        return r->driver;
        }
        return NULL;
}

/* Whether the person would still have had their files once it is enforced: a userspace driver
 * fsgate can start reads that type (Open safely), or none does. */
static void print_open_safely(const CtlObserved *x, const char *indent) {
        const char *driver = ctl_observed_open_route(x);

        if (driver)
                /* TRANSLATORS: %1$s indentation, %2$s a program (squashfuse). */
                printf(_("%1$s  once enforced, they would still have their files, read-only: fsgatectl open "
                         "(Open safely, by %2$s)\n"), indent, driver);
        else
                printf(_("%1$s  once enforced, they would not have their files: no userspace driver here reads "
                         "%2$s\n"), indent, ctl_esc(x->types));
}

void ctl_observed_print(const CtlObserved *x, const char *indent) {
        char when[32];

        ctl_format_time(x->last_usec, false, when);
        /* TRANSLATORS: %1$s indentation, %2$s a module; the plural follows %3$llu. */
        printf(ngettext("%1$s%2$s: %3$llu autoload observed, last on %4$s", "%1$s%2$s: %3$llu autoloads observed, last on %4$s",
                        x->count),
               indent, ctl_esc(x->module), (unsigned long long) x->count, when);
        if (x->last_device && *x->last_device)
                /* TRANSLATORS: %s is a device node such as /dev/sr0. */
                printf(_(", %s"), ctl_esc(x->last_device));
        if (x->last_label && *x->last_label)
                printf(" “%s”", ctl_esc(x->last_label));
        if (x->last_uid >= 0) {
                if (*x->last_user)
                        /* TRANSLATORS: %1$s a user name, %2$d its uid, %3$s a command name (mount). */
                        printf(_(", asked by %1$s (uid %2$d, %3$s"), ctl_esc(x->last_user), x->last_uid,
                               ctl_esc(x->last_comm));
                else
                        printf(_(", asked by uid %1$d (%2$s"), x->last_uid, ctl_esc(x->last_comm));
                if (*x->last_session)
                        /* TRANSLATORS: %s is a logind session id. */
                        printf(_(", session %s"), ctl_esc(x->last_session));
                putchar(')');
        }
        putchar('\n');
        print_open_safely(x, indent);
}

void ctl_evidence_json(JsonWriter *w, const CtlEvidence *ev) {
        json_key(w, "observed");
        json_object_begin(w);
        json_field_string(w, "profile", ev->profile);
        json_key(w, "since_usec");
        json_int(w, (int64_t) ev->since_usec);
        json_field_bool(w, "incomplete", ev->walk_limit);
        json_key(w, "modules");
        json_array_begin(w);
        for (size_t i = 0; i < ev->n; i++) {
                const CtlObserved *x = &ev->items[i];

                json_object_begin(w);
                json_field_string(w, "module", x->module);
                json_field_string(w, "types", x->types);
                json_key(w, "count");
                json_int(w, (int64_t) x->count);
                json_key(w, "first_usec");
                json_int(w, (int64_t) x->first_usec);
                json_key(w, "last_usec");
                json_int(w, (int64_t) x->last_usec);
                json_field_string(w, "last_device", x->last_device ?: "");
                json_field_string(w, "last_label", x->last_label ?: "");
                json_key(w, "last_uid");
                json_int(w, x->last_uid);
                json_field_string(w, "last_user", x->last_user ?: "");
                json_field_string(w, "last_session", x->last_session ?: "");
                json_field_string(w, "last_command", x->last_comm ?: "");
                json_field_string(w, "open_safely", ctl_observed_open_route(x) ?: "");
                json_object_end(w);
        }
        json_array_end(w);
        json_object_end(w);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-journal.h>

#include "fsg-error.h"
#include "json-writer.h"

/* What an observation of a profile (core/observe.h) found: the hook's "would block" entries
 * in the journal (FSGATE_MESSAGE_WOULD_BLOCK, root's only), per module. Read with the reader's
 * rights, as `fsgatectl log` reads. */
typedef struct CtlObserved {
        char *module;
        char *types;            /* the types asked for, space-separated */
        uint64_t count;         /* requests, the ones the hook only counted included */
        uint64_t first_usec, last_usec;
        /* The newest entry that says who asked: "" and -1 when none did. */
        char *last_device, *last_label, *last_user, *last_session, *last_comm;
        int last_uid;
} CtlObserved;

typedef struct CtlEvidence {
        char *profile;
        uint64_t since_usec;    /* entries before this are not its */
        CtlObserved *items;     /* sorted by module */
        size_t n;
        bool walk_limit;        /* stopped reading before since_usec */
} CtlEvidence;

void ctl_evidence_free(CtlEvidence *ev);
static inline void ctl_evidence_freep(CtlEvidence **ev) {
        if (*ev)
                ctl_evidence_free(*ev);
}

/* The would-blocks of profile since since_usec. */
int ctl_evidence_read(const char *profile, uint64_t since_usec, CtlEvidence **ret, FsgError *e);
const CtlObserved *ctl_evidence_find(const CtlEvidence *ev, const char *module);

/* One line for a person: "udf: 3 autoloads observed, last /dev/sr0 on 2026-12-05 10:01 by alice
 * (uid 1000, session 2)". */
void ctl_observed_print(const CtlObserved *x, const char *indent);
/* The userspace driver that would still read one of x's types once it is enforced (Open
 * safely, installed here), or NULL. */
const char *ctl_observed_open_route(const CtlObserved *x);
/* "observed": {"profile", "since_usec", "modules": [...]} */
void ctl_evidence_json(JsonWriter *w, const CtlEvidence *ev);

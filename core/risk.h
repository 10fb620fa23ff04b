/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* What the kernel's own source says about a filesystem module, read by tools/gen-risk-data
 * from one Debian kernel source (data/risk/kernel-facts.tsv, committed with that version),
 * and the few later facts a person wrote down with their source (data/risk/curated.tsv).
 * Both are compiled in (risk-data.c, generated at build time): nothing an image or a user can
 * change, and the same table in the service and in every client. */
typedef struct FsgRisk {
        const char *module;             /* as modules.dep names it, '-' as '_' */
        const char *title;              /* the Kconfig prompt: "Apple Macintosh file system support" */
        const char *maintainers;        /* the "S:" of the MAINTAINERS section that covers its code:
                                         * Supported, Maintained, Odd Fixes, Orphan, Obsolete; "" none */
        const char *section;            /* that section's title, "" none */
        bool userns_mount;              /* FS_USERNS_MOUNT: mountable by any user in a user namespace */
        const char *deprecated;         /* the Kconfig text that says it is deprecated, "" none */
        const char *upstream;           /* curated: "removed in Linux 6.13", "removal proposed (2025)", "" */
        const char *upstream_source;    /* where that was said (a URL), "" with it */
} FsgRisk;

/* The kernel source the facts were read from: "6.1.192 (Debian linux-source-6.1 6.1.192-3)". */
extern const char fsg_risk_source[];
extern const FsgRisk fsg_risk_table[];
extern const size_t fsg_risk_table_n;

/* The facts of module (either spelling of '-'/'_'), NULL for one the source did not have. */
const FsgRisk *fsg_risk_find(const char *module);

/* True for the facts that make a module worth a second thought: little or not maintained
 * (Odd Fixes, Orphan, Obsolete, no section of its own), deprecated, something upstream since
 * (curated.tsv), or mountable in a user namespace. */
bool fsg_risk_is_notable(const FsgRisk *r);

/* One short phrase for people, at most size bytes: "orphaned upstream; deprecated";
 * "" when nothing is notable. Translated (the "fsgate" domain) where the program bound it. */
void fsg_risk_phrase(const FsgRisk *r, char *buf, size_t size);

/* Whether upstream (an FsgRisk's) is among the words marked for translation: every curated
 * line's must be (tests/unit/test-risk.c). */
bool fsg_risk_upstream_translatable(const char *upstream);

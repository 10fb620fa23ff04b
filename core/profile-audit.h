/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "profile.h"

/* Auditing: per module, whether the system complies, and why, judged by what kmod would do
 * (fsgate's state), never by the mere presence of a line. */
typedef struct FsgAuditItem {
        char *module;
        bool compliant;
        bool denied;         /* the kernel's autoload is refused */
        bool hard;           /* an explicit `modprobe MODULE` is refused too */
        char *why;
} FsgAuditItem;

typedef struct FsgAudit {
        char profile[64];
        bool hard_required;
        FsgAuditItem *items;
        size_t n;
        size_t n_compliant;
} FsgAudit;

FsgAudit *fsg_audit_free(FsgAudit *a);
static inline void fsg_audit_freep(FsgAudit **a) {
        fsg_audit_free(*a);
}
/* hard: require explicit loads refused even if the profile does not. current: the state the
 * caller keeps (the service's), or NULL to build one. NoKernel when there is none to judge. */
int fsg_profile_audit(const FsgContext *c, const FsgState *current, const char *name, bool hard, FsgAudit **ret,
                      FsgError *e);

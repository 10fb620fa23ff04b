/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "state.h"
#include "store.h"

/* Profiles: named lists of filesystem modules to deny (PROFILEDIR/NAME.profile, shipped with
 * fsgate, read from the host even for an image: the tool brings its profiles). One question:
 * which modules does a profile name, here and now. Applying and auditing them are built on
 * the store's plans, so a profile can do nothing a Deny could not. */

typedef struct FsgProfile {
        char *name;
        char *description;
        bool hard;           /* the profile wants explicit loads refused too */
        char *compute;       /* NULL, or how the modules are computed at each call ("unused") */
        char **modules;      /* sorted, normalized; for a computed profile, the result: the modules
                              * fsg_risk_is_notable() first, each part sorted */
} FsgProfile;

/* The directory profiles are read from: $FSGATE_PROFILE_DIR (tests, a build tree) or the
 * installed PROFILEDIR. */
const char *fsg_profile_dir(void);

/* Names of the profiles in fsg_profile_dir(), sorted. */
int fsg_profile_list(char ***ret, FsgError *e);

/* Reads profile name and works out its modules against s (c's state, up to date): a computed
 * profile is computed now. NoSuchProfile for a name that is not a profile. */
int fsg_profile_load(const FsgContext *c, const FsgState *s, const char *name, FsgProfile **ret, FsgError *e);
/* The same against *current, or, when that is NULL, against a state built now: *built holds
 * it and *current points to it. */
int fsg_profile_load_current(const FsgContext *c, const FsgState **current, FsgState **built, const char *name,
                             FsgProfile **ret, FsgError *e);
FsgProfile *fsg_profile_free(FsgProfile *p);
static inline void fsg_profile_freep(FsgProfile **p) {
        fsg_profile_free(*p);
}

/* The "unused" computation on its own: every filesystem module of s with a module file that
 * this system does not use. Used means: built in, loaded, mounted, named as a type in
 * /etc/fstab or in a mount unit (the unit directories, generated ones included), the type
 * udev found on a block device that is present (its database, /run/udev/data), or a
 * dependency of a used one. *ret_used (may be NULL) gets "MODULE: why" for the kept ones. */
int fsg_profile_unused(const FsgContext *c, const FsgState *s, char ***ret, char ***ret_used, FsgError *e);

/* Applying a profile: a Deny plan per module that changes something, all made before
 * anything is written. */
typedef struct FsgProfilePlan {
        char profile[64];
        uint64_t flags;      /* as asked: FSG_FLAG_HARD, FSG_FLAG_FORCE, FSG_FLAG_DRY_RUN */
        FsgPlan *plans;      /* only the ones that write, in module order */
        size_t n;
        char **skipped;      /* modules of the profile built into the kernel: nothing can deny them */
} FsgProfilePlan;

FsgProfilePlan *fsg_profile_plan_free(FsgProfilePlan *p);
static inline void fsg_profile_plan_freep(FsgProfilePlan **p) {
        fsg_profile_plan_free(*p);
}

/* Plans every module of the profile against current (NULL: built here) and memo (may be
 * NULL). Every module that cannot change (ForeignConfig, InUse, Builtin, Overridden, ...) is
 * collected first: then ProfileConflict, naming all of them. A configuration directory that
 * cannot be written is ReadOnly. Nothing is touched either way. */
int fsg_profile_plan(const FsgContext *c, const FsgState *current, FsgWhatIfMemo *memo, const char *name,
                     uint64_t flags, FsgProfilePlan **ret, FsgError *e);

/* Under the writers' lock, once: plans again from the files as they are now, refuses with
 * ConcurrentChange unless that is exactly the authorized list, and writes it. Should a write
 * fail halfway, the files already written are put back as they were. A DRY_RUN plan writes
 * nothing. */
int fsg_profile_apply(const FsgContext *c, const FsgProfilePlan *authorized, FsgError *e);
/* The same with the lock held by the caller. */
int fsg_profile_apply_locked(const FsgContext *c, const FsgProfilePlan *authorized, FsgError *e);

/* The change a plan makes, as ApplyProfile returns it: "deny" or "deny-hard". */
const char *fsg_profile_change_string(const FsgPlan *p);

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

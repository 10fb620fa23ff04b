/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "observe.h"
#include "profile.h"
#include "store.h"

/* Applying a profile: a Deny plan per module that changes something, all made before
 * anything is written. */
typedef struct FsgProfilePlan {
        char profile[64];
        uint64_t flags;      /* as asked: FSG_FLAG_HARD, FSG_FLAG_FORCE, FSG_FLAG_DRY_RUN,
                              * FSG_FLAG_INCLUDE_ON_DEMAND, FSG_FLAG_OBSERVE */
        FsgPlan *plans;      /* only the ones that write, in module order; with FSG_FLAG_OBSERVE every
                              * module observed (observe.h), FSG_WRITE_NOTHING, all with one target */
        /* The profile is being observed, and this (enforcing) apply ends that; or, for a plan of
         * fsg_profile_plan_stop_observing(), there is an observation to end. */
        bool ends_observation;
        bool stop_only;      /* fsg_profile_plan_stop_observing()'s: nothing else to do */
        size_t n;
        char **skipped;      /* modules of the profile built into the kernel: nothing can deny them */
        /* An undo's plan (profile-undo.h): plans are FSG_OP_RESET, FSG_WRITE_REMOVE of files the
         * profile's apply wrote and nobody changed since; kept the ones left alone. */
        bool undo;
        struct FsgUndoKept *kept;
        size_t n_kept;
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

/* The plan that ends the observation in effect (observe.h) without enforcing anything:
 * profile is the observed one ("" and ends_observation false when there is none). */
int fsg_profile_plan_stop_observing(const FsgContext *c, FsgProfilePlan **ret, FsgError *e);
/* Whether the plan writes anything (a dry run does not). */
static inline bool fsg_profile_plan_writes(const FsgProfilePlan *p) {
        return !(p->flags & FSG_FLAG_DRY_RUN) && (p->n > 0 || p->ends_observation);
}
/* With the writers' lock held, an enforcing or observing plan (any kind: profile-write.h):
 * plans again from the files as they are now, refuses with ConcurrentChange unless that is
 * exactly the authorized list, and writes it. Should a write fail halfway, the files already
 * written are put back as they were. */
int fsg_profile_enforce_locked(const FsgContext *c, const FsgProfilePlan *authorized, FsgError *e);

/* The change a plan makes, as ApplyProfile returns it: "deny", "deny-hard" or "observe";
 * UndoProfile's "reset". */
const char *fsg_profile_change_string(const FsgPlan *p);

/* What a target held before a write, to put it back should a later write fail (all or
 * nothing: ApplyProfile, UndoProfile). */
typedef struct FsgBefore {
        FsgFileKind kind;
        char *content;     /* the file's bytes for a file; NULL for a mask or nothing */
} FsgBefore;
/* Reads what is at p->target now (p->target_id.kind says what to expect): 0 or a negative errno. */
int fsg_before_read(const FsgContext *c, const FsgPlan *p, FsgBefore *b);
/* Puts back what was at p->target before p was written. Best effort: the failure that
 * started it is what the caller reports. */
void fsg_before_restore(const FsgContext *c, const FsgPlan *p, const FsgBefore *b);
/* Writes plans in order, all or nothing: should one fail, the ones written before it are put
 * back as they were (fsg_before_restore()). With the lock held. */
int fsg_write_plans_locked(const FsgContext *c, const FsgPlan *plans, size_t n, FsgError *e);
/* A planner's last step: *pp handed to *ret, once a plan that writes files (not a dry run)
 * has found ROOT/etc/modprobe.d writable; ReadOnly, before anything is written, when not. */
int fsg_profile_plan_return(const FsgContext *c, FsgProfilePlan **pp, FsgProfilePlan **ret, FsgError *e);
/* Adds plan to pp's plans, for module and target: 0 or -ENOMEM. */
int fsg_profile_plan_add(FsgProfilePlan *pp, FsgPlan plan, const char *module, const char *target);

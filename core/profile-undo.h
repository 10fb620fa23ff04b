/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "profile-apply.h"

/* Undoing a profile: exactly the deny files its apply wrote (their mark, profile-mark.h) that
 * are still as it wrote them are removed, so each of those modules is back to what the other
 * files say (the vendor's default); nothing an admin set by hand since is touched. */

typedef enum FsgUndoKeptWhy {
        FSG_UNDO_KEPT_EDITED,      /* the profile's file, changed since it was written */
        FSG_UNDO_KEPT_BY_HAND,     /* a module of the profile whose fsgate file the profile did not
                                    * write as it is: denied (again) by hand */
} FsgUndoKeptWhy;

typedef struct FsgUndoKept {
        char module[64];
        char file[256];            /* system path */
        FsgUndoKeptWhy why;
} FsgUndoKept;

/* "kept-edited" or "kept-by-hand": the change UndoProfile returns for a module left alone. */
const char *fsg_undo_kept_string(FsgUndoKeptWhy why);
/* Adds module, whose file (a system path) is left alone for why, to pp's kept: 0 or -ENOMEM. */
int fsg_undo_kept_add(FsgProfilePlan *pp, FsgUndoKeptWhy why, const char *module, const char *file);

/* Plans the undo of profile name under c's root (flags: FSG_FLAG_DRY_RUN): plans (undo set)
 * the removals, kept the modules left alone. The name need not be a profile still (a site
 * profile removed since can be undone): NoSuchProfile only when it is neither a profile nor
 * named by any mark. A read-only configuration with something to remove is ReadOnly. */
int fsg_profile_plan_undo(const FsgContext *c, const char *name, uint64_t flags, FsgProfilePlan **ret, FsgError *e);
/* With the lock held: plans again and writes, all or nothing; ConcurrentChange unless the
 * removals are exactly the authorized ones (profile-write.h's fsg_profile_apply_locked() calls it). */
int fsg_profile_undo_locked(const FsgContext *c, const FsgProfilePlan *authorized, FsgError *e);

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "profile-apply.h"

/* Writing a profile plan of any kind, authorized as a whole: enforce (profile-apply.h),
 * observe, stop observing (observe.h) or undo (profile-undo.h). Above all of them, so that
 * none of them needs to know the others. A plan that writes nothing (a dry run, nothing to
 * do) returns at once. */
int fsg_profile_apply(const FsgContext *c, const FsgProfilePlan *authorized, FsgError *e);
/* The same with the writers' lock held by the caller (fsgated). */
int fsg_profile_apply_locked(const FsgContext *c, const FsgProfilePlan *authorized, FsgError *e);

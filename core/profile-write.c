/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "lock.h"
#include "macro.h"
#include "observe.h"
#include "profile-undo.h"
#include "profile-write.h"

int fsg_profile_apply_locked(const FsgContext *c, const FsgProfilePlan *authorized, FsgError *e) {
        assert(c);
        assert(authorized);

        if (!fsg_profile_plan_writes(authorized))
                return 0;
        if (authorized->stop_only)
                return fsg_observation_end_locked(c, authorized->profile, NULL, e);
        if (authorized->undo)
                return fsg_profile_undo_locked(c, authorized, e);
        return fsg_profile_enforce_locked(c, authorized, e);
}

int fsg_profile_apply(const FsgContext *c, const FsgProfilePlan *authorized, FsgError *e) {
        assert(c);
        assert(authorized);

        _cleanup_(fsg_lock_holdp) FsgLockHold lock = FSG_LOCK_HOLD(c);
        int r;

        if (!fsg_profile_plan_writes(authorized))
                return 0;
        r = fsg_lock(c, c->lock_timeout_usec, &lock.fd, e);
        if (r < 0)
                return r;
        return fsg_profile_apply_locked(c, authorized, e);
}

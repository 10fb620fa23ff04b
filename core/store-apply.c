/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a change writes, once authorized: the plan made again under the writers' lock and
 * written (store.h's apply half; the planning half is store.c). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>

#include "config.h"
#include "conffile.h"
#include "lock.h"
#include "override.h"
#include "profile-mark.h"
#include "sha256.h"
#include "store.h"
#include "strv.h"

/* The override as planned, made from the vendor file only while that is what the plan saw. */
static int write_override(const FsgContext *c, int dfd, const char *dir, const char *name, const FsgPlan *p,
                          FsgError *e) {
        _cleanup_free_ char *vendor = NULL, *content = NULL;
        _cleanup_strv_free_ char **allows = strv_split_spaces(p->allows), **strip = strv_split_spaces(p->strip);
        char sha[FSG_SHA256_HEX_SIZE];
        int r;

        if (!allows || !strip)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        r = fsg_read_regular(c, p->vendor, FSG_CONF_MAX, &vendor, NULL);
        if (r < 0 || !streq(fsg_sha256_hex(vendor, strlen(vendor), sha), p->vendor_sha256))
                return fsg_error(e, FSG_ERR_CONCURRENT_CHANGE, "%s changed while fsgate was planning; try again",
                                 p->vendor);
        content = fsg_override_content(p->vendor, vendor, allows, strip);
        if (!content)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        return fsg_atomic_write(dfd, dir, name, content, &p->target_id, e);
}

static int write_plan(const FsgContext *c, const FsgPlan *p, FsgError *e) {
        _cleanup_free_ char *sysdir = NULL, *dir = NULL, *content = NULL;
        _cleanup_close_ int dfd = -1;
        const char *name = strrchr(p->target, '/') + 1;

        sysdir = strndup(p->target, name - 1 - p->target);
        if (!sysdir || asprintf(&dir, "%s%s", c->root, sysdir) < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        /* The directory is resolved once, inside the root, and everything below happens
         * relative to it: a symlink swapped in meanwhile cannot send a write elsewhere. */
        dfd = fsg_open_dir(c, sysdir, p->write != FSG_WRITE_REMOVE);
        if (dfd == -ENOENT && p->write == FSG_WRITE_REMOVE)
                return 0; /* the file went with its directory */
        if (dfd < 0)
                return fsg_error_errno(e, -dfd, "Failed to open %s", dir);
        fsg_clean_temp_files_at(dfd);

        switch (p->write) {
        case FSG_WRITE_MASK:
                return fsg_atomic_symlink(dfd, dir, name, "/dev/null", &p->target_id, e);
        case FSG_WRITE_DENY:
                content = fsg_deny_file_content_mode(p->module, p->types, p->target, FSGATE_BLOCKED_HOOK,
                                                     p->flags & FSG_FLAG_HARD);
                if (content && *p->profile) {
                        char *marked = fsg_profile_mark_append(content, p->profile);
                        free(content);
                        content = marked;
                }
                if (!content)
                        return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
                return fsg_atomic_write(dfd, dir, name, content, &p->target_id, e);
        case FSG_WRITE_REMOVE:
                return fsg_durable_unlink(dfd, dir, name, &p->target_id, e);
        case FSG_WRITE_OVERRIDE:
                return write_override(c, dfd, dir, name, p, e);
        default:
                return 0;
        }
}

int fsg_write_plan_locked(const FsgContext *c, const FsgPlan *p, FsgError *e) {
        assert(c);
        assert(p);

        return write_plan(c, p, e);
}

int fsg_apply(const FsgContext *c, const FsgPlan *authorized, FsgError *e) {
        assert(c);
        assert(authorized);

        _cleanup_(fsg_lock_holdp) FsgLockHold lock = FSG_LOCK_HOLD(c);
        int r;

        if (authorized->write == FSG_WRITE_NOTHING || (authorized->flags & FSG_FLAG_DRY_RUN))
                return 0;
        r = fsg_lock(c, c->lock_timeout_usec, &lock.fd, e);
        if (r < 0)
                return r;
        return fsg_apply_locked(c, authorized, e);
}

int fsg_apply_locked(const FsgContext *c, const FsgPlan *authorized, FsgError *e) {
        assert(c);
        assert(authorized);

        FsgPlan now;
        int r;

        if (authorized->write == FSG_WRITE_NOTHING || (authorized->flags & FSG_FLAG_DRY_RUN))
                return 0;
        r = fsg_plan(c, authorized->op, authorized->module, authorized->flags, &now, e);
        if (r < 0)
                return r;
        if (now.write == FSG_WRITE_NOTHING)
                return 0; /* someone else got there first */
        if (now.action != authorized->action || now.write != authorized->write ||
            !streq(now.target, authorized->target) || !streq(now.allows, authorized->allows))
                return fsg_error(e, FSG_ERR_CONCURRENT_CHANGE,
                                 "The configuration of %s changed while authorizing; try again", now.module);
        return write_plan(c, &now, e);
}

int fsg_exempt_loaded(const FsgContext *c, char ***ret_done, char ***ret_failed, char ***ret_unmounted,
                      FsgError *e) {
        assert(c);
        assert(ret_done);

        _cleanup_(fsg_lock_holdp) FsgLockHold lock = FSG_LOCK_HOLD(c);
        int r;

        r = fsg_lock(c, c->lock_timeout_usec, &lock.fd, e);
        if (r < 0)
                return r;
        return fsg_exempt_loaded_locked(c, ret_done, ret_failed, ret_unmounted, e);
}

int fsg_exempt_loaded_locked(const FsgContext *c, char ***ret_done, char ***ret_failed, char ***ret_unmounted,
                             FsgError *e) {
        assert(c);
        assert(ret_done);

        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        _cleanup_strv_free_ char **done = NULL, **failed = NULL, **unmounted = NULL;
        int r;

        r = fsg_state_build(c, NULL, &s, e);
        if (r < 0)
                return r;
        for (size_t i = 0; i < s->n; i++) {
                const FsgEntry *x = &s->entries[i];
                FsgError err = {};
                FsgPlan p;
                char *msg;

                /* Only a distribution's default list (vendor files) is overridden: a deny
                 * an administrator wrote (/etc, /run, the command line) was meant, even for
                 * a filesystem in use (Deny with FORCE). */
                if (!x->denied || x->builtin || x->origin != FSG_ORIGIN_VENDOR)
                        continue;
                /* Loaded is not in use: any user who may create a user namespace makes the
                 * kernel load a module (mount -t hfs asks for fs-hfs before it checks the
                 * permission), and would so pick what stays allowed for good. Only a mount
                 * in the system's own namespace counts, which a user namespace cannot make;
                 * the rest is told. */
                if (!x->mounted) {
                        if (x->loaded && strv_extend(&unmounted, x->module) < 0)
                                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
                        continue;
                }
                if (fsg_plan(c, FSG_OP_ALLOW, x->module, 0, &p, &err) < 0 || fsg_apply_locked(c, &p, &err) < 0) {
                        /* A read-only or failing directory fails every module alike: the
                         * caller must learn that, not get a success that exempted nothing. */
                        if (err.code == FSG_ERR_READ_ONLY || err.code == FSG_ERR_FAILED) {
                                *ret_done = TAKE_PTR(done);
                                return fsg_error(e, err.code, "Cannot exempt %s: %.400s", x->module, err.message);
                        }
                        if (asprintf(&msg, "%s: %s", x->module, err.message) < 0 || strv_push(&failed, msg) < 0)
                                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
                        continue;
                }
                if (strv_extend(&done, x->module) < 0)
                        return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        }
        *ret_done = TAKE_PTR(done);
        if (ret_failed)
                *ret_failed = TAKE_PTR(failed);
        if (ret_unmounted)
                *ret_unmounted = TAKE_PTR(unmounted);
        return 0;
}

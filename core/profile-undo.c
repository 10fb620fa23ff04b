/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>

#include "alloc-util.h"
#include "confscan.h"
#include "name.h"
#include "profile-mark.h"
#include "profile-undo.h"
#include "strv.h"

/* Deny files are a few hundred bytes; a larger one was not written by a profile's apply. */
#define UNDO_READ_MAX 65536

const char *fsg_undo_kept_string(FsgUndoKeptWhy why) {
        return why == FSG_UNDO_KEPT_EDITED ? "kept-edited" : "kept-by-hand";
}

/* The module a deny file's name is for ("60-blacklist_fs-hfs.conf" → hfs), or false. */
static bool module_of_file(const char *file, char module[static 64]) {
        size_t l = strlen(file), pl = strlen(FSG_FILE_PREFIX), sl = strlen(FSG_FILE_SUFFIX);

        if (l <= pl + sl || l - pl - sl >= 64 || strncmp(file, FSG_FILE_PREFIX, pl) != 0 ||
            !streq(file + l - sl, FSG_FILE_SUFFIX))
                return false;
        snprintf(module, 64, "%.*s", (int) (l - pl - sl), file + pl);
        return fsg_name_is_valid(module);
}

/* What the fsgate deny file at target says of its profile: < 0 when it is not one of
 * fsgate's files (or cannot be read), else the mark and its profile; *id what was read. */
static int read_mark(const FsgContext *c, int dfd, const char *file, const char *target, const char *module,
                     char profile[static 64], FsgFileId *id) {
        _cleanup_free_ char *buf = malloc(UNDO_READ_MAX + 1);
        _cleanup_close_ int fd = -1;
        ssize_t n;

        if (!buf)
                return -ENOMEM;
        if (fsg_target_classify(c, target, module, id) != FSG_FILE_FSGATE)
                return -ENOENT;
        fd = fsg_open_regular_at(dfd, file, UNDO_READ_MAX);
        if (fd < 0)
                return fd;
        n = read(fd, buf, UNDO_READ_MAX + 1);
        if (n < 0)
                return -errno;
        /* Read what was classified, or nothing: a writer between the two is a change. */
        if (n > UNDO_READ_MAX || n != id->size)
                return -ESTALE;
        return fsg_profile_mark_check(buf, n, profile);
}

int fsg_undo_kept_add(FsgProfilePlan *pp, FsgUndoKeptWhy why, const char *module, const char *file) {
        FsgUndoKept *k = fsg_grow_one(pp->kept, pp->n_kept, sizeof(FsgUndoKept));

        if (!k)
                return -ENOMEM;
        pp->kept = k;
        k = &pp->kept[pp->n_kept++];
        *k = (FsgUndoKept) { .why = why };
        snprintf(k->module, sizeof(k->module), "%s", module);
        snprintf(k->file, sizeof(k->file), "%s", file);
        return 0;
}

/* One file of /etc/modprobe.d into pp: a reset when it is the profile's as written, kept
 * when it is the profile's but changed, or (a module of the profile, listed) fsgate's deny
 * with no mark: made by hand. The profile's listed modules are in mods (may be NULL). */
static int undo_file(const FsgContext *c, int dfd, const char *file, char **mods, FsgProfilePlan *pp, FsgError *e) {
        char module[64], profile[64], target[256];
        FsgFileId id = {};
        int r;

        if (!module_of_file(file, module))
                return 0;
        snprintf(target, sizeof(target), "/etc/modprobe.d/%s", file);
        r = read_mark(c, dfd, file, target, module, profile, &id);
        if (r == -ENOMEM)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        if (r < 0)
                return 0;
        if (streq(profile, pp->profile) && r == FSG_MARK_INTACT)
                /* Removing a deny lets the module load again: the allow authorization. */
                r = fsg_profile_plan_add(pp, (FsgPlan) { .op = FSG_OP_RESET, .write = FSG_WRITE_REMOVE,
                                                         .action = FSG_ACTION_ALLOW, .target_id = id },
                                         module, target);
        else if (streq(profile, pp->profile))
                r = fsg_undo_kept_add(pp, FSG_UNDO_KEPT_EDITED, module, target);
        else if (r == FSG_MARK_NONE && strv_contains(mods, module))
                r = fsg_undo_kept_add(pp, FSG_UNDO_KEPT_BY_HAND, module, target);
        else
                return 0;
        return r < 0 ? fsg_error(e, FSG_ERR_FAILED, "Out of memory") : 0;
}

static int undo_scan(const FsgContext *c, char **mods, FsgProfilePlan *pp, FsgError *e) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        int r;

        r = fsg_opendir(c, "/etc/modprobe.d", &d);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return fsg_error_errno(e, -r, "Failed to open %s/etc/modprobe.d", c->root);
        while ((de = readdir(d))) {
                r = undo_file(c, dirfd(d), de->d_name, mods, pp, e);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int compare_plan(const void *a, const void *b) {
        return strcmp(((const FsgPlan *) a)->module, ((const FsgPlan *) b)->module);
}

static int compare_kept(const void *a, const void *b) {
        return strcmp(((const FsgUndoKept *) a)->module, ((const FsgUndoKept *) b)->module);
}

int fsg_profile_plan_undo(const FsgContext *c, const char *name, uint64_t flags, FsgProfilePlan **ret, FsgError *e) {
        assert(c);
        assert(name);
        assert(ret);

        _cleanup_(fsg_profile_plan_freep) FsgProfilePlan *pp = NULL;
        _cleanup_(fsg_profile_freep) FsgProfile *prof = NULL;
        FsgError pe = {};
        int r;

        if (flags & ~FSG_FLAG_DRY_RUN)
                return fsg_error(e, FSG_ERR_INVALID_ARGS, "Flags not valid for UndoProfile: %s",
                                 fsg_flags_to_string(flags & ~FSG_FLAG_DRY_RUN, false));
        /* The name reaches a file name only through a mark's comparison, but is held to a
         * profile's name all the same: what it says in messages is then harmless. */
        r = fsg_profile_read(name, &prof, &pe);
        if (r < 0 && pe.code != FSG_ERR_NO_SUCH_PROFILE) {
                *e = pe;
                return r;
        }
        if (r < 0 && !fsg_profile_name_is_valid(name)) {
                *e = pe;
                return r;
        }
        pp = calloc(1, sizeof(FsgProfilePlan));
        if (!pp)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        snprintf(pp->profile, sizeof(pp->profile), "%s", name);
        pp->flags = flags;
        pp->undo = true;
        r = undo_scan(c, prof ? prof->modules : NULL, pp, e);
        if (r < 0)
                return r;
        /* A name that is no profile and that no file names: a typo, said as one. */
        if (!prof && pp->n == 0 && pp->n_kept == 0) {
                *e = pe;
                return -ENOENT;
        }
        /* qsort() of NULL is undefined even for no elements. */
        if (pp->n > 0)
                qsort(pp->plans, pp->n, sizeof(FsgPlan), compare_plan);
        if (pp->n_kept > 0)
                qsort(pp->kept, pp->n_kept, sizeof(FsgUndoKept), compare_kept);
        return fsg_profile_plan_return(c, &pp, ret, e);
}

int fsg_profile_undo_locked(const FsgContext *c, const FsgProfilePlan *authorized, FsgError *e) {
        assert(c);
        assert(authorized);

        _cleanup_(fsg_profile_plan_freep) FsgProfilePlan *now = NULL;
        bool same;
        int r;

        if (!fsg_profile_plan_writes(authorized))
                return 0;
        r = fsg_profile_plan_undo(c, authorized->profile, authorized->flags, &now, e);
        if (r < 0)
                return r;
        same = now->n == authorized->n;
        for (size_t i = 0; same && i < now->n; i++)
                same = streq(now->plans[i].module, authorized->plans[i].module) &&
                        streq(now->plans[i].target, authorized->plans[i].target);
        if (!same)
                return fsg_error(e, FSG_ERR_CONCURRENT_CHANGE,
                                 "The configuration changed while authorizing; nothing was changed, try again");
        return fsg_write_plans_locked(c, now->plans, now->n, e);
}

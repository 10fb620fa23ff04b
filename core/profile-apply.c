/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "alloc-util.h"
#include "config.h"
#include "conffile.h"
#include "lock.h"
#include "modtree.h"
#include "profile-apply.h"
#include "strv.h"
#include "time-util.h"

/* Applying a profile: one Deny plan per module, all made before anything is written, and
 * written all or nothing. */

FsgProfilePlan *fsg_profile_plan_free(FsgProfilePlan *p) {
        if (!p)
                return NULL;
        strv_free(p->skipped);
        free_many(p->plans, p->kept, p);
        return NULL;
}

const char *fsg_profile_change_string(const FsgPlan *p) {
        if (p->op == FSG_OP_RESET)
                return "reset";
        return p->flags & FSG_FLAG_OBSERVE ? "observe" : p->flags & FSG_FLAG_HARD ? "deny-hard" : "deny";
}

/* An observation's plan: each module of the profile a request of the kernel may load now
 * (allowed, with a module file), one "observe" each; no conflict refuses it: it denies
 * nothing. */
static int plan_observe(const FsgState *s, const FsgProfile *prof, FsgProfilePlan *pp, FsgError *e) {
        for (char **m = prof->modules; m && *m; m++) {
                const FsgEntry *x = fsg_state_find_module(s, *m);
                FsgPlan *p = &pp->plans[pp->n];

                if (!x || x->builtin || !x->available || x->denied)
                        continue;
                *p = (FsgPlan) { .op = FSG_OP_DENY, .flags = FSG_FLAG_OBSERVE, .write = FSG_WRITE_NOTHING,
                                 .action = FSG_ACTION_DENY };
                snprintf(p->module, sizeof(p->module), "%s", x->module);
                snprintf(p->target, sizeof(p->target), "%s", FSG_OBSERVE_PATH);
                pp->n++;
        }
        return 0;
}

/* Whether profile is the one observed under c's root. */
static int observing(const FsgContext *c, const char *profile, FsgError *e) {
        _cleanup_(fsg_observation_freep) FsgObservation *o = NULL;
        int r = fsg_observation_read(c, &o, e);

        return r <= 0 ? r : streq(o->profile, profile);
}

int fsg_profile_plan_stop_observing(const FsgContext *c, FsgProfilePlan **ret, FsgError *e) {
        assert(c);
        assert(ret);

        _cleanup_(fsg_observation_freep) FsgObservation *o = NULL;
        _cleanup_(fsg_profile_plan_freep) FsgProfilePlan *pp = calloc(1, sizeof(FsgProfilePlan));
        int r;

        if (!pp)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        r = fsg_observation_read(c, &o, e);
        if (r < 0)
                return r;
        if (o)
                snprintf(pp->profile, sizeof(pp->profile), "%s", o->profile);
        pp->ends_observation = o;
        pp->stop_only = true;
        *ret = TAKE_PTR(pp);
        return 0;
}

/* A module this kernel does not have, named by no file either: no entry for fsg_plan() to
 * resolve. Denied all the same, so that the next kernel that has it (and an auditor reading
 * the files) finds it denied: a deny file of its own, without routes to the hook (its types
 * are unknown). Only a free target: anything there would have made it an entry. */
static int plan_absent(const FsgContext *c, const char *module, uint64_t deny_flags, FsgPlan *p, FsgError *e) {
        FsgFileKind kind;

        *p = (FsgPlan) { .op = FSG_OP_DENY, .flags = deny_flags, .write = FSG_WRITE_DENY, .action = FSG_ACTION_DENY };
        snprintf(p->module, sizeof(p->module), "%s", module);
        snprintf(p->target, sizeof(p->target), "/etc/modprobe.d/" FSG_FILE_PREFIX "%s" FSG_FILE_SUFFIX, module);
        kind = fsg_target_classify(c, p->target, module, &p->target_id);
        if (kind != FSG_FILE_ABSENT && kind != FSG_FILE_MASK)
                return fsg_error(e, FSG_ERR_FOREIGN_CONFIG,
                                 "%s was not written by fsgate and fsgate will not change it; "
                                 "edit it by hand, or remove it and try again", p->target);
        return 0;
}

/* ReadOnly before anything is written, not after the first module. */
static int check_writable(const FsgContext *c, FsgError *e) {
        _cleanup_close_ int fd = fsg_open_dir(c, "/etc/modprobe.d", false);
        struct statvfs sv;

        if (fd == -ENOENT)
                fd = fsg_open_dir(c, "/etc", false);
        if (fd < 0)
                return fsg_error_errno(e, -fd, "Failed to open %s/etc/modprobe.d", c->root);
        if ((fstatvfs(fd, &sv) >= 0 && (sv.f_flag & ST_RDONLY)) || faccessat(fd, ".", W_OK, AT_EACCESS) < 0)
                return fsg_error(e, FSG_ERR_READ_ONLY,
                                 "%s/etc/modprobe.d cannot be written (read-only filesystem or image); nothing was changed",
                                 c->root);
        return 0;
}

int fsg_profile_plan_return(const FsgContext *c, FsgProfilePlan **pp, FsgProfilePlan **ret, FsgError *e) {
        int r;

        if ((*pp)->n > 0 && !((*pp)->flags & FSG_FLAG_DRY_RUN)) {
                r = check_writable(c, e);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(*pp);
        return 0;
}

int fsg_profile_plan_add(FsgProfilePlan *pp, FsgPlan plan, const char *module, const char *target) {
        FsgPlan *p = fsg_grow_one(pp->plans, pp->n, sizeof(FsgPlan));

        if (!p)
                return -ENOMEM;
        pp->plans = p;
        p = &pp->plans[pp->n++];
        *p = plan;
        snprintf(p->module, sizeof(p->module), "%s", module);
        snprintf(p->target, sizeof(p->target), "%s", target);
        return 0;
}

/* Why one module of a profile cannot be denied, in a word or two: the message reaches people,
 * who should not have to read error names (the full reasons follow it). */
static const char *refusal_words(FsgErrorCode code) {
        switch (code) {
        case FSG_ERR_FOREIGN_CONFIG:    return "decided by a file fsgate did not write";
        case FSG_ERR_IN_USE:            return "in use";
        case FSG_ERR_OVERRIDDEN:        return "overridden by /etc";
        case FSG_ERR_HARD_DENY_IGNORED: return "a hard deny cannot take effect";
        case FSG_ERR_BUILTIN:           return "built in";
        case FSG_ERR_NEEDED_FOR_BOOT:   return "needed to boot";
        case FSG_ERR_NO_SUCH_FILESYSTEM:
        case FSG_ERR_NOT_A_FILESYSTEM:  return "no such filesystem";
        default:                        return "refused";
        }
}

/* The modules of a profile that cannot be denied, gathered to be named all at once. */
typedef struct Refusals {
        char names[512];       /* "MODULE (why in words)", first: a message cut at its size names all */
        char details[512];     /* each refusal's own message */
        size_t n;
} Refusals;

static void refusals_add(Refusals *rf, const char *module, const FsgError *me) {
        size_t ln = strlen(rf->names), ld = strlen(rf->details);

        snprintf(rf->names + ln, sizeof(rf->names) - ln, "%s%s (%s)", ln ? ", " : "", module, refusal_words(me->code));
        snprintf(rf->details + ld, sizeof(rf->details) - ld, "%s%.400s", ld ? " | " : "", me->message);
        rf->n++;
}

/* Plans one module of the profile into pp: its Deny plan when that writes, a built-in one
 * among the skipped, a refusal among rf's. Returns only what is not the module's own fault. */
static int plan_module(const FsgContext *c, const FsgState *current, FsgWhatIfMemo *memo, FsgModTree **tree,
                       const char *module, uint64_t deny_flags, FsgProfilePlan *pp, Refusals *rf, FsgError *e) {
        const FsgEntry *x = fsg_state_find_module(current, module);
        FsgError me = {};
        FsgPlan p;
        int r;

        if (!x && !*tree) {
                r = fsg_modtree_load(c, tree, e);
                if (r < 0)
                        return r;
        }
        /* Nothing can deny what is compiled in (with or without an entry: pstore is none until
         * a file names it): left out, not a conflict that would keep the rest of the profile
         * from ever applying. */
        if ((x && x->builtin) || (!x && fsg_modtree_is_builtin(*tree, module)))
                return strv_extend(&pp->skipped, module) < 0 ? fsg_error(e, FSG_ERR_FAILED, "Out of memory") : 0;

        r = x ? fsg_plan_cached(c, current, memo, FSG_OP_DENY, module, deny_flags, &p, &me) :
                plan_absent(c, module, deny_flags, &p, &me);
        if (r < 0 && (me.code == FSG_ERR_FAILED || me.code == FSG_ERR_INVALID_ARGS || me.code == FSG_ERR_BUSY)) {
                /* Not the module's own fault: no point listing every module. */
                *e = me;
                return r;
        }
        if (r < 0)
                refusals_add(rf, module, &me);
        else if (p.write != FSG_WRITE_NOTHING) {
                /* Marked as the profile's, for an undo to find (profile-mark.h). */
                if (p.write == FSG_WRITE_DENY)
                        snprintf(p.profile, sizeof(p.profile), "%s", pp->profile);
                pp->plans[pp->n++] = p;
        }
        return 0;
}

int fsg_profile_plan(const FsgContext *c, const FsgState *current, FsgWhatIfMemo *memo, const char *name,
                     uint64_t flags, FsgProfilePlan **ret, FsgError *e) {
        assert(c);
        assert(name);
        assert(ret);

        _cleanup_(fsg_state_unrefp) FsgState *built = NULL;
        _cleanup_(fsg_profile_freep) FsgProfile *prof = NULL;
        _cleanup_(fsg_profile_plan_freep) FsgProfilePlan *pp = NULL;
        _cleanup_(fsg_modtree_freep) FsgModTree *tree = NULL;
        Refusals rf = {};
        uint64_t deny_flags;
        int r;

        r = fsg_flags_check(FSG_FLAGS_APPLY_PROFILE, flags, e);
        if (r < 0)
                return r;
        r = fsg_profile_load_current(c, &current, &built, name, flags & FSG_FLAG_INCLUDE_ON_DEMAND, &prof, e);
        if (r < 0)
                return r;
        deny_flags = (flags & FSG_FLAG_FORCE) | (prof->hard || (flags & FSG_FLAG_HARD) ? FSG_FLAG_HARD : 0);

        pp = calloc(1, sizeof(FsgProfilePlan));
        if (!pp || !(pp->plans = calloc(strv_length(prof->modules) + 1, sizeof(FsgPlan))))
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        snprintf(pp->profile, sizeof(pp->profile), "%s", prof->name);
        pp->flags = flags;
        if (flags & FSG_FLAG_OBSERVE) {
                r = plan_observe(current, prof, pp, e);
                return r < 0 ? r : fsg_profile_plan_return(c, &pp, ret, e);
        }
        r = observing(c, prof->name, e);
        if (r < 0)
                return r;
        pp->ends_observation = r > 0;
        for (char **m = prof->modules; m && *m; m++) {
                r = plan_module(c, current, memo, &tree, *m, deny_flags, pp, &rf, e);
                if (r < 0)
                        return r;
        }
        if (rf.n > 0)
                return fsg_error(e, FSG_ERR_PROFILE_CONFLICT,
                                 "Nothing was changed: %zu module%s of profile %s cannot be denied: %s. %s",
                                 rf.n, rf.n == 1 ? "" : "s", pp->profile, rf.names, rf.details);
        return fsg_profile_plan_return(c, &pp, ret, e);
}

int fsg_before_read(const FsgContext *c, const FsgPlan *p, FsgBefore *b) {
        _cleanup_close_ int fd = -1;
        struct stat st;
        ssize_t n;

        b->kind = p->target_id.kind;
        if (b->kind == FSG_FILE_ABSENT || b->kind == FSG_FILE_MASK)
                return 0;
        fd = fsg_open_regular(c, p->target, FSG_CONF_MAX);
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return -errno;
        if ((uint64_t) st.st_size > FSG_CONF_MAX)
                return -EFBIG; /* grown since the open: not read into memory */
        b->content = calloc(1, st.st_size + 1);
        if (!b->content)
                return -ENOMEM;
        n = read(fd, b->content, st.st_size);
        return n < 0 ? -errno : 0;
}

void fsg_before_restore(const FsgContext *c, const FsgPlan *p, const FsgBefore *b) {
        _cleanup_free_ char *sysdir = strndup(p->target, strrchr(p->target, '/') - p->target), *dir = NULL;
        _cleanup_close_ int dfd = -1;
        const char *name = strrchr(p->target, '/') + 1;
        FsgFileId now = {};

        if (!sysdir || asprintf(&dir, "%s%s", c->root, sysdir) < 0)
                return;
        dfd = fsg_open_dir(c, sysdir, false);
        if (dfd < 0)
                return;
        (void) fsg_target_classify(c, p->target, p->module, &now);
        if (b->kind == FSG_FILE_ABSENT)
                (void) fsg_durable_unlink(dfd, dir, name, &now, NULL);
        else if (b->kind == FSG_FILE_MASK)
                (void) fsg_atomic_symlink(dfd, dir, name, "/dev/null", &now, NULL);
        else if (b->content)
                (void) fsg_atomic_write(dfd, dir, name, b->content, &now, NULL);
}

static bool same_plans(const FsgProfilePlan *a, const FsgProfilePlan *b) {
        if (a->n != b->n)
                return false;
        for (size_t i = 0; i < a->n; i++)
                if (!streq(a->plans[i].module, b->plans[i].module) || a->plans[i].write != b->plans[i].write ||
                    a->plans[i].flags != b->plans[i].flags || !streq(a->plans[i].target, b->plans[i].target))
                        return false;
        return true;
}

/* Writes the observation of profile as the configuration stands now. Observing the profile
 * already observed again keeps the time it began: the evidence gathered since stays its. */
static int observation_write(const FsgContext *c, const char *profile, bool include_on_demand, FsgError *e) {
        _cleanup_(fsg_observation_freep) FsgObservation *old = NULL;
        _cleanup_(fsg_state_unrefp) FsgState *built = NULL;
        _cleanup_(fsg_profile_freep) FsgProfile *prof = NULL;
        _cleanup_free_ char *content = NULL;
        const FsgState *s = NULL;
        uint64_t since = fsg_realtime_usec();
        int r;

        r = fsg_profile_load_current(c, &s, &built, profile, include_on_demand, &prof, e);
        if (r < 0)
                return r;
        r = fsg_observation_read(c, &old, e);
        if (r < 0)
                return r;
        if (old && streq(old->profile, prof->name) && old->since_usec > 0)
                since = old->since_usec;
        content = fsg_observation_content(s, prof->name, prof->modules, since, FSGATE_BLOCKED_HOOK, NULL);
        if (!content)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        return fsg_observation_write_locked(c, content, e);
}

int fsg_profile_enforce_locked(const FsgContext *c, const FsgProfilePlan *authorized, FsgError *e) {
        assert(c);
        assert(authorized);

        _cleanup_(fsg_profile_plan_freep) FsgProfilePlan *now = NULL;
        int r;

        r = fsg_profile_plan(c, NULL, NULL, authorized->profile, authorized->flags, &now, e);
        if (r < 0)
                return r;
        if (!same_plans(authorized, now) || authorized->ends_observation != now->ends_observation)
                return fsg_error(e, FSG_ERR_CONCURRENT_CHANGE,
                                 "The configuration (or, for a computed profile, what is in use) changed while "
                                 "authorizing; nothing was changed, try again");
        if (now->flags & FSG_FLAG_OBSERVE)
                return observation_write(c, now->profile, now->flags & FSG_FLAG_INCLUDE_ON_DEMAND, e);
        r = fsg_write_plans_locked(c, now->plans, now->n, e);
        /* Enforced, the observation has done its job; should its removal fail, the denies
         * stand and its hook runs stay quiet (a denied module is not observed). */
        if (r >= 0 && now->ends_observation)
                r = fsg_observation_end_locked(c, now->profile, NULL, e);
        return r;
}

int fsg_write_plans_locked(const FsgContext *c, const FsgPlan *plans, size_t n, FsgError *e) {
        FsgBefore *before = calloc(n + 1, sizeof(FsgBefore));
        size_t done = 0;
        int r = 0;

        if (!before)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        for (size_t i = 0; i < n; i++) {
                r = fsg_before_read(c, &plans[i], &before[i]);
                if (r < 0) {
                        r = fsg_error(e, FSG_ERR_FAILED, "Failed to read %s%s: %s; nothing was changed", c->root,
                                      plans[i].target, fsg_strerror(-r));
                        goto finish;
                }
        }
        for (; done < n; done++) {
                r = fsg_write_plan_locked(c, &plans[done], e);
                if (r < 0)
                        break;
        }
        if (r < 0)
                /* All or nothing: what was written goes back, newest first. */
                for (size_t i = done; i-- > 0;)
                        fsg_before_restore(c, &plans[i], &before[i]);
finish:
        for (size_t i = 0; i < n; i++)
                free(before[i].content);
        free(before);
        return r;
}

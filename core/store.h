/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include "conffile.h"
#include "fsgate-api.h"
#include "state.h"


typedef enum FsgOp {
        FSG_OP_ALLOW,
        FSG_OP_DENY,
        FSG_OP_RESET,
} FsgOp;

/* The polkit action a change needs. */
typedef enum FsgAction {
        FSG_ACTION_NONE,
        FSG_ACTION_ALLOW,
        FSG_ACTION_DENY,
        FSG_ACTION_LOAD,
        FSG_ACTION_GRANT,
} FsgAction;

const char *fsg_action_id(FsgAction a);
/* The method's name ("Deny"), and flag bits as the bus documentation names them
 * ("HARD|LOAD_NOW", unknown bits in hex) or, as_options, as fsgatectl's options ("--hard
 * --load"), for messages. The latter in a per-thread buffer. */
const char *fsg_op_to_string(FsgOp op);
const char *fsg_flags_to_string(uint64_t flags, bool as_options);

/* What takes flags, for the one table of which ones each takes (fsg_flags_check()). */
typedef enum FsgFlagsOf {
        FSG_FLAGS_ALLOW,
        FSG_FLAGS_DENY,
        FSG_FLAGS_RESET,
        FSG_FLAGS_APPLY_PROFILE,
        FSG_FLAGS_AUDIT_PROFILE,
        FSG_FLAGS_GRANT,
        _FSG_FLAGS_OF_MAX,
} FsgFlagsOf;
/* InvalidArgs naming the flags of that what does not take (and a hard and soft deny at once). */
int fsg_flags_check(FsgFlagsOf of, uint64_t flags, FsgError *e);

typedef enum FsgWrite {
        FSG_WRITE_NOTHING,   /* nothing would change: reply at once */
        FSG_WRITE_MASK,
        FSG_WRITE_DENY,
        FSG_WRITE_REMOVE,
        FSG_WRITE_OVERRIDE,  /* target: an override of the vendor file (override.h) */
} FsgWrite;

typedef struct FsgPlan {
        FsgOp op;
        uint64_t flags;
        char module[64];
        FsgWrite write;
        FsgAction action;
        char target[256];    /* system path of the file to write */
        char types[256];     /* the module's types, space-separated (for a deny file) */
        FsgFileId target_id; /* what was at target: a write replaces or removes only that file */
        /* FSG_WRITE_OVERRIDE: the vendor file (system path) and its checksum as planned
         * against, the modules the override allows, and the names whose lines it leaves out
         * (space-separated). */
        char vendor[256];
        char vendor_sha256[65];
        char allows[512];
        char strip[1536];
        /* FSG_WRITE_DENY of ApplyProfile: the profile, whose mark the file gets (profile-mark.h);
         * "" for a deny by hand, which writes none. */
        char profile[64];
} FsgPlan;

/* Validates a request and decides what it would write and which authorization it needs,
 * without touching anything. Unknown flags, names and every refusal are errors here. */
int fsg_plan(const FsgContext *c, FsgOp op, const char *name, uint64_t flags, FsgPlan *ret, FsgError *e);

/* Whether Describe's allow_refused or reset_refused asks for a plan of op on x, and with which
 * flags: an Allow of what is denied and not built in; a Reset where fsgate's kind of file
 * decides (origin admin, or runtime: then with FSG_FLAG_RUNTIME). Elsewhere the answer is "". */
bool fsg_refusal_wants_plan(const FsgEntry *x, FsgOp op, uint64_t *ret_flags);

/* What a state says of one module with one of its files out of the way: the part of a plan
 * that needs a build of its own (is an Allow still refused? which authorization does a Reset
 * need?). */
typedef struct FsgWhatIf {
        char *key;
        bool denied;
        FsgOrigin origin;
        char *deciding_file;
        bool hard;              /* would still refuse an explicit load (Allow with LOAD_NOW) */
        char *install_command;
        char *install_file;
} FsgWhatIf;

#define FSG_WHAT_IF_MEMO_MAX 1024

/* The "what if" answers computed for one configuration. Whoever keeps it must clear it
 * whenever the state it plans against is rebuilt. */
typedef struct FsgWhatIfMemo {
        FsgWhatIf *items;
        size_t n;
} FsgWhatIfMemo;
void fsg_what_if_memo_clear(FsgWhatIfMemo *memo);

/* fsg_plan() against a state the caller keeps (current, which must be up to date) and its
 * memo: no build at all when the memo has the answer, so an unauthorized caller costs what a
 * read costs. Either may be NULL (built, or kept only for this call). */
int fsg_plan_cached(const FsgContext *c, const FsgState *current, FsgWhatIfMemo *memo, FsgOp op, const char *name,
                    uint64_t flags, FsgPlan *ret, FsgError *e);
/* Why an Allow, and a Reset, of x would be refused now (Describe's allow_refused and
 * reset_refused), each planned as fsg_refusal_wants_plan() says against current and memo (as
 * fsg_plan_cached(); NULL, NULL: built here): the refusal, or an empty message where it would
 * be done or is not asked. */
void fsg_plan_refusals(const FsgContext *c, const FsgState *current, FsgWhatIfMemo *memo, const FsgEntry *x,
                       FsgError *ret_allow, FsgError *ret_reset);

/* Under the lock: plans again (the files may have changed since), refuses if the needed
 * authorization differs from the one granted, and writes. */
int fsg_apply(const FsgContext *c, const FsgPlan *authorized, FsgError *e);
/* The same with the lock held by the caller (fsgated takes it without waiting in place). */
int fsg_apply_locked(const FsgContext *c, const FsgPlan *authorized, FsgError *e);
/* Writes a plan made with the lock held, as it is (ApplyProfile: one lock, one fresh plan for
 * every module, many writes). */
int fsg_write_plan_locked(const FsgContext *c, const FsgPlan *p, FsgError *e);

/* Every module a vendor file denies that is mounted (a filesystem of one of its types in
 * ROOT/proc/mounts) gets a persistent allow. Loaded alone is not enough: an unprivileged
 * user can make the kernel load a module (a mount in a user namespace), so those go to
 * *ret_unmounted instead, for the caller to report. Returns the modules allowed; ones refused
 * (e.g. by a foreign file) are reported in *ret_failed as "MODULE: reason". A failure to write
 * at all (ReadOnly, I/O) stops at once and is returned as the error; *ret_done then holds what
 * was written before it. ret_failed and ret_unmounted may be NULL. */
int fsg_exempt_loaded(const FsgContext *c, char ***ret_done, char ***ret_failed, char ***ret_unmounted,
                      FsgError *e);
/* The same with the lock held by the caller: one lock for every module it allows. */
int fsg_exempt_loaded_locked(const FsgContext *c, char ***ret_done, char ***ret_failed, char ***ret_unmounted,
                             FsgError *e);


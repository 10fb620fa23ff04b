/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "fsg-i18n.h"
#include "json-writer.h"
#include "state.h"
#include "store.h"
#include "observe.h"
#include "open-route.h"
#include "profile-apply.h"
#include "profile-audit.h"
#include "profile-undo.h"

/* A module's word in list's STATE column (and --state=). */
typedef enum CtlState {
        CTL_STATE_ALLOWED,
        CTL_STATE_DENIED,
        CTL_STATE_BUILTIN,
        _CTL_STATE_MAX,
} CtlState;

/* What `list` shows (ctl-list.c): --state=, --origin= and PATTERN... */
typedef struct CtlFilter {
        unsigned states;        /* a bit per CtlState; 0: any */
        unsigned origins;       /* a bit per FsgOrigin; 0: any */
        char **patterns;        /* shell globs (fnmatch) on names, then types; NULL: every module */
} CtlFilter;

/* A row of list: its entry and, where a pattern matched one of its types and not its
 * name, that type (what the row says it was found by). */
typedef struct CtlRow {
        const FsgEntry *entry;
        const char *matched_type;
} CtlRow;

typedef struct CtlOptions {
        const char *root;            /* offline when set */
        const char *kernel_release;
        bool json;
        bool risk;                   /* list: the risk facts' columns */
        bool ask_password;
} CtlOptions;

/* One backend per way of reaching the truth; both fill the core's own types, so the
 * output code cannot tell them apart. */
typedef struct CtlBackend {
        int (*list)(const CtlOptions *o, FsgState **ret, FsgError *e);
        int (*get)(const CtlOptions *o, const char *name, FsgState **ret, FsgError *e);
        /* get, with the description (entry->described): hard or soft, the install command,
         * every file that mentions the module. */
        int (*describe)(const CtlOptions *o, const char *name, FsgState **ret, FsgError *e);
        int (*change)(const CtlOptions *o, FsgOp op, const char *name, uint64_t flags, FsgError *e);
        int (*load)(const CtlOptions *o, const char *name, FsgError *e);
        /* Grant: loaded for seconds (0: the service's default) and/or while the medium at device
         * (NULL: none) is there; *ret the grant's id, "" when there was nothing to grant. */
        int (*grant)(const CtlOptions *o, const char *name, uint64_t seconds, const char *device, char **ret,
                     FsgError *e);
        int (*exempt)(const CtlOptions *o, char ***ret, FsgError *e);
        /* ApplyProfile: the exact list of changes made (or, with FSG_FLAG_DRY_RUN, to make). */
        int (*apply_profile)(const CtlOptions *o, const char *name, uint64_t flags, FsgProfilePlan **ret,
                             FsgError *e);
        /* UndoProfile: the resets made (or to make) as plans, the modules left alone as kept. */
        int (*undo_profile)(const CtlOptions *o, const char *name, uint64_t flags, FsgProfilePlan **ret,
                            FsgError *e);
        /* AuditProfile: per module, compliant or not and why. */
        int (*audit_profile)(const CtlOptions *o, const char *name, bool hard, FsgAudit **ret, FsgError *e);
        /* OpenSafely: device ("/dev/NAME") or "" with image_fd, the image opened by the caller;
         * the mountpoint and the open's id. */
        int (*open_safely)(const CtlOptions *o, const char *device, int image_fd, const char *route,
                           char **ret_mountpoint, char **ret_id, FsgError *e);
        int (*close_safely)(const CtlOptions *o, const char *what, FsgError *e);
        /* GetObservation: *ret NULL when nothing is observed. */
        int (*get_observation)(const CtlOptions *o, FsgObservation **ret, FsgError *e);
        /* StopObserving: *ret the profile whose observation ended, "" when none was on. */
        int (*stop_observing)(const CtlOptions *o, char **ret, FsgError *e);
} CtlBackend;

extern const CtlBackend ctl_backend_bus;
extern const CtlBackend ctl_backend_offline;

/* Texts for people are translated (_(), the "fsgate" domain); what scripts read is not:
 * --json (fsgatectl runs it in the C locale, error messages included), verb, option,
 * module, origin and file names, and the cells of the list table (the packages'
 * maintainer scripts read STATE, ORIGIN, LOADED and MOUNTED with awk). */

/* s as the text output prints a string from a file or a message that may quote one:
 * fsg_cescape()d, so that a name or a line with ESC sequences cannot rewrite the screen.
 * Valid until 16 more calls (enough for the arguments of one printf); never NULL. */
const char *ctl_esc(const char *s);
/* w as one shell word (fsg_shell_quote()) fit for a terminal, from ctl_esc()'s ring: every
 * value in a command printed for a person to run goes through it. */
const char *ctl_sh(const char *w);
/* How many columns s takes: its characters (UTF-8), not its bytes. */
size_t ctl_width(const char *s);
/* The larger of w and s's width. */
size_t ctl_max_width(size_t w, const char *s);
/* s, then spaces up to width columns (none when s is that wide already). */
void ctl_pad(const char *s, size_t width);
/* Translated, for the text output. */
const char *ctl_state_word(const FsgEntry *x);
const char *ctl_yes_no(bool b);

/* "fsgatectl" as a hint must spell it to work as written: with --root (and --kernel-release)
 * offline. */
const char *ctl_command(const CtlOptions *o);
/* Names the configuration files the answer had to skip (on stderr). */
void ctl_warn_unreadable(const FsgState *s);
void ctl_print_table(const FsgState *s, const CtlRow *rows, size_t n);
CtlState ctl_entry_state(const FsgEntry *x);
const char *ctl_state_to_string(CtlState st);
/* --state=WORD[,WORD...] and --origin=, added to f: 0, or InvalidArgs naming the valid words. */
int ctl_filter_parse_states(CtlFilter *f, const char *arg, FsgError *e);
int ctl_filter_parse_origins(CtlFilter *f, const char *arg, FsgError *e);
/* --state=help, --origin=help: the words, one a line. */
void ctl_filter_print_words(bool origins);
/* s's entries f selects, in s's order, into *ret (freed by the caller): 0, or -ENOMEM. */
int ctl_select(const FsgState *s, const CtlFilter *f, CtlRow **ret, size_t *ret_n);
/* fsgatectl list: the exit status. */
int ctl_list(const CtlBackend *be, const CtlOptions *o, const CtlFilter *f);
/* list --json: the rows' entries, with "matched" ("module NAME", "type TYPE") when patterns
 * chose them. */
void ctl_print_json_rows(const CtlRow *rows, size_t n, bool matched);
#define CTL_LOG_LINES_MAX 10000
/* fsgatectl log: the blocks fsgated logged since since_usec (0: all), at most lines of them,
 * and the would-blocks of an observation, marked as such; only_would_block: those only. */
int ctl_log(const CtlOptions *o, uint64_t since_usec, unsigned lines, bool only_would_block);
/* fsgatectl initramfs: 0 when the initramfs agrees with the configuration, 9 when not. */
int ctl_initramfs(const CtlOptions *o);
/* The check itself (ctl-initramfs.c), for status and audit too. It reads the system fsgatectl
 * runs on (or --root), not the service's: on a real system they are one. */
typedef struct CtlInitramfs CtlInitramfs;
typedef struct CtlInitramfsDisagreement {
        const FsgEntry *here, *inside;
        bool mask;      /* allowed here by a /dev/null mask */
} CtlInitramfsDisagreement;
/* 0 and *ret, NULL when no generator is installed (nothing to compare); or an error in e
 * (FSG_ERR_NO_KERNEL: no module tree, so no initramfs of it). */
int ctl_initramfs_check(const CtlOptions *o, CtlInitramfs **ret, FsgError *e);
CtlInitramfs *ctl_initramfs_free(CtlInitramfs *k);
void ctl_initramfs_freep(CtlInitramfs **k);
/* module's disagreement, NULL when the initramfs does not hold it or agrees. */
const CtlInitramfsDisagreement *ctl_initramfs_disagreement(const CtlInitramfs *k, const char *module);
const char *ctl_initramfs_image(const CtlInitramfs *k);
/* The command that would make it again (update-initramfs -u -k KVER, dracut -f --kver KVER). */
const char *ctl_initramfs_command(const CtlInitramfs *k);
/* d's allow is a mask this generator does not copy: making the initramfs again does not help. */
bool ctl_initramfs_mask_not_copied(const CtlInitramfs *k, const CtlInitramfsDisagreement *d);
/* d as `initramfs` shows it: a line of text, an object of its --json. */
void ctl_initramfs_print_disagreement(const CtlInitramfsDisagreement *d);
void ctl_initramfs_json_disagreement(JsonWriter *w, const CtlInitramfs *k, const CtlInitramfsDisagreement *d);
/* status's initramfs row and advice for module (each NULL when there is nothing to say):
 * 0, or -ENOMEM. */
int ctl_initramfs_status(const CtlOptions *o, const char *module, char **ret_row, char **ret_advice);
/* --since's argument: 0 and *ret (microseconds since the epoch), or -EINVAL, -ERANGE. */
int ctl_parse_since(const char *s, uint64_t *ret);
/* "90s", "90min", "12h", "7d" (and a bare number of seconds when bare_seconds) in µs. */
int ctl_parse_span(const char *s, bool bare_seconds, uint64_t *ret_usec);
/* list --risk: the risk facts (core/risk.h) of every module, one row each. */
void ctl_print_risk_table(const CtlRow *rows, size_t n);
void ctl_print_json(const FsgState *s, bool single);
/* The first entry of each of n states (one per name of a change): one object if single, else an array. */
void ctl_print_json_states(FsgState * const *states, size_t n, bool single);
/* An entry's fields (core/entry-fields.h) under their D-Bus names, as members of the object
 * w is in: the entry's always, the description's when x is described. */
void ctl_json_entry_fields(JsonWriter *w, const FsgEntry *x);
/* What status says beyond the entry, looked up by fsgatectl itself on the system it runs
 * on (or --root); each NULL when there is nothing to say. */
/* Open safely for one filesystem type as this system (or --root's) has it: why, status and
 * routes say the same (ctl-open.c). */
typedef struct CtlOpenRoute {
        const FsgOpenRoute *route;      /* NULL: no userspace driver is known for the type */
        char installed[128];            /* where its driver is installed, "" when it is not */
} CtlOpenRoute;
typedef struct CtlStatusExtras {
        char *initramfs_row, *initramfs_advice;        /* ctl_initramfs_status() */
        char *desktop_row;                             /* ctl_desktop_mount_row() */
        CtlOpenRoute *open_routes;                     /* ctl_open_routes_of_types() */
} CtlStatusExtras;
/* x as `status` shows it: a described entry (CtlBackend.describe). */
void ctl_print_status(const CtlOptions *o, const FsgState *s, const FsgEntry *x, const CtlStatusExtras *extras);
/* Runs argv (argv[0] by its path, else found on PATH) with its standard output into buf,
 * at most size - 1 bytes, NUL-terminated, and waits for it: the bytes read, and its exit
 * status in *ret_status (-1 when a signal ended it); or -ENOENT when it could not start,
 * another negative errno. For small answers of tools (blkid). */
int ctl_spawn_output(char * const argv[], char *buf, size_t size, int *ret_status);
/* status's "Desktop mount" row for x: would udisks2 mount a medium with it for the active
 * local user without asking (ctl-desktop.c)? 0 and *ret_row (NULL without udisks2), or -ENOMEM. */
int ctl_desktop_mount_row(const CtlOptions *o, const FsgEntry *x, char **ret_row);
void ctl_print_strv_json(char **l);
/* Prints the error (with --json as {"error": D-Bus name, "message": text}, on stderr) and
 * returns the exit status fsgatectl(1) documents for it. */
int ctl_fail(const CtlOptions *o, const FsgError *e);

/* `fsgatectl apply PROFILE` and `fsgatectl audit PROFILE` (ctl-profile.c). Return the exit
 * status; audit's is CTL_EXIT_NOT_COMPLIANT when a module is not. */
#define CTL_EXIT_NOT_COMPLIANT 9
/* allow --load: the allow was written, the load failed (LoadFailed alone, nothing written, is 7). */
#define CTL_EXIT_CHANGED_LOAD_FAILED 11
int ctl_apply_profile(const CtlBackend *be, const CtlOptions *o, const char *name, uint64_t flags);
int ctl_audit_profile(const CtlBackend *be, const CtlOptions *o, const char *name, bool hard);
/* `fsgatectl undo PROFILE` (ctl-undo.c). */
int ctl_undo_profile(const CtlBackend *be, const CtlOptions *o, const char *name, uint64_t flags);

/* ctl-observe.c: `fsgatectl stop-observing`; the observation in status; and what apply checks
 * first: the autoloads an observation of the profile recorded that the apply would now block
 * (without --force: ObservedUse, exit 5, nothing changed). */
int ctl_stop_observing(const CtlBackend *be, const CtlOptions *o);
void ctl_observation_status(const CtlBackend *be, const CtlOptions *o, const char *module);
int ctl_observation_gate(const CtlBackend *be, const CtlOptions *o, const char *name, uint64_t flags, FsgError *e);

/* `fsgatectl why DEVICE|TYPE`. Returns the exit status. */
int ctl_why(const CtlBackend *be, const CtlOptions *o, const char *arg);

/* `fsgatectl routes`, `open DEVICE|IMAGE` and `close` (ctl-open.c). Return the exit status. */
int ctl_routes(const CtlBackend *be, const CtlOptions *o);
/* c: --root's context, NULL for the running system. */
void ctl_open_route(const FsgContext *c, const char *type, CtlOpenRoute *ret);
/* Whether `fsgatectl open` can work for it now: fsgated starts its driver, which is installed. */
static inline bool ctl_open_route_ready(const CtlOpenRoute *r) {
        return fsg_open_route_usable(r->route) && *r->installed;
}
/* Of x's types, the first with a route (ready before merely known); type, if given, first. */
void ctl_open_route_of_entry(const FsgContext *c, const FsgEntry *x, const char *type, CtlOpenRoute *ret,
                             const char **ret_type);
/* status's Open safely rows: *ret one route per type of x, in x->types' order; NULL when
 * --root's tree cannot be read (nothing to say rather than a guess). 0, or -ENOMEM. */
int ctl_open_routes_of_types(const CtlOptions *o, const FsgEntry *x, CtlOpenRoute **ret);
/* --root's context for the drivers' lookup (*ret NULL without --root). */
int ctl_open_context(const CtlOptions *o, FsgContext **ret, FsgError *e);
int ctl_open(const CtlBackend *be, const CtlOptions *o, const char *arg, const char *route);
int ctl_close(const CtlBackend *be, const CtlOptions *o, const char *arg);

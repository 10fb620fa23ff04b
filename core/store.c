/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>

#include "bootfs.h"
#include "config.h"
#include "load.h"
#include "lock.h"
#include "name.h"
#include "override.h"
#include "store.h"
#include "strv.h"

const char *fsg_action_id(FsgAction a) {
        switch (a) {
        case FSG_ACTION_ALLOW: return FSGATE_ACTION_ALLOW;
        case FSG_ACTION_DENY:  return FSGATE_ACTION_DENY;
        case FSG_ACTION_LOAD:  return FSGATE_ACTION_LOAD;
        case FSG_ACTION_GRANT: return FSGATE_ACTION_GRANT;
        default:               return NULL;
        }
}

const char *fsg_op_to_string(FsgOp op) {
        switch (op) {
        case FSG_OP_ALLOW: return "Allow";
        case FSG_OP_DENY:  return "Deny";
        case FSG_OP_RESET: return "Reset";
        default:           return "?";
        }
}

const char *fsg_flags_to_string(uint64_t flags, bool as_options) {
        /* One row a flag: the bus's name for it and fsgatectl's option. */
        static const struct {
                uint64_t flag;
                const char *name, *option;
        } names[] = {
                { FSG_FLAG_RUNTIME, "RUNTIME", "--runtime" }, { FSG_FLAG_LOAD_NOW, "LOAD_NOW", "--load" },
                { FSG_FLAG_FORCE, "FORCE", "--force" },       { FSG_FLAG_HARD, "HARD", "--hard" },
                { FSG_FLAG_SOFT, "SOFT", "--soft" },          { FSG_FLAG_DRY_RUN, "DRY_RUN", "--dry-run" },
                { FSG_FLAG_INCLUDE_ON_DEMAND, "INCLUDE_ON_DEMAND", "--include-on-demand" },
                { FSG_FLAG_OBSERVE, "OBSERVE", "--observe" },
        };
        static _Thread_local char buf[128];
        const char *sep = as_options ? " " : "|";
        size_t l = 0;

        buf[0] = 0;
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (flags & names[i].flag) {
                        l += snprintf(buf + l, sizeof(buf) - l, "%s%s", l ? sep : "",
                                      as_options ? names[i].option : names[i].name);
                        flags &= ~names[i].flag;
                }
        if (flags)
                snprintf(buf + l, sizeof(buf) - l, "%s0x%llx", l ? sep : "", (unsigned long long) flags);
        return buf;
}

int fsg_flags_check(FsgFlagsOf of, uint64_t flags, FsgError *e) {
        static const struct {
                const char *name;
                uint64_t valid;
        } takes[_FSG_FLAGS_OF_MAX] = {
                [FSG_FLAGS_ALLOW]         = { "Allow", FSG_FLAG_DRY_RUN | FSG_FLAG_RUNTIME | FSG_FLAG_LOAD_NOW },
                [FSG_FLAGS_DENY]          = { "Deny", FSG_FLAG_DRY_RUN | FSG_FLAG_RUNTIME | FSG_FLAG_FORCE | FSG_FLAG_HARD |
                                                      FSG_FLAG_SOFT },
                [FSG_FLAGS_RESET]         = { "Reset", FSG_FLAG_DRY_RUN | FSG_FLAG_RUNTIME },
                [FSG_FLAGS_APPLY_PROFILE] = { "ApplyProfile", FSG_FLAG_HARD | FSG_FLAG_FORCE | FSG_FLAG_DRY_RUN |
                                                              FSG_FLAG_INCLUDE_ON_DEMAND | FSG_FLAG_OBSERVE },
                [FSG_FLAGS_AUDIT_PROFILE] = { "AuditProfile", FSG_FLAG_HARD },
                [FSG_FLAGS_GRANT]         = { "Grant", 0 },
        };

        assert(of < _FSG_FLAGS_OF_MAX);
        if (flags & ~takes[of].valid)
                return fsg_error(e, FSG_ERR_INVALID_ARGS, "Flags not valid for %s: %s", takes[of].name,
                                 fsg_flags_to_string(flags & ~takes[of].valid, false));
        if ((flags & FSG_FLAG_HARD) && (flags & FSG_FLAG_SOFT))
                return fsg_error(e, FSG_ERR_INVALID_ARGS, "A deny is either hard or soft, not both");
        return 0;
}

static const char *target_dir(uint64_t flags) {
        return flags & FSG_FLAG_RUNTIME ? "/run/modprobe.d" : "/etc/modprobe.d";
}

/* The lines of the file at path that name module (or its types' requests), "line N: TEXT"
 * joined by "; "; NULL when there are none or the file cannot be read. */
static char *lines_naming(const FsgContext *c, const char *path, const char *module, char * const *types) {
        _cleanup_strv_free_ char **strip = NULL, **lines = NULL;
        _cleanup_free_ char *content = NULL;
        char *s = NULL;
        size_t l = 0;

        if (!fsg_override_name_ok(path) || fsg_read_regular(c, path, FSG_CONF_MAX, &content, NULL) < 0 ||
            fsg_override_strip_add(&strip, module, types) < 0 || fsg_conf_lines_naming(content, strip, &lines) < 0 ||
            !lines)
                return NULL;
        for (char **i = lines; *i; i++)
                l += strlen(*i) + 2;
        s = malloc(l + 1);
        if (!s)
                return NULL;
        s[0] = 0;
        for (char **i = lines; *i; i++) {
                if (i != lines)
                        strcat(s, "; ");
                strcat(s, *i);
        }
        return s;
}

/* Why a module is still denied after our own file is out of the way, when no override of ours
 * can lift it: what decides, and the very lines to remove by hand. Never a mask: masking a
 * file lifts every module it denies, and an admin's file is not ours to replace. */
static int foreign_denial(const FsgContext *c, const FsgEntry *x, const FsgWhatIf *y, const char *why,
                          FsgError *e) {
        _cleanup_free_ char *lines = NULL;

        if (y->origin == FSG_ORIGIN_CMDLINE)
                return fsg_error(e, FSG_ERR_FOREIGN_CONFIG,
                                 "%s is denied by modprobe.blacklist= on the kernel command line; "
                                 "remove it from the boot loader configuration", x->module);
        if (!y->deciding_file || !*y->deciding_file)
                return fsg_error(e, FSG_ERR_FOREIGN_CONFIG,
                                 "%s cannot be autoloaded for a reason fsgate does not manage (module file missing?)",
                                 x->module);
        lines = lines_naming(c, y->deciding_file, x->module, x->types);
        if (lines)
                return fsg_error(e, FSG_ERR_FOREIGN_CONFIG,
                                 "%s is denied by %s, which fsgate did not write and will not change%s; to allow %s, "
                                 "remove from that file: %s", x->module, y->deciding_file, why ?: "", x->module, lines);
        return fsg_error(e, FSG_ERR_FOREIGN_CONFIG,
                         "%s is denied by %s, which fsgate did not write and will not change%s; edit that file by hand",
                         x->module, y->deciding_file, why ?: "");
}

/* Whether fsgate's own file at target says "install MODULE ...": a hard deny. */
static bool own_file_is_hard(const FsgContext *c, const char *target, const char *module) {
        FsgRule *rules = NULL;
        size_t n = 0;
        bool hard = false;

        if (fsg_conf_parse_at(c, target, 0, &rules, &n) >= 0)
                for (size_t i = 0; i < n; i++)
                        hard = hard || (rules[i].kind == FSG_RULE_INSTALL && streq(rules[i].name, module));
        fsg_rules_free(rules, n);
        return hard;
}

void fsg_what_if_memo_clear(FsgWhatIfMemo *memo) {
        for (size_t i = 0; i < memo->n; i++) {
                free(memo->items[i].key);
                free(memo->items[i].deciding_file);
                free(memo->items[i].install_command);
                free(memo->items[i].install_file);
        }
        free(memo->items);
        *memo = (FsgWhatIfMemo) {};
}

/* What the state would say of module with the file at path absent (or a mask). A full
 * build: remembered in memo for as long as the caller's configuration stays, so
 * that asking again, as every unauthorized caller may, costs a lookup. */
static int what_if(const FsgContext *c, FsgWhatIfMemo *memo, const char *path, bool as_mask, const char *content,
                   const char *module, FsgWhatIf *ret, FsgError *e) {
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        _cleanup_free_ char *key = NULL, *source = NULL, *cmd = NULL, *cmd_source = NULL;
        FsgOverride ov = { .path = path, .as_mask = as_mask, .module = module, .content = content };
        char sha[FSG_SHA256_HEX_SIZE] = "";
        const FsgEntry *y;
        int r;

        if (content)
                fsg_sha256_hex(content, strlen(content), sha);
        if (asprintf(&key, "%d %s %s %s", as_mask, module, path, sha) < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        for (size_t i = 0; i < memo->n; i++)
                if (streq(memo->items[i].key, key)) {
                        *ret = memo->items[i];
                        return 0;
                }
        r = fsg_state_build(c, &ov, &s, e);
        if (r < 0)
                return r;
        y = fsg_state_find(s, module);
        if (!y)
                return fsg_error(e, FSG_ERR_FAILED, "%s vanished while planning", module);
        source = strdup(y->deciding_file ?: "");
        cmd = strdup(y->install_command ?: "");
        cmd_source = strdup(y->install_file ?: "");
        if (!source || !cmd || !cmd_source)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        /* Bounded by the number of modules times the few files a plan looks at; a cap all the
         * same, since every entry costs a build to make. */
        if (memo->n >= FSG_WHAT_IF_MEMO_MAX)
                fsg_what_if_memo_clear(memo);
        FsgWhatIf *items = reallocarray(memo->items, memo->n + 1, sizeof(FsgWhatIf));
        if (!items)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        memo->items = items;
        items[memo->n] = (FsgWhatIf) { .key = TAKE_PTR(key), .denied = y->denied, .origin = y->origin,
                                       .deciding_file = TAKE_PTR(source), .hard = y->hard,
                                       .install_command = TAKE_PTR(cmd), .install_file = TAKE_PTR(cmd_source) };
        *ret = items[memo->n++];
        return 0;
}

static int join_into(char *buf, size_t size, char * const *l, const char *what, FsgError *e) {
        size_t used = 0;

        buf[0] = 0;
        for (char * const *i = l; i && *i; i++) {
                size_t n = strlen(*i) + (used ? 1 : 0);
                if (used + n >= size)
                        return fsg_error(e, FSG_ERR_FAILED, "Too many %s for one override", what);
                used += snprintf(buf + used, size - used, "%s%s", used ? " " : "", *i);
        }
        return 0;
}

/* Plans the override of vendor at target (a system path in /etc/modprobe.d) allowing allows:
 * its content from the vendor file as it is now, and z, what module would be with it in
 * place. An empty allows, or a vendor file gone, removes the override instead. old_sha: the
 * checksum the override being rewritten was made from (NULL: none yet); if the vendor file
 * changed since, the rewrite may lift what the override still denied, and needs what an
 * Allow needs. */
static int plan_override(const FsgContext *c, const FsgState *current, FsgWhatIfMemo *memo, const char *module,
                         const char *target, const char *vendor, char * const *allows, const char *old_sha,
                         FsgAction action, FsgPlan *p, FsgWhatIf *z, FsgError *e) {
        _cleanup_free_ char *content = NULL, *new = NULL;
        _cleanup_strv_free_ char **strip = NULL;
        char sha[FSG_SHA256_HEX_SIZE] = "";
        FsgFileKind kind;
        int r;

        r = fsg_read_regular(c, vendor, FSG_CONF_MAX, &content, NULL);
        if (r < 0 && r != -ENOENT && r != -EBADFD)
                return fsg_error_errno(e, -r, "Failed to read %s", vendor);
        if (content)
                fsg_sha256_hex(content, strlen(content), sha);
        snprintf(p->target, sizeof(p->target), "%s", target);
        kind = fsg_target_classify(c, target, NULL, &p->target_id);
        if (kind != FSG_FILE_ABSENT && kind != FSG_FILE_FSGATE)
                return fsg_error(e, FSG_ERR_FOREIGN_CONFIG,
                                 "%s was not written by fsgate and fsgate will not change it", target);
        p->action = old_sha && !streq(old_sha, sha) ? FSG_ACTION_ALLOW : action;
        if (!content || !allows || !allows[0]) {
                if (kind == FSG_FILE_ABSENT)
                        return 0;
                p->write = FSG_WRITE_REMOVE;
                return what_if(c, memo, target, false, NULL, module, z, e);
        }
        for (char * const *m = allows; *m; m++) {
                const FsgEntry *a = fsg_state_find(current, *m);
                if (fsg_override_strip_add(&strip, *m, a ? a->types : NULL) < 0)
                        return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        }
        new = fsg_override_content(vendor, content, allows, strip);
        if (!new)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        r = join_into(p->allows, sizeof(p->allows), allows, "modules", e);
        if (r >= 0)
                r = join_into(p->strip, sizeof(p->strip), strip, "modules", e);
        if (r < 0)
                return r;
        snprintf(p->vendor, sizeof(p->vendor), "%s", vendor);
        snprintf(p->vendor_sha256, sizeof(p->vendor_sha256), "%s", sha);
        p->write = FSG_WRITE_OVERRIDE;
        return what_if(c, memo, target, false, new, module, z, e);
}

static const char *basename_of(const char *path) {
        return strrchr(path, '/') + 1;
}

/* Allow of x, still denied (y) with our own file masked: an override of the vendor file that
 * denies it (a new one, or ours updated), unless what denies it is not a vendor file. */
static int plan_allow_override(const FsgContext *c, const FsgState *current, FsgWhatIfMemo *memo, const FsgEntry *x,
                               const FsgWhatIf *y, uint64_t flags, FsgPlan *p, FsgWhatIf *z, FsgError *e) {
        _cleanup_(fsg_override_header_done) FsgOverrideHeader h = {};
        _cleanup_free_ char *target = NULL;
        _cleanup_strv_free_ char **allows = NULL;
        const char *vendor = NULL, *old_sha = NULL;
        int r = 0;

        if (y->origin == FSG_ORIGIN_VENDOR || y->origin == FSG_ORIGIN_LOCAL)
                vendor = y->deciding_file;
        else if (y->origin == FSG_ORIGIN_ADMIN && y->deciding_file && (r = fsg_override_read(c, y->deciding_file, &h)) > 0 &&
                 streq(basename_of(h.vendor), basename_of(y->deciding_file))) {
                vendor = h.vendor;
                old_sha = h.sha256;
                allows = TAKE_PTR(h.allows);
        }
        if (r < 0)
                return fsg_error_errno(e, -r, "Failed to read %s", y->deciding_file);
        if (!vendor)
                return foreign_denial(c, x, y, NULL, e);
        if (!fsg_override_name_ok(vendor))
                return foreign_denial(c, x, y, " (its name cannot go into an override)", e);
        if (flags & FSG_FLAG_RUNTIME)
                return fsg_error(e, FSG_ERR_FOREIGN_CONFIG,
                                 "%s is denied by %s, which denies other modules too; fsgate allows %s by an override of "
                                 "it in /etc/modprobe.d, which cannot be for this boot only: allow it without the "
                                 "runtime flag", x->module, y->deciding_file, x->module);
        if (strv_extend_unique(&allows, x->module) < 0 || asprintf(&target, "/etc/modprobe.d/%s", basename_of(vendor)) < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        return plan_override(c, current, memo, x->module, target, vendor, allows, old_sha, FSG_ACTION_ALLOW, p, z, e);
}

/* x is allowed by our override at x->deciding_file: rewritten from the vendor file as it is now,
 * without x (remove) or with it (a refresh of a stale override). 0 and nothing planned when
 * the override does not allow x (any more). */
static int plan_override_again(const FsgContext *c, const FsgState *current, FsgWhatIfMemo *memo, const FsgEntry *x,
                               bool remove, FsgPlan *p, FsgError *e) {
        _cleanup_(fsg_override_header_done) FsgOverrideHeader h = {};
        _cleanup_strv_free_ char **allows = NULL;
        FsgWhatIf z;
        int r;

        r = fsg_override_read(c, x->deciding_file, &h);
        if (r < 0)
                return fsg_error_errno(e, -r, "Failed to read %s", x->deciding_file);
        if (r == 0 || !strv_contains(h.allows, x->module) || !streq(basename_of(h.vendor), basename_of(x->deciding_file)))
                return 0;
        for (char **m = h.allows; *m; m++)
                if ((!remove || !streq(*m, x->module)) && strv_extend(&allows, *m) < 0)
                        return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        return plan_override(c, current, memo, x->module, x->deciding_file, h.vendor, allows, h.sha256,
                             remove ? FSG_ACTION_DENY : FSG_ACTION_ALLOW, p, &z, e);
}

static bool allowed_by_override(const FsgEntry *x) {
        return !x->denied && x->override_of && *x->override_of && x->deciding_file &&
               strncmp(x->deciding_file, "/etc/modprobe.d/", 16) == 0;
}

/* What the planner of each operation works from: the module, the state it is in and our file
 * for it as it is now. */
typedef struct Planning {
        const FsgContext *c;
        const FsgState *current;
        FsgWhatIfMemo *memo;
        const FsgEntry *x;
        uint64_t flags;
        FsgFileKind kind;       /* what is at p->target */
        FsgFileKind etc_kind;   /* a runtime change: what is at our file's name in /etc */
        FsgPlan *p;
} Planning;

static int refuse_foreign_target(const FsgPlan *p, FsgError *e) {
        return fsg_error(e, FSG_ERR_FOREIGN_CONFIG,
                         "%s was not written by fsgate and fsgate will not change it; "
                         "edit it by hand, or remove it and try again", p->target);
}

static int refuse_overridden(const FsgEntry *x, FsgError *e) {
        return fsg_error(e, FSG_ERR_OVERRIDDEN,
                         "/etc/modprobe.d/" FSG_FILE_PREFIX "%s" FSG_FILE_SUFFIX " takes precedence over /run/modprobe.d, "
                         "so a runtime change cannot take effect; change it without the runtime flag or reset it first",
                         x->module);
}

/* An Allow with LOAD_NOW whose allow would stand but whose load could not follow: w is what
 * the state would say after the write. */
static int refuse_load_after_allow(const FsgEntry *x, uint64_t flags, const FsgWhatIf *w, FsgError *e) {
        if (!(flags & FSG_FLAG_LOAD_NOW) || x->loaded || x->builtin)
                return 0;
        if (w->hard)
                return fsg_hard_denied(x->module, w->install_command, w->install_file, e);
        if (fsg_entry_load_blocker(x))
                return fsg_hard_denied_dependency(x->module, fsg_entry_load_blocker(x), e);
        return 0;
}

/* An Allow still denied (y) with our own file masked: an override of the vendor file that
 * denies it. */
static int plan_allow_denied_elsewhere(const Planning *pl, const FsgWhatIf *y, FsgError *e) {
        const FsgEntry *x = pl->x;
        FsgWhatIf z = {};
        int r;

        /* Two writes (our deny file, and an override of the vendor file that denies it too)
         * are not one plan: one step at a time, said as such. */
        if (pl->kind == FSG_FILE_FSGATE && (y->origin == FSG_ORIGIN_VENDOR || y->origin == FSG_ORIGIN_LOCAL))
                return fsg_error(e, FSG_ERR_FOREIGN_CONFIG,
                                 "%s is denied by fsgate's %s and by %s too; reset it first, then allow it", x->module,
                                 pl->p->target, y->deciding_file);
        r = plan_allow_override(pl->c, pl->current, pl->memo, x, y, pl->flags, pl->p, &z, e);
        if (r < 0)
                return r;
        if (z.denied) {
                /* Still denied with the override: by another file, named as it stands (one
                 * vendor file is lifted at a time). */
                pl->p->write = FSG_WRITE_NOTHING;
                return foreign_denial(pl->c, x, &z, NULL, e);
        }
        return refuse_load_after_allow(x, pl->flags, &z, e);
}

static int plan_allow(const Planning *pl, FsgError *e) {
        const FsgEntry *x = pl->x;
        FsgWhatIf y;
        int r;

        if (!x->denied) {
                /* Nothing to write, but a load asked for must be possible: refused here,
                 * before any authorization. */
                if (pl->flags & FSG_FLAG_LOAD_NOW) {
                        r = fsg_load_refused(x, e);
                        if (r < 0)
                                return r;
                }
                /* Allowed by an override of a vendor file that changed since: made again from
                 * the vendor file as it is now. */
                if (x->override_stale && allowed_by_override(x) && !(pl->flags & FSG_FLAG_RUNTIME))
                        return plan_override_again(pl->c, pl->current, pl->memo, x, false, pl->p, e);
                return 0;
        }
        if (pl->kind == FSG_FILE_FOREIGN)
                return refuse_foreign_target(pl->p, e);
        if (pl->etc_kind != FSG_FILE_ABSENT)
                return refuse_overridden(x, e);
        r = what_if(pl->c, pl->memo, pl->p->target, true, NULL, x->module, &y, e);
        if (r < 0)
                return r;
        if (y.denied)
                return plan_allow_denied_elsewhere(pl, &y, e);
        /* Our file names x alone, so its dependencies stay as they are without it. */
        r = refuse_load_after_allow(x, pl->flags, &y, e);
        if (r < 0)
                return r;
        pl->p->write = FSG_WRITE_MASK;
        pl->p->action = FSG_ACTION_ALLOW;
        return 0;
}

/* A soft deny asked for while x is denied hard: by fsgate's own file in the other directory
 * (say which flag reaches it) or by a file fsgate did not write. */
static int refuse_soft_over_hard(const Planning *pl, FsgError *e) {
        const FsgEntry *x = pl->x;
        bool runtime = pl->flags & FSG_FLAG_RUNTIME;
        char other[256];

        snprintf(other, sizeof(other), "%s/" FSG_FILE_PREFIX "%s" FSG_FILE_SUFFIX,
                 runtime ? "/etc/modprobe.d" : "/run/modprobe.d", x->module);
        if (streq(x->install_file, other) && fsg_target_classify(pl->c, other, x->module, NULL) == FSG_FILE_FSGATE)
                return fsg_error(e, FSG_ERR_OVERRIDDEN, "fsgate's hard deny of %s is in %s: make it soft %s the runtime flag",
                                 x->module, other, runtime ? "without" : "with");
        return fsg_error(e, FSG_ERR_FOREIGN_CONFIG,
                         "%s is denied hard by %s, which fsgate did not write; edit that file by hand", x->module,
                         *x->install_file ? x->install_file : "the configuration");
}

/* A Deny where a deny is in place already: 1 when that decides the plan (often: nothing to
 * write), 0 when a deny file is still to be written, or a refusal. */
static int plan_deny_over_existing(const Planning *pl, FsgError *e) {
        const FsgEntry *x = pl->x;
        bool hard = pl->flags & FSG_FLAG_HARD, soft = pl->flags & FSG_FLAG_SOFT;

        if ((pl->kind == FSG_FILE_FSGATE || pl->kind == FSG_FILE_SUSE_NEVER) && pl->etc_kind == FSG_FILE_ABSENT) {
                bool own_hard = pl->kind == FSG_FILE_FSGATE && own_file_is_hard(pl->c, pl->p->target, x->module);

                /* A hard deny stays hard unless weakening it is asked for: a plain deny, a soft
                 * profile or a button must not undo a compliance setting. */
                if (own_hard && !soft)
                        return 1;
                /* Our file says what the flags ask for, or a hard deny is asked for and
                 * something else refuses loads already: nothing to change. */
                if (own_hard == hard || (hard && x->hard))
                        return 1;
                if (own_hard) {
                        /* Explicit loads work again: that is what allowing grants. */
                        pl->p->write = FSG_WRITE_DENY;
                        pl->p->action = FSG_ACTION_ALLOW;
                        return 1;
                }
                return 0;
        }
        if (soft && x->hard)
                return refuse_soft_over_hard(pl, e);
        /* Already denied (hard, if asked for) by something that outlives a reboot (or by
         * anything, for a runtime deny): nothing to add. */
        if (x->denied && ((pl->flags & FSG_FLAG_RUNTIME) || x->origin != FSG_ORIGIN_RUNTIME) &&
            pl->kind != FSG_FILE_MASK && (!hard || x->hard))
                return 1;
        return 0;
}

/* No flag lifts this refusal: what the next boot needs to mount is not the admin's to
 * trade for a smaller attack surface by accident, and --force means "in use now, I know". */
static int refuse_boot_filesystem(const Planning *pl, FsgError *e) {
        FsgBootFs b;
        int r = fsg_boot_filesystem_of(pl->c, pl->current, pl->x, &b);

        if (r < 0)
                return fsg_error(e, FSG_ERR_FAILED,
                                 "Cannot tell which filesystems the system boots from (%s/proc/mounts, %s/etc/fstab: %s); "
                                 "nothing was changed for %s", pl->c->root, pl->c->root, fsg_strerror(-r), pl->x->module);
        if (r == 0)
                return 0;
        return fsg_error(e, FSG_ERR_NEEDED_FOR_BOOT,
                         "%s cannot be denied: %s is on %s (by %s), which the next boot must mount; "
                         "with a deny, the next boot or a regenerated initramfs could fail. "
                         "fsgate refuses this even with --force; nothing was changed",
                         pl->x->module, b.mount_point, b.type, b.table);
}

static int plan_deny(const Planning *pl, FsgError *e) {
        const FsgEntry *x = pl->x;
        int r;

        if (x->builtin)
                return fsg_error(e, FSG_ERR_BUILTIN, "%s is built into kernel %s and cannot be denied", x->module,
                                 pl->c->kver);
        if (pl->kind == FSG_FILE_FOREIGN)
                return refuse_foreign_target(pl->p, e);
        /* Written, "modprobe MODULE" would load it all the same: a compliance request that
         * cannot take effect is refused, not reported done. */
        if ((pl->flags & FSG_FLAG_HARD) && x->install_ignored)
                return fsg_error(e, FSG_ERR_HARD_DENY_IGNORED,
                                 "A hard deny of %s cannot take effect: %s has soft dependencies, and kmod "
                                 "ignores install commands for such a module, so \"modprobe %s\" would still "
                                 "load it. A soft deny still stops the kernel from loading it on its own",
                                 x->module, x->module, x->module);
        r = plan_deny_over_existing(pl, e);
        if (r != 0)
                return r < 0 ? r : 0;
        r = refuse_boot_filesystem(pl, e);
        if (r < 0)
                return r;
        if (pl->etc_kind != FSG_FILE_ABSENT)
                return refuse_overridden(x, e);
        if (!(pl->flags & FSG_FLAG_FORCE) && (x->loaded || x->mounted))
                return fsg_error(e, FSG_ERR_IN_USE,
                                 "%s is %s now; after a deny the next boot could not mount it. "
                                 "Unmount it first, or force the deny", x->module,
                                 x->mounted ? "mounted" : "loaded");
        pl->p->write = FSG_WRITE_DENY;
        pl->p->action = FSG_ACTION_DENY;
        return 0;
}

static int plan_reset(const Planning *pl, FsgError *e) {
        const FsgEntry *x = pl->x;
        FsgWhatIf y;
        int r;

        /* Our override allows it: its lines go back in (the file goes with the last module it
         * allows). */
        if (pl->kind == FSG_FILE_ABSENT && !(pl->flags & FSG_FLAG_RUNTIME) && allowed_by_override(x)) {
                r = refuse_boot_filesystem(pl, e);
                return r < 0 ? r : plan_override_again(pl->c, pl->current, pl->memo, x, true, pl->p, e);
        }
        if (pl->kind == FSG_FILE_ABSENT)
                return 0;
        if (pl->kind == FSG_FILE_FOREIGN)
                return refuse_foreign_target(pl->p, e);
        r = what_if(pl->c, pl->memo, pl->p->target, false, NULL, x->module, &y, e);
        if (r < 0)
                return r;
        /* The deny it would bring back is a deny like any other. */
        if (y.denied && !x->denied && (r = refuse_boot_filesystem(pl, e)) < 0)
                return r;
        pl->p->write = FSG_WRITE_REMOVE;
        /* Weakening a hard deny, even to a soft one, needs what allowing needs. */
        pl->p->action = y.denied && !(x->hard && !y.hard) ? FSG_ACTION_DENY : FSG_ACTION_ALLOW;
        return 0;
}

/* Our file for pl->x: its name in p, and what is there now (and, for a runtime change, at
 * the same name in /etc, which hides the one in /run). */
static int plan_target(Planning *pl, FsgError *e) {
        const FsgEntry *x = pl->x;
        FsgPlan *p = pl->p;

        snprintf(p->module, sizeof(p->module), "%s", x->module);
        for (char **t = x->types; t && *t; t++) {
                size_t l = strlen(p->types);
                snprintf(p->types + l, sizeof(p->types) - l, "%s%s", l ? " " : "", *t);
        }
        snprintf(p->target, sizeof(p->target), "%s/" FSG_FILE_PREFIX "%s" FSG_FILE_SUFFIX, target_dir(pl->flags),
                 x->module);
        pl->kind = fsg_target_classify(pl->c, p->target, x->module, &p->target_id);
        pl->etc_kind = FSG_FILE_ABSENT;
        if (pl->flags & FSG_FLAG_RUNTIME) {
                _cleanup_free_ char *etc = NULL;
                if (asprintf(&etc, "/etc/modprobe.d/" FSG_FILE_PREFIX "%s" FSG_FILE_SUFFIX, x->module) < 0)
                        return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
                pl->etc_kind = fsg_target_classify(pl->c, etc, x->module, NULL);
        }
        return 0;
}

int fsg_plan_cached(const FsgContext *c, const FsgState *current, FsgWhatIfMemo *memo, FsgOp op, const char *name,
                    uint64_t flags, FsgPlan *p, FsgError *e) {
        assert(c);
        assert(name);
        assert(p);

        _cleanup_(fsg_state_unrefp) FsgState *built = NULL;
        _cleanup_(fsg_what_if_memo_clear) FsgWhatIfMemo own = {};
        Planning pl = { .c = c, .memo = memo ?: &own, .flags = flags, .p = p };
        int r;

        *p = (FsgPlan) { .op = op, .flags = flags };
        r = fsg_flags_check(op == FSG_OP_ALLOW ? FSG_FLAGS_ALLOW : op == FSG_OP_DENY ? FSG_FLAGS_DENY : FSG_FLAGS_RESET,
                            flags, e);
        if (r < 0)
                return r;
        r = fsg_state_current_or_build(c, &current, &built, e);
        if (r < 0)
                return r;
        r = fsg_state_resolve_unknown_kernel(c, current, name, &built, &pl.x, e);
        if (r < 0)
                return r;
        /* The state may have been built again (no kernel): plan against the one x is in. */
        pl.current = built ?: current;
        r = plan_target(&pl, e);
        if (r < 0)
                return r;
        switch (op) {
        case FSG_OP_ALLOW:
                return plan_allow(&pl, e);
        case FSG_OP_DENY:
                return plan_deny(&pl, e);
        case FSG_OP_RESET:
                return plan_reset(&pl, e);
        }
        return 0;
}

bool fsg_refusal_wants_plan(const FsgEntry *x, FsgOp op, uint64_t *ret_flags) {
        assert(x);
        assert(ret_flags);

        *ret_flags = 0;
        if (op == FSG_OP_ALLOW)
                return x->denied && !x->builtin;
        if (op != FSG_OP_RESET || (x->origin != FSG_ORIGIN_ADMIN && x->origin != FSG_ORIGIN_RUNTIME))
                return false;
        if (x->origin == FSG_ORIGIN_RUNTIME)
                *ret_flags = FSG_FLAG_RUNTIME;
        return true;
}

void fsg_plan_refusals(const FsgContext *c, const FsgState *current, FsgWhatIfMemo *memo, const FsgEntry *x,
                       FsgError *ret_allow, FsgError *ret_reset) {
        uint64_t flags;
        FsgPlan p;

        assert(x);
        assert(ret_allow);
        assert(ret_reset);

        *ret_allow = *ret_reset = (FsgError) {};
        if (fsg_refusal_wants_plan(x, FSG_OP_ALLOW, &flags))
                (void) fsg_plan_cached(c, current, memo, FSG_OP_ALLOW, x->module, flags, &p, ret_allow);
        if (fsg_refusal_wants_plan(x, FSG_OP_RESET, &flags))
                (void) fsg_plan_cached(c, current, memo, FSG_OP_RESET, x->module, flags, &p, ret_reset);
}

int fsg_plan(const FsgContext *c, FsgOp op, const char *name, uint64_t flags, FsgPlan *p, FsgError *e) {
        assert(c);
        assert(name);
        assert(p);

        return fsg_plan_cached(c, NULL, NULL, op, name, flags, p, e);
}

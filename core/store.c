/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "config.h"
#include "name.h"
#include "store.h"
#include "strv.h"

const char *fsg_action_id(FsgAction a) {
        switch (a) {
        case FSG_ACTION_ALLOW: return "org.fsgate.fsgate1.allow";
        case FSG_ACTION_DENY:  return "org.fsgate.fsgate1.deny";
        case FSG_ACTION_LOAD:  return "org.fsgate.fsgate1.load";
        default:               return NULL;
        }
}

static const char *target_dir(uint64_t flags) {
        return flags & FSG_FLAG_RUNTIME ? "/run/modprobe.d" : "/etc/modprobe.d";
}

static int mkdir_p(const char *path, mode_t mode) {
        _cleanup_free_ char *p = strdup(path);
        if (!p)
                return -ENOMEM;
        for (char *s = p + 1; *s; s++) {
                if (*s != '/')
                        continue;
                *s = 0;
                if (mkdir(p, mode) < 0 && errno != EEXIST)
                        return -errno;
                *s = '/';
        }
        if (mkdir(p, mode) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

int fsg_lock(const FsgContext *c, int *ret_fd, FsgError *e) {
        _cleanup_free_ char *dir = fsg_path(c, "/etc/modprobe.d");
        _cleanup_close_ int fd = -1;
        int r;

        if (!dir)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        r = mkdir_p(dir, 0755);
        if (r < 0)
                return fsg_error_errno(e, -r, "Failed to create %s", dir);
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return fsg_error_errno(e, errno, "Failed to open %s", dir);
        if (flock(fd, LOCK_EX) < 0)
                return fsg_error_errno(e, errno, "Failed to lock %s", dir);
        *ret_fd = TAKE_FD(fd);
        return 0;
}

/* Why a module is still denied after our own file is out of the way: name what decides. */
static int foreign_denial(const FsgEntry *x, FsgError *e) {
        if (x->origin == FSG_ORIGIN_CMDLINE)
                return fsg_error(e, FSG_ERR_FOREIGN_CONFIG,
                                 "%s is denied by modprobe.blacklist= on the kernel command line; "
                                 "remove it from the boot loader configuration", x->module);
        if (x->source && *x->source)
                return fsg_error(e, FSG_ERR_FOREIGN_CONFIG,
                                 "%s is denied by %s, which fsgate did not write; edit that file by hand "
                                 "or mask it with: ln -s /dev/null /etc/modprobe.d/%s",
                                 x->module, x->source, strrchr(x->source, '/') + 1);
        return fsg_error(e, FSG_ERR_FOREIGN_CONFIG,
                         "%s cannot be autoloaded for a reason fsgate does not manage (module file missing?)", x->module);
}

static int state_with(const FsgContext *c, const char *path, bool as_mask, const char *module,
                      FsgState **ret_state, const FsgEntry **ret, FsgError *e) {
        FsgOverride ov = { .path = path, .as_mask = as_mask };
        if (fsg_state_build(c, &ov, ret_state, e) < 0)
                return -1;
        *ret = fsg_state_find(*ret_state, module);
        if (!*ret)
                return fsg_error(e, FSG_ERR_FAILED, "%s vanished while planning", module);
        return 0;
}

int fsg_plan(const FsgContext *c, FsgOp op, const char *name, uint64_t flags, FsgPlan *p, FsgError *e) {
        _cleanup_(fsg_state_freep) FsgState *s = NULL, *what_if = NULL;
        _cleanup_free_ char *full = NULL, *etc_full = NULL;
        const FsgEntry *x, *y;
        uint64_t valid = op == FSG_OP_ALLOW ? FSG_FLAG_RUNTIME | FSG_FLAG_LOAD_NOW :
                         op == FSG_OP_DENY  ? FSG_FLAG_RUNTIME | FSG_FLAG_FORCE : FSG_FLAG_RUNTIME;
        bool runtime = flags & FSG_FLAG_RUNTIME;
        FsgFileKind kind, etc_kind = FSG_FILE_ABSENT;

        *p = (FsgPlan) { .op = op, .flags = flags };
        if (flags & ~valid)
                return fsg_error(e, FSG_ERR_INVALID_ARGS, "Unknown flags 0x%llx", (unsigned long long) (flags & ~valid));
        if (fsg_state_build(c, NULL, &s, e) < 0 || fsg_state_resolve(c, s, name, &x, e) < 0)
                return -1;
        snprintf(p->module, sizeof(p->module), "%s", x->module);
        for (char **t = x->types; t && *t; t++) {
                size_t l = strlen(p->types);
                snprintf(p->types + l, sizeof(p->types) - l, "%s%s", l ? " " : "", *t);
        }
        snprintf(p->target, sizeof(p->target), "%s/" FSG_FILE_PREFIX "%s" FSG_FILE_SUFFIX, target_dir(flags), x->module);

        full = fsg_path_nofollow(c, p->target);
        if (!full)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        kind = fsg_file_classify(full, x->module);
        if (runtime) {
                /* The same basename in /etc hides ours in /run. */
                _cleanup_free_ char *etc = NULL;
                if (asprintf(&etc, "/etc/modprobe.d/" FSG_FILE_PREFIX "%s" FSG_FILE_SUFFIX, x->module) < 0 ||
                    !(etc_full = fsg_path_nofollow(c, etc)))
                        return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
                etc_kind = fsg_file_classify(etc_full, x->module);
        }

        switch (op) {
        case FSG_OP_ALLOW:
                if (!x->denied)
                        break;
                if (kind == FSG_FILE_FOREIGN)
                        goto foreign_target;
                if (etc_kind != FSG_FILE_ABSENT)
                        goto overridden;
                if (state_with(c, p->target, true, x->module, &what_if, &y, e) < 0)
                        return -1;
                if (y->denied)
                        return foreign_denial(y, e);
                p->write = FSG_WRITE_MASK;
                p->action = FSG_ACTION_ALLOW;
                break;

        case FSG_OP_DENY:
                if (x->builtin)
                        return fsg_error(e, FSG_ERR_BUILTIN,
                                         "%s is built into kernel %s and cannot be denied", x->module, c->kver);
                if (kind == FSG_FILE_FOREIGN)
                        goto foreign_target;
                if ((kind == FSG_FILE_FSGATE || kind == FSG_FILE_SUSE_NEVER) && etc_kind == FSG_FILE_ABSENT)
                        break;
                /* Already denied by something that outlives a reboot (or by anything, for a
                 * runtime deny): nothing to add. */
                if (x->denied && (runtime || x->origin != FSG_ORIGIN_RUNTIME) && kind != FSG_FILE_MASK)
                        break;
                if (etc_kind != FSG_FILE_ABSENT)
                        goto overridden;
                if (!(flags & FSG_FLAG_FORCE) && (x->loaded || x->mounted))
                        return fsg_error(e, FSG_ERR_IN_USE,
                                         "%s is %s now; after a deny the next boot could not mount it. "
                                         "Unmount it first, or force the deny", x->module,
                                         x->mounted ? "mounted" : "loaded");
                p->write = FSG_WRITE_DENY;
                p->action = FSG_ACTION_DENY;
                break;

        case FSG_OP_RESET:
                if (kind == FSG_FILE_ABSENT)
                        break;
                if (kind == FSG_FILE_FOREIGN)
                        goto foreign_target;
                if (state_with(c, p->target, false, x->module, &what_if, &y, e) < 0)
                        return -1;
                p->write = FSG_WRITE_REMOVE;
                p->action = y->denied ? FSG_ACTION_DENY : FSG_ACTION_ALLOW;
                break;
        }
        return 0;

foreign_target:
        return fsg_error(e, FSG_ERR_FOREIGN_CONFIG,
                         "%s was not written by fsgate and fsgate will not change it; "
                         "edit it by hand, or remove it and try again", p->target);
overridden:
        return fsg_error(e, FSG_ERR_OVERRIDDEN,
                         "/etc/modprobe.d/" FSG_FILE_PREFIX "%s" FSG_FILE_SUFFIX " takes precedence over /run/modprobe.d, "
                         "so a runtime change cannot take effect; change it without the runtime flag or reset it first",
                         x->module);
}

static int write_plan(const FsgContext *c, const FsgPlan *p, FsgError *e) {
        _cleanup_free_ char *dir = NULL, *content = NULL;
        const char *name = strrchr(p->target, '/') + 1;
        int r;

        _cleanup_free_ char *sysdir = strndup(p->target, name - 1 - p->target);
        if (sysdir)
                dir = fsg_path(c, sysdir);
        if (!dir)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        if (p->write != FSG_WRITE_REMOVE) {
                r = mkdir_p(dir, 0755);
                if (r < 0)
                        return fsg_error_errno(e, -r, "Failed to create %s", dir);
        }
        fsg_clean_temp_files(dir);

        switch (p->write) {
        case FSG_WRITE_MASK:
                return fsg_atomic_symlink(dir, name, "/dev/null", e);
        case FSG_WRITE_DENY:
                content = fsg_deny_file_content(p->module, p->types, p->target, FSGATE_BLOCKED_HOOK);
                if (!content)
                        return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
                return fsg_atomic_write(dir, name, content, e);
        case FSG_WRITE_REMOVE:
                return fsg_durable_unlink(dir, name, e);
        default:
                return 0;
        }
}

int fsg_apply(const FsgContext *c, const FsgPlan *authorized, FsgError *e) {
        _cleanup_close_ int lock = -1;
        FsgPlan now;

        if (authorized->write == FSG_WRITE_NOTHING)
                return 0;
        if (fsg_lock(c, &lock, e) < 0)
                return -1;
        if (fsg_plan(c, authorized->op, authorized->module, authorized->flags, &now, e) < 0)
                return -1;
        if (now.write == FSG_WRITE_NOTHING)
                return 0; /* someone else got there first */
        if (now.action != authorized->action || now.write != authorized->write)
                return fsg_error(e, FSG_ERR_CONCURRENT_CHANGE,
                                 "The configuration of %s changed while authorizing; try again", now.module);
        return write_plan(c, &now, e);
}

int fsg_exempt_loaded(const FsgContext *c, char ***ret_done, char ***ret_failed, FsgError *e) {
        _cleanup_(fsg_state_freep) FsgState *s = NULL;
        _cleanup_strv_free_ char **done = NULL, **failed = NULL;

        if (fsg_state_build(c, NULL, &s, e) < 0)
                return -1;
        for (size_t i = 0; i < s->n; i++) {
                const FsgEntry *x = &s->entries[i];
                FsgError err = {};
                FsgPlan p;
                char *msg;

                /* Only a distribution's default list (vendor files) is overridden: a deny
                 * an administrator wrote (/etc, /run, the command line) was meant, even for
                 * a filesystem in use (Deny with FORCE). */
                if (!x->denied || x->builtin || !(x->loaded || x->mounted) || x->origin != FSG_ORIGIN_VENDOR)
                        continue;
                if (fsg_plan(c, FSG_OP_ALLOW, x->module, 0, &p, &err) < 0 || fsg_apply(c, &p, &err) < 0) {
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
        return 0;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "alloc-util.h"
#include "confscan.h"
#include "config.h"
#include "conffile.h"
#include "lock.h"
#include "macro.h"
#include "name.h"
#include "routes.h"

char *fsg_routes_content(const FsgState *s, const char *hook) {
        assert(s);
        assert(hook);

        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        bool any = false;

        if (!f)
                return NULL;
        fputs(FSG_HEADER ": routes for blocked filesystem autoloads that no deny of fsgate's reports.\n"
              "# The denies are other files' (openSUSE's vendor files, say); these lines only make\n"
              "# their blocks visible (kernel log, the Blocked signal, the desktop notification),\n"
              "# and fsgate's hook loads nothing a deny still refuses. Rebuilt from modprobe.d\n"
              "# whenever it changes (fsgate-routes.path); edits here are lost. A file of this\n"
              "# name in /etc/modprobe.d hides it from kmod (and fsgate), for good.\n"
              "# To keep none: ln -s /dev/null " FSG_ROUTES_OFF_PATH "\n", f);
        for (size_t i = 0; i < s->n; i++) {
                const FsgEntry *x = &s->entries[i];
                if (!x->denied || x->builtin || !x->available)
                        continue;
                for (char **t = x->silent_types; t && *t; t++) {
                        /* The line runs through /bin/sh: only names that need no quoting. */
                        if (!fsg_name_is_valid(*t) || !fsg_name_is_valid(x->module))
                                continue;
                        (void) fsg_hook_lines_write(f, hook, &(FsgHookArgs) { .kind = FSG_HOOK_LINE_ROUTE,
                                                                              .type = *t, .module = x->module });
                        any = true;
                }
        }
        if (fclose(f) == EOF)
                return NULL;
        if (!any)
                text[0] = 0;
        return TAKE_PTR(text);
}

static int routes_write(const FsgContext *c, const char *content, bool *ret_changed, FsgError *e) {
        _cleanup_free_ char *old = NULL, *dir = NULL;
        _cleanup_close_ int dfd = -1;
        FsgFileId id;
        FsgFileKind kind;

        if (asprintf(&dir, "%s" FSG_ROUTES_DIR, c->root) < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        dfd = fsg_open_dir(c, FSG_ROUTES_DIR, *content != 0);
        if (dfd == -ENOENT && *content == 0)
                return 0;
        if (dfd < 0)
                return fsg_error_errno(e, -dfd, "Failed to open %s", dir);
        fsg_clean_temp_files_at(dfd);
        kind = fsg_file_classify_at(dfd, FSG_ROUTES_NAME, NULL, &id);
        /* Absent with nothing to route, or masked by an admin: no routes wanted. */
        if ((kind == FSG_FILE_ABSENT && *content == 0) || kind == FSG_FILE_MASK)
                return 0;
        if (kind != FSG_FILE_ABSENT && kind != FSG_FILE_FSGATE)
                return fsg_error(e, FSG_ERR_FOREIGN_CONFIG, "%s/%s was not written by fsgate; left alone",
                                 dir, FSG_ROUTES_NAME);
        /* Unchanged, it is not written: a write would wake fsgate-routes.path again. */
        if (kind == FSG_FILE_FSGATE && fsg_read_regular(c, FSG_ROUTES_PATH, 1 << 20, &old, NULL) >= 0 &&
            streq(old, content))
                return 0;
        if (ret_changed)
                *ret_changed = true;
        if (*content == 0)
                return fsg_durable_unlink(dfd, dir, FSG_ROUTES_NAME, &id, e);
        return fsg_atomic_write(dfd, dir, FSG_ROUTES_NAME, content, &id, e);
}

int fsg_routes_write_locked(const FsgContext *c, const FsgState *s, bool *ret_changed, FsgError *e) {
        assert(c);
        assert(s);

        _cleanup_free_ char *content = fsg_routes_content(s, FSGATE_BLOCKED_HOOK);

        if (ret_changed)
                *ret_changed = false;
        if (!content)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        return routes_write(c, content, ret_changed, e);
}

static uint64_t fnv_mix(uint64_t h, const void *p, size_t n) {
        for (const unsigned char *b = p; n > 0; n--, b++)
                h = (h ^ *b) * UINT64_C(1099511628211);
        return h;
}

uint64_t fsg_routes_conf_fingerprint(const FsgContext *c) {
        uint64_t h = UINT64_C(1469598103934665603);     /* FNV-1a */

        for (size_t i = 0; i < fsg_n_conf_dirs; i++) {
                _cleanup_closedir_ DIR *d = NULL;
                struct dirent *de;
                struct stat st;

                if (fsg_opendir(c, fsg_conf_dirs[i].path, &d) < 0)
                        continue;
                if (fstat(dirfd(d), &st) >= 0)
                        h = fnv_mix(h, &st.st_mtim, sizeof(st.st_mtim));
                while ((de = readdir(d))) {
                        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                                continue;
                        h = fnv_mix(h, de->d_name, strlen(de->d_name) + 1);
                        h = fnv_mix(h, &st.st_ino, sizeof(st.st_ino));
                        h = fnv_mix(h, &st.st_size, sizeof(st.st_size));
                        h = fnv_mix(h, &st.st_ctim, sizeof(st.st_ctim));
                }
        }
        return h;
}

int fsg_routes_refresh(const FsgContext *c, bool *ret_changed, FsgError *e) {
        assert(c);

        _cleanup_(fsg_lock_holdp) FsgLockHold lock = FSG_LOCK_HOLD(c);
        bool changed = true;
        uint64_t before = 0, after = 0;
        int r;

        if (ret_changed)
                *ret_changed = false;
        r = fsg_lock(c, c->lock_timeout_usec, &lock.fd, e);
        if (r < 0)
                return r;
        /* A pass that changes nothing, with the directories as they were when it began, shows
         * the file matches the configuration: systemd does not watch the paths while this runs
         * (a package's files arriving during a read would be missed). Five passes bound a
         * configuration that keeps changing. */
        for (unsigned pass = 0; (changed || before != after) && pass < 5; pass++) {
                _cleanup_(fsg_state_unrefp) FsgState *s = NULL;

                before = fsg_routes_conf_fingerprint(c);
                r = fsg_state_build(c, NULL, &s, e);
                if (r < 0)
                        return r;
                r = fsg_routes_write_locked(c, s, &changed, e);
                if (r < 0)
                        return r;
                if (changed && ret_changed)
                        *ret_changed = true;
                after = fsg_routes_conf_fingerprint(c);
        }
        return 0;
}

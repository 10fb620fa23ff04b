/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "confscan.h"
#include "fsg-error.h"
#include "state.h"

/* Routes for blocks nobody reports (the file's name, and what a route's alias looks like, are
 * confscan.h's: the model skips the file, and is below this). A deny fsgate wrote routes the kernel's fs-TYPE request
 * to fsgate's hook; a plain "blacklist hfs" written by someone else (openSUSE's vendor files,
 * a hardening role) does not, and the mount fails without a word. For each type whose
 * request is blocked that way, fsgate keeps one alias to its hook in a file of its own in
 * /run, read by kmod and skipped by fsgate's own model (confscan.h): it reports blocks, it
 * never decides one. The hook checks the state again before it reports (a route can be a
 * moment older than the configuration): for a module allowed meanwhile it loads the module
 * as the request would have. */
/* The file's content for state s: "" when no block needs a route. NULL: out of memory. */
char *fsg_routes_content(const FsgState *s, const char *hook);

/* Makes ROOT/run/modprobe.d/fsgate-routes.conf what the configuration asks now (removed when
 * empty; the hook is FSGATE_BLOCKED_HOOK): under fsgate's lock, the state read after taking
 * it, so that of two writers the later one writes what the later configuration asks. Read
 * again after the write, until two reads agree (a few times at most): a change made while it
 * ran may have come while nothing watched (fsgate-routes.path does not while its service
 * runs). *ret_changed (may be NULL): whether the file changed. A file of that name fsgate did
 * not write is left alone (FSG_ERR_FOREIGN_CONFIG). */
int fsg_routes_refresh(const FsgContext *c, bool *ret_changed, FsgError *e);
/* What the modprobe.d directories hold, as one number: each directory's and entry's name,
 * inode, size and change time (an edit in place changes the last two). Equal before and
 * after a pass of fsg_routes_refresh(): nothing changed while it read; equal for two of the
 * hook's runs of a route: the configuration it judged is the same. Far cheaper than a state
 * build: a readdir() and an fstatat() an entry, no file opened. */
uint64_t fsg_routes_conf_fingerprint(const FsgContext *c);
/* One write, with fsgate's lock held, for a state built under it (the service's). */
int fsg_routes_write_locked(const FsgContext *c, const FsgState *s, bool *ret_changed, FsgError *e);


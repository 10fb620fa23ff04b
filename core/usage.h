/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "state.h"

/* What is in use on the system under the root: the modules ROOT/proc/modules lists and the
 * filesystem types ROOT/proc/mounts holds. */

/* Set every entry's loaded (mounted) flag. Neither allocates for the running system, so a
 * caller that cannot tell whether they changed can afford them for every answer.
 * update_loaded marks the entries' hard-denied dependencies (FsgHardDep) too, loaded when live.
 * It returns > 0 when one of those modules is half loaded or half unloaded: the kernel
 * announces no end of a load that fails, so that answer must not be kept. */
int fsg_state_update_loaded(const FsgContext *c, FsgState *s);
int fsg_state_update_mounted(const FsgContext *c, FsgState *s);

/* Calls fn for each whitespace-separated word of ROOT/abs (a /proc table), with its column
 * (from 0, per line); word may be modified in place. Allocates nothing, so that it can run
 * for every answer. A missing file has no words; one that is no regular file, or holds more
 * than FSG_TABLE_MAX bytes, is an error (fsg_open_regular()'s). */
typedef void (*FsgWordFn)(void *userdata, unsigned column, char *word);
int fsg_read_table(const FsgContext *c, const char *abs, FsgWordFn fn, void *userdata);

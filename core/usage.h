/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "context.h"

/* The tables of ROOT/proc that say what is in use (modules, mounts), read word by word: the
 * state's loaded and mounted flags (state.h) are built on this. */

/* Calls fn for each whitespace-separated word of ROOT/abs (a /proc table), with its column
 * (from 0, per line); word may be modified in place. Allocates nothing, so that it can run
 * for every answer. A missing file has no words; one that is no regular file, or holds more
 * than FSG_TABLE_MAX bytes, is an error (fsg_open_regular()'s). */
typedef void (*FsgWordFn)(void *userdata, unsigned column, char *word);
int fsg_read_table(const FsgContext *c, const char *abs, FsgWordFn fn, void *userdata);

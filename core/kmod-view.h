/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "confscan.h"

/* How libkmod is shown a root. libkmod opens what it is given by name, whenever it likes: its
 * configuration when a context is made, its indexes at every lookup. On the running system
 * those names are root's own. In an image they belong to the image's owner, who can put a
 * FIFO (libkmod blocks for good) or a symlink to a host file (libkmod reads it) under a name
 * fsgate has just checked. So libkmod gets a directory of our own (0700) for the module tree:
 * each index it opens is a symlink to /proc/self/fd/N, the file fsgate opened inside the image
 * and checked (a rename in the image cannot change what that leads to), and its configuration
 * is one file there, the bytes fsgate read and parsed (FsgConfig.kmod_text). */

struct kmod_ctx;
struct kmod_module;

/* A fresh libkmod context over c's module tree and cfg's effective files. Fresh for each
 * build: kmod reads its configuration once per context, and "what if" questions (cfg from an
 * override, its content included) get exactly the same reader. Logs nothing. Returns a
 * negative errno, e (may be NULL) naming the file that could not be read. */
int fsg_kmod_new(const FsgContext *c, const FsgConfig *cfg, struct kmod_ctx **ret, FsgError *e);
/* The one context without configuration: no modprobe.d file, only the tree's own
 * modules.softdep, as kmod reads it. fsg_load() inserts with it (no install command can run)
 * and load chains are walked over it. *ret is NULL, and 0 returned, when c has no module
 * tree: there is nothing to look up. */
int fsg_kmod_new_plain(const FsgContext *c, struct kmod_ctx **ret, FsgError *e);
/* Drops the reference; the last one also removes the directory made for an image. */
void fsg_kmod_unrefp(struct kmod_ctx **k);

/* The file of m (from k) as the system under the root names it, e.g.
 * /usr/lib/modules/KVER/kernel/fs/hfs/hfs.ko; NULL if it has none or on ENOMEM. */
char *fsg_kmod_module_path(struct kmod_ctx *k, struct kmod_module *m);
/* Whether that file is there, looked up inside the root. */
bool fsg_kmod_module_file_exists(struct kmod_ctx *k, struct kmod_module *m);

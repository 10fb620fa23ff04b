/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "fsg-error.h"

/* What sits at a 60-blacklist_fs-M.conf path, and whether fsgate may replace it. */
typedef enum FsgFileKind {
        FSG_FILE_ABSENT,
        FSG_FILE_MASK,        /* symlink to /dev/null: openSUSE's "yes, un-blacklist" and our Allow */
        FSG_FILE_FSGATE,      /* written by fsgate (our header) */
        FSG_FILE_SUSE_NEVER,  /* openSUSE's "never": exactly "blacklist M" */
        FSG_FILE_MODIFIABLE,  /* carries openSUSE's "# __THIS FILE MAY BE MODIFIED__" */
        FSG_FILE_FOREIGN,     /* anything else: an admin's or a hardening tool's; never touched */
} FsgFileKind;

#define FSG_HEADER "# Written by fsgate"
#define FSG_SUSE_MODIFIABLE "# __THIS FILE MAY BE MODIFIED__"

FsgFileKind fsg_file_classify(const char *fullpath, const char *module);
const char *fsg_file_kind_to_string(FsgFileKind k);

/* The content fsgate writes for a deny of module (serving the space-separated types) in
 * the file at path: the blacklist, plus one alias per type that routes the kernel's request
 * to hook, so a blocked autoload is reported instead of failing silently. */
char *fsg_deny_file_content(const char *module, const char *types, const char *path, const char *hook);

/* The name a type's request is routed to in a deny file. */
#define FSG_BLOCKED_PREFIX "fsgate_blocked_"

/* Durable replacement of dir/name: a temp file (hidden, so kmod skips it) in the same dir,
 * fsync, rename over, fsync the dir. A crash leaves either the old or the new file. */
int fsg_atomic_write(const char *dir, const char *name, const char *content, FsgError *e);
int fsg_atomic_symlink(const char *dir, const char *name, const char *target, FsgError *e);
int fsg_durable_unlink(const char *dir, const char *name, FsgError *e);
/* Removes temp files a killed writer left behind. Call with the lock held. */
void fsg_clean_temp_files(const char *dir);

#define FSG_TEMP_PREFIX ".fsgate-tmp-"

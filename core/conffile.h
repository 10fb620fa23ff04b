/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <sys/types.h>
#include <time.h>

#include "context.h"
#include "hook-line.h"

/* What sits at a 60-blacklist_fs-M.conf path, and whether fsgate may replace it. */
typedef enum FsgFileKind {
        FSG_FILE_ABSENT,
        FSG_FILE_MASK,        /* symlink to /dev/null: openSUSE's "yes, un-blacklist" and our Allow */
        FSG_FILE_FSGATE,      /* written by fsgate (our header) */
        FSG_FILE_SUSE_NEVER,  /* openSUSE's "never": exactly "blacklist M" */
        FSG_FILE_MODIFIABLE,  /* carries openSUSE's "# __THIS FILE MAY BE MODIFIED__" */
        FSG_FILE_FOREIGN,     /* anything else: an admin's or a hardening tool's; never touched */
} FsgFileKind;

/* What a plan saw at a path: its kind and, for a file, which file it was. A write replaces or
 * removes a file only while it is still that one, so that a writer who does not take our lock
 * never loses a file to us. A zeroed FsgFileId means "no file". */
typedef struct FsgFileId {
        FsgFileKind kind;
        dev_t dev;
        ino_t ino;
        off_t size;
        struct timespec mtime;
} FsgFileId;

#define FSG_HEADER "# Written by fsgate"
#define FSG_SUSE_MODIFIABLE "# __THIS FILE MAY BE MODIFIED__"
/* How openSUSE's unblacklist ends the comment line of its "never" file. */
#define FSG_SUSE_NEVER_COMMENT "unblacklist (user wants to never unblacklist this module)"

FsgFileKind fsg_file_classify(const char *fullpath, const char *module);
/* name in the directory dfd, a final symlink not followed, never blocking on what is there.
 * module NULL: any module's "never" file. ret (may be NULL) gets the file's identity. */
FsgFileKind fsg_file_classify_at(int dfd, const char *name, const char *module, FsgFileId *ret);
/* abs (a system path) below the root, its directory resolved inside the root. */
FsgFileKind fsg_target_classify(const FsgContext *c, const char *abs, const char *module, FsgFileId *ret);

/* The content fsgate writes for a deny of module (serving the space-separated types) in
 * the file at path: the blacklist, plus one alias per type that routes the kernel's request
 * to hook, so a blocked autoload is reported instead of failing silently. */
char *fsg_deny_file_content(const char *module, const char *types, const char *path, const char *hook);
/* The same, and with hard "install MODULE /bin/false": explicit loads fail too, while the
 * kernel's requests still reach the hook (the blacklist keeps that line from them). */
char *fsg_deny_file_content_mode(const char *module, const char *types, const char *path, const char *hook,
                                 bool hard);
/* The line a hard deny adds; exactly what OpenSCAP's kernel_module_M_disabled rules accept
 * ("^\s*install\s+M\s+(/bin/false|/bin/true)$"). */
#define FSG_HARD_COMMAND "/bin/false"

/* Durable replacement of name in the directory dfd (opened by fsg_open_dir(); dir names it in
 * messages): a temp file (hidden, so kmod skips it) in the same directory, fsync, then into
 * place, fsync the directory. A crash leaves either the old or the new file. expect is what
 * the plan saw there: no file (NULL or ABSENT) and the new one goes in only if the name is
 * still free; a file of ours and it is swapped in only for that very file. Anything else is
 * FSG_ERR_CONCURRENT_CHANGE, with the file found left where it was. Files are 0644 whatever
 * the umask. */
int fsg_atomic_write(int dfd, const char *dir, const char *name, const char *content,
                     const FsgFileId *expect, FsgError *e);
int fsg_atomic_symlink(int dfd, const char *dir, const char *name, const char *target,
                       const FsgFileId *expect, FsgError *e);
/* Removes name if it is still the file expect describes (moved aside first, checked, then
 * unlinked; put back if it is not). Already gone is success. */
int fsg_durable_unlink(int dfd, const char *dir, const char *name, const FsgFileId *expect, FsgError *e);
/* Removes temp files a killed writer left behind. Call with the lock held. */
void fsg_clean_temp_files_at(int dfd);

#define FSG_TEMP_PREFIX ".fsgate-tmp-"
/* Where a foreign file that could not be put back under its name is kept, for a human (a
 * concurrent writer replaced it twice within one write); never cleaned. Hidden from kmod. */
#define FSG_KEPT_PREFIX ".fsgate-kept-"

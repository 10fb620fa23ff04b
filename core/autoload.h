/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "kmod-view.h"
#include "modtree.h"

/* What the kernel would load: libkmod's own answers, over exactly the configuration fsgate
 * scanned, to the requests the kernel makes (request_module("fs-TYPE") runs modprobe). */

struct kmod_ctx;

/* Every module kmod's probe list inserts before module when install commands are ignored for
 * module itself (fsg_load(), "modprobe --ignore-install MODULE"): each dependency between its
 * soft dependencies, these with chains of their own; not module's own soft dependencies, which
 * kmod then leaves out. Appended to *chain in kmod's order, each once, module not among them.
 * Returns a negative errno: -ELOOP for a chain deeper than any tree makes, since a chain not
 * walked to its end cannot be vouched for. */
int fsg_kmod_load_chain(struct kmod_ctx *k, const char *module, char ***chain);
#define FSG_CHAIN_DEPTH_MAX 256

/* Would the kernel's request for fs-TYPE end with module in the kernel? */
bool fsg_autoload_loads(struct kmod_ctx *k, const FsgConfig *cfg, const FsgModTree *t, const char *type,
                        const char *module);
/* Whether the tree has a file for module (not built in) that is there to be loaded. */
bool fsg_kmod_module_available(struct kmod_ctx *k, const char *module);
/* Whether module, named by a 60-blacklist_fs-M.conf file but not found through an fs- alias,
 * may be a filesystem module: unless the tree knows it as a module outside fs/ (a file named
 * after usb_storage does not make it a filesystem). Absent (exofs), built in (pstore) and
 * alias-less (orangefs: its type pvfs2 has none) filesystem modules may. */
bool fsg_kmod_may_be_filesystem(struct kmod_ctx *k, const FsgModTree *t, const char *module);
/* Whether name is a module of c's tree (any module, filesystem or not), with a file. */
bool fsg_kmod_is_module(const FsgContext *c, const char *name);

/* Whether the kernel's request for fs-TYPE would run fsgate's reporting hook: some effective
 * file routes the type to fsgate_blocked_TYPE, with its install line. */
bool fsg_type_block_is_reported_in(struct kmod_ctx *k, const FsgConfig *cfg, const char *type);

/* What kmod runs instead of loading module for "modprobe MODULE": its install command, unless
 * kmod ignores it (kmod 30 does for a module with soft dependencies). *ret is NULL when kmod
 * would load the module itself. Returns a negative errno. */
int fsg_kmod_install_command(struct kmod_ctx *k, const char *module, char **ret);
/* Whether module has soft dependencies (modules.softdep or a softdep line): kmod 30 then
 * ignores every install command for it, fsgate's hard deny included. */
bool fsg_kmod_has_softdeps(struct kmod_ctx *k, const char *module);
/* Whether an install command for module puts module into the kernel after all: it runs
 * "modprobe --ignore-install MODULE" (or -i, or $MODPROBE_MODULE for the name) or insmod, as
 * openSUSE's unblacklist line does. Anything else (/bin/false, /bin/true, a script that says
 * "disabled") refuses explicit loads: a hard deny, whoever wrote it. */
bool fsg_install_command_loads(const char *cmd, const char *module);

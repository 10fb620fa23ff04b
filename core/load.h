/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Loading and unloading now (Load, grants): what the running kernel is asked for, and what
 * refuses it. The configuration is store.h's. */

#include "context.h"
#include "fsg-error.h"
#include "state.h"

/* HardDenied for a load of x, whose install command refuses explicit loads: says what runs,
 * from which file, and the way out. Returns its negative errno. */
int fsg_hard_denied(const char *module, const char *install_command, const char *install_file, FsgError *e);
/* HardDenied for a load of module that would insert d, a dependency whose install command
 * refuses explicit loads: names it, its file, and the way out. */
int fsg_hard_denied_dependency(const char *module, const FsgHardDep *d, FsgError *e);
/* HardDenied if loading x now would step past a hard deny, its own or one of the dependencies
 * the load would insert (not the loaded ones); 0 if not (or nothing is to be loaded). */
int fsg_load_refused(const FsgEntry *x, FsgError *e);
/* The modules a load of module would insert before it now, in kmod's order: its load chain
 * without what ROOT/proc/modules lists or the kernel has built in. What a grant loads, and
 * unloads again at its end (*ret NULL: nothing else; no module tree: nothing). */
int fsg_load_new_dependencies(const FsgContext *c, const char *module, char ***ret, FsgError *e);
/* DependencyDenied when one of deps (fsg_load_new_dependencies()) is a filesystem module s
 * says is denied: a grant loads what it was asked for, not another deny's module with it. */
int fsg_load_refuse_denied_dependencies(const FsgState *s, const char *module, char * const *deps, FsgError *e);
/* LoadFailed, in words, unless c is the running system: a service or CLI working on an image
 * never loads into the kernel it runs on (the image's module files are not that kernel's). */
int fsg_load_possible(const FsgContext *c, const char *module, FsgError *e);

/* Loads the module now, ignoring blacklist and install commands, changing no config; refused
 * (HardDenied) while an install command refuses explicit loads of it or of a module the load
 * would insert with it: that is what a hard deny means, whoever wrote it. */
int fsg_load(const FsgContext *c, const char *name, char **ret_module, FsgError *e);
/* The end of a grant (grant.h): module (normalized) out of the running kernel, never forced
 * and never waiting: 0 done or not loaded; -EBUSY (FSG_ERR_IN_USE) while something uses it,
 * to try again later; -EOPNOTSUPP (FSG_ERR_FAILED) for a root other than the running
 * system's, whose /proc/modules names modules of no kernel here. */
int fsg_unload(const FsgContext *c, const char *module, FsgError *e);

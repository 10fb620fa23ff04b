/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "state.h"
#include "store.h"

/* Profiles: named lists of filesystem modules to deny (PROFILEDIR/NAME.profile, shipped with
 * fsgate, read from the host even for an image: the tool brings its profiles). One question:
 * which modules does a profile name, here and now. Applying and auditing them are built on
 * the store's plans, so a profile can do nothing a Deny could not. */

typedef struct FsgProfile {
        char *name;
        char *description;
        bool hard;           /* the profile wants explicit loads refused too */
        char *compute;       /* NULL, or how the modules are computed at each call ("unused") */
        char **modules;      /* sorted, normalized; for a computed profile, the result: the modules
                              * fsg_risk_is_notable() first, each part sorted; with the included
                              * profiles' modules */
        char **includes;     /* Include=: the profiles whose modules it adds */
        char *path;          /* the file it was read from: the site's or the shipped one */
} FsgProfile;

/* The directory profiles are read from: $FSGATE_PROFILE_DIR (tests, a build tree) or the
 * installed PROFILEDIR. */
const char *fsg_profile_dir(void);
/* The site's profiles, read before the shipped ones (a site profile named like a shipped one
 * wins): $FSGATE_SITE_PROFILE_DIR (tests) or /etc/fsgate/profiles, of the system that runs
 * the program, as the shipped ones. A file (or the directory) not owned by root or by the
 * user running the program, or writable by others, is not read: left out of the list, and a
 * load of its name fails naming it. */
const char *fsg_profile_site_dir(void);
/* A name that can be a profile: [a-z0-9_-], at most 32 characters; nothing that leaves a
 * directory. Names come from unprivileged callers. */
bool fsg_profile_name_is_valid(const char *s);

/* Names of the profiles in fsg_profile_site_dir() and fsg_profile_dir(), sorted, each once. */
int fsg_profile_list(char ***ret, FsgError *e);

/* Reads profile name and works out its modules against s (c's state, up to date): a computed
 * profile is computed now, with the types people need on demand when include_on_demand (a
 * listed profile ignores it). NoSuchProfile for a name that is not a profile. */
int fsg_profile_load(const FsgContext *c, const FsgState *s, const char *name, bool include_on_demand,
                     FsgProfile **ret, FsgError *e);
/* The same against *current, or, when that is NULL, against a state built now: *built holds
 * it and *current points to it. */
int fsg_profile_load_current(const FsgContext *c, const FsgState **current, FsgState **built, const char *name,
                             bool include_on_demand, FsgProfile **ret, FsgError *e);
/* Only the file (with its includes): a computed profile's modules are not computed. */
int fsg_profile_read(const char *name, FsgProfile **ret, FsgError *e);
FsgProfile *fsg_profile_free(FsgProfile *p);
static inline void fsg_profile_freep(FsgProfile **p) {
        fsg_profile_free(*p);
}

/* The "unused" computation on its own: every filesystem module of s with a module file that
 * this system does not use. Used means: built in, loaded, mounted, named as a type in
 * /etc/fstab or in a mount unit (the unit directories, generated ones included), the type
 * udev found on a block device that is present (its database, /run/udev/data), a type people
 * need on demand (core/on-demand.h) unless include_on_demand, or a dependency of a used one.
 * *ret_used (may be NULL) gets "MODULE: why" for the kept ones. */
int fsg_profile_unused(const FsgContext *c, const FsgState *s, bool include_on_demand, char ***ret,
                       char ***ret_used, FsgError *e);

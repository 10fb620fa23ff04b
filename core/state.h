/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "confscan.h"

/* One filesystem module as the D-Bus entry (sassssbbbb) describes it. */
typedef struct FsgEntry {
        char *module;
        char **types;
        bool denied;
        FsgOrigin origin;
        char *source;        /* system path of the deciding file, "" for default/cmdline */
        bool available;
        bool builtin;
        bool loaded;
        bool mounted;
} FsgEntry;

typedef struct FsgTypeRef {
        const char *type;
        FsgEntry *entry;
} FsgTypeRef;

typedef struct FsgState {
        FsgEntry *entries;   /* sorted by module name */
        size_t n;
        FsgTypeRef *by_type; /* every entry's types, sorted by type: lookups by type, /proc/mounts */
        size_t n_types;
        bool loaded_transient; /* see fsg_state_update_loaded() */
        char **unreadable;   /* config files skipped for lack of permission (FsgConfig's): the
                              * answer may be incomplete; callers must say so, naming them */
} FsgState;

/* Computes every entry from kmod (module tree, aliases, install commands) plus our own scan
 * of modprobe.d (precedence, masks, attribution). ov, if set, asks "what if". */
int fsg_state_build(const FsgContext *c, const FsgOverride *ov, FsgState **ret, FsgError *e);
FsgState *fsg_state_free(FsgState *s);

/* Sets loaded/mounted from ROOT/proc/modules and ROOT/proc/mounts. Neither allocates for the
 * running system, so a caller that cannot tell whether they changed can afford them for every
 * answer. update_loaded returns > 0 when one of the entries' modules is half loaded or half
 * unloaded: the kernel announces no end of a load that fails, so that answer must not be kept. */
int fsg_state_update_usage(const FsgContext *c, FsgState *s);
int fsg_state_update_loaded(const FsgContext *c, FsgState *s);
int fsg_state_update_mounted(const FsgContext *c, FsgState *s);
static inline void fsg_state_freep(FsgState **s) {
        fsg_state_free(*s);
}

/* By module name (either '-' or '_') or by filesystem type, in O(log n): s must come from
 * fsg_state_build(), which sorts the entries and indexes their types. */
const FsgEntry *fsg_state_find(const FsgState *s, const char *name);

/* Validates a caller's name and finds its entry, with the error a caller can act on:
 * InvalidName, NotAFilesystem (a module of the tree without "fs-" aliases), NoSuchFilesystem. */
int fsg_state_resolve(const FsgContext *c, const FsgState *s, const char *name, const FsgEntry **ret, FsgError *e);

/* Whether the kernel's request for fs-TYPE would run fsgate's reporting hook: some effective
 * file routes the type to fsgate_blocked_TYPE, with its install line. */
bool fsg_type_block_is_reported(const FsgContext *c, const char *type);

static inline const char *fsg_entry_state_string(const FsgEntry *x) {
        return x->denied ? "denied" : "allowed";
}

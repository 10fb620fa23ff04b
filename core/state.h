/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "confscan.h"

/* The entry model: one entry per filesystem module, sorted by name, indexed by type. */

/* A module that a load of an entry's module inserts first (a dependency, or a soft
 * dependency of one) and whose install command refuses explicit loads: a hard deny of its
 * own, which "modprobe MODULE" obeys (dependencies are loaded by name, their install commands
 * run) and which a load past install commands (fsg_load()) must not step over. */
typedef struct FsgHardDep {
        char *module;
        char *install_command;
        char *install_file;   /* system path of the file with that command, "" if unknown */
        bool loaded;            /* "Live" in ROOT/proc/modules: a load leaves it alone */
} FsgHardDep;

/* One filesystem module as the D-Bus entry (sassssbbbb) describes it; what clients read of
 * it, under which names, is core/entry-fields.h. */
typedef struct FsgEntry {
        char *module;
        char **types;
        bool denied;
        FsgOrigin origin;
        char *deciding_file; /* system path of the deciding file, "" for default/cmdline */
        /* The deciding file is fsgate's override (override.h) of this vendor file (NULL or "":
         * no override), which changed or went since it was copied (stale). */
        char *override_of;
        bool override_stale;
        /* The end of the latest grant (grant.h) of the module, "2026-12-07T01:02:03Z"; NULL
         * when none is active. */
        char *granted_until;
        /* The medium of the latest one that is for one ("/dev/sdb1"); NULL when none is. */
        char *granted_device;
        /* Describe and status only: why an Allow would be refused now, "" if it would be
         * done; NULL where not asked (lists, older services). */
        char *allow_refused;
        /* The same for a Reset of what fsgate wrote ("" also where there is nothing of
         * fsgate's to reset: origin not admin or runtime). */
        char *reset_refused;
        bool available;
        bool builtin;
        bool loaded;
        bool mounted;
        /* The description (Describe): what "modprobe MODULE" does and who says so. Clients
         * that read only the (sassssbbbb) entry leave described false. A described entry's
         * deciding_file, install_command and install_file are never NULL. */
        bool described;
        bool hard;              /* the install command kmod runs for "modprobe MODULE" loads nothing */
        bool explicit_load;     /* "modprobe MODULE" by root would put it into the kernel */
        bool blocks_reported;   /* every blocked request for its types runs fsgate's hook */
        /* Its types whose request is blocked and reaches no hook through the files that decide
         * (fsgate's routes, routes.h, are not among them), and that no alias of a file claims:
         * what the routes file routes. Not on the bus. */
        char **silent_types;
        bool install_ignored;   /* it has soft dependencies, so kmod 30 ignores any install
                                 * command for it: no hard deny can take effect (not on the bus) */
        char *install_command;  /* what kmod runs instead of loading it, "" if nothing */
        char *install_file;   /* system path of the file with that command, "" if none */
        char **mentions;        /* pairs: system path, line; every line that names the module */
        FsgHardDep *hard_deps;  /* hard-denied modules of its load chain, in kmod's order; built-in */
        size_t n_hard_deps;     /* ones are not there (the kernel has them, nothing is inserted) */
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
        FsgHardDep **hard_deps; /* every entry's hard_deps, sorted by module: /proc/modules */
        size_t n_hard_deps;
        bool loaded_transient; /* see fsg_state_update_loaded() (usage.h) */
        bool kernel_unknown; /* no module tree: judged by the files alone (an image before its kernel) */
        char **unreadable;   /* config files skipped for lack of permission (FsgConfig's): the
                              * answer may be incomplete; callers must say so, naming them */
        /* Who holds it: fsgated's cache and every handler that reads it (a held entry stays
         * valid whatever the cache does meanwhile). A state is never changed while another
         * holder has it: the cache builds a new one instead (state-cache.c). */
        unsigned n_ref;
} FsgState;

/* Computes every entry from kmod (module tree, aliases, install commands) plus our own scan
 * of modprobe.d (precedence, masks, attribution), with what is in use now (usage.h). ov, if
 * set, asks "what if". */
int fsg_state_build(const FsgContext *c, const FsgOverride *ov, FsgState **ret, FsgError *e);
/* The same, holding only the entry name resolves to (fsg_state_resolve(), with its errors),
 * its index and lookups as consistent as a full state's. */
int fsg_state_build_one(const FsgContext *c, const char *name, FsgState **ret, FsgError *e);
/* Each entry's granted_until read again from the grant records (grant.h): fsgated, which
 * writes them, calls it after each change instead of building everything again. */
int fsg_state_update_grants(const FsgContext *c, FsgState *s, FsgError *e);
/* The state a planner works on: *current when the caller has one (the service's cache),
 * else one built now into *built, which the caller frees. */
int fsg_state_current_or_build(const FsgContext *c, const FsgState **current, FsgState **built, FsgError *e);
/* A state with one reference, nothing in it. */
FsgState *fsg_state_new(void);
FsgState *fsg_state_ref(FsgState *s);
/* Drops a reference; the last one frees it. Returns NULL, for "s = fsg_state_unref(s)". */
FsgState *fsg_state_unref(FsgState *s);

static inline void fsg_state_unrefp(FsgState **s) {
        fsg_state_unref(*s);
}

/* By module name (either '-' or '_') or by filesystem type, in O(log n): s must come from
 * fsg_state_build(), which sorts the entries and indexes their types. */
const FsgEntry *fsg_state_find(const FsgState *s, const char *name);
/* Its two halves, for a reader that knows which one a word is (usage.h): the entry of a
 * module by its normalized name, or of a filesystem type. */
FsgEntry *fsg_state_find_module(const FsgState *s, const char *normalized);
FsgEntry *fsg_state_find_type(const FsgState *s, const char *type);

/* Validates a caller's name and finds its entry, with the error a caller can act on:
 * InvalidName, NotAFilesystem (a module of the tree without "fs-" aliases), NoSuchFilesystem. */
int fsg_state_resolve(const FsgContext *c, const FsgState *s, const char *name, const FsgEntry **ret, FsgError *e);

/* fsg_state_resolve(), and where there is no kernel to know the name (no module tree) and
 * no file names it, a state built again into *built (freed first) with an entry for it as a
 * module: fsgate's own files can be written and undone on an image before its kernel. s may
 * be *built. */
int fsg_state_resolve_unknown_kernel(const FsgContext *c, const FsgState *s, const char *name,
                                     FsgState **built, const FsgEntry **ret, FsgError *e);

/* The first of s's hard_deps index for module (normalized), and how many name it. */
size_t fsg_state_find_hard_deps(const FsgState *s, const char *normalized, FsgHardDep ***ret);

/* Frees what an entry owns (not the entry itself); the second its hard_deps only (for an entry
 * no state indexes yet). */
void fsg_entry_done(FsgEntry *x);
void fsg_entry_done_hard_deps(FsgEntry *x);

/* The first hard-denied dependency that a load of x would insert now (one not loaded), NULL
 * if none: while there is one, Load and Allow with LOAD_NOW are refused (HardDenied). */
static inline const FsgHardDep *fsg_entry_load_blocker(const FsgEntry *x) {
        for (size_t i = 0; i < x->n_hard_deps; i++)
                if (!x->hard_deps[i].loaded)
                        return &x->hard_deps[i];
        return NULL;
}

/* Whether "modprobe MODULE" by root would put it into the kernel now: its own install
 * command aside (explicit_load), no dependency's may refuse. */
static inline bool fsg_entry_explicit_load(const FsgEntry *x) {
        return x->explicit_load && (x->builtin || !fsg_entry_load_blocker(x));
}

static inline const char *fsg_entry_state_string(const FsgEntry *x) {
        return x->denied ? "denied" : "allowed";
}

/* What is in use on the system under the root: the modules ROOT/proc/modules lists and the
 * filesystem types ROOT/proc/mounts holds (read by usage.h). */
/* Set every entry's loaded (mounted) flag. Neither allocates for the running system, so a
 * caller that cannot tell whether they changed can afford them for every answer.
 * update_loaded marks the entries' hard-denied dependencies (FsgHardDep) too, loaded when live.
 * It returns > 0 when one of those modules is half loaded or half unloaded: the kernel
 * announces no end of a load that fails, so that answer must not be kept. */
int fsg_state_update_loaded(const FsgContext *c, FsgState *s);
int fsg_state_update_mounted(const FsgContext *c, FsgState *s);

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "confparse.h"

/* What the configuration says: which modprobe.d files count, in kmod's precedence (masks,
 * shadowing, the kernel command line), and the rules they hold. */

/* What decides an entry, in the order kmod reads the directories (highest precedence last
 * in this enum so that a larger value wins attribution ties). */
typedef enum FsgOrigin {
        FSG_ORIGIN_DEFAULT,
        FSG_ORIGIN_VENDOR,
        FSG_ORIGIN_LOCAL,
        FSG_ORIGIN_RUNTIME,
        FSG_ORIGIN_ADMIN,
        FSG_ORIGIN_CMDLINE,
        _FSG_ORIGIN_MAX,
} FsgOrigin;

const char *fsg_origin_to_string(FsgOrigin o);
FsgOrigin fsg_origin_from_string(const char *s);

typedef struct FsgConfFile {
        char *name;        /* basename */
        char *path;        /* as the system sees it, e.g. /etc/modprobe.d/x.conf */
        char *fullpath;    /* root-prefixed, for libkmod on the running system (which opens by name) */
        char *syspath;     /* path as the system sees it, raw bytes: we open it inside the root */
        FsgOrigin origin;
        bool mask;         /* symlink to /dev/null or empty: hides same-named files below */
        char *shadowed;    /* fullpath of the next file below with the same basename, or NULL */
        /* An override fsgate wrote in /etc or /run (override.h): the vendor file it replaces,
         * the modules it allows, and whether that file changed (or went) since. */
        char *override_of;
        char **override_allows;
        bool override_stale;
} FsgConfFile;

typedef struct FsgConfig {
        FsgConfFile *files;       /* effective files, sorted by basename like kmod */
        size_t n_files;
        FsgRule *rules;           /* from the effective, non-mask files, in kmod's read order */
        size_t n_rules;
        char **cmdline_blacklist; /* modprobe.blacklist= on ROOT/proc/cmdline */
        char **named_modules;     /* M from every 60-blacklist_fs-M.conf in any directory, sorted */
        size_t *by_name;          /* indexes into rules, sorted by name, then in read order */
        /* The types fsgate's routes file (routes.h) sends to its hook (normalized, name.h). That file is not among
         * files: what it says is fsgate's report, not a decision, so it never decides a state. */
        char **routed_types;
        bool routes_seen;         /* that file (or a mask) was in /run: it hides the name below */
        char **unreadable;        /* system paths that could not be read (EACCES): skipped, so the
                                   * answer may be incomplete, and callers must say so */
        /* In an image, the bytes of the files parsed, in order, as one text kmod reads as it
         * would read them one by one (fsg_conf_write_for_kmod()): libkmod opens what it is given
         * by name, and the image's owner can put a FIFO or a symlink to a host file under a
         * name fsgate checked. NULL for the running system, where kmod gets fsg_config_kmod_paths(). */
        char *kmod_text;
        size_t kmod_len;
        size_t kmod_softdep_at;   /* where kmod reads FSG_KMOD_SOFTDEP among them (by name) */
        int content_fd;           /* + 1: the memfd kmod reads an override's "what if" content
                                   * from (the running system; an image has it in kmod_text) */
} FsgConfig;

/* The module tree's file that kmod reads as one more configuration file, sorted among the
 * others by its name. */
#define FSG_KMOD_SOFTDEP "modules.softdep"

/* A hypothetical change to one file, to ask "what would the state be if ...". */
typedef struct FsgOverride {
        const char *path;  /* system path, e.g. /etc/modprobe.d/60-blacklist_fs-hfs.conf */
        bool as_mask;      /* true: as if a /dev/null symlink; false: as if absent */
        /* With no module tree (an image before its kernel): a module to describe even if no
         * file names it, so that fsgate can write and undo its own files there. */
        const char *module;
        /* Set: as if the file at path held this (an override about to be written), whether or
         * not it exists. */
        const char *content;
} FsgOverride;

int fsg_config_load(const FsgContext *c, const FsgOverride *ov, FsgConfig **ret, FsgError *e);
FsgConfig *fsg_config_free(FsgConfig *cfg);
static inline void fsg_config_freep(FsgConfig **c) {
        fsg_config_free(*c);
}

/* NULL-terminated list of the fullpaths kmod should read, in order (the running system's). */
char **fsg_config_kmod_paths(const FsgConfig *cfg);

bool fsg_config_blacklists(const FsgConfig *cfg, const char *module);
/* Whether a blacklist or an install rule names module: what denies a module the tree does not
 * have, judged by the rules alone. */
bool fsg_config_names_module(const FsgConfig *cfg, const char *module);

/* Every line of the effective configuration that speaks of module: its blacklist and install
 * lines, the aliases of its types' requests (fs-TYPE) and the install lines they route to,
 * a mask with module's fsgate file name, modprobe.blacklist= on the command line. *ret gets
 * pairs (system path, the line as kmod reads it) in kmod's read order. Returns a negative
 * errno. */
int fsg_config_mentions(const FsgConfig *cfg, const char *module, char * const *types, char ***ret);

/* The rules whose name is name, in kmod's read order: *ret points to n indexes into
 * cfg->rules. A lookup costs O(log rules), so per-module questions stay cheap with
 * thousands of files. */
size_t fsg_config_rules_named(const FsgConfig *cfg, const char *name, const size_t **ret);

/* The directories in kmod's precedence order (kmod 30, plus /usr/lib as kmod 32 reads it). */
typedef struct FsgConfDir {
        const char *path;
        FsgOrigin origin;
} FsgConfDir;
extern const FsgConfDir fsg_conf_dirs[];
extern const size_t fsg_n_conf_dirs;

#define FSG_FILE_PREFIX "60-blacklist_fs-"
#define FSG_FILE_SUFFIX ".conf"

/* fsgate's routes file (routes.h writes it): read by kmod, skipped by fsgate's model. */
#define FSG_ROUTES_DIR "/run/modprobe.d"
#define FSG_ROUTES_NAME "fsgate-routes.conf"
#define FSG_ROUTES_PATH FSG_ROUTES_DIR "/" FSG_ROUTES_NAME
/* The same name in /etc/modprobe.d shadows the file for kmod and for fsgate's model alike:
 * a /dev/null link there turns the routes off for good, whoever writes them. */
#define FSG_ROUTES_OFF_PATH "/etc/modprobe.d/" FSG_ROUTES_NAME

/* An observation's file (observe.h writes it): read by kmod, skipped by fsgate's model. */
#define FSG_OBSERVE_DIR  "/etc/modprobe.d"
#define FSG_OBSERVE_NAME "fsgate-observe.conf"
#define FSG_OBSERVE_PATH FSG_OBSERVE_DIR "/" FSG_OBSERVE_NAME

/* Its lines, and the name a route sends a type's request to (FSG_ROUTED_PREFIX). */
#include "hook-line.h"

/* Whether an alias for fs-type with this (normalized) target is fsgate's route. */
bool fsg_routes_target_is(const char *target, const char *type);

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <limits.h>
#include <getopt.h>
#include <locale.h>

#include "alloc-util.h"
#include "config.h"
#include "ctl.h"
#include "ctl-change.h"
#include "grant.h"
#include "json-writer.h"
#include "profile.h"
#include "strv.h"


typedef enum VerbFlags {
        VERB_ARG_NAME   = 1 << 0,       /* its argument is a module or type name */
        VERB_ARG_DEVICE = 1 << 1,       /* ... or a device: completion offers both */
        VERB_HIDDEN     = 1 << 2,       /* for the completion scripts, not for people */
        VERB_ARG_PROFILE = 1 << 3,      /* its argument is a profile (apply, audit) */
        VERB_ARG_NAMES  = VERB_ARG_NAME | 1 << 4, /* one or more names (allow, deny, reset: all changed or none) */
        VERB_ARG_FILE   = 1 << 5,       /* a device or a file (open, close) */
        VERB_ARG_PATTERNS = 1 << 6,     /* none or more globs on names (list): completion offers names */
} VerbFlags;

/* One row per verb, as systemd's dispatch_verb() has them. --help, --list-verbs and so the
 * shell completions are printed from this table: a verb added here is offered everywhere.
 * help is translated in --help, not in --list-verbs (the completions parse it). */
typedef struct Verb {
        const char *name;
        unsigned min_args, max_args;    /* counting the verb itself, as systemd does */
        VerbFlags flags;
        uint64_t options;               /* the FSG_FLAG_* options it takes; any other is refused */
        int (*run)(int argc, char *argv[], Ctl *c);     /* returns the exit status */
        const char *help;
} Verb;

static int verb_list(int argc, char *argv[], Ctl *c) {
        c->filter.patterns = argc > 1 ? argv + 1 : NULL;
        return ctl_list(c->be, &c->o, &c->filter);
}

static int verb_log(int argc, char *argv[], Ctl *c) {
        return ctl_log(&c->o, c->since_usec, c->lines, c->only_would_block);
}

static int verb_initramfs(int argc, char *argv[], Ctl *c) {
        return ctl_initramfs(&c->o);
}

static void ctl_status_extras_done(CtlStatusExtras *x) {
        free_many(x->initramfs_row, x->initramfs_advice, x->desktop_row, x->open_routes);
}

/* One described module as status shows it to people: the exit status. */
static int status_text(Ctl *c, const FsgState *s) {
        _cleanup_(ctl_status_extras_done) CtlStatusExtras x = {};
        FsgError e = {};

        /* A look into the initramfs (unpacked: a second or so) and at udisks2 belongs to the
         * text a person reads; scripts have `initramfs --json`. */
        if (ctl_initramfs_status(&c->o, s->entries[0].module, &x.initramfs_row, &x.initramfs_advice) < 0 ||
            ctl_desktop_mount_row(&c->o, &s->entries[0], &x.desktop_row) < 0 ||
            ctl_open_routes_of_types(&c->o, &s->entries[0], &x.open_routes) < 0) {
                fsg_error(&e, FSG_ERR_FAILED, "%s", _("Out of memory"));
                return ctl_fail(&c->o, &e);
        }
        ctl_print_status(&c->o, s, &s->entries[0], &x);
        ctl_observation_status(c->be, &c->o, s->entries[0].module);
        return 0;
}

/* Each name in turn, as systemctl status does: one that fails is said on stderr and the rest
 * still shown; the exit status is the worst of them, so that it never hides a failure. */
static int verb_status(int argc, char *argv[], Ctl *c) {
        FsgState *states[MAX_NAMES] = {};
        size_t n = 0;
        int ret = 0;

        for (int i = 1; i < argc && n < ELEMENTSOF(states); i++) {
                FsgError e = {};
                int r = 0;

                if (c->be->describe(&c->o, argv[i], &states[n], &e) < 0) {
                        r = ctl_fail(&c->o, &e);
                        ret = r > ret ? r : ret;
                        continue;
                }
                /* Every answer reads the same files: one warning does. */
                if (n == 0)
                        ctl_warn_unreadable(states[n]);
                if (!c->o.json) {
                        if (n > 0)
                                putchar('\n');
                        r = status_text(c, states[n]);
                }
                ret = r > ret ? r : ret;
                n++;
        }
        /* One name, one object (as always); several, an array of those found. */
        if (c->o.json && (n > 0 || argc > 2))
                ctl_print_json_states(states, n, argc == 2);
        for (size_t i = 0; i < n; i++)
                fsg_state_unref(states[i]);
        return ret;
}

static int verb_why(int argc, char *argv[], Ctl *c) {
        return ctl_why(c->be, &c->o, argv[1]);
}

static int verb_allow(int argc, char *argv[], Ctl *c) {
        if (c->grant_usec || c->grant_device) {
                FsgError e = {};

                if (c->flags) {
                        fsg_error(&e, FSG_ERR_INVALID_ARGS, _("%s does not apply to allow --for or --device"),
                                  fsg_flags_to_string(c->flags, true));
                        return ctl_fail(&c->o, &e);
                }
                return ctl_grant_names(c, argv + 1, argc - 1);
        }
        return ctl_change_names(c, FSG_OP_ALLOW, argv + 1, argc - 1);
}

static int verb_deny(int argc, char *argv[], Ctl *c) {
        return ctl_change_names(c, FSG_OP_DENY, argv + 1, argc - 1);
}

static int verb_reset(int argc, char *argv[], Ctl *c) {
        return ctl_change_names(c, FSG_OP_RESET, argv + 1, argc - 1);
}

static int verb_load(int argc, char *argv[], Ctl *c) {
        FsgError e = {};

        if (c->be->load(&c->o, argv[1], &e) < 0)
                return ctl_fail(&c->o, &e);
        if (c->o.json) {
                JsonWriter w = JSON_WRITER(stdout);

                json_object_begin(&w);
                json_field_string(&w, "loaded", argv[1]);
                json_object_end(&w);
                putchar('\n');
        }
        return 0;
}

static int verb_exempt_loaded(int argc, char *argv[], Ctl *c) {
        _cleanup_strv_free_ char **done = NULL;
        FsgError e = {};

        if (c->be->exempt(&c->o, &done, &e) < 0)
                return ctl_fail(&c->o, &e);
        if (c->o.json)
                ctl_print_strv_json(done);
        else if (strv_isempty(done))
                printf("%s\n", _("Nothing to exempt: no filesystem a vendor file denies is mounted now."));
        else
                for (char **d = done; d && *d; d++)
                        printf(_("Exempted %s: it is in use, so it stays allowed.\n"), *d);
        return 0;
}

/* Every word a NAME argument accepts (modules and their types), one a line: what the shell
 * completions offer, from the service or, with --root, from the image. */
static int verb_list_names(int argc, char *argv[], Ctl *c) {
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        _cleanup_strv_free_ char **names = NULL;
        FsgError e = {};

        if (c->be->list(&c->o, &s, &e) < 0)
                return ctl_fail(&c->o, &e);
        for (size_t i = 0; i < s->n; i++) {
                if (strv_extend(&names, s->entries[i].module) < 0)
                        goto oom;
                for (char **t = s->entries[i].types; t && *t; t++)
                        if (strv_extend(&names, *t) < 0)
                                goto oom;
        }
        strv_sort_unique(names);
        for (char **n = names; n && *n; n++)
                puts(*n);
        return 0;
oom:
        fsg_error(&e, FSG_ERR_FAILED, "%s", _("Out of memory"));
        return ctl_fail(&c->o, &e);
}

/* The profiles apply and audit accept, one a line, for the shell completions: the installed
 * ones, whether or not --root is given (profiles come with fsgate, not with the image). */
static int verb_list_profiles(int argc, char *argv[], Ctl *c) {
        _cleanup_strv_free_ char **names = NULL;
        FsgError e = {};

        if (fsg_profile_list(&names, &e) < 0)
                return ctl_fail(&c->o, &e);
        for (char **n = names; n && *n; n++)
                puts(*n);
        return 0;
}

static int verb_apply(int argc, char *argv[], Ctl *c) {
        return ctl_apply_profile(c->be, &c->o, argv[1], c->flags);
}

static int verb_undo(int argc, char *argv[], Ctl *c) {
        return ctl_undo_profile(c->be, &c->o, argv[1], c->flags);
}

static int verb_audit(int argc, char *argv[], Ctl *c) {
        return ctl_audit_profile(c->be, &c->o, argv[1], c->flags & FSG_FLAG_HARD);
}

static int verb_stop_observing(int argc, char *argv[], Ctl *c) {
        return ctl_stop_observing(c->be, &c->o);
}

static int verb_routes(int argc, char *argv[], Ctl *c) {
        return ctl_routes(c->be, &c->o);
}

static int verb_open(int argc, char *argv[], Ctl *c) {
        return ctl_open(c->be, &c->o, argv[1], c->route);
}

static int verb_close(int argc, char *argv[], Ctl *c) {
        return ctl_close(c->be, &c->o, argv[1]);
}

#define ALLOW_OPTIONS (FSG_FLAG_RUNTIME | FSG_FLAG_LOAD_NOW)
#define DENY_OPTIONS  (FSG_FLAG_RUNTIME | FSG_FLAG_FORCE | FSG_FLAG_HARD | FSG_FLAG_SOFT)
#define APPLY_OPTIONS (FSG_FLAG_FORCE | FSG_FLAG_HARD | FSG_FLAG_DRY_RUN | FSG_FLAG_INCLUDE_ON_DEMAND | FSG_FLAG_OBSERVE)

static const Verb verbs[] = {
        { "list",          1, MAX_NAMES + 1, VERB_ARG_PATTERNS, 0,         verb_list,          N_("List the filesystem modules (or those PATTERN names) and whether they may autoload") },
        { "status",        2, MAX_NAMES + 1, VERB_ARG_NAMES, 0,            verb_status,        N_("Show one or more modules (NAME may be a filesystem type, e.g. vxfs)") },
        { "why",           2, 2, VERB_ARG_DEVICE, 0,                      verb_why,           N_("Can this device or filesystem type be mounted here, and if not, why") },
        { "allow",         2, MAX_NAMES + 1, VERB_ARG_NAMES, ALLOW_OPTIONS,  verb_allow,         N_("Let the kernel load it on demand") },
        { "deny",          2, MAX_NAMES + 1, VERB_ARG_NAMES, DENY_OPTIONS,   verb_deny,          N_("Stop the kernel from loading it on demand") },
        { "reset",         2, MAX_NAMES + 1, VERB_ARG_NAMES, FSG_FLAG_RUNTIME, verb_reset,       N_("Drop fsgate's override, back to the vendor default") },
        { "load",          2, 2, VERB_ARG_NAME,   0,                      verb_load,          N_("Load it now, this boot only, changing no configuration") },
        { "exempt-loaded", 1, 1, 0,               0,                      verb_exempt_loaded, N_("Allow every denied filesystem that is mounted now") },
        { "apply",         2, 2, VERB_ARG_PROFILE, APPLY_OPTIONS,         verb_apply,         N_("Deny every module of a profile (opensuse, cis, unused), all or nothing") },
        { "undo",          2, 2, VERB_ARG_PROFILE, FSG_FLAG_DRY_RUN,      verb_undo,          N_("Reset the denies a profile wrote that nobody changed since") },
        { "stop-observing", 1, 1, 0,              0,                      verb_stop_observing, N_("End the observation apply --observe began, enforcing nothing") },
        { "audit",         2, 2, VERB_ARG_PROFILE, FSG_FLAG_HARD,         verb_audit,         N_("Is every module of a profile denied as it requires? Exit 0 only if so") },
        { "routes",        1, 1, 0,               0,                      verb_routes,        N_("Which userspace driver, or else a throwaway VM, could read each filesystem type without its module") },
        { "open",          2, 2, VERB_ARG_FILE,   0,                      verb_open,          N_("Mount a device's or image's files read-only for you, by a userspace driver, no module") },
        { "close",         2, 2, VERB_ARG_FILE,   0,                      verb_close,         N_("Unmount what open mounted (its mountpoint, device or id)") },
        { "log",           1, 1, 0,               0,                      verb_log,           N_("Show the blocks the journal holds, and what was done afterwards") },
        { "initramfs",     1, 1, 0,               0,                      verb_initramfs,     N_("Does the initramfs deny what this system denies? Exit 0 only if so") },
        { "list-names",    1, 1, VERB_HIDDEN,     0,                      verb_list_names,    NULL },
        { "list-profiles", 1, 1, VERB_HIDDEN,     0,                      verb_list_profiles, NULL },
};

static const char *verb_arg(const Verb *v) {
        return v->flags & VERB_ARG_PATTERNS ? "[PATTERN...]" : v->flags & VERB_ARG_FILE ? "DEVICE|IMAGE" : v->flags & VERB_ARG_PROFILE ? "PROFILE" : v->flags & VERB_ARG_DEVICE ? "DEVICE|TYPE" :
               (v->flags & VERB_ARG_NAMES) == VERB_ARG_NAMES ? "NAME..." : v->flags & VERB_ARG_NAME ? "NAME" : NULL;
}

enum {
        ARG_VERSION = 0x100,
        ARG_ROOT,
        ARG_KVER,
        ARG_RUNTIME,
        ARG_FORCE,
        ARG_LOAD,
        ARG_HARD,
        ARG_SOFT,
        ARG_DRY_RUN,
        ARG_INCLUDE_ON_DEMAND,
        ARG_OBSERVE,
        ARG_WOULD_BLOCK,
        ARG_JSON,
        ARG_RISK,
        ARG_STATE,
        ARG_ORIGIN,
        ARG_SINCE,
        ARG_LINES,
        ARG_FOR,
        ARG_DEVICE,
        ARG_NO_ASK,
        ARG_ROUTE,
        ARG_LIST_VERBS,
        ARG_LIST_OPTIONS,
};

static const struct option options[] = {
        { "help",            no_argument,       NULL, 'h'              },
        { "version",         no_argument,       NULL, ARG_VERSION      },
        { "root",            required_argument, NULL, ARG_ROOT         },
        { "kernel-release",  required_argument, NULL, ARG_KVER         },
        { "runtime",         no_argument,       NULL, ARG_RUNTIME      },
        { "force",           no_argument,       NULL, ARG_FORCE        },
        { "load",            no_argument,       NULL, ARG_LOAD         },
        { "hard",            no_argument,       NULL, ARG_HARD         },
        { "soft",            no_argument,       NULL, ARG_SOFT         },
        { "dry-run",         no_argument,       NULL, ARG_DRY_RUN      },
        { "include-on-demand", no_argument,     NULL, ARG_INCLUDE_ON_DEMAND },
        { "observe",         no_argument,       NULL, ARG_OBSERVE      },
        { "would-block",     no_argument,       NULL, ARG_WOULD_BLOCK  },
        { "json",            no_argument,       NULL, ARG_JSON         },
        { "risk",            no_argument,       NULL, ARG_RISK         },
        { "state",           required_argument, NULL, ARG_STATE        },
        { "origin",          required_argument, NULL, ARG_ORIGIN       },
        { "since",           required_argument, NULL, ARG_SINCE        },
        { "lines",           required_argument, NULL, ARG_LINES        },
        { "for",             required_argument, NULL, ARG_FOR          },
        { "device",          required_argument, NULL, ARG_DEVICE       },
        { "no-ask-password", no_argument,       NULL, ARG_NO_ASK       },
        { "route",           required_argument, NULL, ARG_ROUTE        },
        /* Hidden: what the shell completions ask, so they cannot drift from this file. */
        { "list-verbs",      no_argument,       NULL, ARG_LIST_VERBS   },
        { "list-options",    no_argument,       NULL, ARG_LIST_OPTIONS },
        {}
};

/* --help's option lines, in the order shown. */
static const struct {
        const char *usage, *help;
} option_help[] = {
        { "-h --help",          N_("Show this help") },
        { "   --version",       N_("Show the version") },
        { "   --root=DIR",      N_("Work offline on the system image at DIR (no service)") },
        { "   --kernel-release=KVER", N_("Judge against this kernel's module tree") },
        { "   --runtime",       N_("Change /run only: the change ends at reboot") },
        /* TRANSLATORS: "deny:", "allow:", "apply:" name the command an option is for. */
        { "   --force",         N_("deny: even if the filesystem is in use now") },
        { "   --load",          N_("allow: also load the module now") },
        { "   --for=SPAN",      N_("allow: load it now for a while (90s, 10min, 2h, 1d), then unload it once unused") },
        { "   --device=DEV",    N_("allow: load it now while the medium in DEV is there (at most a day), then unload it") },
        { "   --hard",          N_("deny: refuse explicit loads too (modprobe, load)") },
        { "   --soft",          N_("deny: make a hard deny soft again (a plain deny keeps it hard)") },
        { "   --dry-run",       N_("apply: print the changes, write nothing") },
        { "   --observe",       N_("apply: observe the profile: deny nothing, record what it would block") },
        { "   --would-block",   N_("log: only what an observed profile would have blocked") },
        { "   --include-on-demand", N_("apply unused: deny what people need on demand too (sticks, DVDs, containers)") },
        { "   --json",          N_("Print JSON") },
        { "   --since=WHEN",    N_("log: since a date (2026-12-06 [10:30]) or a span ago (90min, 12h, 7d)") },
        { "   --lines=N",       N_("log: show at most the newest N blocks (default 100, at most 10000)") },
        { "   --route=ROUTE",   N_("open: how to read it (fuse: a userspace driver; vm: the kernel's driver in a throwaway VM; default: the best there is)") },
        { "   --risk",          N_("list: what the kernel source says of each module (maintained, deprecated, ...)") },
        { "   --state=STATE",   N_("list: only modules in these states (allowed, denied, builtin; comma-separated; help lists them)") },
        { "   --origin=ORIGIN", N_("list: only modules decided from these places (vendor, admin, ...; comma-separated; help lists them)") },
        { "   --no-ask-password", N_("Do not let polkit ask for a password") },
};

static void help(void) {
        /* The synopsis, verbs, options and metavariables (NAME, DIR) stay as they are typed. */
        printf("fsgatectl [OPTIONS...] COMMAND [NAME]\n\n");
        printf("%s\n\n", _("Decide which filesystem modules the kernel may load on its own."));
        printf("%s\n", _("Commands:"));
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++) {
                const Verb *v = &verbs[i];
                char usage[32];

                if (v->flags & VERB_HIDDEN)
                        continue;
                snprintf(usage, sizeof(usage), "%s%s%s", v->name, verb_arg(v) ? " " : "", verb_arg(v) ?: "");
                printf("  %-18s %s\n", usage, _(v->help));
        }
        printf("\n%s\n", _("Options:"));
        for (size_t i = 0; i < ELEMENTSOF(option_help); i++) {
                /* A long option runs past the column: two blanks after it. */
                int n = (int) strlen(option_help[i].usage);
                printf("  %s%*s%s\n", option_help[i].usage, n < 18 ? 19 - n : 2, "", _(option_help[i].help));
        }
        printf("\n%s\n", _("See fsgatectl(1) for exit codes."));
}

/* One verb a line: name, what its argument is ("name", "names" for one or more, "patterns"
 * for none or more globs, "device",
 * "profile" or "-"), and its help, tab separated. */
static void list_verbs(void) {
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++) {
                const Verb *v = &verbs[i];

                if (v->flags & VERB_HIDDEN)
                        continue;
                printf("%s\t%s\t%s\n", v->name,
                       v->flags & VERB_ARG_PATTERNS ? "patterns" : v->flags & VERB_ARG_FILE ? "file" : v->flags & VERB_ARG_PROFILE ? "profile" : v->flags & VERB_ARG_DEVICE ? "device" :
                       (v->flags & VERB_ARG_NAMES) == VERB_ARG_NAMES ? "names" :
                       v->flags & VERB_ARG_NAME ? "name" : "-", v->help);
        }
}

/* One option a line, "--root=" for one that takes a value. */
static void list_options(void) {
        for (const struct option *p = options; p->name; p++) {
                if (p->val == ARG_LIST_VERBS || p->val == ARG_LIST_OPTIONS)
                        continue;
                if (p->val < 0x100)
                        printf("-%c\n", p->val);
                printf("--%s%s\n", p->name, p->has_arg == required_argument ? "=" : "");
        }
}

static int dispatch_verb(int argc, char *argv[], Ctl *c) {
        const Verb *v = NULL;
        FsgError e = {};

        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (streq(verbs[i].name, argv[0])) {
                        v = &verbs[i];
                        break;
                }
        if (!v) {
                fsg_error(&e, FSG_ERR_INVALID_ARGS, _("Unknown command %s; see fsgatectl --help"), argv[0]);
                return ctl_fail(&c->o, &e);
        }
        if ((unsigned) argc < v->min_args) {
                fsg_error(&e, FSG_ERR_INVALID_ARGS, v->flags & VERB_ARG_PROFILE ? _("%s needs a profile name") :
                          _("%s needs a filesystem module or type name"), v->name);
                return ctl_fail(&c->o, &e);
        }
        if ((unsigned) argc > v->max_args) {
                fsg_error(&e, FSG_ERR_INVALID_ARGS, "%s", _("Too many arguments"));
                return ctl_fail(&c->o, &e);
        }
        if (c->flags & ~v->options) {
                /* TRANSLATORS: "--hard does not apply to allow". */
                fsg_error(&e, FSG_ERR_INVALID_ARGS, _("%s does not apply to %s"),
                          fsg_flags_to_string(c->flags & ~v->options, true), v->name);
                return ctl_fail(&c->o, &e);
        }
        if ((c->grant_usec || c->grant_device) && v->run != verb_allow) {
                fsg_error(&e, FSG_ERR_INVALID_ARGS, _("%s does not apply to %s"), "--for/--device", v->name);
                return ctl_fail(&c->o, &e);
        }
        if (c->route && v->run != verb_open) {
                fsg_error(&e, FSG_ERR_INVALID_ARGS, _("%s does not apply to %s"), "--route", v->name);
                return ctl_fail(&c->o, &e);
        }
        if (c->log_options && v->run != verb_log) {
                fsg_error(&e, FSG_ERR_INVALID_ARGS, _("%s does not apply to %s"), "--since/--lines/--would-block", v->name);
                return ctl_fail(&c->o, &e);
        }
        if ((c->filter.states || c->filter.origins) && v->run != verb_list) {
                fsg_error(&e, FSG_ERR_INVALID_ARGS, _("%s does not apply to %s"), "--state/--origin", v->name);
                return ctl_fail(&c->o, &e);
        }
        if (c->o.risk && v->run != verb_list) {
                /* TRANSLATORS: "--risk does not apply to status". */
                fsg_error(&e, FSG_ERR_INVALID_ARGS, _("%s does not apply to %s"), "--risk", v->name);
                return ctl_fail(&c->o, &e);
        }
        if ((c->flags & FSG_FLAG_HARD) && (c->flags & FSG_FLAG_SOFT)) {
                fsg_error(&e, FSG_ERR_INVALID_ARGS, "%s", _("--hard and --soft exclude each other"));
                return ctl_fail(&c->o, &e);
        }
        return v->run(argc, argv, c);
}

/* The kernel's name of a device people name by /dev/disk/by-label/STICK and the like:
 * fsgated, which has no /dev of its own, knows devices by /dev/NAME only. Anything else goes
 * as typed, and the service says what is wrong with it. */
static const char *device_node(const char *arg) {
        static char buf[PATH_MAX];

        if (strncmp(arg, "/dev/", 5) != 0 || !strchr(arg + 5, '/') || !realpath(arg, buf) ||
            strncmp(buf, "/dev/", 5) != 0 || strchr(buf + 5, '/'))
                return arg;
        return buf;
}

/* The options into c: > 0 go on with the verb, 0 done (help, version, the lists), < 0 refused
 * (*e says why; not set when getopt already did). */
static int parse_options(Ctl *c, int argc, char *argv[], FsgError *e) {
        int r;

        while ((r = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (r) {
                case 'h': help(); return 0;
                case ARG_VERSION: printf("fsgatectl %s\n", FSGATE_VERSION); return 0;
                case ARG_ROOT:
                        /* Empty, as when a script's $TARGET is unset: never "the host". */
                        if (!*optarg) {
                                fsg_error(e, FSG_ERR_INVALID_ARGS, "%s",
                                          _("--root= needs a directory; without --root fsgatectl works on this system"));
                                return -EINVAL;
                        }
                        c->o.root = optarg;
                        break;
                case ARG_KVER: c->o.kernel_release = optarg; break;
                case ARG_RUNTIME: c->flags |= FSG_FLAG_RUNTIME; break;
                case ARG_FORCE: c->flags |= FSG_FLAG_FORCE; break;
                case ARG_LOAD: c->flags |= FSG_FLAG_LOAD_NOW; break;
                case ARG_HARD: c->flags |= FSG_FLAG_HARD; break;
                case ARG_SOFT: c->flags |= FSG_FLAG_SOFT; break;
                case ARG_DRY_RUN: c->flags |= FSG_FLAG_DRY_RUN; break;
                case ARG_INCLUDE_ON_DEMAND: c->flags |= FSG_FLAG_INCLUDE_ON_DEMAND; break;
                case ARG_OBSERVE: c->flags |= FSG_FLAG_OBSERVE; break;
                case ARG_WOULD_BLOCK:
                        c->only_would_block = c->log_options = true;
                        break;
                case ARG_JSON: c->o.json = true; break;
                case ARG_RISK: c->o.risk = true; break;
                case ARG_STATE:
                case ARG_ORIGIN:
                        /* As systemctl --state=help: the words, for people and the completions. */
                        if (streq(optarg, "help")) {
                                ctl_filter_print_words(r == ARG_ORIGIN);
                                return 0;
                        }
                        if ((r == ARG_STATE ? ctl_filter_parse_states : ctl_filter_parse_origins)(&c->filter, optarg, e) < 0)
                                return -EINVAL;
                        break;
                case ARG_SINCE:
                        if (ctl_parse_since(optarg, &c->since_usec) < 0) {
                                fsg_error(e, FSG_ERR_INVALID_ARGS, _("Invalid --since: %s (a date such as 2026-12-06 "
                                          "10:30, or a span such as 90min, 12h, 7d)"), optarg);
                                return -EINVAL;
                        }
                        c->log_options = true;
                        break;
                case ARG_FOR:
                        if (ctl_parse_span(optarg, true, &c->grant_usec) < 0 || c->grant_usec < 1000000 ||
                            c->grant_usec > FSG_GRANT_SECONDS_MAX * 1000000) {
                                fsg_error(e, FSG_ERR_INVALID_ARGS, _("Invalid --for: %s (a span from 1s to 7d, such as "
                                          "90s, 10min, 2h)"), optarg);
                                return -EINVAL;
                        }
                        break;
                case ARG_ROUTE: c->route = optarg; break;
                case ARG_DEVICE:
                        c->grant_device = device_node(optarg);
                        break;
                case ARG_LINES: {
                        char *end;
                        unsigned long n = strtoul(optarg, &end, 10);
                        if (!*optarg || *end || *optarg == '-' || n < 1 || n > CTL_LOG_LINES_MAX) {
                                fsg_error(e, FSG_ERR_INVALID_ARGS, _("Invalid --lines: %s (1 to %d)"), optarg,
                                          CTL_LOG_LINES_MAX);
                                return -EINVAL;
                        }
                        c->lines = (unsigned) n;
                        c->log_options = true;
                        break;
                }
                case ARG_NO_ASK: c->o.ask_password = false; break;
                case ARG_LIST_VERBS: list_verbs(); return 0;
                case ARG_LIST_OPTIONS: list_options(); return 0;
                default: return -EINVAL; /* getopt said why */
                }
        return 1;
}

/* What the verb needs beyond the options one by one: a command, --kernel-release only with
 * --root, --root made absolute (relative to the working directory, as systemd's tools take it). */
static int check_options(Ctl *c, int argc, FsgError *e) {
        if (optind >= argc)
                return fsg_error(e, FSG_ERR_INVALID_ARGS, "%s", _("Missing command; see fsgatectl --help"));
        if (c->o.kernel_release && !c->o.root)
                return fsg_error(e, FSG_ERR_INVALID_ARGS, "%s", _("--kernel-release only applies offline, with --root"));
        if (c->o.root && c->o.root[0] != '/') {
                _cleanup_free_ char *cwd = getcwd(NULL, 0);
                if (!cwd || asprintf(&c->root_abs, "%s/%s", cwd, c->o.root) < 0)
                        return fsg_error_errno(e, errno, "%s", _("Failed to resolve --root"));
                c->o.root = c->root_abs;
        }
        return 0;
}

int main(int argc, char *argv[]) {
        Ctl c = { .o.ask_password = true, .lines = 100 };
        FsgError e = {};
        int r;

        /* Before the options, so that getopt's own complaints are in the person's language. */
        fsg_i18n_init();
        r = parse_options(&c, argc, argv, &e);
        if (r <= 0)
                return r == 0 ? 0 : e.code == FSG_OK ? 2 : ctl_fail(&c.o, &e);
        /* --json is for scripts: every text in it (and every error message beside it) as
         * without a locale, the same everywhere. */
        if (c.o.json)
                (void) setlocale(LC_ALL, "C");
        if (check_options(&c, argc, &e) < 0)
                return ctl_fail(&c.o, &e);
        c.be = c.o.root ? &ctl_backend_offline : &ctl_backend_bus;
        r = dispatch_verb(argc - optind, argv + optind, &c);
        free(c.root_abs);
        return r;
}

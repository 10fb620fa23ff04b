/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include "ctl.h"
#include "entry-fields.h"
#include "json-writer.h"
#include "risk.h"
#include "shell-quote.h"
#include "strv.h"
#include "utf8.h"

/* The STATE column's words: a built-in module is neither allowed nor denied there. */
static const char * const state_words[_CTL_STATE_MAX] = {
        [CTL_STATE_ALLOWED] = "allowed",
        [CTL_STATE_DENIED]  = "denied",
        [CTL_STATE_BUILTIN] = "builtin",
};

CtlState ctl_entry_state(const FsgEntry *x) {
        return x->builtin ? CTL_STATE_BUILTIN : x->denied ? CTL_STATE_DENIED : CTL_STATE_ALLOWED;
}

const char *ctl_state_to_string(CtlState st) {
        return st < _CTL_STATE_MAX ? state_words[st] : NULL;
}

const char *ctl_esc(const char *s) {
        /* A ring, so that one printf can take several: each copy lives until its slot
         * comes round again, the last ones until exit. */
        static char *ring[16];
        static size_t next;
        char *t = fsg_cescape(s ?: "");

        if (!t)
                return "(out of memory)";
        free(ring[next]);
        ring[next] = t;
        next = (next + 1) % ELEMENTSOF(ring);
        return t;
}

const char *ctl_sh(const char *w) {
        _cleanup_free_ char *q = fsg_shell_quote(w ?: "");

        /* Quoted for sh, then escaped for the terminal (a no-op but for control characters,
         * which only a --root path typed so could hold). */
        return q ? ctl_esc(q) : "(out of memory)";
}

static void json_field_value(JsonWriter *w, const FsgEntry *x, const FsgEntryField *f) {
        const char *str;

        switch (f->signature[0]) {
        case 's':
                str = fsg_entry_field_string(x, f);
                if (str)
                        json_field_string(w, f->key, str);
                return;
        case 'b':
                json_field_bool(w, f->key, fsg_entry_field_bool(x, f));
                return;
        }
        json_key(w, f->key);
        if (streq(f->signature, "as")) {
                json_strv(w, fsg_entry_field_strv(x, f));
                return;
        }
        /* a(ss), the lines that name the module: [{"file", "line"}]. */
        json_array_begin(w);
        for (char **p = fsg_entry_field_strv(x, f); p && p[0] && p[1]; p += 2) {
                json_object_begin(w);
                json_field_string(w, "file", p[0]);
                json_field_string(w, "line", p[1]);
                json_object_end(w);
        }
        json_array_end(w);
}

void ctl_json_entry_fields(JsonWriter *w, const FsgEntry *x) {
        for (size_t i = 0; i < fsg_entry_fields_n; i++) {
                const FsgEntryField *f = &fsg_entry_fields[i];

                /* An optional fact is there only when it is known: a list's grants too. */
                if (x->described || (f->flags & (FSG_FIELD_ENTRY | FSG_FIELD_STATIC)) ||
                    ((f->flags & FSG_FIELD_OPTIONAL) && f->signature[0] == 's' && fsg_entry_field_string(x, f)))
                        json_field_value(w, x, f);
        }
}

static void json_entry(JsonWriter *w, const FsgEntry *x) {
        json_object_begin(w);
        ctl_json_entry_fields(w, x);
        json_object_end(w);
}

void ctl_print_json(const FsgState *s, bool single) {
        JsonWriter w = JSON_WRITER(stdout);

        if (single && s->n == 1)
                json_entry(&w, &s->entries[0]);
        else {
                json_array_begin(&w);
                for (size_t i = 0; i < s->n; i++)
                        json_entry(&w, &s->entries[i]);
                json_array_end(&w);
        }
        putchar('\n');
}

void ctl_print_json_rows(const CtlRow *rows, size_t n, bool matched) {
        JsonWriter w = JSON_WRITER(stdout);

        json_array_begin(&w);
        for (size_t i = 0; i < n; i++) {
                json_object_begin(&w);
                ctl_json_entry_fields(&w, rows[i].entry);
                if (matched) {
                        _cleanup_free_ char *m = NULL;

                        if (asprintf(&m, "%s %s", rows[i].matched_type ? "type" : "module",
                                     rows[i].matched_type ?: rows[i].entry->module) < 0)
                                m = NULL;
                        json_field_string(&w, "matched", m ?: "");
                }
                json_object_end(&w);
        }
        json_array_end(&w);
        putchar('\n');
}

void ctl_print_json_states(FsgState * const *states, size_t n, bool single) {
        JsonWriter w = JSON_WRITER(stdout);

        if (!single)
                json_array_begin(&w);
        for (size_t i = 0; i < n; i++)
                if (states[i]->n > 0)
                        json_entry(&w, &states[i]->entries[0]);
        if (!single)
                json_array_end(&w);
        putchar('\n');
}

int ctl_fail(const CtlOptions *o, const FsgError *e) {
        if (o->json) {
                /* On stderr like the plain text, so that stdout holds only results; one line,
                 * so that a script can parse it whole. */
                JsonWriter w = JSON_WRITER(stderr);

                json_object_begin(&w);
                json_field_string(&w, "error", fsg_error_dbus_name(e->code));
                json_field_string(&w, "message", e->message);
                json_object_end(&w);
                fputc('\n', stderr);
        } else
                fprintf(stderr, "%s\n", ctl_esc(e->message));
        return fsg_error_exit_status(e->code);
}

void ctl_print_strv_json(char **l) {
        JsonWriter w = JSON_WRITER(stdout);

        json_strv(&w, l);
        putchar('\n');
}

static void types_joined(const FsgEntry *x, char *buf, size_t n) {
        size_t used = 0;
        buf[0] = 0;
        for (char **t = x->types; t && *t && used < n; t++)
                used += snprintf(buf + used, n - used, "%s%s", used ? "," : "", *t);
        if (!x->types)
                snprintf(buf, n, "-");
}

void ctl_warn_unreadable(const FsgState *s) {
        /* A skipped file may be the one that decides: the answer is not to be trusted blindly. */
        for (char **u = s->unreadable; u && *u; u++)
                fprintf(stderr, _("Warning: the answer may be incomplete: cannot read %s\n"), ctl_esc(*u));
        if (s->kernel_unknown)
                fputs(_("Note: no kernel module tree yet; judged by the configuration files alone, "
                        "only the modules they name are known.\n"), stderr);
}

size_t ctl_width(const char *s) {
        size_t n = 0;

        for (; *s; s++)
                n += ((unsigned char) *s & 0xC0) != 0x80;
        return n;
}

void ctl_pad(const char *s, size_t width) {
        fputs(s, stdout);
        for (size_t n = ctl_width(s); n < width; n++)
                putchar(' ');
}

const char *ctl_state_word(const FsgEntry *x) {
        /* TRANSLATORS: the state of a filesystem module: the kernel may (not) load it on demand. */
        return x->denied ? _("denied") : _("allowed");
}

const char *ctl_yes_no(bool b) {
        return b ? _("yes") : _("no");
}

size_t ctl_max_width(size_t w, const char *s) {
        size_t n = ctl_width(s);
        return n > w ? n : w;
}

/* A table's header: n padded columns, widened where a translated word is longer, and the
 * last one as it is. */
static void print_header(const char * const *head, size_t *w, size_t n) {
        for (size_t i = 0; i < n; i++) {
                w[i] = ctl_max_width(w[i], head[i]);
                ctl_pad(head[i], w[i]);
                putchar(' ');
        }
        printf("%s\n", head[n]);
}

/* After the table, for people (on stderr, as the unreadable files: scripts read the rows). */
static void warn_grants(const CtlRow *rows, size_t n) {
        for (size_t i = 0; i < n; i++) {
                const FsgEntry *x = rows[i].entry;

                if (!x->granted_until)
                        continue;
                if (x->granted_device)
                        /* TRANSLATORS: %1$s a module, %2$s a time (UTC), %3$s a device node. */
                        fprintf(stderr, _("%1$s is loaded for a while: until %2$s or until %3$s is removed "
                                          "(fsgatectl deny %1$s ends it now)\n"),
                                ctl_sh(x->module), ctl_esc(x->granted_until), ctl_esc(x->granted_device));
                else
                        /* TRANSLATORS: %1$s a module, %2$s a time (UTC). */
                        fprintf(stderr, _("%1$s is loaded for a while: until %2$s (fsgatectl deny %1$s ends it now)\n"),
                                ctl_sh(x->module), ctl_esc(x->granted_until));
        }
}

/* After a row's last cell: which type a pattern matched, when not its name (for people, as
 * the notes before it). */
static void print_matched_type(const CtlRow *r) {
        if (r->matched_type)
                /* TRANSLATORS: %s is a filesystem type that `list PATTERN` matched (not the module name). */
                printf(_(" (matched by type %s)"), ctl_esc(r->matched_type));
}

void ctl_print_table(const FsgState *s, const CtlRow *rows, size_t n) {
        /* TRANSLATORS: the column headers of `fsgatectl list`, in capitals. The rows below
         * them are not translated (scripts read them). */
        const char *head[] = { _("MODULE"), _("TYPES"), _("STATE"), _("ORIGIN"), _("LOADED"), _("MOUNTED"),
                               _("SOURCE") };
        /* The English widths; a translated header that is longer widens its column. */
        size_t w[] = { 12, 20, 8, 8, 6, 7 };

        print_header(head, w, ELEMENTSOF(w));
        for (size_t i = 0; i < n; i++) {
                const FsgEntry *x = rows[i].entry;
                char types[256];
                types_joined(x, types, sizeof(types));
                /* English words and single words: the maintainer scripts split the rows with
                 * awk and compare STATE, ORIGIN, LOADED and MOUNTED. */
                const char *cells[] = { ctl_esc(x->module), ctl_esc(types), ctl_state_to_string(ctl_entry_state(x)),
                                        fsg_origin_to_string(x->origin), x->loaded ? "yes" : "no",
                                        x->mounted ? "yes" : "no" };
                for (size_t k = 0; k < ELEMENTSOF(cells); k++) {
                        ctl_pad(cells[k], w[k]);
                        putchar(' ');
                }
                if (!x->available && !x->builtin && s->kernel_unknown)
                        /* TRANSLATORS: %s is the deciding file's name, or empty. */
                        printf(_("%s (kernel not known yet)"), ctl_esc(x->deciding_file));
                else if (!x->available && !x->builtin)
                        /* TRANSLATORS: %s is the deciding file's name, or empty. */
                        printf(_("%s (not in this kernel)"), ctl_esc(x->deciding_file));
                else
                        printf("%s", ctl_esc(x->deciding_file));
                print_matched_type(&rows[i]);
                putchar('\n');
        }
        putchar('\n');
        printf(ngettext("%zu filesystem module listed.\n", "%zu filesystem modules listed.\n", n), n);
        warn_grants(rows, n);
}

/* Why a module has no facts: what tools/gen-risk-data did not read (built-in code, code
 * outside fs/: debugfs, sunrpc), never that the kernel source lacks it. */
static const char *risk_not_read(const FsgEntry *x) {
        return x->builtin ? _("(built in: not read; fsgate reads the loadable modules under fs/ only)") :
                            _("(not read: fsgate reads the loadable modules under fs/ only)");
}

void ctl_print_risk_table(const CtlRow *rows, size_t n) {
        /* TRANSLATORS: the column headers of `fsgatectl list --risk`, in capitals. */
        const char *head[] = { _("MODULE"), _("STATE"), _("MAINTAINERS"), _("USERNS"), _("NOTABLE") };
        size_t w[] = { 12, 8, 11, 6 }, notable = 0, unread = 0;

        print_header(head, w, ELEMENTSOF(w));
        for (size_t i = 0; i < n; i++) {
                const FsgEntry *x = rows[i].entry;
                const FsgRisk *r = fsg_risk_find(x->module);
                char phrase[256];
                /* Single words where scripts may split: "Odd Fixes" is one column as "Odd_Fixes". */
                char status[32];

                snprintf(status, sizeof(status), "%s", !r ? "?" : *r->maintainers ? r->maintainers : "-");
                for (char *p = status; *p; p++)
                        if (*p == ' ')
                                *p = '_';
                fsg_risk_phrase(r, phrase, sizeof(phrase));
                notable += fsg_risk_is_notable(r);
                const char *cells[] = { ctl_esc(x->module), ctl_state_to_string(ctl_entry_state(x)), status,
                                        !r ? "?" : r->userns_mount ? "yes" : "no" };
                for (size_t k = 0; k < ELEMENTSOF(cells); k++) {
                        ctl_pad(cells[k], w[k]);
                        putchar(' ');
                }
                printf("%s", r ? (*phrase ? phrase : "-") : risk_not_read(x));
                unread += !r;
                print_matched_type(&rows[i]);
                putchar('\n');
        }
        putchar('\n');
        /* TRANSLATORS: %1$zu modules of %2$zu; %3$s is the kernel source. */
        printf(_("%1$zu of %2$zu modules have a notable fact. Facts from Linux %3$s.\n"), notable, n,
               fsg_risk_source);
        if (unread > 0)
                /* TRANSLATORS: %zu modules; "fs/" is the kernel source's directory. */
                printf(ngettext("%zu module shows ?: its code is not among what fsgate read of that source (the "
                                "loadable modules under fs/).\n",
                                "%zu modules show ?: their code is not among what fsgate read of that source (the "
                                "loadable modules under fs/).\n", unread), unread);
}

const char *ctl_command(const CtlOptions *o) {
        static char *cmd;
        _cleanup_free_ char *root = NULL, *kver = NULL;

        if (cmd)
                return cmd;
        /* The package scripts run `fsgatectl --root=/`: their advice is the plain command. */
        struct stat st;

        if (o->root && !o->kernel_release && stat(o->root, &st) == 0 && fsg_stat_is_host_root(&st))
                return "fsgatectl";
        /* Offline, a hint works only with the same --root (and kernel) it was printed for. */
        if (o->root && (!(root = fsg_shell_quote(o->root)) ||
                          (o->kernel_release && !(kver = fsg_shell_quote(o->kernel_release)))))
                return "fsgatectl";
        if (asprintf(&cmd, "fsgatectl%s%s%s%s", root ? " --root=" : "", root ?: "", kver ? " --kernel-release=" : "",
                     kver ?: "") < 0)
                return cmd = NULL, "fsgatectl";
        return cmd;
}

/* The rows of `status`. */
enum {
        ROW_MODULE, ROW_TYPES, ROW_STATE, ROW_DECIDED, ROW_OVERRIDE, ROW_HARD, ROW_MODPROBE, ROW_INSTALL,
        ROW_LOAD_REFUSED, ROW_AVAILABLE, ROW_LOADED, ROW_GRANTED, ROW_MOUNTED, ROW_BLOCKED, ROW_OPEN, ROW_FILES, ROW_RISK_WHAT,
        ROW_RISK_CODE, ROW_RISK_DEPRECATED, ROW_RISK_UPSTREAM, ROW_RISK_USERNS, ROW_RISK_SOURCE, ROW_INITRAMFS, ROW_DESKTOP, _ROW_MAX
};

/* A vertical table: "label: value" rows, the labels right-aligned one under the other, as
 * wide as the widest label that any row may have (translations differ in length). */
typedef struct VTable {
        const char * const *labels;
        size_t width;
} VTable;

static VTable vtable_new(const char * const *labels, size_t n) {
        VTable t = { .labels = labels };

        for (size_t i = 0; i < n; i++)
                t.width = ctl_max_width(t.width, labels[i]);
        /* Two blanks before the longest label, as in English ("  Decided by: "). */
        t.width += 2;
        return t;
}

/* One row; the format supplies its own newline (translated texts have it). A row of
 * SIZE_MAX has no label: it continues the one above. */
static void vtable_row(const VTable *t, size_t row, const char *format, ...) _printf_(3, 4);
static void vtable_row(const VTable *t, size_t row, const char *format, ...) {
        va_list ap;

        if (row == SIZE_MAX)
                printf("%*s", (int) t->width + 2, "");
        else {
                for (size_t n = ctl_width(t->labels[row]); n < t->width; n++)
                        putchar(' ');
                printf("%s: ", t->labels[row]);
        }
        va_start(ap, format);
        vprintf(format, ap);
        va_end(ap);
}

/* The entry: what it is, its state and what decides it. */
static void status_rows_entry(const VTable *t, const FsgEntry *x) {
        const char *state = x->builtin ? _("allowed (built into the kernel)") : ctl_state_word(x);
        char types[256];

        types_joined(x, types, sizeof(types));
        vtable_row(t, ROW_MODULE, "%s\n", ctl_esc(x->module));
        vtable_row(t, ROW_TYPES, "%s\n", ctl_esc(types));
        if (x->denied)
                /* TRANSLATORS: %s is the state, "denied". */
                vtable_row(t, ROW_STATE, _("%s (the kernel will not load it on its own)\n"), state);
        else
                vtable_row(t, ROW_STATE, "%s\n", state);
        vtable_row(t, ROW_DECIDED, "%s%s%s\n", fsg_origin_to_string(x->origin), *x->deciding_file ? " " : "",
                   ctl_esc(x->deciding_file));
        if (x->override_of && *x->override_of)
                /* TRANSLATORS: %s is a vendor file that fsgate's override replaces. */
                vtable_row(t, ROW_OVERRIDE,
                           x->override_stale ? _("%s (stale: that file changed or went since fsgate copied it)\n") :
                                               _("%s (fsgate's copy without the lines of the modules it allows)\n"),
                           ctl_esc(x->override_of));
}

/* What an explicit load does: refused by its own install command (hard) or by dep's. */
static void status_rows_explicit_load(const VTable *t, const FsgState *s, const FsgEntry *x, const FsgHardDep *dep) {
        if (!x->builtin) {
                vtable_row(t, ROW_HARD, "%s\n",
                           x->hard ? _("yes: explicit loads (modprobe, fsgatectl load) are refused too") : _("no"));
                vtable_row(t, ROW_MODPROBE, "%s\n",
                           fsg_entry_explicit_load(x) ? _("an explicit load by root loads it") :
                           x->hard ? _("an explicit load is refused (the install command runs instead)") :
                           dep ? _("an explicit load is refused (a dependency's install command runs instead)") :
                           s->kernel_unknown ? _("cannot tell: the kernel is not known yet") :
                           _("cannot load it: no module file"));
                if (*x->install_command)
                        vtable_row(t, ROW_INSTALL, "%s   (%s)\n", ctl_esc(x->install_command), ctl_esc(x->install_file));
                else
                        /* TRANSLATORS: no install command (modprobe.d's "install" line). */
                        vtable_row(t, ROW_INSTALL, "%s\n", _("none"));
        }
        if (dep)
                /* TRANSLATORS: %1$s is a module name, %2$s a file, %3$s a command (an install line). */
                vtable_row(t, ROW_LOAD_REFUSED, _("its dependency %1$s is denied hard by %2$s (%3$s)\n"), dep->module,
                           ctl_esc(*dep->install_file ? dep->install_file : _("the configuration")),
                           ctl_esc(dep->install_command));
}

/* Whether it can be and is used now, whether a blocked mount is seen, and where it is named. */
static void status_rows_usage(const VTable *t, const FsgState *s, const FsgEntry *x) {
        vtable_row(t, ROW_AVAILABLE, "%s\n",
                   x->available ? _("yes") : x->builtin ? _("built in") :
                   s->kernel_unknown ? _("kernel not known yet (no module tree): judged by the files alone") :
                   _("no module file for this kernel"));
        /* Built-in code is in the kernel from boot on: "no" would say it could not be used. */
        vtable_row(t, ROW_LOADED, "%s\n", x->builtin ? _("built in") : ctl_yes_no(x->loaded));
        if (x->granted_until && x->granted_device)
                /* TRANSLATORS: %1$s a time (UTC), %2$s a device node, %3$s "fsgatectl", %4$s a module. */
                vtable_row(t, ROW_GRANTED, _("until %1$s or until %2$s is removed, then unloaded once unused (%3$s deny "
                                             "%4$s ends it now)\n"),
                           ctl_esc(x->granted_until), ctl_esc(x->granted_device), "fsgatectl", ctl_sh(x->module));
        else if (x->granted_until)
                /* TRANSLATORS: %1$s a time (UTC), %2$s "fsgatectl", %3$s a module name. */
                vtable_row(t, ROW_GRANTED, _("until %1$s, then unloaded once unused (%2$s deny %3$s ends it now)\n"),
                           ctl_esc(x->granted_until), "fsgatectl", ctl_sh(x->module));
        vtable_row(t, ROW_MOUNTED, "%s\n", ctl_yes_no(x->mounted));
        if (x->denied && !x->builtin)
                /* The service's own answer: it reads the system's files. */
                vtable_row(t, ROW_BLOCKED, "%s\n",
                           x->blocks_reported ? _("reported (kernel log, journal, Blocked signal)") :
                           _("not every blocked mount is reported: a plain blacklist, an install command "
                             "or the kernel command line decides for some type"));
        for (char **p = x->mentions; p && p[0] && p[1]; p += 2)
                vtable_row(t, p == x->mentions ? ROW_FILES : SIZE_MAX, "%s: %s\n", ctl_esc(p[0]), ctl_esc(p[1]));
}

/* Open safely, a row per type: the driver that reads it without the module and the command,
 * or the package that adds the driver, or none (routes: ctl_open_routes_of_types()); the
 * command without --root, since it is the running service's. */
static void status_rows_open(const VTable *t, const FsgEntry *x, const CtlOpenRoute *routes) {
        size_t row = ROW_OPEN;

        if (!routes)
                return;
        for (char **type = x->types; type && *type; type++, row = SIZE_MAX) {
                const CtlOpenRoute r = routes[type - x->types];

                if (ctl_open_route_ready(&r))
                        /* TRANSLATORS: %1$s a filesystem type, %2$s the driver's path; the command is not
                         * translated. */
                        vtable_row(t, row, _("%1$s: %2$s reads it, the module still off: fsgatectl open "
                                             "DEVICE|IMAGE\n"), ctl_esc(*type), ctl_esc(r.installed));
                else if (fsg_open_route_usable(r.route))
                        /* TRANSLATORS: %1$s a filesystem type, %2$s a program, %3$s a package. */
                        vtable_row(t, row, _("%1$s: %2$s would read it, the module still off: install the "
                                             "package %3$s\n"), ctl_esc(*type), r.route->driver, r.route->package);
                else if (r.route)
                        /* TRANSLATORS: %1$s a filesystem type, %2$s a program, %3$s a package. */
                        vtable_row(t, row, _("%1$s: %2$s (package %3$s) reads it, but fsgate does not start it "
                                             "yet\n"), ctl_esc(*type), r.route->driver, r.route->package);
                else
                        /* TRANSLATORS: %s a filesystem type. */
                        vtable_row(t, row, _("%s: none (no userspace driver is known for it)\n"), ctl_esc(*type));
        }
}

/* What the kernel source says of it (core/risk.h); for a module whose code was not read,
 * that and which source (list --risk's "?"). */
static void status_rows_risk(const VTable *t, const FsgEntry *x) {
        const FsgRisk *r = fsg_risk_find(x->module);

        if (!r) {
                /* TRANSLATORS: %s is the kernel source: "6.1.192 (Debian linux-source-6.1 6.1.192-3)". */
                vtable_row(t, ROW_RISK_SOURCE, x->builtin ?
                           _("none for built-in code: of Linux %s, fsgate read the loadable modules under fs/ only\n") :
                           _("none: of Linux %s, fsgate read the loadable modules under fs/ only, not this one's code\n"),
                           fsg_risk_source);
                return;
        }
        vtable_row(t, ROW_RISK_WHAT, "%s\n", r->title);
        if (*r->maintainers)
                /* TRANSLATORS: %1$s is MAINTAINERS' status word (Maintained, Orphan, ...), %2$s its section. */
                vtable_row(t, ROW_RISK_CODE, _("%1$s (MAINTAINERS: %2$s)\n"), r->maintainers, r->section);
        else
                vtable_row(t, ROW_RISK_CODE, "%s\n", _("no maintainer of its own in MAINTAINERS"));
        if (*r->deprecated)
                vtable_row(t, ROW_RISK_DEPRECATED, "%s\n", r->deprecated);
        if (*r->upstream)
                vtable_row(t, ROW_RISK_UPSTREAM, "%s   (%s)\n", r->upstream, r->upstream_source);
        vtable_row(t, ROW_RISK_USERNS, "%s\n",
                   r->userns_mount ? _("yes: any user can mount it in a user namespace") :
                                     _("no"));
        /* TRANSLATORS: %s is the kernel source: "6.1.192 (Debian linux-source-6.1 6.1.192-3)". */
        vtable_row(t, ROW_RISK_SOURCE, _("Linux %s\n"), fsg_risk_source);
}

/* The way to change what status shows, if there is one that works. */
static void status_advice(const CtlOptions *o, const FsgEntry *x, const FsgHardDep *dep) {
        const char *ctl = ctl_command(o);

        if (x->override_of && *x->override_of && x->override_stale && !x->denied)
                /* TRANSLATORS: %1$s is a command (fsgatectl, maybe with --root), %2$s a module name. */
                printf(_("\nTo make the override again from the vendor file as it is now: %1$s allow %2$s\n"), ctl,
                       ctl_sh(x->module));
        if (!x->denied || x->builtin)
                return;
        /* Only advice that works: the service (or the offline core) planned the Allow. */
        if (x->allow_refused && *x->allow_refused)
                /* TRANSLATORS: %1$s is a command, %2$s a module name, %3$s the reason (in English). */
                printf(_("\n%1$s allow %2$s would be refused: %3$s\n"), ctl, ctl_sh(x->module), ctl_esc(x->allow_refused));
        else if (x->hard)
                /* TRANSLATORS: %1$s is a command, %2$s a module name; "fsgatectl load" is a command. */
                printf(_("\nTo allow it: %1$s allow %2$s   (a hard deny: fsgatectl load cannot lift it)\n"), ctl,
                       ctl_sh(x->module));
        else if (dep)
                /* TRANSLATORS: %1$s is a command, %2$s and %3$s are module names; "fsgatectl load" is a command. */
                printf(_("\nTo allow it: %1$s allow %2$s   (fsgatectl load cannot load it while %3$s is denied hard)\n"),
                       ctl, ctl_sh(x->module), ctl_sh(dep->module));
        else if (o->root || !x->available)
                /* TRANSLATORS: %1$s is a command (fsgatectl --root=DIR), %2$s a module name. */
                printf(_("\nTo allow it: %1$s allow %2$s\n"), ctl, ctl_sh(x->module));
        else
                /* TRANSLATORS: %1$s is a module name; "fsgatectl allow", "fsgatectl load" are commands. */
                printf(_("\nTo allow it: fsgatectl allow %1$s   (once, this boot only: fsgatectl load %1$s)\n"),
                       ctl_sh(x->module));
}

void ctl_print_status(const CtlOptions *o, const FsgState *s, const FsgEntry *x, const CtlStatusExtras *extras) {
        /* TRANSLATORS: the labels of `fsgatectl status`, right-aligned one under the other;
         * "modprobe" (the command) is not translated. */
        const char *labels[_ROW_MAX] = {
                [ROW_MODULE] = _("Module"), [ROW_TYPES] = _("Types"), [ROW_STATE] = _("State"),
                [ROW_DECIDED] = _("Decided by"), [ROW_OVERRIDE] = _("Override of"), [ROW_HARD] = _("Hard deny"),
                [ROW_MODPROBE] = "modprobe", [ROW_INSTALL] = _("Install"), [ROW_LOAD_REFUSED] = _("Load refused"),
                [ROW_AVAILABLE] = _("Available"), [ROW_LOADED] = _("Loaded"), [ROW_GRANTED] = _("Granted"), [ROW_MOUNTED] = _("Mounted"),
                [ROW_BLOCKED] = _("Blocked"), [ROW_OPEN] = _("Open safely"), [ROW_FILES] = _("Files"), [ROW_RISK_WHAT] = _("Kernel calls it"),
                [ROW_RISK_CODE] = _("Kernel code"), [ROW_RISK_DEPRECATED] = _("Deprecated"),
                [ROW_RISK_UPSTREAM] = _("Upstream"), [ROW_RISK_USERNS] = _("User namespaces"),
                [ROW_RISK_SOURCE] = _("Facts from"), [ROW_INITRAMFS] = _("Initramfs"),
                [ROW_DESKTOP] = _("Desktop mount"),
        };
        VTable t = vtable_new(labels, ELEMENTSOF(labels));
        /* A hard deny on a module the load would insert along (fsg_entry_load_blocker()). */
        const FsgHardDep *dep = !x->builtin && !x->loaded ? fsg_entry_load_blocker(x) : NULL;

        status_rows_entry(&t, x);
        status_rows_explicit_load(&t, s, x, dep);
        status_rows_usage(&t, s, x);
        status_rows_open(&t, x, extras->open_routes);
        if (extras->initramfs_row)
                vtable_row(&t, ROW_INITRAMFS, "%s\n", extras->initramfs_row);
        status_rows_risk(&t, x);
        if (extras->desktop_row)
                vtable_row(&t, ROW_DESKTOP, "%s\n", extras->desktop_row);
        status_advice(o, x, dep);
        if (extras->initramfs_advice)
                printf("\n%s\n", extras->initramfs_advice);
}

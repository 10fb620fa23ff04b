/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/stat.h>

#include "ctl.h"
#include "entry-fields.h"
#include "json-writer.h"
#include "strv.h"
#include "utf8.h"

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
        for (size_t i = 0; i < fsg_entry_fields_n; i++)
                if (x->described || (fsg_entry_fields[i].flags & FSG_FIELD_ENTRY))
                        json_field_value(w, x, &fsg_entry_fields[i]);
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

void ctl_print_table(const FsgState *s) {
        /* TRANSLATORS: the column headers of `fsgatectl list`, in capitals. The rows below
         * them are not translated (scripts read them). */
        const char *head[] = { _("MODULE"), _("TYPES"), _("STATE"), _("ORIGIN"), _("LOADED"), _("MOUNTED"),
                               _("SOURCE") };
        /* The English widths; a translated header that is longer widens its column. */
        size_t w[] = { 12, 20, 8, 8, 6, 7 };

        for (size_t i = 0; i < ELEMENTSOF(w); i++) {
                w[i] = ctl_max_width(w[i], head[i]);
                ctl_pad(head[i], w[i]);
                putchar(' ');
        }
        printf("%s\n", head[ELEMENTSOF(w)]);
        for (size_t i = 0; i < s->n; i++) {
                const FsgEntry *x = &s->entries[i];
                char types[256];
                types_joined(x, types, sizeof(types));
                /* English words and single words: the maintainer scripts split the rows with
                 * awk and compare STATE, ORIGIN, LOADED and MOUNTED. */
                const char *cells[] = { ctl_esc(x->module), ctl_esc(types), x->builtin ? "builtin" : fsg_entry_state_string(x),
                                        fsg_origin_to_string(x->origin), x->loaded ? "yes" : "no",
                                        x->mounted ? "yes" : "no" };
                for (size_t k = 0; k < ELEMENTSOF(cells); k++) {
                        ctl_pad(cells[k], w[k]);
                        putchar(' ');
                }
                if (!x->available && !x->builtin && s->kernel_unknown)
                        /* TRANSLATORS: %s is the deciding file's name, or empty. */
                        printf(_("%s (kernel not known yet)\n"), ctl_esc(x->deciding_file));
                else if (!x->available && !x->builtin)
                        /* TRANSLATORS: %s is the deciding file's name, or empty. */
                        printf(_("%s (not in this kernel)\n"), ctl_esc(x->deciding_file));
                else
                        printf("%s\n", ctl_esc(x->deciding_file));
        }
        putchar('\n');
        printf(ngettext("%zu filesystem module listed.\n", "%zu filesystem modules listed.\n", s->n), s->n);
}

/* A word as a shell reads it back: quoted unless it is plain. */
static char *shell_word(const char *w) {
        size_t n = 3;
        char *q, *t;

        if (*w && strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._+-@=:,") == strlen(w))
                return strdup(w);
        for (const char *p = w; *p; p++)
                n += *p == '\'' ? 4 : 1;
        q = t = malloc(n);
        if (!q)
                return NULL;
        *t++ = '\'';
        for (const char *p = w; *p; p++)
                if (*p == '\'')
                        t = stpcpy(t, "'\\''");
                else
                        *t++ = *p;
        *t++ = '\'';
        *t = 0;
        return q;
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
        if (o->root && (!(root = shell_word(o->root)) || (o->kernel_release && !(kver = shell_word(o->kernel_release)))))
                return "fsgatectl";
        if (asprintf(&cmd, "fsgatectl%s%s%s%s", root ? " --root=" : "", root ?: "", kver ? " --kernel-release=" : "",
                     kver ?: "") < 0)
                return cmd = NULL, "fsgatectl";
        return cmd;
}

/* One line of `status`: the label right-aligned to width columns, then ": ". */
static void label(const char *l, size_t width) {
        for (size_t n = ctl_width(l); n < width; n++)
                putchar(' ');
        printf("%s: ", l);
}

void ctl_print_status(const CtlBackend *be, const CtlOptions *o, const FsgState *s, const FsgEntry *x) {
        /* TRANSLATORS: the labels of `fsgatectl status`, right-aligned one under the other;
         * "modprobe" (the command) is not translated. */
        const char *l_module = _("Module"), *l_types = _("Types"), *l_state = _("State"),
                   *l_decided = _("Decided by"), *l_hard = _("Hard deny"), *l_install = _("Install"),
                   *l_available = _("Available"), *l_loaded = _("Loaded"), *l_mounted = _("Mounted"),
                   *l_blocked = _("Blocked"), *l_files = _("Files"), *l_load_refused = _("Load refused"),
                   *l_override = _("Override of");
        const char *all[] = { l_module, l_types, l_state, l_decided, l_override, l_hard, "modprobe", l_install,
                              l_load_refused, l_available, l_loaded, l_mounted, l_blocked, l_files };
        const char *ctl = ctl_command(o);
        bool overridden = x->override_of && *x->override_of;
        /* A hard deny on a module the load would insert along (fsg_entry_load_blocker()). */
        const FsgHardDep *dep = x->described && !x->builtin && !x->loaded ? fsg_entry_load_blocker(x) : NULL;
        const char *state;
        size_t w = 0;
        char types[256];

        /* Two blanks before the longest label, as in English ("  Decided by: "). */
        for (size_t i = 0; i < ELEMENTSOF(all); i++)
                w = ctl_max_width(w, all[i]);
        w += 2;
        types_joined(x, types, sizeof(types));
        label(l_module, w);
        printf("%s\n", ctl_esc(x->module));
        label(l_types, w);
        printf("%s\n", ctl_esc(types));
        label(l_state, w);
        state = x->builtin ? _("allowed (built into the kernel)") : ctl_state_word(x);
        if (x->denied)
                /* TRANSLATORS: %s is the state, "denied". */
                printf(_("%s (the kernel will not load it on its own)\n"), state);
        else
                printf("%s\n", state);
        label(l_decided, w);
        printf("%s%s%s\n", fsg_origin_to_string(x->origin), x->deciding_file && *x->deciding_file ? " " : "",
               ctl_esc(x->deciding_file));
        if (overridden) {
                label(l_override, w);
                /* TRANSLATORS: %s is a vendor file that fsgate's override replaces. */
                printf(x->override_stale ? _("%s (stale: that file changed or went since fsgate copied it)\n") :
                                           _("%s (fsgate's copy without the lines of the modules it allows)\n"),
                       ctl_esc(x->override_of));
        }
        if (x->described && !x->builtin) {
                label(l_hard, w);
                printf("%s\n", x->hard ? _("yes: explicit loads (modprobe, fsgatectl load) are refused too") : _("no"));
                label("modprobe", w);
                printf("%s\n", fsg_entry_explicit_load(x) ? _("an explicit load by root loads it") :
                               x->hard ? _("an explicit load is refused (the install command runs instead)") :
                               dep ? _("an explicit load is refused (a dependency's install command runs instead)") :
                               s->kernel_unknown ? _("cannot tell: the kernel is not known yet") :
                               _("cannot load it: no module file"));
                label(l_install, w);
                if (*x->install_command)
                        printf("%s   (%s)\n", ctl_esc(x->install_command), ctl_esc(x->install_file));
                else
                        /* TRANSLATORS: no install command (modprobe.d's "install" line). */
                        printf("%s\n", _("none"));
        }
        if (dep) {
                label(l_load_refused, w);
                /* TRANSLATORS: %1$s is a module name, %2$s a file, %3$s a command (an install line). */
                printf(_("its dependency %1$s is denied hard by %2$s (%3$s)\n"), dep->module,
                       ctl_esc(*dep->install_file ? dep->install_file : _("the configuration")),
                       ctl_esc(dep->install_command));
        }
        label(l_available, w);
        printf("%s\n", x->available ? _("yes") : x->builtin ? _("built in") :
                        s->kernel_unknown ? _("kernel not known yet (no module tree): judged by the files alone") :
                        _("no module file for this kernel"));
        label(l_loaded, w);
        printf("%s\n", ctl_yes_no(x->loaded));
        label(l_mounted, w);
        printf("%s\n", ctl_yes_no(x->mounted));
        if (x->denied && !x->builtin) {
                size_t n = 0, reported = 0;
                /* The service's own answer when there is one: it reads the system's files. */
                for (char **t = x->types; t && *t && !x->described; t++, n++)
                        reported += be->block_is_reported(o, *t);
                if (x->described)
                        n = reported = x->blocks_reported;
                label(l_blocked, w);
                printf("%s\n", n > 0 && reported == n ? _("reported (kernel log, journal, Blocked signal)") :
                               reported > 0 ? _("reported for some of its types only") :
                               _("not reported: decided by a plain blacklist, an install command or the kernel "
                                 "command line"));
        }
        if (x->described && x->mentions) {
                label(l_files, w);
                for (char **p = x->mentions; p[0] && p[1]; p += 2) {
                        if (p != x->mentions)
                                printf("%*s", (int) w + 2, "");
                        printf("%s: %s\n", ctl_esc(p[0]), ctl_esc(p[1]));
                }
        }
        if (overridden && x->override_stale && !x->denied)
                /* TRANSLATORS: %1$s is a command (fsgatectl, maybe with --root), %2$s a module name. */
                printf(_("\nTo make the override again from the vendor file as it is now: %1$s allow %2$s\n"), ctl,
                       x->module);
        if (!x->denied || x->builtin)
                return;
        /* Only advice that works: the service (or the offline core) planned the Allow. */
        if (x->allow_refused && *x->allow_refused) {
                /* TRANSLATORS: %1$s is a command, %2$s a module name, %3$s the reason (in English). */
                printf(_("\n%1$s allow %2$s would be refused: %3$s\n"), ctl, x->module, ctl_esc(x->allow_refused));
                return;
        }
        if (x->hard)
                /* TRANSLATORS: %1$s is a command, %2$s a module name; "fsgatectl load" is a command. */
                printf(_("\nTo allow it: %1$s allow %2$s   (a hard deny: fsgatectl load cannot lift it)\n"), ctl,
                       x->module);
        else if (dep)
                /* TRANSLATORS: %1$s is a command, %2$s and %3$s are module names; "fsgatectl load" is a command. */
                printf(_("\nTo allow it: %1$s allow %2$s   (fsgatectl load cannot load it while %3$s is denied hard)\n"),
                       ctl, x->module, dep->module);
        else if (o->root || !x->available)
                /* TRANSLATORS: %1$s is a command (fsgatectl --root=DIR), %2$s a module name. */
                printf(_("\nTo allow it: %1$s allow %2$s\n"), ctl, x->module);
        else
                /* TRANSLATORS: %1$s is a module name; "fsgatectl allow", "fsgatectl load" are commands. */
                printf(_("\nTo allow it: fsgatectl allow %1$s   (once, this boot only: fsgatectl load %1$s)\n"),
                       x->module);
}

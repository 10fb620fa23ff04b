/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>

#include "ctl.h"
#include "json-writer.h"
#include "strv.h"

static void json_entry(JsonWriter *w, const FsgEntry *x) {
        json_object_begin(w);
        json_field_string(w, "module", x->module);
        json_key(w, "types");
        json_strv(w, x->types);
        json_field_string(w, "state", fsg_entry_state_string(x));
        json_field_string(w, "origin", fsg_origin_to_string(x->origin));
        json_field_string(w, "source", x->source ?: "");
        json_field_bool(w, "available", x->available);
        json_field_bool(w, "builtin", x->builtin);
        json_field_bool(w, "loaded", x->loaded);
        json_field_bool(w, "mounted", x->mounted);
        if (x->described) {
                json_field_bool(w, "hard", x->hard);
                json_field_bool(w, "explicit_load_possible", x->explicit_load);
                json_field_bool(w, "blocks_reported", x->blocks_reported);
                json_field_string(w, "install_command", x->install_command ?: "");
                json_field_string(w, "install_file", x->install_source ?: "");
                json_key(w, "files");
                json_array_begin(w);
                for (char **p = x->mentions; p && p[0] && p[1]; p += 2) {
                        json_object_begin(w);
                        json_field_string(w, "file", p[0]);
                        json_field_string(w, "line", p[1]);
                        json_object_end(w);
                }
                json_array_end(w);
        }
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
                fprintf(stderr, "%s\n", e->message);
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
                fprintf(stderr, "Warning: the answer may be incomplete: cannot read %s\n", *u);
}

void ctl_print_table(const FsgState *s) {
        printf("%-12s %-20s %-8s %-8s %-6s %-7s %s\n", "MODULE", "TYPES", "STATE", "ORIGIN", "LOADED",
               "MOUNTED", "SOURCE");
        for (size_t i = 0; i < s->n; i++) {
                const FsgEntry *x = &s->entries[i];
                char types[256];
                types_joined(x, types, sizeof(types));
                printf("%-12s %-20s %-8s %-8s %-6s %-7s %s%s\n", x->module, types,
                       x->builtin ? "builtin" : fsg_entry_state_string(x), fsg_origin_to_string(x->origin),
                       x->loaded ? "yes" : "no", x->mounted ? "yes" : "no", x->source ?: "",
                       !x->available && !x->builtin ? " (not in this kernel)" : "");
        }
        printf("\n%zu filesystem modules listed.\n", s->n);
}

void ctl_print_status(const CtlBackend *be, const CtlOptions *o, const FsgEntry *x) {
        char types[256];
        types_joined(x, types, sizeof(types));
        printf("      Module: %s\n", x->module);
        printf("       Types: %s\n", types);
        printf("       State: %s%s\n", x->builtin ? "allowed (built into the kernel)" : fsg_entry_state_string(x),
               x->denied ? " (the kernel will not load it on its own)" : "");
        printf("  Decided by: %s%s%s\n", fsg_origin_to_string(x->origin), x->source && *x->source ? " " : "",
               x->source ?: "");
        if (x->described && !x->builtin) {
                printf("   Hard deny: %s\n", x->hard ? "yes: explicit loads (modprobe, fsgatectl load) are refused too" :
                                          "no");
                printf("    modprobe: %s\n", x->explicit_load ? "an explicit load by root loads it" :
                                          x->hard ? "an explicit load is refused (the install command runs instead)" :
                                          "cannot load it: no module file");
                if (*x->install_command)
                        printf("     Install: %s   (%s)\n", x->install_command, x->install_source);
                else
                        printf("     Install: none\n");
        }
        printf("   Available: %s\n", x->available ? "yes" : x->builtin ? "built in" : "no module file for this kernel");
        printf("      Loaded: %s\n", x->loaded ? "yes" : "no");
        printf("     Mounted: %s\n", x->mounted ? "yes" : "no");
        if (x->denied && !x->builtin) {
                size_t n = 0, reported = 0;
                /* The service's own answer when there is one: it reads the system's files. */
                for (char **t = x->types; t && *t && !x->described; t++, n++)
                        reported += be->block_is_reported(o, *t);
                if (x->described)
                        n = reported = x->blocks_reported;
                printf("     Blocked: %s\n", n > 0 && reported == n ? "reported (kernel log, journal, Blocked signal)" :
                                             reported > 0 ? "reported for some of its types only" :
                                             "not reported: decided by a plain blacklist, an install command or the kernel command line");
        }
        if (x->described && x->mentions) {
                printf("       Files:");
                for (char **p = x->mentions; p[0] && p[1]; p += 2)
                        printf("%s%s: %s\n", p == x->mentions ? " " : "              ", p[0], p[1]);
        }
        if (x->denied && !x->builtin && x->hard)
                printf("\nTo allow it: fsgatectl allow %s   (a hard deny: fsgatectl load cannot lift it)\n", x->module);
        else if (x->denied && !x->builtin)
                printf("\nTo allow it: fsgatectl allow %s   (once, this boot only: fsgatectl load %s)\n",
                       x->module, x->module);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>

#include "ctl.h"
#include "strv.h"

static void json_string_to(FILE *f, const char *s) {
        fputc('"', f);
        for (; *s; s++) {
                unsigned char ch = *s;
                if (ch == '"' || ch == '\\')
                        fprintf(f, "\\%c", ch);
                else if (ch < 0x20)
                        fprintf(f, "\\u%04x", ch);
                else
                        fputc(ch, f);
        }
        fputc('"', f);
}

static void json_string(const char *s) {
        json_string_to(stdout, s);
}

static void json_bool(const char *key, bool b, bool comma) {
        printf("\"%s\":%s%s", key, b ? "true" : "false", comma ? "," : "");
}

static void json_entry(const FsgEntry *x) {
        printf("{\"module\":");
        json_string(x->module);
        printf(",\"types\":[");
        for (char **t = x->types; t && *t; t++) {
                json_string(*t);
                if (t[1])
                        putchar(',');
        }
        printf("],\"state\":\"%s\",\"origin\":\"%s\",\"source\":", fsg_entry_state_string(x),
               fsg_origin_to_string(x->origin));
        json_string(x->source ?: "");
        putchar(',');
        json_bool("available", x->available, true);
        json_bool("builtin", x->builtin, true);
        json_bool("loaded", x->loaded, true);
        json_bool("mounted", x->mounted, false);
        putchar('}');
}

void ctl_print_json(const FsgState *s, bool single) {
        if (single && s->n == 1) {
                json_entry(&s->entries[0]);
                putchar('\n');
                return;
        }
        putchar('[');
        for (size_t i = 0; i < s->n; i++) {
                json_entry(&s->entries[i]);
                if (i + 1 < s->n)
                        putchar(',');
        }
        printf("]\n");
}

int ctl_fail(const CtlOptions *o, const FsgError *e) {
        if (o->json) {
                /* On stderr like the plain text, so that stdout holds only results; one line,
                 * so that a script can parse it whole. */
                fputs("{\"error\":", stderr);
                json_string_to(stderr, fsg_error_dbus_name(e->code));
                fputs(",\"message\":", stderr);
                json_string_to(stderr, e->message);
                fputs("}\n", stderr);
        } else
                fprintf(stderr, "%s\n", e->message);
        return fsg_error_exit_status(e->code);
}

void ctl_print_strv_json(char **l) {
        putchar('[');
        for (char **i = l; i && *i; i++) {
                json_string(*i);
                if (i[1])
                        putchar(',');
        }
        printf("]\n");
}

static void types_joined(const FsgEntry *x, char *buf, size_t n) {
        size_t used = 0;
        buf[0] = 0;
        for (char **t = x->types; t && *t && used < n; t++)
                used += snprintf(buf + used, n - used, "%s%s", used ? "," : "", *t);
        if (!x->types)
                snprintf(buf, n, "-");
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

void ctl_print_status(const CtlOptions *o, const FsgEntry *x) {
        char types[256];
        types_joined(x, types, sizeof(types));
        printf("      Module: %s\n", x->module);
        printf("       Types: %s\n", types);
        printf("       State: %s%s\n", x->builtin ? "allowed (built into the kernel)" : fsg_entry_state_string(x),
               x->denied ? " (the kernel will not load it on its own)" : "");
        printf("  Decided by: %s%s%s\n", fsg_origin_to_string(x->origin), x->source && *x->source ? " " : "",
               x->source ?: "");
        printf("   Available: %s\n", x->available ? "yes" : x->builtin ? "built in" : "no module file for this kernel");
        printf("      Loaded: %s\n", x->loaded ? "yes" : "no");
        printf("     Mounted: %s\n", x->mounted ? "yes" : "no");
        if (x->denied && !x->builtin) {
                size_t n = 0, reported = 0;
                for (char **t = x->types; t && *t; t++, n++)
                        reported += ctl_block_is_reported(o, x, *t);
                printf("     Blocked: %s\n", n > 0 && reported == n ? "reported (kernel log, journal, Blocked signal)" :
                                             reported > 0 ? "reported for some of its types only" :
                                             "not reported: decided by a plain blacklist or the kernel command line");
        }
        if (x->denied && !x->builtin)
                printf("\nTo allow it: fsgatectl allow %s   (once, this boot only: fsgatectl load %s)\n",
                       x->module, x->module);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <getopt.h>

#include "config.h"
#include "ctl.h"
#include "strv.h"

static void help(void) {
        printf("fsgatectl [OPTIONS...] COMMAND [NAME]\n\n"
               "Decide which filesystem modules the kernel may load on its own.\n\n"
               "Commands:\n"
               "  list               List every filesystem module and whether it may autoload\n"
               "  status NAME        Show one module (NAME may be a filesystem type, e.g. vxfs)\n"
               "  why DEVICE|TYPE    Can this device or filesystem type be mounted here, and if not, why\n"
               "  allow NAME         Let the kernel load it on demand\n"
               "  deny NAME          Stop the kernel from loading it on demand\n"
               "  reset NAME         Drop fsgate's override, back to the vendor default\n"
               "  load NAME          Load it now, this boot only, changing no configuration\n"
               "  exempt-loaded      Allow every denied filesystem that is loaded or mounted now\n\n"
               "Options:\n"
               "  -h --help          Show this help\n"
               "     --version       Show the version\n"
               "     --root=DIR      Work offline on the system image at DIR (no service)\n"
               "     --kernel-release=KVER  Judge against this kernel's module tree\n"
               "     --runtime       Change /run only: the change ends at reboot\n"
               "     --force         deny: even if the filesystem is in use now\n"
               "     --load          allow: also load the module now\n"
               "     --json          Print JSON\n"
               "     --no-ask-password  Do not let polkit ask for a password\n\n"
               "See fsgatectl(1) for exit codes.\n");
}

int main(int argc, char *argv[]) {
        enum { ARG_VERSION = 0x100, ARG_ROOT, ARG_KVER, ARG_RUNTIME, ARG_FORCE, ARG_LOAD, ARG_JSON, ARG_NO_ASK };
        static const struct option options[] = {
                { "help",            no_argument,       NULL, 'h'          },
                { "version",         no_argument,       NULL, ARG_VERSION  },
                { "root",            required_argument, NULL, ARG_ROOT     },
                { "kernel-release",  required_argument, NULL, ARG_KVER     },
                { "runtime",         no_argument,       NULL, ARG_RUNTIME  },
                { "force",           no_argument,       NULL, ARG_FORCE    },
                { "load",            no_argument,       NULL, ARG_LOAD     },
                { "json",            no_argument,       NULL, ARG_JSON     },
                { "no-ask-password", no_argument,       NULL, ARG_NO_ASK   },
                {}
        };
        CtlOptions o = { .ask_password = true };
        const CtlBackend *be;
        uint64_t flags = 0;
        const char *verb, *name = NULL;
        FsgError e = {};
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h': help(); return 0;
                case ARG_VERSION: printf("fsgatectl %s\n", FSGATE_VERSION); return 0;
                case ARG_ROOT: o.root = optarg; break;
                case ARG_KVER: o.kernel_release = optarg; break;
                case ARG_RUNTIME: flags |= FSG_FLAG_RUNTIME; break;
                case ARG_FORCE: flags |= FSG_FLAG_FORCE; break;
                case ARG_LOAD: flags |= FSG_FLAG_LOAD_NOW; break;
                case ARG_JSON: o.json = true; break;
                case ARG_NO_ASK: o.ask_password = false; break;
                default: return 2;
                }
        if (optind >= argc) {
                fsg_error(&e, FSG_ERR_INVALID_ARGS, "Missing command; see fsgatectl --help");
                return ctl_fail(&o, &e);
        }
        if (o.kernel_release && !o.root) {
                fsg_error(&e, FSG_ERR_INVALID_ARGS, "--kernel-release only applies offline, with --root");
                return ctl_fail(&o, &e);
        }
        verb = argv[optind++];
        be = o.root ? &ctl_backend_offline : &ctl_backend_bus;

        bool needs_name = !streq(verb, "list") && !streq(verb, "exempt-loaded");
        if (needs_name) {
                if (optind >= argc) {
                        fsg_error(&e, FSG_ERR_INVALID_ARGS, "%s needs a filesystem module or type name", verb);
                        return ctl_fail(&o, &e);
                }
                name = argv[optind++];
        }
        if (optind < argc) {
                fsg_error(&e, FSG_ERR_INVALID_ARGS, "Too many arguments");
                return ctl_fail(&o, &e);
        }

        if (streq(verb, "list") || streq(verb, "status")) {
                _cleanup_(fsg_state_freep) FsgState *s = NULL;
                if ((name ? be->get(&o, name, &s, &e) : be->list(&o, &s, &e)) < 0)
                        return ctl_fail(&o, &e);
                if (o.json)
                        ctl_print_json(s, name != NULL);
                else if (name)
                        ctl_print_status(&o, &s->entries[0]);
                else
                        ctl_print_table(s);
                return 0;
        }

        FsgOp op;
        if (streq(verb, "allow"))
                op = FSG_OP_ALLOW;
        else if (streq(verb, "deny"))
                op = FSG_OP_DENY;
        else if (streq(verb, "reset"))
                op = FSG_OP_RESET;
        else if (streq(verb, "load")) {
                if (be->load(&o, name, &e) < 0)
                        return ctl_fail(&o, &e);
                if (o.json)
                        printf("{\"loaded\":\"%s\"}\n", name);
                return 0;
        } else if (streq(verb, "why")) {
                return ctl_why(be, &o, name);
        } else if (streq(verb, "exempt-loaded")) {
                _cleanup_strv_free_ char **done = NULL;
                if (be->exempt(&o, &done, &e) < 0)
                        return ctl_fail(&o, &e);
                if (o.json)
                        ctl_print_strv_json(done);
                else
                        for (char **d = done; d && *d; d++)
                                printf("Exempted %s: it is in use, so it stays allowed.\n", *d);
                return 0;
        } else {
                fsg_error(&e, FSG_ERR_INVALID_ARGS, "Unknown command %s; see fsgatectl --help", verb);
                return ctl_fail(&o, &e);
        }

        if (be->change(&o, op, name, flags, &e) < 0)
                return ctl_fail(&o, &e);

        /* Say where things stand now, so a no-op is visible as such. */
        _cleanup_(fsg_state_freep) FsgState *s = NULL;
        if (be->get(&o, name, &s, &e) < 0)
                return ctl_fail(&o, &e);
        if (o.json)
                ctl_print_json(s, true);
        else
                printf("%s: %s (%s%s%s)\n", s->entries[0].module, fsg_entry_state_string(&s->entries[0]),
                       fsg_origin_to_string(s->entries[0].origin), *s->entries[0].source ? " " : "",
                       s->entries[0].source);
        return 0;
}

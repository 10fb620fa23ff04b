/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>

#include "hook-line.h"
#include "macro.h"
#include "name.h"

int fsg_hook_lines_write(FILE *f, const char *hook, const FsgHookArgs *a) {
        const char *prefix = a->kind == FSG_HOOK_LINE_ROUTE   ? FSG_ROUTED_PREFIX :
                             a->kind == FSG_HOOK_LINE_OBSERVE ? FSG_OBSERVED_PREFIX : FSG_BLOCKED_PREFIX;
        int r;

        if (a->kind == FSG_HOOK_LINE_OBSERVE)
                r = fprintf(f, "alias fs-%s %s%s\ninstall %s%s %s " FSG_HOOK_OBSERVE_OPTION " %s %s %s\n",
                            a->type, prefix, a->type, prefix, a->type, hook, a->type, a->module, a->profile);
        else if (a->kind == FSG_HOOK_LINE_ROUTE)
                r = fprintf(f, "alias fs-%s %s%s\ninstall %s%s %s " FSG_HOOK_ROUTE_OPTION " %s %s\n",
                            a->type, prefix, a->type, prefix, a->type, hook, a->type, a->module);
        else
                r = fprintf(f, "alias fs-%s %s%s\ninstall %s%s %s %s %s %s\n",
                            a->type, prefix, a->type, prefix, a->type, hook, a->type, a->module, a->source);
        return r < 0 ? -EIO : 0;
}

int fsg_hook_args_parse(int argc, char * const *argv, FsgHookArgs *ret) {
        if (argc == 4 && streq(argv[0], FSG_HOOK_OBSERVE_OPTION) && fsg_name_is_valid(argv[1]) &&
            fsg_name_is_valid(argv[2]) && fsg_name_is_valid(argv[3])) {
                *ret = (FsgHookArgs) { .kind = FSG_HOOK_LINE_OBSERVE, .type = argv[1], .module = argv[2],
                                       .profile = argv[3] };
                return 0;
        }
        if (argc != 3)
                return -EINVAL;
        if (streq(argv[0], FSG_HOOK_ROUTE_OPTION) && fsg_name_is_valid(argv[1]) && fsg_name_is_valid(argv[2]))
                *ret = (FsgHookArgs) { .kind = FSG_HOOK_LINE_ROUTE, .type = argv[1], .module = argv[2] };
        /* Three words that are no route's are a deny's, as the hook has always read them
         * (SOURCE is only printed). */
        else if (fsg_name_is_valid(argv[0]) && fsg_name_is_valid(argv[1]))
                *ret = (FsgHookArgs) { .kind = FSG_HOOK_LINE_BLOCKED, .type = argv[0], .module = argv[1],
                                       .source = argv[2] };
        else
                return -EINVAL;
        return 0;
}

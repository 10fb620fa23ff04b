/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a D-Bus caller controls in Allow/Deny/Reset: the name and the flags. Planning must
 * refuse or accept without touching a file. */
#include <stdint.h>
#include <sys/stat.h>

#include "fuzz-root.h"
#include "name.h"
#include "store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        FsgContext *c = NULL;
        FsgError e = {};
        FsgPlan p;
        uint64_t flags = 0;
        char *name;
        char etc[256];
        struct stat before, after;

        if (size < 9)
                return 0;
        memcpy(&flags, data + 1, sizeof(flags));
        name = strndup((const char *) data + 9, size - 9);
        if (!name)
                return 0;
        if (fsg_context_new(fuzz_root(), "0.0-fuzz", &c, &e) < 0)
                abort();
        snprintf(etc, sizeof(etc), "%s/etc/modprobe.d", fuzz_root());
        if (stat(etc, &before) < 0)
                abort();

        if (fsg_plan(c, data[0] % 3, name, flags, &p, &e) == 0) {
                /* Accepted: the name was valid and the module is one fsgate knows. */
                const char *base = strrchr(p.target, '/');
                if (!fsg_name_is_valid(name) || !base ||
                    (strncmp(p.target, "/etc/modprobe.d/", 16) != 0 && strncmp(p.target, "/run/modprobe.d/", 16) != 0) ||
                    base != p.target + 15 || strncmp(base + 1, FSG_FILE_PREFIX, strlen(FSG_FILE_PREFIX)) != 0)
                        abort(); /* only ever our own file name, directly in one of the two directories */
        } else if (e.code == FSG_OK || !e.message[0])
                abort(); /* every refusal names a reason */

        if (stat(etc, &after) < 0 || before.st_mtim.tv_sec != after.st_mtim.tv_sec ||
            before.st_mtim.tv_nsec != after.st_mtim.tv_nsec)
                abort(); /* planning wrote something */
        fsg_context_free(c);
        free(name);
        return 0;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The whole read path on hostile files: one modprobe.d file and the kernel command line
 * come from the input (split at the first NUL), then scan, attribution and state. */
#include <stdint.h>

#include "fuzz-root.h"
#include "state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const uint8_t *nul = memchr(data, 0, size);
        size_t conf = nul ? (size_t) (nul - data) : size;
        FsgContext *c = NULL;
        FsgState *s = NULL;
        FsgError e = {};

        fuzz_write("etc/modprobe.d/fuzz.conf", data, conf);
        fuzz_write("proc/cmdline", nul ? nul + 1 : data, nul ? size - conf - 1 : 0);
        if (fsg_context_new(fuzz_root(), "0.0-fuzz", &c, &e) < 0)
                abort();
        if (fsg_state_build(c, NULL, &s, &e) == 0) {
                for (size_t i = 0; i < s->n; i++)
                        if (!s->entries[i].module || !s->entries[i].deciding_file)
                                abort();
                fsg_state_unref(s);
        }
        fsg_context_free(c);
        return 0;
}

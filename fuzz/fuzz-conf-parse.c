/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The modprobe.d line parser: continuations, comments, tokenizing, name normalization. */
#include <stdint.h>

#include "confparse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        FsgRule *rules = NULL;
        size_t n = 0;
        FILE *f;

        if (size == 0)
                return 0;
        f = fmemopen((void *) data, size, "r");
        if (!f)
                return 0;
        (void) fsg_conf_parse(f, 0, &rules, &n);
        fclose(f);
        fsg_rules_free(rules, n);
        return 0;
}

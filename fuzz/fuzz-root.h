/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

/* A scratch root shared by all runs of one fuzzer process (made once, under /tmp). */
const char *fuzz_root(void);
void fuzz_write(const char *rel, const void *data, size_t size);

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Length of the valid UTF-8 sequence at s (1-4) with its code point in *ret_cp (may be
 * NULL), or 0 if s does not start with one. Overlong forms, surrogates and code points past
 * U+10FFFF are invalid, as D-Bus requires. The terminating NUL decodes as U+0000. */
size_t fsg_utf8_decode(const char *s, uint32_t *ret_cp);

bool fsg_utf8_is_valid(const char *s);
/* A copy that is valid UTF-8: each byte that is not part of a valid sequence becomes "\xNN". */
char *fsg_utf8_escape(const char *s);

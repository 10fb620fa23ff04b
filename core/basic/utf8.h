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
/* A copy fit for a terminal, as systemd's tools cescape what they print: valid UTF-8 (stray
 * bytes as "\xNN") with every control character escaped ("\n", "\r", "\t", ESC as "\x1b",
 * a C1 control or a bidirectional override as "\uNNNN"), so that a name or a line from a file
 * can neither move the cursor nor rewrite what is on screen. A backslash stays as it is, as
 * in fsg_utf8_escape(). */
char *fsg_cescape(const char *s);

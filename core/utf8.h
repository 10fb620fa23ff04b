/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

bool fsg_utf8_is_valid(const char *s);
/* A copy that is valid UTF-8: each byte that is not part of a valid sequence becomes "\xNN". */
char *fsg_utf8_escape(const char *s);

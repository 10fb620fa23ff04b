/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* A copy of a string that came over the bus, fit for one line of a notification: control
 * characters (C0, C1, DEL) and line and paragraph separators become spaces, format
 * characters (bidi controls, zero-width characters: Unicode category Cf) are dropped, an
 * invalid UTF-8 byte becomes U+FFFD, blanks at either end go, and past max characters (max
 * >= 1) it is cut to max - 1 of them plus "…". Markup is left to notify_markup_escape().
 * NULL on allocation failure. */
char *notify_clean(const char *s, size_t max);

/* "16.0 GB": decimal units, as file managers show drive sizes. */
const char *notify_format_size(uint64_t bytes, char buf[static 32]);

/* body with &, < and > escaped, for servers that parse body markup. */
char *notify_markup_escape(const char *body);

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <locale.h>
#include <stdlib.h>

#include "config.h"
#include "fsg-i18n.h"

void fsg_i18n_init(void) {
        const char *dir;

        (void) setlocale(LC_ALL, "");
        dir = secure_getenv("FSGATE_LOCALEDIR");
        (void) bindtextdomain(GETTEXT_PACKAGE, dir && *dir ? dir : LOCALEDIR);
        (void) bind_textdomain_codeset(GETTEXT_PACKAGE, "UTF-8");
        (void) textdomain(GETTEXT_PACKAGE);
}

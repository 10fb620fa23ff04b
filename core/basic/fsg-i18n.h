/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The "fsgate" gettext domain (po/), shared by fsgatectl and fsgate-notify. _() translates,
 * N_() only marks a text for xgettext (po/POTFILES lists the files). A program binds the
 * domain once with fsg_i18n_init(); without that (fsgated, the unit tests) every text stays
 * English. */

#include <libintl.h>

#define _(s) gettext(s)
#define N_(s) s

/* setlocale(LC_ALL, ""), and the domain's catalogs from LOCALEDIR, or from
 * $FSGATE_LOCALEDIR when set (the tests point it at BUILD/po; ignored in a setuid
 * process), as UTF-8. */
void fsg_i18n_init(void);

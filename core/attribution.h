/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "state.h"

/* Which file decides an entry, once the kernel's answer (x->denied) is known: sets x->origin
 * and x->deciding_file. For a denied module, the file an admin has to look at (denied_types: the
 * types whose request does not load it); for an allowed one, the mask that hides a file that
 * would deny it, if any. Where several files deny, the one that still would with fsgate's
 * own file name masked (what Allow names), a hard deny's install line first. Returns a
 * negative errno. */
int fsg_entry_attribute(FsgEntry *x, const FsgConfig *cfg, char * const *denied_types);

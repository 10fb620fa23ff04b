/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "context.h"

/* Whether a new device's filesystem TYPE could be one the kernel may not load on its own.
 * udev asks for every disk with a filesystem (the root's at every boot), so this decides
 * from the type first, at the cost of a few small reads: false when TYPE is registered
 * with the kernel already, has no module, or no configuration line and no kernel command
 * line word names its module or its fs- alias (then it autoloads: nothing to report).
 * true means "perhaps": only then is the whole state worth computing. */
bool device_type_may_be_denied(const FsgContext *c, const char *type);

/* Whether a grant for one medium (grant.h) has loaded TYPE's module for another medium than
 * the one at devnode: the type is registered then, yet this medium was never granted. A grant
 * by time alone is for every medium of its module: false. */
bool device_granted_elsewhere(const FsgContext *c, const char *type, const char *devnode);

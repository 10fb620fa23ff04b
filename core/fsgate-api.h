/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The public contract, spelled once: the service, fsgatectl, the notifier, the hook and the
 * benchmark include this. Error names are in fsg-error.c, with their codes. */

#include <stdint.h>

#define FSGATE_BUS_NAME  "org.fsgate.fsgate1"
#define FSGATE_BUS_PATH  "/org/fsgate/fsgate1"
#define FSGATE_BUS_IFACE "org.fsgate.fsgate1.Manager"

/* Flags of Allow, Deny and Reset (org.fsgate.fsgate1(5)). */
#define FSG_FLAG_RUNTIME  UINT64_C(0x1)
#define FSG_FLAG_LOAD_NOW UINT64_C(0x2)
#define FSG_FLAG_FORCE    UINT64_C(0x4)
/* Deny only: explicit loads are refused too ("install MODULE /bin/false"). */
#define FSG_FLAG_HARD     UINT64_C(0x8)
/* ApplyProfile only: plan and return the list of changes, write nothing. */
#define FSG_FLAG_DRY_RUN  UINT64_C(0x10)
/* Deny only: turn fsgate's own hard deny into a soft one. Without it a Deny keeps a hard deny
 * as it is; with it the call needs the allow authorization (explicit loads work again). */
#define FSG_FLAG_SOFT     UINT64_C(0x20)
/* ApplyProfile only: a computed profile ("unused") denies the types people need on demand too
 * (sticks, DVDs, containers, shares, automounts), which it otherwise keeps. */
#define FSG_FLAG_INCLUDE_ON_DEMAND UINT64_C(0x40)
/* ApplyProfile only: observe the profile instead of enforcing it (denies nothing; each
 * autoload it would block is recorded and goes ahead). */
#define FSG_FLAG_OBSERVE  UINT64_C(0x80)

/* polkit actions (polkit/org.fsgate.fsgate1.policy). */
#define FSGATE_ACTION_ALLOW "org.fsgate.fsgate1.allow"
#define FSGATE_ACTION_DENY  "org.fsgate.fsgate1.deny"
#define FSGATE_ACTION_LOAD  "org.fsgate.fsgate1.load"
/* Grant: a load that ends by itself (its own action, so that a site can allow it more
 * freely than a permanent allow). */
#define FSGATE_ACTION_GRANT "org.fsgate.fsgate1.grant"
/* OpenSafely: the files of a medium read by a sandboxed userspace driver, no kernel module
 * loaded (its own action: no kernel code is loaded, so its default can be freer). */
#define FSGATE_ACTION_OPEN  "org.fsgate.fsgate1.open"
/* ... of a block device that is not removable (not on USB, MMC or removable media): a
 * partition of the machine's own disks, as udisks2's filesystem-mount-system. */
#define FSGATE_ACTION_OPEN_SYSTEM "org.fsgate.fsgate1.open-system"

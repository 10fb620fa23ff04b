/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Journal catalog ids (data/fsgate.catalog): one per kind of event, so that
 * `journalctl MESSAGE_ID=...` finds them all. fsgated logs them; fsgatectl log reads them.
 * The fields of a block's entry are core/block-fields.c's. */
#define FSGATE_MESSAGE_CONFIG_CHANGED "efb905bbe1504e55b29815e87e6c0f5a"
#define FSGATE_MESSAGE_MODULE_LOADED  "8320ed33661a44c3985de4e3bbfdd10d"
#define FSGATE_MESSAGE_REFUSED        "d97d19d74e8c4d338aeeb7ba7ea1c3f0"
#define FSGATE_MESSAGE_BLOCKED        "f300f0bf231648efbb9c6d79d5d67564"
#define FSGATE_MESSAGE_GRANT_ENDED   "b08e2414b1a242c9832e0b4441b71541"
#define FSGATE_MESSAGE_OPENED        "5c1e7a0d9b6f4f2e8a3d6b1c0f9e2a47"
/* A request of the kernel that a profile under observation would have blocked (fsgate-blocked
 * writes it; fsgatectl log, audit and apply read it). */
#define FSGATE_MESSAGE_WOULD_BLOCK   "0d0f34f05bae466196f7be43c1b94579"
#define FSGATE_MESSAGE_CLOSED        "a2d4f6e8c0b14d3f9e7a5c3b1d0f8e26"

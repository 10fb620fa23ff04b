/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What fsgate-notify says, kept apart from the bus code so that a unit test can read every
 * text without a bus. Nothing here allocates anything but the returned strings. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The texts are the "fsgate" gettext domain (po/); the program binds it. Without
 * fsg_i18n_init() (the unit test) they stay English. */
#include "fsg-i18n.h"

#include "block-fields.h"

/* One Blocked signal, its strings already cleaned (see notify_clean()): the record of
 * core/block-fields.h, read through its table. type and module are always set; the other
 * strings are "" when fsgated did not know them, size 0 (the journal's session fields are
 * not in the signal: unused here). */
typedef FsgBlockReport NotifyBlocked;

void notify_blocked_done(NotifyBlocked *b);

/* What a session makes of a block. Only a medium udev saw appear at this session's seat is
 * the doing of the person in front of it; a mount request (cause "kernel") may be anyone's,
 * from a user namespace too, so it is news at most, never a reason to allow. */
typedef enum NotifyScope {
        NOTIFY_SCOPE_ASK,   /* the notification with Allow and Allow once */
        NOTIFY_SCOPE_INFO,  /* information only: no action that changes anything */
        NOTIFY_SCOPE_NONE,  /* another seat's medium: not shown here */
} NotifyScope;

/* seat: the seat of this session, NULL when it has none (a remote session) or is not the
 * active one there. A block without a cause (an older fsgated) counts as "kernel". */
NotifyScope notify_scope(const NotifyBlocked *b, const char *seat);

typedef enum NotifyRequest {
        NOTIFY_REQUEST_ALLOW,   /* Allow(module, 0): from now on */
        NOTIFY_REQUEST_LOAD,    /* Load(module): this boot only */
        /* Grant(module, {device}) for each stick, then each mounted read-only: loaded for
         * these sticks only, unloaded again once they are removed. */
        NOTIFY_REQUEST_READ_ONLY,
} NotifyRequest;

typedef enum NotifyOutcome {
        NOTIFY_OUTCOME_ALLOWED,
        NOTIFY_OUTCOME_REFUSED,   /* polkit said no: AccessDenied, InteractiveAuthorizationRequired */
        NOTIFY_OUTCOME_CANCELLED, /* the person dismissed the password dialog */
        NOTIFY_OUTCOME_FAILED,    /* the service could not do it (named error) or did not answer */
} NotifyOutcome;

/* How an error reply to Allow/Load reads to a person, by the error's name alone. */
NotifyOutcome notify_classify_error(const char *name);

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

/* How a person knows the drive, for a summary: “BACKUP”, else "SanDisk Cruzer", else
 * "The drive /dev/sdb1"; for a bare type (no device) "". NULL on allocation failure. */
char *notify_device_name(const NotifyBlocked *b);

/* Where a drive ended up after an Allow: mounted (where), not (error), or not tried
 * (both NULL: no udisks2 to ask, or nothing to mount). */
typedef struct NotifyMount {
        const char *where;
        const char *error;
} NotifyMount;

/* The texts of the three kinds of notification. Bodies are plain text; the caller escapes
 * them for markup-capable servers. b[0] is the drive the notification is about, b[1..n-1]
 * other drives with the same filesystem that joined it (details only). 0 or -ENOMEM. */
/* ask: the notification offers Allow and Allow once (NOTIFY_SCOPE_ASK); else it informs. */
int notify_text_blocked(const NotifyBlocked *b, bool ask, bool server_has_actions, char **ret_summary,
                        char **ret_body);
int notify_text_details(const NotifyBlocked *b, size_t n, bool ask, char **ret_summary, char **ret_body);
/* mounts[k] belongs to b[k]; n_mounts is 0 when no drive was mounted for the person. */
int notify_text_outcome(const NotifyBlocked *b, NotifyRequest req, NotifyOutcome outcome, const char *message,
                        const NotifyMount *mounts, size_t n_mounts, char **ret_summary, char **ret_body);

/* The labels of the actions, translated; the body names them, so they come from here. */
const char *notify_label_details(void);
const char *notify_label_dismiss(void);
const char *notify_label_allow(void);
const char *notify_label_allow_once(void);
const char *notify_label_open_read_only(void);

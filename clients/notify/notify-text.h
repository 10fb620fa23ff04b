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
#include "notify-clean.h"

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
        NOTIFY_REQUEST_OPEN_READ_ONLY,
        /* OpenSafely(device) for each stick: its files read-only through a userspace driver,
         * the module left as it is (core/open-route.h). */
        NOTIFY_REQUEST_OPEN_SAFELY,
} NotifyRequest;

typedef enum NotifyOutcome {
        NOTIFY_OUTCOME_ALLOWED,
        NOTIFY_OUTCOME_REFUSED,   /* polkit said no: AccessDenied, InteractiveAuthorizationRequired */
        NOTIFY_OUTCOME_CANCELLED, /* the person dismissed the password dialog */
        NOTIFY_OUTCOME_FAILED,    /* the service could not do it (named error) or did not answer */
} NotifyOutcome;

/* How an error reply to Allow/Load reads to a person, by the error's name alone. */
NotifyOutcome notify_classify_error(const char *name);

/* How a person knows the drive, for a summary: “BACKUP”, else "SanDisk Cruzer", else
 * "The drive /dev/sdb1"; for a bare type (no device) "". NULL on allocation failure. */
char *notify_device_name(const NotifyBlocked *b);

/* Where a drive ended up after an Allow: mounted (where), not (error), or not tried
 * (both NULL: no udisks2 to ask, or nothing to mount). */
typedef struct NotifyMount {
        const char *where;
        const char *error;
} NotifyMount;

/* The texts of the notifications. Bodies are plain text; the caller escapes them for
 * markup-capable servers. b[0] is the drive the notification is about, b[1..n-1] other drives
 * with the same filesystem that joined it (details only). open_safely: the stick's type has a
 * usable, installed route (core/open-route.h), so Open safely is the first choice. A command
 * for the person stands on a line of its own. 0 or -ENOMEM. */
/* ask: the notification offers choices (NOTIFY_SCOPE_ASK); else it informs. The first lines
 * say what matters, in at most six lines of about 50 characters (what GNOME Shell shows). */
int notify_text_blocked(const NotifyBlocked *b, bool ask, bool server_has_actions, bool open_safely,
                        char **ret_summary, char **ret_body);
/* What "Other choices…" (the default action) shows: every choice, the commands, the details;
 * without ask the details only. */
int notify_text_choices(const NotifyBlocked *b, size_t n, bool ask, bool open_safely, char **ret_summary,
                        char **ret_body);
/* While Open safely works. */
int notify_text_progress(const NotifyBlocked *b, char **ret_summary, char **ret_body);
/* mounts[k] belongs to b[k] (for Open safely: where it is open); n_mounts is 0 when no drive
 * was mounted for the person. */
int notify_text_outcome(const NotifyBlocked *b, NotifyRequest req, NotifyOutcome outcome, const char *message,
                        const NotifyMount *mounts, size_t n_mounts, char **ret_summary, char **ret_body);
/* An OpenSafely error in words, by its name; NULL for one without words of its own. */
const char *notify_open_error_text(const char *name);

/* The kinds of notification an item shows, one at a time, each replacing the last. */
typedef enum NoteKind {
        NOTE_NONE,
        NOTE_BLOCKED,   /* what was blocked and why, with the safest choices */
        NOTE_CHOICES,   /* after "Other choices…" (the default action): every choice, everything known */
        NOTE_PROGRESS,  /* while Open safely works */
        NOTE_OUTCOME,   /* after fsgated (and udisks2) answered a click */
} NoteKind;

/* At most three buttons: GNOME Shell draws no more (MAX_NOTIFICATION_BUTTONS in its
 * messageTray.js) and silently drops the rest; "default" is the click on the notification
 * itself, no button there or in Plasma. Pairs of id and label, NULL-terminated. */
#define NOTIFY_BUTTONS_MAX 3
#define NOTIFY_ACTIONS_MAX (2 * (NOTIFY_BUTTONS_MAX + 1) + 1)

/* The actions of a notification of kind: ask, whether the item asks at all; device, whether
 * it names a stick; open_safely, whether Open safely was offered; request and outcome, the
 * click's and its answer's (NOTE_OUTCOME). ret[0] NULL: none. */
void notify_actions(NoteKind kind, bool ask, bool device, bool open_safely, NotifyRequest request,
                    NotifyOutcome outcome, const char *ret[static NOTIFY_ACTIONS_MAX]);

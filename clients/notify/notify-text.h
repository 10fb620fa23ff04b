/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What fsgate-notify says, kept apart from the bus code so that a unit test can read every
 * text without a bus. Nothing here allocates anything but the returned strings. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One Blocked signal, its strings already cleaned (see notify_clean()). type and module are
 * always set; the others are "" when fsgated did not know them. */
typedef struct NotifyBlocked {
        char *type;
        char *module;
        char *device;
        char *source;   /* the deciding file */
        char *origin;   /* vendor, admin, local, runtime, cmdline, default */
        char *label;
        char *uuid;
        char *vendor;
        char *model;
        uint64_t size;  /* bytes; 0 = unknown */
} NotifyBlocked;

void notify_blocked_done(NotifyBlocked *b);

typedef enum NotifyRequest {
        NOTIFY_REQUEST_ALLOW,   /* Allow(module, 0): from now on */
        NOTIFY_REQUEST_LOAD,    /* Load(module): this boot only */
} NotifyRequest;

typedef enum NotifyOutcome {
        NOTIFY_OUTCOME_ALLOWED,
        NOTIFY_OUTCOME_REFUSED,   /* polkit said no: AccessDenied, InteractiveAuthorizationRequired */
        NOTIFY_OUTCOME_CANCELLED, /* the person dismissed the password dialog */
        NOTIFY_OUTCOME_FAILED,    /* the service could not do it (named error) or did not answer */
} NotifyOutcome;

/* How an error reply to Allow/Load reads to a person. Cancellation cannot always be told
 * from refusal (see the function), so this is best effort. */
NotifyOutcome notify_classify_error(const char *name, const char *message);

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

/* The texts of the three kinds of notification. Bodies are plain text; the caller escapes
 * them for markup-capable servers. 0 or -ENOMEM. */
int notify_text_blocked(const NotifyBlocked *b, bool server_has_actions, char **ret_summary, char **ret_body);
int notify_text_details(const NotifyBlocked *b, char **ret_summary, char **ret_body);
int notify_text_outcome(const NotifyBlocked *b, NotifyRequest req, NotifyOutcome outcome, const char *message,
                        char **ret_summary, char **ret_body);

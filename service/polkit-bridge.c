/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <linux/capability.h>
#include <stdarg.h>
#include <stdlib.h>
#include <syslog.h>

#include "fsgate-api.h"
#include "list.h"
#include "log.h"
#include "macro.h"
#include "polkit-bridge.h"
#include "ratelimit.h"
#include "time-util.h"

/* A check can wait for polkit for minutes (an agent that never answers, a person away from
 * the dialog), and each holds one of the replies the bus lets fsgated wait for (dbus-daemon:
 * 128 a connection). So that one unprivileged user cannot hold them all, and everyone else's
 * checks fail, at most this many wait per user and in all; past that a call is refused at
 * once with LimitsExceeded, and polkit is not asked. */
#define QUERIES_PER_USER_MAX 8
#define QUERIES_MAX 64
/* The refusals cost nothing, so a user can make many: one journal line a minute. */
#define LIMIT_LOG_INTERVAL_SEC 60

/* Linked into the manager while its answer is outstanding, so that polkit_cancel_all() can
 * refuse it when the service stops: each query holds the caller's message, which holds the
 * bus, so a query nobody finished would keep the bus (and itself) alive forever. */
typedef struct PolkitQuery {
        Manager *manager;
        sd_bus_message *call;
        sd_bus_slot *slot;      /* the call in flight: CheckAuthorization, then NameHasOwner */
        char *action_id;
        uid_t uid;              /* the caller's */
        PolkitDone done;
        void *userdata;
        LIST_FIELDS(struct PolkitQuery, queries);
} Query;

static void query_finish(Query *q, bool granted, const sd_bus_error *error) {
        Manager *m = q->manager;

        LIST_REMOVE(queries, m->polkit_queries, q);
        m->n_pending--;
        /* Unref'ing the slot of the callback that is running is allowed: sd-bus frees it
         * once that callback returns. */
        sd_bus_slot_unref(q->slot);
        q->done(m, q->call, granted, error, q->userdata);
        sd_bus_message_unref(q->call);
        free(q->action_id);
        free(q);
}

/* What an action lets a caller do, in words: error messages reach people (fsgatectl, the
 * notifier, Cockpit), who should not have to read action ids. The id goes to the journal. */
static const char *action_words(const char *action_id) {
        if (streq(action_id, FSGATE_ACTION_ALLOW))
                return "allow filesystem modules";
        if (streq(action_id, FSGATE_ACTION_DENY))
                return "deny filesystem modules";
        if (streq(action_id, FSGATE_ACTION_LOAD))
                return "load filesystem modules";
        return "change filesystem modules";
}

_printf_(2, 3) static void refuse(Query *q, const char *fmt, ...) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        va_list ap;

        va_start(ap, fmt);
        (void) sd_bus_error_setfv(&error, SD_BUS_ERROR_ACCESS_DENIED, fmt, ap);
        va_end(ap);
        query_finish(q, false, &error);
        sd_bus_error_free(&error);
}

/* The subject polkit was asked about is the caller's unique bus name. If that name is gone
 * by the time polkit says yes, nobody is left to receive the reply, and a real polkitd asked
 * a moment later could not resolve the subject and would refuse: applying the change would
 * make the outcome depend on a race, so a vanished caller is refused like anyone polkit
 * refuses (fail closed). The bus is asked after the grant, so that a caller who left at any
 * moment before then is noticed. */
/* The check could not be made (why: the bus's error, or sd-bus's): refused, but not said to be
 * gone. */
static void refuse_unchecked(Query *q, const char *why) {
        refuse(q, "Could not check that the caller asking to %s is still connected (%s); nothing was changed",
               action_words(q->action_id), why);
}

static int on_caller_checked(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Query *q = userdata;
        int present = 0;

        if (sd_bus_message_is_method_error(reply, NULL)) {
                /* No answer is not "gone": say what it was (a timeout, when fsgated itself was
                 * too busy to read the bus's answer in time). */
                const sd_bus_error *e = sd_bus_message_get_error(reply);
                refuse_unchecked(q, e && e->message ? e->message : "no answer from the bus");
        } else if (sd_bus_message_read(reply, "b", &present) < 0 || !present)
                refuse(q, "The caller %s left the bus while being authorized to %s; nothing was changed",
                       sd_bus_message_get_sender(q->call) ?: "?", action_words(q->action_id));
        else
                query_finish(q, true, NULL);
        return 0;
}

/* The bus answers NameHasOwner at once; the timeout only guards against a bus that is gone.
 * It is long because the answer waits in fsgated's own queue behind every other message when
 * many grants come at once (64 released together under valgrind took over 25 s, sd-bus's
 * default, and a granted change was refused for it). */
#define CALLER_CHECK_TIMEOUT_USEC (120 * UINT64_C(1000000))

static int check_caller(Query *q) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(q->manager->bus, &m, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                           "org.freedesktop.DBus", "NameHasOwner");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", sd_bus_message_get_sender(q->call));
        if (r >= 0)
                r = sd_bus_call_async(q->manager->bus, &q->slot, m, on_caller_checked, q, CALLER_CHECK_TIMEOUT_USEC);
        return r;
}

/* polkit's detail for a dialog the user closed: not a "no" from the rules, so say so. */
static int read_dismissed(sd_bus_message *reply, bool *ret) {
        const char *k, *v;
        int r;

        *ret = false;
        r = sd_bus_message_enter_container(reply, 'a', "{ss}");
        while (r > 0) {
                r = sd_bus_message_read(reply, "{ss}", &k, &v);
                if (r > 0 && streq(k, "polkit.dismissed") && streq(v, "true"))
                        *ret = true;
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(reply);
        return r;
}

static int on_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        Query *q = userdata;
        int authorized = 0, challenge = 0, r;
        bool dismissed = false;

        if (sd_bus_message_is_method_error(reply, NULL)) {
                /* polkitd missing, crashed or too slow: nobody said yes, so the answer is no. */
                const sd_bus_error *e = sd_bus_message_get_error(reply);
                refuse(q, "The authorization check to %s failed (%s); refusing", action_words(q->action_id),
                       e && e->message ? e->message : "no answer from polkit");
                return 0;
        }
        r = sd_bus_message_enter_container(reply, 'r', "bba{ss}");
        if (r > 0)
                r = sd_bus_message_read(reply, "bb", &authorized, &challenge);
        else if (r == 0)
                r = -EBADMSG;
        if (r >= 0)
                r = read_dismissed(reply, &dismissed);
        if (r < 0) {
                refuse(q, "Malformed answer from polkit on whether to %s; refusing", action_words(q->action_id));
                return 0;
        }
        if (authorized) {
                q->slot = sd_bus_slot_unref(q->slot);
                r = check_caller(q);
                if (r < 0)
                        refuse_unchecked(q, strerror(-r));
                return 0;
        }
        /* A name of its own, so that clients need not read the message (which is for people). */
        if (dismissed)
                sd_bus_error_setf(&error, fsg_error_dbus_name(FSG_ERR_AUTH_CANCELLED),
                                  "Authentication was cancelled: the password dialog was dismissed; "
                                  "nothing was changed");
        else if (challenge && !sd_bus_message_get_allow_interactive_authorization(q->call))
                sd_bus_error_setf(&error, SD_BUS_ERROR_INTERACTIVE_AUTHORIZATION_REQUIRED,
                                  "A password is needed to %s; allow interactive authorization "
                                  "or run the request as root", action_words(q->action_id));
        else
                sd_bus_error_setf(&error, SD_BUS_ERROR_ACCESS_DENIED,
                                  "Not authorized to %s; nothing was changed", action_words(q->action_id));
        query_finish(q, false, &error);
        sd_bus_error_free(&error);
        return 0;
}

void polkit_cancel_all(Manager *m) {
        while (m->polkit_queries)
                refuse(m->polkit_queries, "fsgated is stopping; nothing was changed");
}

static void log_limit(uid_t uid, unsigned n_user, unsigned n_all) {
        static const RateLimit rl = { .interval = LIMIT_LOG_INTERVAL_SEC * UINT64_C(1000000), .burst = 1 };
        static RateLimitCount lines;
        unsigned suppressed;

        if (!ratelimit_below(&rl, &lines, -1, fsg_now_usec(), &suppressed))
                return;
        log_plain(LOG_NOTICE, "Refusing requests while too many wait for authorization (user %u: %u, all users: %u; "
                  "at most %u and %u); %u more refused since the last such line", (unsigned) uid, n_user, n_all,
                  QUERIES_PER_USER_MAX, QUERIES_MAX, suppressed);
}

/* The bus's word (dbus-daemon's UnixUserID is the effective uid at connect), not /proc's. */
static int sender_uid(sd_bus_message *call, uid_t *ret) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        int r;

        r = sd_bus_query_sender_creds(call, SD_BUS_CREDS_EUID, &creds);
        if (r < 0)
                return r;
        return sd_bus_creds_get_euid(creds, ret);
}

/* CheckAuthorization's a{ss}: the request's details, then the message and its domain. */
static int append_details(sd_bus_message *req, const char * const *details, const char *message) {
        int r = sd_bus_message_open_container(req, 'a', "{ss}");

        for (const char * const *d = details; r >= 0 && d && d[0] && d[1]; d += 2)
                r = sd_bus_message_append(req, "{ss}", d[0], d[1]);
        if (r >= 0)
                r = sd_bus_message_append(req, "{ss}{ss}", "polkit.message", message,
                                          "polkit.gettext_domain", POLKIT_GETTEXT_DOMAIN);
        if (r >= 0)
                r = sd_bus_message_close_container(req);
        return r;
}

/* A refusal before any query exists: done answers the call all the same. */
static void refuse_unasked(Manager *m, sd_bus_message *call, PolkitDone done, void *userdata, int err,
                           const char *action_id) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;

        sd_bus_error_setf(&error, SD_BUS_ERROR_ACCESS_DENIED, "Could not ask whether to %s (%s); refusing",
                          action_words(action_id), strerror(err));
        done(m, call, false, &error, userdata);
}

void polkit_check_async(Manager *m, sd_bus_message *call, const char *action_id, const char * const *details,
                        const char *message, PolkitDone done, void *userdata) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *req = NULL;
        unsigned n_user = 0, n_all = 0;
        Query *q;
        bool interactive;
        uid_t uid;
        int r;

        r = sd_bus_query_sender_privilege(call, CAP_SYS_ADMIN);
        if (r > 0) {
                done(m, call, true, NULL, userdata);
                return;
        }

        r = sender_uid(call, &uid);
        if (r < 0) {
                sd_bus_error_setf(&error, SD_BUS_ERROR_ACCESS_DENIED,
                                  "Could not tell who is asking to %s (%s); refusing", action_words(action_id),
                                  strerror(-r));
                done(m, call, false, &error, userdata);
                return;
        }
        LIST_FOREACH(queries, o, m->polkit_queries) {
                n_all++;
                n_user += o->uid == uid;
        }
        if (n_user >= QUERIES_PER_USER_MAX || n_all >= QUERIES_MAX) {
                if (n_user >= QUERIES_PER_USER_MAX)
                        sd_bus_error_setf(&error, SD_BUS_ERROR_LIMITS_EXCEEDED,
                                          "%u requests of user %u are waiting for authorization already; "
                                          "nothing was changed", n_user, (unsigned) uid);
                else
                        sd_bus_error_setf(&error, SD_BUS_ERROR_LIMITS_EXCEEDED,
                                          "%u requests are waiting for authorization already; nothing was changed",
                                          n_all);
                log_limit(uid, n_user, n_all);
                done(m, call, false, &error, userdata);
                return;
        }

        q = calloc(1, sizeof(*q));
        if (q && !(q->action_id = strdup(action_id))) {
                free(q);
                q = NULL;
        }
        if (!q) {
                refuse_unasked(m, call, done, userdata, ENOMEM, action_id);
                return;
        }
        *q = (Query) { .manager = m, .call = sd_bus_message_ref(call), .action_id = q->action_id,
                       .uid = uid, .done = done, .userdata = userdata };
        LIST_PREPEND(queries, m->polkit_queries, q);
        m->n_pending++;

        interactive = sd_bus_message_get_allow_interactive_authorization(call);
        r = sd_bus_message_new_method_call(m->bus, &req, "org.freedesktop.PolicyKit1",
                                           "/org/freedesktop/PolicyKit1/Authority",
                                           "org.freedesktop.PolicyKit1.Authority", "CheckAuthorization");
        if (r >= 0)
                r = sd_bus_message_append(req, "(sa{sv})s", "system-bus-name", 1, "name", "s",
                                          sd_bus_message_get_sender(call), action_id);
        if (r >= 0)
                r = append_details(req, details, message);
        if (r >= 0)
                r = sd_bus_message_append(req, "us", (uint32_t) (interactive ? 1 : 0), "");
        /* A person may take a while to type a password; a non-interactive check must be quick. */
        if (r >= 0)
                r = sd_bus_call_async(m->bus, &q->slot, req, on_reply, q,
                                      interactive ? 300 * 1000000ULL : 25 * 1000000ULL);
        if (r < 0)
                refuse(q, "Could not ask polkit whether to %s (%s); refusing", action_words(q->action_id),
                       strerror(-r));
}

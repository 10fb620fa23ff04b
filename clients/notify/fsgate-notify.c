/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fsgate-notify: the desktop side of a blocked filesystem. One per graphical session.
 *
 * It listens on the system bus for fsgated's Blocked signal and tells the person at the
 * desktop through org.freedesktop.Notifications on the session bus: which device, which
 * filesystem, why, and two buttons. A click calls fsgated with interactive authorization
 * allowed, so the session's polkit agent asks for a password; the answer comes back as a
 * second notification. Nothing is ever changed without a click.
 *
 * One sd-event loop, two sd-bus connections, everything asynchronous: a password dialog
 * left open for minutes must not stop the next Blocked signal from being shown.
 *
 * Each device (or, when fsgated does not know the device, each filesystem type) is one
 * "item" and gets at most one notification of its own; what follows a click (details,
 * outcome) replaces it rather than adding another. */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <syslog.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "config.h"
#include "fsgate-api.h"
#include "macro.h"
#include "name.h"
#include "notify-text.h"
#include "strv.h"


#define NOTIFY_BUS_NAME "org.freedesktop.Notifications"
#define NOTIFY_BUS_PATH "/org/freedesktop/Notifications"
#define NOTIFY_BUS_IFACE "org.freedesktop.Notifications"

/* Held on the session bus: the user unit and the XDG autostart file must not both run us. */
#define INSTANCE_BUS_NAME "org.fsgate.fsgate1.Notify"

/* Only memory is at stake: a session sees a handful of devices. Beyond this, new
 * devices are logged but not shown. */
#define ITEMS_MAX 256
/* A person may be typing a password into the polkit agent; same bound as fsgatectl. */
#define SERVICE_CALL_TIMEOUT_USEC (600 * 1000000ULL)
#define NOTIFY_CALL_TIMEOUT_USEC (25 * 1000000ULL)
/* A failed post is tried once more, at the next event (another Blocked signal or the
 * notification server appearing); then it is given up. */
#define POST_ATTEMPTS_MAX 2
/* Untrusted strings (a stick's label) get one line each, not a screenful. */
#define FIELD_MAX 64

static int log_max = LOG_INFO;

_printf_(2, 3) static void log_full(int priority, const char *fmt, ...) {
        char buf[1024];
        va_list ap;

        if (priority > log_max)
                return;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        /* Under systemd stderr is the journal, which reads the <N> priority prefix. */
        if (getenv("JOURNAL_STREAM"))
                fprintf(stderr, "<%d>%s\n", priority, buf);
        else
                fprintf(stderr, "fsgate-notify: %s\n", buf);
}

#define log_debug(...) log_full(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_full(LOG_INFO, __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, __VA_ARGS__)
#define log_error(...) log_full(LOG_ERR, __VA_ARGS__)

static void message_unrefp(sd_bus_message **m) {
        sd_bus_message_unref(*m);
}
static void bus_flush_close_unrefp(sd_bus **b) {
        sd_bus_flush_close_unref(*b);
}
static void event_unrefp(sd_event **e) {
        sd_event_unref(*e);
}

typedef enum NoteKind {
        NOTE_NONE,
        NOTE_BLOCKED,   /* what was blocked and why, with Allow / Allow once / details */
        NOTE_DETAILS,   /* after a click on the notification itself: everything known */
        NOTE_OUTCOME,   /* after fsgated answered a click */
} NoteKind;

static const char * const note_kind_names[] = {
        [NOTE_NONE] = "none",
        [NOTE_BLOCKED] = "blocked",
        [NOTE_DETAILS] = "details",
        [NOTE_OUTCOME] = "outcome",
};

typedef struct Context Context;

typedef struct Item {
        struct Item *next;
        Context *ctx;
        char *key;              /* the device, or the type when fsgated did not know the device */
        NotifyBlocked b;
        uint32_t id;            /* the server's id of our notification; 0: none we know of */
        NoteKind pending;       /* still to post */
        NoteKind posting;       /* Notify in flight */
        unsigned attempts;      /* failed posts of pending */
        sd_bus_slot *notify_slot;
        sd_bus_slot *call_slot; /* Allow or Load in flight */
        NotifyRequest request;
        NotifyOutcome outcome;
        char *message;          /* the service's error message, for the outcome */
        bool done;              /* allowed or loaded: another Blocked for this key is news */
} Item;

struct Context {
        sd_event *event;
        sd_bus *system_bus;
        sd_bus *session_bus;
        Item *items;
        size_t n_items;
        /* What the current notification server can do; asked once per server. */
        bool server_known;
        bool server_markup;
        bool server_actions;
        sd_bus_slot *caps_slot;
};

static void flush(Context *ctx);

static Item *item_free(Item *i) {
        if (!i)
                return NULL;
        sd_bus_slot_unref(i->notify_slot);
        sd_bus_slot_unref(i->call_slot);
        notify_blocked_done(&i->b);
        free(i->key);
        free(i->message);
        free(i);
        return NULL;
}

static void item_remove(Item *i) {
        Context *ctx = i->ctx;

        for (Item **p = &ctx->items; *p; p = &(*p)->next)
                if (*p == i) {
                        *p = i->next;
                        ctx->n_items--;
                        break;
                }
        item_free(i);
}

static Item *item_by_key(Context *ctx, const char *key) {
        for (Item *i = ctx->items; i; i = i->next)
                if (streq(i->key, key))
                        return i;
        return NULL;
}

static Item *item_by_id(Context *ctx, uint32_t id) {
        if (id == 0)
                return NULL;
        for (Item *i = ctx->items; i; i = i->next)
                if (i->id == id)
                        return i;
        return NULL;
}

/* A post failed (or could not be made): keep it for the next event, once. May free i. */
static void post_failed(Item *i, NoteKind kind) {
        /* Something newer may have become pending meanwhile (a click's answer): it replaces
         * the failed one, and inherits its attempt. */
        if (i->pending == NOTE_NONE)
                i->pending = kind;
        kind = i->pending;
        if (++i->attempts < POST_ATTEMPTS_MAX) {
                log_info("Will post the %s notification for %s again at the next event", note_kind_names[kind],
                         i->key);
                return;
        }
        log_warning("Giving up on the %s notification for %s after %u attempts", note_kind_names[kind], i->key,
                    i->attempts);
        i->pending = NOTE_NONE;
        i->attempts = 0;
        /* Nothing was ever shown for it: a later Blocked for the same device may try again. */
        if (kind == NOTE_BLOCKED && i->id == 0 && !i->call_slot && !i->notify_slot)
                item_remove(i);
}

static int on_notify_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Item *i = userdata;
        NoteKind kind = i->posting;
        uint32_t id;
        int r;

        i->notify_slot = sd_bus_slot_unref(i->notify_slot);
        i->posting = NOTE_NONE;

        if (sd_bus_message_is_method_error(reply, NULL)) {
                const sd_bus_error *e = sd_bus_message_get_error(reply);
                log_warning("Notification server refused the %s notification for %s: %s", note_kind_names[kind],
                            i->key, e && e->message ? e->message : e ? e->name : "unknown error");
                post_failed(i, kind);
                return 0;
        }
        r = sd_bus_message_read(reply, "u", &id);
        if (r < 0) {
                log_warning("Malformed reply to Notify for %s: %s", i->key, strerror(-r));
                post_failed(i, kind);
                return 0;
        }
        i->id = id;
        i->attempts = 0;
        log_info("Posted %s notification %" PRIu32 " for %s", note_kind_names[kind], id, i->key);
        /* A click's answer may have arrived while this was in flight. */
        if (i->pending != NOTE_NONE)
                flush(i->ctx);
        return 0;
}

static int append_hints(sd_bus_message *m) {
        int r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0)
                r = sd_bus_message_append(m, "{sv}", "urgency", "y", (uint8_t) 1);
        if (r >= 0)
                r = sd_bus_message_append(m, "{sv}", "desktop-entry", "s", "fsgate-notify");
        /* Gone once acted upon: the outcome is a notification of its own. */
        if (r >= 0)
                r = sd_bus_message_append(m, "{sv}", "resident", "b", 0);
        if (r >= 0)
                r = sd_bus_message_append(m, "{sv}", "category", "s", "device");
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

static int post(Item *i) {
        static const char * const actions_blocked[] = { "default", "Details", "allow", "Allow",
                                                         "allow-once", "Allow once", NULL };
        static const char * const actions_retry[] = { "allow", "Allow", "allow-once", "Allow once", NULL };
        _cleanup_(message_unrefp) sd_bus_message *m = NULL;
        _cleanup_free_ char *summary = NULL, *body = NULL, *escaped = NULL;
        Context *ctx = i->ctx;
        const char * const *actions = NULL;
        NoteKind kind = i->pending;
        int r;

        switch (kind) {
        case NOTE_BLOCKED:
                r = notify_text_blocked(&i->b, ctx->server_actions, &summary, &body);
                actions = actions_blocked;
                break;
        case NOTE_DETAILS:
                r = notify_text_details(&i->b, &summary, &body);
                actions = actions_retry;
                break;
        case NOTE_OUTCOME:
                r = notify_text_outcome(&i->b, i->request, i->outcome, i->message, &summary, &body);
                /* Dismissing the password dialog by mistake should not cost the buttons. */
                if (i->outcome == NOTIFY_OUTCOME_CANCELLED)
                        actions = actions_retry;
                break;
        default:
                return 0;
        }
        if (r < 0)
                return r;
        /* Our texts carry no markup, but a label may hold "<" or "&". */
        if (ctx->server_markup) {
                escaped = notify_markup_escape(body);
                if (!escaped)
                        return -ENOMEM;
        }

        r = sd_bus_message_new_method_call(ctx->session_bus, &m, NOTIFY_BUS_NAME, NOTIFY_BUS_PATH, NOTIFY_BUS_IFACE,
                                           "Notify");
        /* replaces_id: the item's notification, if still shown, changes in place. */
        if (r >= 0)
                r = sd_bus_message_append(m, "susss", "fsgate", i->id, "drive-removable-media", summary,
                                          escaped ?: body);
        if (r >= 0)
                r = sd_bus_message_append_strv(m, ctx->server_actions ? (char **) actions : NULL);
        if (r >= 0)
                r = append_hints(m);
        if (r >= 0)
                r = sd_bus_message_append(m, "i", (int32_t) -1);
        if (r >= 0)
                r = sd_bus_call_async(ctx->session_bus, &i->notify_slot, m, on_notify_reply, i,
                                      NOTIFY_CALL_TIMEOUT_USEC);
        if (r < 0)
                return r;
        i->posting = kind;
        i->pending = NOTE_NONE;
        return 0;
}

static int on_caps_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        _cleanup_strv_free_ char **caps = NULL;
        Context *ctx = userdata;
        int r;

        ctx->caps_slot = sd_bus_slot_unref(ctx->caps_slot);
        if (sd_bus_message_is_method_error(reply, NULL)) {
                const sd_bus_error *e = sd_bus_message_get_error(reply);
                log_warning("No notification server: %s", e && e->message ? e->message : "unknown error");
                /* Counts as a failed post for everything waiting: the server is not there. */
                for (Item *i = ctx->items, *next; i; i = next) {
                        next = i->next;
                        if (i->pending != NOTE_NONE && !i->notify_slot)
                                post_failed(i, i->pending);
                }
                return 0;
        }
        r = sd_bus_message_read_strv(reply, &caps);
        if (r < 0) {
                log_warning("Malformed reply to GetCapabilities (%s); assuming plain text with actions", strerror(-r));
                caps = NULL;
        }
        ctx->server_known = true;
        ctx->server_markup = strv_contains(caps, "body-markup");
        /* Servers without actions cannot offer the buttons; the body then names the command. */
        ctx->server_actions = r < 0 || strv_contains(caps, "actions");
        log_info("Notification server: %s, %s", ctx->server_actions ? "actions" : "no actions",
                 ctx->server_markup ? "body markup" : "plain text");
        flush(ctx);
        return 0;
}

/* Posts whatever is pending; called at every event, which is what "retry at the next
 * event" means for an earlier failure. */
static void flush(Context *ctx) {
        int r;

        if (!ctx->server_known) {
                bool any = false;
                for (Item *i = ctx->items; i; i = i->next)
                        any = any || i->pending != NOTE_NONE;
                if (!any || ctx->caps_slot)
                        return;
                r = sd_bus_call_method_async(ctx->session_bus, &ctx->caps_slot, NOTIFY_BUS_NAME, NOTIFY_BUS_PATH,
                                             NOTIFY_BUS_IFACE, "GetCapabilities", on_caps_reply, ctx, "");
                if (r < 0)
                        log_warning("Failed to ask the notification server for its capabilities: %s", strerror(-r));
                return;
        }
        for (Item *i = ctx->items, *next; i; i = next) {
                next = i->next;
                if (i->pending == NOTE_NONE || i->notify_slot)
                        continue;
                r = post(i);
                if (r < 0) {
                        log_warning("Failed to post the %s notification for %s: %s", note_kind_names[i->pending],
                                    i->key, strerror(-r));
                        post_failed(i, i->pending);
                }
        }
}

/* ---- the system bus: Blocked, and the calls a click makes ---------------------------- */

static int on_call_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Item *i = userdata;
        const char *method = i->request == NOTIFY_REQUEST_LOAD ? "Load" : "Allow";

        i->call_slot = sd_bus_slot_unref(i->call_slot);
        free(i->message);
        i->message = NULL;
        if (sd_bus_message_is_method_error(reply, NULL)) {
                const sd_bus_error *e = sd_bus_message_get_error(reply);
                const char *name = e ? e->name : NULL, *msg = e && e->message ? e->message : name;

                i->outcome = notify_classify_error(name, msg);
                i->message = msg ? notify_clean(msg, 512) : NULL;
                log_info("%s(%s) for %s: %s (%s)", method, i->b.module, i->key, name ?: "error", msg ?: "");
        } else {
                i->outcome = NOTIFY_OUTCOME_ALLOWED;
                i->done = true;
                log_info("%s(%s) for %s: done", method, i->b.module, i->key);
        }
        i->pending = NOTE_OUTCOME;
        i->attempts = 0;
        flush(i->ctx);
        return 0;
}

static void start_call(Item *i, NotifyRequest req) {
        _cleanup_(message_unrefp) sd_bus_message *m = NULL;
        Context *ctx = i->ctx;
        const char *method = req == NOTIFY_REQUEST_LOAD ? "Load" : "Allow";
        int r;

        if (i->call_slot) {
                log_info("Still waiting for the answer about %s; ignoring the click", i->key);
                return;
        }
        r = sd_bus_message_new_method_call(ctx->system_bus, &m, FSGATE_BUS_NAME, FSGATE_BUS_PATH, FSGATE_BUS_IFACE,
                                           method);
        if (r >= 0)
                r = req == NOTIFY_REQUEST_LOAD ? sd_bus_message_append(m, "s", i->b.module)
                                               : sd_bus_message_append(m, "st", i->b.module, (uint64_t) 0);
        /* The point of the click: the session's polkit agent may ask for a password. */
        if (r >= 0)
                r = sd_bus_message_set_allow_interactive_authorization(m, 1);
        if (r >= 0)
                r = sd_bus_call_async(ctx->system_bus, &i->call_slot, m, on_call_reply, i, SERVICE_CALL_TIMEOUT_USEC);
        i->request = req;
        if (r < 0) {
                log_warning("Failed to call %s(%s): %s", method, i->b.module, strerror(-r));
                free(i->message);
                i->message = strdup(strerror(-r));
                i->outcome = NOTIFY_OUTCOME_FAILED;
                i->pending = NOTE_OUTCOME;
                i->attempts = 0;
                flush(ctx);
                return;
        }
        log_info("Calling %s(%s) for %s, interactive authorization allowed", method, i->b.module, i->key);
}

/* Reads Blocked's details dictionary; unknown keys and unexpected types are skipped, so
 * that fsgated may add to it. */
static int read_details(sd_bus_message *m, NotifyBlocked *b) {
        static const struct {
                const char *key;
                size_t offset;
        } strings[] = {
                { "source", offsetof(NotifyBlocked, source) },
                { "origin", offsetof(NotifyBlocked, origin) },
                { "label",  offsetof(NotifyBlocked, label)  },
                { "uuid",   offsetof(NotifyBlocked, uuid)   },
                { "vendor", offsetof(NotifyBlocked, vendor) },
                { "model",  offsetof(NotifyBlocked, model)  },
        };
        int r;

        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        if (r <= 0)
                return r < 0 ? r : -EBADMSG;
        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                const char *key, *contents = NULL;
                char **field = NULL;

                r = sd_bus_message_read(m, "s", &key);
                if (r < 0)
                        return r;
                r = sd_bus_message_peek_type(m, NULL, &contents);
                if (r < 0)
                        return r;
                for (size_t k = 0; k < ELEMENTSOF(strings); k++)
                        if (streq(key, strings[k].key))
                                field = (char **) ((char *) b + strings[k].offset);
                if (field && streq_ptr(contents, "s")) {
                        const char *v;
                        r = sd_bus_message_read(m, "v", "s", &v);
                        if (r < 0)
                                return r;
                        free(*field);
                        *field = notify_clean(v, streq(key, "source") ? 4096 : FIELD_MAX);
                        if (!*field)
                                return -ENOMEM;
                } else if (streq(key, "size") && streq_ptr(contents, "t")) {
                        r = sd_bus_message_read(m, "v", "t", &b->size);
                        if (r < 0)
                                return r;
                } else {
                        r = sd_bus_message_skip(m, "v");
                        if (r < 0)
                                return r;
                }
                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

static int fill_empty(NotifyBlocked *b) {
        char **fields[] = { &b->source, &b->origin, &b->label, &b->uuid, &b->vendor, &b->model };

        for (size_t k = 0; k < ELEMENTSOF(fields); k++)
                if (!*fields[k] && !(*fields[k] = strdup("")))
                        return -ENOMEM;
        return 0;
}

static int on_blocked(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        _cleanup_(notify_blocked_done) NotifyBlocked b = {};
        Context *ctx = userdata;
        const char *type, *module, *device;
        Item *i;
        int r;

        /* The match names fsgated's bus name as sender, so the bus delivers only what the
         * name's owner (root, by the bus policy) sends: nobody else can make us ask for a
         * password. */
        r = sd_bus_message_read(m, "sss", &type, &module, &device);
        if (r < 0) {
                log_warning("Ignoring a malformed Blocked signal: %s", strerror(-r));
                return 0;
        }
        if (!fsg_name_is_valid(type) || !fsg_name_is_valid(module) ||
            (*device && (strncmp(device, "/dev/", 5) != 0 || strlen(device) > 256))) {
                log_warning("Ignoring a Blocked signal with implausible arguments");
                return 0;
        }
        b.type = strdup(type);
        b.module = strdup(module);
        b.device = notify_clean(device, 256);
        if (!b.type || !b.module || !b.device)
                return log_error("Out of memory"), 0;
        /* What was read before a malformed entry is still good: show what we have. */
        r = read_details(m, &b);
        if (r < 0)
                log_warning("Ignoring (part of) the details of a Blocked signal for %s: %s", type, strerror(-r));
        if (fill_empty(&b) < 0)
                return log_error("Out of memory"), 0;

        const char *key = *b.device ? b.device : b.type;
        log_info("Blocked: filesystem %s (module %s)%s%s", b.type, b.module, *b.device ? " on " : "", b.device);
        i = item_by_key(ctx, key);
        if (i && !i->done) {
                /* One notification per device: the first one already says it all. */
                log_info("Already notified about %s; not again", key);
        } else if (i) {
                /* Allowed earlier, blocked again (denied meanwhile): news, in the same slot. */
                notify_blocked_done(&i->b);
                i->b = b;
                b = (NotifyBlocked) {};
                i->done = false;
                i->pending = NOTE_BLOCKED;
                i->attempts = 0;
        } else if (ctx->n_items >= ITEMS_MAX) {
                log_warning("Too many blocked devices in this session; not showing %s", key);
        } else {
                i = calloc(1, sizeof(Item));
                if (!i || !(i->key = strdup(key))) {
                        free(i);
                        return log_error("Out of memory"), 0;
                }
                i->ctx = ctx;
                i->b = b;
                b = (NotifyBlocked) {};
                i->pending = NOTE_BLOCKED;
                i->next = ctx->items;
                ctx->items = i;
                ctx->n_items++;
        }
        flush(ctx);
        return 0;
}

/* ---- the session bus: the notification server's signals -------------------------------- */

static int on_action_invoked(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Context *ctx = userdata;
        const char *action;
        uint32_t id;
        Item *i;
        int r;

        r = sd_bus_message_read(m, "us", &id, &action);
        if (r < 0)
                return 0;
        i = item_by_id(ctx, id);
        if (!i)
                return 0;   /* another program's notification, or one of ours from a dead server */
        log_info("Action \"%s\" on notification %" PRIu32 " for %s", action, id, i->key);
        if (streq(action, "allow"))
                start_call(i, NOTIFY_REQUEST_ALLOW);
        else if (streq(action, "allow-once"))
                start_call(i, NOTIFY_REQUEST_LOAD);
        else if (streq(action, "default")) {
                if (i->pending == NOTE_NONE && !i->notify_slot) {
                        i->pending = NOTE_DETAILS;
                        i->attempts = 0;
                        flush(ctx);
                }
        }
        return 0;
}

static int on_notification_closed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Context *ctx = userdata;
        uint32_t id, reason;
        Item *i;

        if (sd_bus_message_read(m, "uu", &id, &reason) < 0)
                return 0;
        i = item_by_id(ctx, id);
        if (i) {
                log_debug("Notification %" PRIu32 " for %s closed (reason %" PRIu32 ")", id, i->key, reason);
                /* The id may be reused by the server; a follow-up is a new notification. */
                i->id = 0;
        }
        return 0;
}

static int on_server_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Context *ctx = userdata;
        const char *name, *old_owner, *new_owner;

        if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0 || !streq(name, NOTIFY_BUS_NAME))
                return 0;
        log_info("Notification server %s%s%s", *old_owner ? "left" : "", *old_owner && *new_owner ? ", " : "",
                 *new_owner ? "appeared" : "");
        /* Its notifications died with it, and a new server numbers its own from scratch. */
        for (Item *i = ctx->items; i; i = i->next)
                i->id = 0;
        ctx->server_known = false;
        ctx->caps_slot = sd_bus_slot_unref(ctx->caps_slot);
        if (*new_owner)
                flush(ctx);
        return 0;
}

static int on_disconnected(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Context *ctx = userdata;
        const char *description = "a";

        (void) sd_bus_get_description(sd_bus_message_get_bus(m), &description);
        /* Reconnecting by hand would need every match again; the user unit restarts us.
         * ctx->event, not the bus's: a closed bus is already detached from the loop. */
        log_error("Lost the connection to the %s bus; exiting", description);
        return sd_event_exit(ctx->event, EXIT_FAILURE);
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        return sd_event_exit(sd_event_source_get_event(s), EXIT_SUCCESS);
}

/* ---- setup ------------------------------------------------------------------------------ */

static int bus_connect(const char *address, bool system, const char *description, sd_bus **ret) {
        _cleanup_(bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        /* Without an address, the usual places: $DBUS_SYSTEM_BUS_ADDRESS / $DBUS_SESSION_BUS_ADDRESS,
         * else the well-known sockets. */
        if (!address)
                return system ? sd_bus_open_system_with_description(ret, description)
                              : sd_bus_open_user_with_description(ret, description);
        r = sd_bus_new(&bus);
        if (r >= 0)
                r = sd_bus_set_address(bus, address);
        if (r >= 0)
                r = sd_bus_set_bus_client(bus, 1);
        if (r >= 0)
                r = sd_bus_set_description(bus, description);
        if (r >= 0)
                r = sd_bus_start(bus);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(bus);
        return 0;
}

static int add_disconnect_match(sd_bus *bus, Context *ctx) {
        /* Delivered locally by sd-bus when the connection goes away. */
        return sd_bus_add_match(bus, NULL,
                                "type='signal',path='/org/freedesktop/DBus/Local',"
                                "interface='org.freedesktop.DBus.Local',member='Disconnected'",
                                on_disconnected, ctx);
}

/* 1: ready; 0: another instance serves this session; < 0: failed (logged). */
static int setup(Context *ctx, const char *system_address, const char *session_address) {
        int r;

        r = bus_connect(system_address, true, "system", &ctx->system_bus);
        if (r < 0)
                return log_error("Failed to connect to the system bus: %s", strerror(-r)), r;
        r = bus_connect(session_address, false, "session", &ctx->session_bus);
        if (r < 0)
                return log_error("Failed to connect to the session bus: %s", strerror(-r)), r;

        r = sd_bus_attach_event(ctx->system_bus, ctx->event, SD_EVENT_PRIORITY_NORMAL);
        if (r >= 0)
                r = sd_bus_attach_event(ctx->session_bus, ctx->event, SD_EVENT_PRIORITY_NORMAL);
        if (r >= 0)
                r = add_disconnect_match(ctx->system_bus, ctx);
        if (r >= 0)
                r = add_disconnect_match(ctx->session_bus, ctx);
        if (r < 0)
                return log_error("Failed to set up the event loop: %s", strerror(-r)), r;

        /* Synchronous on purpose: once we say we are ready, no Blocked can slip by. The
         * rule names the well-known name, which the bus resolves at each delivery, so it
         * keeps matching when fsgated exits idle and is activated again. */
        r = sd_bus_match_signal(ctx->system_bus, NULL, FSGATE_BUS_NAME, FSGATE_BUS_PATH, FSGATE_BUS_IFACE, "Blocked",
                                on_blocked, ctx);
        if (r < 0)
                return log_error("Failed to subscribe to %s.Blocked: %s", FSGATE_BUS_IFACE, strerror(-r)), r;
        r = sd_bus_match_signal(ctx->session_bus, NULL, NOTIFY_BUS_NAME, NOTIFY_BUS_PATH, NOTIFY_BUS_IFACE,
                                "ActionInvoked", on_action_invoked, ctx);
        if (r >= 0)
                r = sd_bus_match_signal(ctx->session_bus, NULL, NOTIFY_BUS_NAME, NOTIFY_BUS_PATH, NOTIFY_BUS_IFACE,
                                        "NotificationClosed", on_notification_closed, ctx);
        if (r >= 0)
                r = sd_bus_add_match(ctx->session_bus, NULL,
                                     "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
                                     "interface='org.freedesktop.DBus',member='NameOwnerChanged',"
                                     "arg0='" NOTIFY_BUS_NAME "'",
                                     on_server_owner_changed, ctx);
        if (r < 0)
                return log_error("Failed to subscribe to the notification server's signals: %s", strerror(-r)), r;

        /* Last, so that the name means "ready". Not queued: a second instance just leaves. */
        r = sd_bus_request_name(ctx->session_bus, INSTANCE_BUS_NAME, 0);
        if (r == -EEXIST)
                return log_info("Already running in this session (%s is taken); exiting", INSTANCE_BUS_NAME), 0;
        if (r < 0)
                return log_error("Failed to acquire %s: %s", INSTANCE_BUS_NAME, strerror(-r)), r;
        return 1;
}

static void context_done(Context *ctx) {
        while (ctx->items) {
                Item *i = ctx->items;
                ctx->items = i->next;
                item_free(i);
        }
        ctx->caps_slot = sd_bus_slot_unref(ctx->caps_slot);
        ctx->system_bus = sd_bus_flush_close_unref(ctx->system_bus);
        ctx->session_bus = sd_bus_flush_close_unref(ctx->session_bus);
}

static void help(void) {
        printf("fsgate-notify [OPTIONS...]\n\n"
               "Show a desktop notification when fsgate blocks a filesystem, with buttons to allow it.\n"
               "Started with the graphical session (user unit fsgate-notify.service or XDG autostart).\n\n"
               "  -h --help                       Show this help\n"
               "     --version                    Show the version\n"
               "     --system-bus-address=ADDRESS Watch fsgated on this bus instead of the system bus\n"
               "     --session-bus-address=ADDRESS Post notifications on this bus instead of the session bus\n\n"
               "Set SYSTEMD_LOG_LEVEL=debug for more messages. See fsgate-notify(1).\n");
}

int main(int argc, char *argv[]) {
        enum { ARG_VERSION = 0x100, ARG_SYSTEM_ADDRESS, ARG_SESSION_ADDRESS };
        static const struct option options[] = {
                { "help",                no_argument,       NULL, 'h'                 },
                { "version",             no_argument,       NULL, ARG_VERSION         },
                { "system-bus-address",  required_argument, NULL, ARG_SYSTEM_ADDRESS  },
                { "session-bus-address", required_argument, NULL, ARG_SESSION_ADDRESS },
                {}
        };
        _cleanup_(event_unrefp) sd_event *event = NULL;
        const char *system_address = NULL, *session_address = NULL, *level;
        Context ctx = {};
        sigset_t ss;
        int c, r;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h': help(); return 0;
                case ARG_VERSION: printf("fsgate-notify %s\n", FSGATE_VERSION); return 0;
                case ARG_SYSTEM_ADDRESS: system_address = optarg; break;
                case ARG_SESSION_ADDRESS: session_address = optarg; break;
                default: return 2;
                }
        if (optind < argc) {
                fprintf(stderr, "fsgate-notify takes no arguments\n");
                return 2;
        }
        level = getenv("SYSTEMD_LOG_LEVEL");
        if (level && (streq(level, "debug") || streq(level, "7")))
                log_max = LOG_DEBUG;

        /* sd-event wants the signals blocked before it takes them over. */
        sigemptyset(&ss);
        sigaddset(&ss, SIGTERM);
        sigaddset(&ss, SIGINT);
        sigprocmask(SIG_BLOCK, &ss, NULL);

        r = sd_event_default(&event);
        if (r < 0) {
                log_error("Failed to create the event loop: %s", strerror(-r));
                return EXIT_FAILURE;
        }
        ctx.event = event;
        r = sd_event_add_signal(event, NULL, SIGTERM, on_signal, NULL);
        if (r >= 0)
                r = sd_event_add_signal(event, NULL, SIGINT, on_signal, NULL);
        if (r < 0) {
                log_error("Failed to handle signals: %s", strerror(-r));
                return EXIT_FAILURE;
        }

        r = setup(&ctx, system_address, session_address);
        if (r <= 0) {
                context_done(&ctx);
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        }
        (void) sd_notify(0, "READY=1\nSTATUS=Watching for blocked filesystems");
        log_info("Watching for blocked filesystems");

        r = sd_event_loop(event);
        if (r < 0)
                log_error("Event loop failed: %s", strerror(-r));
        context_done(&ctx);
        return r < 0 ? EXIT_FAILURE : r;
}

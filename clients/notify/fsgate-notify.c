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
 * One stick is one "item" with at most one notification of its own: the udev report of a
 * device and the failed mount of its type are the same item, and so is a second stick with
 * the same filesystem while the first one's notification is open (Allow decides for the
 * filesystem, so one question is enough). What follows a click (details, outcome) replaces
 * the notification rather than adding another. Once the notification is gone without a
 * decision (expired, dismissed, its server gone), the item is forgotten: the next block is
 * news again.
 *
 * After an Allow for a device, udisks2 mounts it for the person, as a file manager would.
 *
 * Only a block this session's person caused asks anything: a medium that appeared at this
 * session's seat while the session was the active one there. A mount request (Blocked's
 * cause "kernel") may be any local user's, from a user namespace too, and fsgated cannot
 * tell whose: it is shown as information, without Allow or Allow once, whatever the server
 * sends back. Another seat's medium is not shown at all. */
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
#include <systemd/sd-login.h>

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

#define UDISKS_BUS_NAME "org.freedesktop.UDisks2"
#define UDISKS_MANAGER_PATH "/org/freedesktop/UDisks2/Manager"
#define UDISKS_MANAGER_IFACE "org.freedesktop.UDisks2.Manager"
#define UDISKS_FILESYSTEM_IFACE "org.freedesktop.UDisks2.Filesystem"

/* Only memory is at stake: a session sees a handful of filesystems. Beyond this, new
 * ones are logged but not shown; the same bound holds while no notification server runs. */
#define ITEMS_MAX 64
/* Sticks of one filesystem that joined one notification; more are logged only. */
#define DEVICES_MAX 4
/* While no notification server runs, blocks wait for one; one that could not be shown
 * within this long is history, not news, and is dropped ("late"). */
#define LATE_USEC_DEFAULT (60 * 1000000ULL)
/* A person may be typing a password into the polkit agent; same bound as fsgatectl. */
#define SERVICE_CALL_TIMEOUT_USEC (600 * 1000000ULL)
#define NOTIFY_CALL_TIMEOUT_USEC (25 * 1000000ULL)
/* A post the server refused is tried once more, at the next event (another Blocked signal
 * or the notification server appearing); then it is given up. A missing server is not a
 * failure of any post: the posts wait for it (see LATE_USEC_DEFAULT). */
#define POST_ATTEMPTS_MAX 2
/* Untrusted strings (a stick's label) get one line each, not a screenful. */
#define FIELD_MAX 64
#define MOUNT_PATH_MAX 256

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

typedef enum NoteKind {
        NOTE_NONE,
        NOTE_BLOCKED,   /* what was blocked and why, with the actions */
        NOTE_DETAILS,   /* after a click on the notification itself: everything known */
        NOTE_OUTCOME,   /* after fsgated (and udisks2) answered a click */
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
        /* b[0]: the stick the notification names, or the bare type when fsgated did not
         * know the device; b[1..]: sticks of the same filesystem that joined it. */
        NotifyBlocked b[DEVICES_MAX];
        size_t n_b;
        uint64_t since;         /* CLOCK_MONOTONIC of the block the pending notification tells of */
        uint32_t id;            /* the server's id of our notification; 0: none we know of */
        NoteKind pending;       /* still to post */
        NoteKind posting;       /* Notify in flight */
        unsigned attempts;      /* failed posts of pending */
        sd_bus_slot *notify_slot;
        sd_bus_slot *call_slot; /* Allow or Load in flight */
        sd_bus_slot *mount_slot;/* udisks2's ResolveDevice or Mount in flight */
        bool ask;               /* offers Allow and Allow once (NOTIFY_SCOPE_ASK); else information */
        NotifyRequest request;
        NotifyOutcome outcome;
        char *message;          /* the service's error message, for the outcome */
        size_t n_mounts;        /* sticks udisks2 was asked about, b[0..n_mounts-1] */
        char *mount_where[DEVICES_MAX];
        char *mount_error[DEVICES_MAX];
        bool done;              /* allowed or loaded: another Blocked for it is news */
} Item;

struct Context {
        sd_event *event;
        sd_bus *system_bus;
        sd_bus *session_bus;
        Item *items;
        size_t n_items;
        uint64_t late_usec;
        /* What the current notification server can do; asked once per server. */
        bool server_known;
        bool server_markup;
        bool server_actions;
        bool server_missing_logged;
        sd_bus_slot *caps_slot;
};

static void flush(Context *ctx);

static const char *item_key(const Item *i) {
        return *i->b[0].device ? i->b[0].device : i->b[0].type;
}

static void item_forget_mounts(Item *i) {
        for (size_t k = 0; k < DEVICES_MAX; k++) {
                free(i->mount_where[k]);
                free(i->mount_error[k]);
                i->mount_where[k] = i->mount_error[k] = NULL;
        }
        i->n_mounts = 0;
}

static Item *item_free(Item *i) {
        if (!i)
                return NULL;
        sd_bus_slot_unref(i->notify_slot);
        sd_bus_slot_unref(i->call_slot);
        sd_bus_slot_unref(i->mount_slot);
        for (size_t k = 0; k < i->n_b; k++)
                notify_blocked_done(&i->b[k]);
        item_forget_mounts(i);
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

/* Nothing in flight and nothing to post: what the person sees (if anything) is all there is. */
static bool item_idle(const Item *i) {
        return !i->notify_slot && !i->call_slot && !i->mount_slot && i->pending == NOTE_NONE;
}

static bool item_has_device(const Item *i, const char *device) {
        for (size_t k = 0; k < i->n_b; k++)
                if (streq(i->b[k].device, device))
                        return true;
        return false;
}

static Item *item_by_device(Context *ctx, const char *device) {
        for (Item *i = ctx->items; i; i = i->next)
                if (item_has_device(i, device))
                        return i;
        return NULL;
}

static Item *item_by_type(Context *ctx, const char *type) {
        for (Item *i = ctx->items; i; i = i->next)
                if (streq(i->b[0].type, type))
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

static uint64_t now_usec(Context *ctx) {
        uint64_t t = 0;

        (void) sd_event_now(ctx->event, CLOCK_MONOTONIC, &t);
        return t;
}

/* The notification server is not there (or could not be started by the bus): nothing
 * that a retry of the same post could fix. */
static bool error_is_no_server(const sd_bus_error *e) {
        return e && e->name &&
               (streq(e->name, "org.freedesktop.DBus.Error.ServiceUnknown") ||
                streq(e->name, "org.freedesktop.DBus.Error.NameHasNoOwner") ||
                strncmp(e->name, "org.freedesktop.DBus.Error.Spawn.", 33) == 0);
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
                         item_key(i));
                return;
        }
        log_warning("Giving up on the %s notification for %s after %u attempts", note_kind_names[kind], item_key(i),
                    i->attempts);
        i->pending = NOTE_NONE;
        i->attempts = 0;
        /* Nothing shown for it: a later Blocked for the same stick may try again. */
        if (i->id == 0 && item_idle(i))
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
                if (error_is_no_server(e)) {
                        /* It left between GetCapabilities and Notify; its NameOwnerChanged
                         * follows and the post waits for the next server. */
                        log_info("The notification server left; the %s notification for %s waits",
                                 note_kind_names[kind], item_key(i));
                        if (i->pending == NOTE_NONE)
                                i->pending = kind;
                        return 0;
                }
                log_warning("Notification server refused the %s notification for %s: %s", note_kind_names[kind],
                            item_key(i), e && e->message ? e->message : e ? e->name : "unknown error");
                post_failed(i, kind);
                return 0;
        }
        r = sd_bus_message_read(reply, "u", &id);
        if (r < 0) {
                log_warning("Malformed reply to Notify for %s: %s", item_key(i), strerror(-r));
                post_failed(i, kind);
                return 0;
        }
        i->id = id;
        i->attempts = 0;
        log_info("Posted %s notification %" PRIu32 " for %s", note_kind_names[kind], id, item_key(i));
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
        /* The safe choices first: a server that offers the first action on Enter, or lists
         * them in a menu, then offers the one that changes nothing. Allow once (this boot)
         * before Allow (from now on): the smaller change first. */
        const char *actions_blocked[] = { "default", notify_label_details(), "dismiss", notify_label_dismiss(),
                                          "allow-once", notify_label_allow_once(), "allow", notify_label_allow(),
                                          NULL };
        const char *actions_retry[] = { "dismiss", notify_label_dismiss(), "allow-once", notify_label_allow_once(),
                                        "allow", notify_label_allow(), NULL };
        /* Information: nothing that changes anything, not even a way to ask for it. */
        const char *actions_info[] = { "default", notify_label_details(), NULL };
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_free_ char *summary = NULL, *body = NULL, *escaped = NULL;
        NotifyMount mounts[DEVICES_MAX] = {};
        Context *ctx = i->ctx;
        const char **actions = NULL;
        NoteKind kind = i->pending;
        int r;

        switch (kind) {
        case NOTE_BLOCKED:
                r = notify_text_blocked(&i->b[0], i->ask, ctx->server_actions, &summary, &body);
                actions = i->ask ? actions_blocked : actions_info;
                break;
        case NOTE_DETAILS:
                r = notify_text_details(i->b, i->n_b, i->ask, &summary, &body);
                actions = i->ask ? actions_retry : NULL;
                break;
        case NOTE_OUTCOME:
                for (size_t k = 0; k < i->n_mounts; k++)
                        mounts[k] = (NotifyMount) { .where = i->mount_where[k], .error = i->mount_error[k] };
                r = notify_text_outcome(i->b, i->request, i->outcome, i->message, mounts, i->n_mounts, &summary,
                                        &body);
                /* Dismissing the password dialog by mistake should not cost the actions. Not
                 * every agent tells polkit that its dialog was closed (lxpolkit 0.5 answers a
                 * closed dialog as a finished authentication: no polkit.dismissed, so fsgated
                 * sees a plain refusal), so a refusal keeps them too: another try only asks
                 * for the password again. */
                if (i->outcome == NOTIFY_OUTCOME_CANCELLED || i->outcome == NOTIFY_OUTCOME_REFUSED)
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
        /* A notification that asks for a decision stays until the person decides or
         * dismisses it: expired unseen, the question would be lost. Information expires as
         * the server likes. */
        if (r >= 0)
                r = sd_bus_message_append(m, "i", (int32_t) (i->ask && actions && ctx->server_actions ? 0 : -1));
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
                if (error_is_no_server(e)) {
                        /* Not a failure of any post: they wait for a server (NameOwnerChanged),
                         * and are dropped once late. Said once, not at every block. */
                        if (!ctx->server_missing_logged)
                                log_info("No notification server in this session; waiting for one");
                        ctx->server_missing_logged = true;
                        return 0;
                }
                log_warning("The notification server did not say what it can do (%s); assuming plain text with "
                            "actions", e && e->message ? e->message : e ? e->name : "unknown error");
                r = -EBADMSG;
        } else {
                r = sd_bus_message_read_strv(reply, &caps);
                if (r < 0)
                        log_warning("Malformed reply to GetCapabilities (%s); assuming plain text with actions",
                                    strerror(-r));
        }
        ctx->server_known = true;
        ctx->server_missing_logged = false;
        ctx->server_markup = r >= 0 && strv_contains(caps, "body-markup");
        /* Servers without actions cannot offer the choices; the body then names the command. */
        ctx->server_actions = r < 0 || strv_contains(caps, "actions");
        log_info("Notification server: %s, %s", ctx->server_actions ? "actions" : "no actions",
                 ctx->server_markup ? "body markup" : "plain text");
        flush(ctx);
        return 0;
}

/* A block that waited longer than late_usec for a server to show it is history, not news:
 * the person has long stopped waiting for that stick. */
static void drop_late(Context *ctx) {
        uint64_t now = now_usec(ctx);

        for (Item *i = ctx->items, *next; i; i = next) {
                next = i->next;
                if (i->pending != NOTE_BLOCKED || i->id != 0 || i->notify_slot || i->call_slot || i->mount_slot ||
                    now < i->since + ctx->late_usec)
                        continue;
                log_info("Not showing the block of %s: %" PRIu64 " s old, too late to be news", item_key(i),
                         (now - i->since) / 1000000);
                item_remove(i);
        }
}

/* Posts whatever is pending; called at every event, which is what "retry at the next
 * event" means for an earlier failure. */
static void flush(Context *ctx) {
        int r;

        drop_late(ctx);
        if (!ctx->server_known) {
                bool any = false;
                for (Item *i = ctx->items; i; i = i->next)
                        any = any || i->pending != NOTE_NONE;
                if (!any || ctx->caps_slot)
                        return;
                /* Also what starts a D-Bus activatable server. */
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
                NoteKind kind = i->pending;
                r = post(i);
                if (r < 0) {
                        log_warning("Failed to post the %s notification for %s: %s", note_kind_names[kind],
                                    item_key(i), strerror(-r));
                        post_failed(i, kind);
                }
        }
}

/* ---- the system bus: fsgated, udisks2 --------------------------------------------------- */

static void mount_next(Item *i);

static void mount_done(Item *i, char *where, char *error) {
        size_t k = i->n_mounts++;

        i->mount_where[k] = where;
        i->mount_error[k] = error;
        mount_next(i);
}

/* Every stick not asked about yet is "not tried": the outcome tells the person to mount
 * it again. */
static void mount_give_up(Item *i, const char *why) {
        log_info("Not mounting %s: %s", item_key(i), why);
        while (i->n_mounts < i->n_b)
                i->n_mounts++;
        mount_next(i);
}

static char *error_text(const sd_bus_error *e) {
        return notify_clean(e && e->message ? e->message : e && e->name ? e->name : "unknown error", 256);
}

static int on_mount_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Item *i = userdata;
        const NotifyBlocked *b = &i->b[i->n_mounts];
        const char *where;

        i->mount_slot = sd_bus_slot_unref(i->mount_slot);
        if (sd_bus_message_is_method_error(reply, NULL)) {
                const sd_bus_error *e = sd_bus_message_get_error(reply);
                log_info("udisks2 did not mount %s: %s", b->device, e && e->message ? e->message : "unknown error");
                mount_done(i, NULL, error_text(e));
                return 0;
        }
        if (sd_bus_message_read(reply, "s", &where) < 0 || !*where) {
                log_warning("Malformed reply to Mount for %s", b->device);
                mount_done(i, NULL, notify_clean("malformed reply from udisks2", 64));
                return 0;
        }
        log_info("udisks2 mounted %s at %s", b->device, where);
        mount_done(i, notify_clean(where, MOUNT_PATH_MAX), NULL);
        return 0;
}

static int on_resolve_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        Item *i = userdata;
        const NotifyBlocked *b = &i->b[i->n_mounts];
        Context *ctx = i->ctx;
        const char *path = NULL;
        int r;

        i->mount_slot = sd_bus_slot_unref(i->mount_slot);
        if (sd_bus_message_is_method_error(reply, NULL)) {
                const sd_bus_error *e = sd_bus_message_get_error(reply);
                if (error_is_no_server(e))
                        mount_give_up(i, "udisks2 is not available");
                else {
                        log_info("udisks2 could not find %s: %s", b->device, e && e->message ? e->message : "");
                        mount_done(i, NULL, error_text(e));
                }
                return 0;
        }
        r = sd_bus_message_enter_container(reply, 'a', "o");
        if (r > 0)
                r = sd_bus_message_read(reply, "o", &path);
        if (r <= 0 || !path) {
                log_info("udisks2 knows no block device %s", b->device);
                /* TRANSLATORS: udisks2 (the service that mounts drives) has no such device. */
                mount_done(i, NULL, strdup(_("udisks2 does not know this drive")));
                return 0;
        }
        r = sd_bus_message_new_method_call(ctx->system_bus, &m, UDISKS_BUS_NAME, path, UDISKS_FILESYSTEM_IFACE,
                                           "Mount");
        if (r >= 0)
                r = sd_bus_message_append(m, "a{sv}", 0);
        /* As a file manager does: udisks2's polkit rules decide, and may ask. */
        if (r >= 0)
                r = sd_bus_message_set_allow_interactive_authorization(m, 1);
        if (r >= 0)
                r = sd_bus_call_async(ctx->system_bus, &i->mount_slot, m, on_mount_reply, i, SERVICE_CALL_TIMEOUT_USEC);
        if (r < 0) {
                log_warning("Failed to ask udisks2 to mount %s: %s", b->device, strerror(-r));
                mount_done(i, NULL, strdup(strerror(-r)));
                return 0;
        }
        log_info("Asking udisks2 to mount %s (%s)", b->device, path);
        return 0;
}

/* Mounts b[n_mounts], then the next one; the outcome once all were asked about. */
static void mount_next(Item *i) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        Context *ctx = i->ctx;
        const NotifyBlocked *b;
        int r;

        if (i->n_mounts >= i->n_b) {
                i->pending = NOTE_OUTCOME;
                i->attempts = 0;
                flush(ctx);
                return;
        }
        b = &i->b[i->n_mounts];
        r = sd_bus_message_new_method_call(ctx->system_bus, &m, UDISKS_BUS_NAME, UDISKS_MANAGER_PATH,
                                           UDISKS_MANAGER_IFACE, "ResolveDevice");
        if (r >= 0)
                r = sd_bus_message_append(m, "a{sv}a{sv}", 1, "path", "s", b->device, 0);
        if (r >= 0)
                r = sd_bus_call_async(ctx->system_bus, &i->mount_slot, m, on_resolve_reply, i,
                                      NOTIFY_CALL_TIMEOUT_USEC);
        if (r < 0) {
                log_warning("Failed to ask udisks2 about %s: %s", b->device, strerror(-r));
                mount_done(i, NULL, strdup(strerror(-r)));
        }
}

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
                log_info("%s(%s) for %s: %s (%s)", method, i->b[0].module, item_key(i), name ?: "error", msg ?: "");
        } else {
                i->outcome = NOTIFY_OUTCOME_ALLOWED;
                i->done = true;
                log_info("%s(%s) for %s: done", method, i->b[0].module, item_key(i));
                /* The point of the click was the stick: mount it, then say where. */
                item_forget_mounts(i);
                if (*i->b[0].device) {
                        mount_next(i);
                        return 0;
                }
        }
        i->pending = NOTE_OUTCOME;
        i->attempts = 0;
        flush(i->ctx);
        return 0;
}

static void start_call(Item *i, NotifyRequest req) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        Context *ctx = i->ctx;
        const char *method = req == NOTIFY_REQUEST_LOAD ? "Load" : "Allow";
        int r;

        if (i->call_slot || i->mount_slot) {
                log_info("Still waiting for the answer about %s; ignoring the click", item_key(i));
                return;
        }
        r = sd_bus_message_new_method_call(ctx->system_bus, &m, FSGATE_BUS_NAME, FSGATE_BUS_PATH, FSGATE_BUS_IFACE,
                                           method);
        if (r >= 0)
                r = req == NOTIFY_REQUEST_LOAD ? sd_bus_message_append(m, "s", i->b[0].module)
                                               : sd_bus_message_append(m, "st", i->b[0].module, (uint64_t) 0);
        /* The point of the click: the session's polkit agent may ask for a password. */
        if (r >= 0)
                r = sd_bus_message_set_allow_interactive_authorization(m, 1);
        if (r >= 0)
                r = sd_bus_call_async(ctx->system_bus, &i->call_slot, m, on_call_reply, i, SERVICE_CALL_TIMEOUT_USEC);
        i->request = req;
        if (r < 0) {
                log_warning("Failed to call %s(%s): %s", method, i->b[0].module, strerror(-r));
                free(i->message);
                i->message = strdup(strerror(-r));
                i->outcome = NOTIFY_OUTCOME_FAILED;
                i->pending = NOTE_OUTCOME;
                i->attempts = 0;
                flush(ctx);
                return;
        }
        log_info("Calling %s(%s) for %s, interactive authorization allowed", method, i->b[0].module, item_key(i));
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
                { "cause",  offsetof(NotifyBlocked, cause)  },
                { "seat",   offsetof(NotifyBlocked, seat)   },
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
        char **fields[] = { &b->source, &b->origin, &b->label, &b->uuid, &b->vendor, &b->model, &b->cause, &b->seat };

        for (size_t k = 0; k < ELEMENTSOF(fields); k++)
                if (!*fields[k] && !(*fields[k] = strdup("")))
                        return -ENOMEM;
        return 0;
}

/* The seat whose person this session is now, or NULL. A user unit is no session's
 * process: then the user's display session, the one logind counts a user unit to (polkit
 * does the same). A session that is not the active one on its seat (a user switched away
 * from) is not in front of anyone: NULL too. FSGATE_NOTIFY_SEAT names the seat instead
 * (tests: no logind there); "" for none. */
static char *session_seat(void) {
        _cleanup_free_ char *session = NULL;
        const char *override = secure_getenv("FSGATE_NOTIFY_SEAT");
        char *seat = NULL;

        if (override)
                return *override ? strdup(override) : NULL;
        if (sd_pid_get_session(0, &session) < 0 && sd_uid_get_display(getuid(), &session) < 0)
                return NULL;
        if (sd_session_is_active(session) <= 0 || sd_session_get_seat(session, &seat) < 0)
                return NULL;
        return seat;
}

static const char *scope_phrase(NotifyScope scope) {
        switch (scope) {
        case NOTIFY_SCOPE_ASK: return "at this session's seat: asking";
        case NOTIFY_SCOPE_NONE: return "at another seat: not shown";
        default: return "cause unknown to fsgate: information only";
        }
}

static Item *item_new(Context *ctx, NotifyBlocked *b, bool ask) {
        Item *i;

        if (ctx->n_items >= ITEMS_MAX) {
                log_warning("Too many blocked filesystems in this session; not showing %s", *b->device ? b->device : b->type);
                return NULL;
        }
        i = calloc(1, sizeof(Item));
        if (!i) {
                log_error("Out of memory");
                return NULL;
        }
        i->ctx = ctx;
        i->ask = ask;
        i->b[0] = *b;
        *b = (NotifyBlocked) {};
        i->n_b = 1;
        i->next = ctx->items;
        ctx->items = i;
        ctx->n_items++;
        return i;
}

/* Blocked again after an Allow (denied meanwhile): news, in the same slot. */
static void item_reset(Item *i, NotifyBlocked *b, bool ask) {
        for (size_t k = 0; k < i->n_b; k++)
                notify_blocked_done(&i->b[k]);
        item_forget_mounts(i);
        i->ask = ask;
        i->b[0] = *b;
        *b = (NotifyBlocked) {};
        i->n_b = 1;
        i->done = false;
}

static void item_show(Item *i, uint64_t now) {
        i->pending = NOTE_BLOCKED;
        i->attempts = 0;
        i->since = now;
}

static int on_blocked(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        _cleanup_(notify_blocked_done) NotifyBlocked b = {};
        _cleanup_free_ char *seat = NULL;
        Context *ctx = userdata;
        const char *type, *module, *device;
        uint64_t now = now_usec(ctx);
        NotifyScope scope;
        bool ask;
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

        /* Asked at each block: the session may have become the active one, or stopped being it. */
        seat = session_seat();
        scope = notify_scope(&b, seat);
        ask = scope == NOTIFY_SCOPE_ASK;
        log_info("Blocked: filesystem %s (module %s)%s%s%s%s, %s", b.type, b.module, *b.device ? " on " : "", b.device,
                 *b.seat ? " at " : "", b.seat, scope_phrase(scope));
        if (scope == NOTIFY_SCOPE_NONE)
                return 0;

        /* The same stick (another type probed on it, or its mount failing): one item. */
        i = *b.device ? item_by_device(ctx, b.device) : NULL;
        /* Otherwise the same filesystem: a failed mount of the stick just reported, or a
         * second stick while the first one's question is open. */
        if (!i)
                i = item_by_type(ctx, b.type);

        if (!i) {
                i = item_new(ctx, &b, ask);
                if (i)
                        item_show(i, now);
        } else if (i->done) {
                if (i->call_slot || i->mount_slot || i->notify_slot) {
                        log_info("Already busy with %s; not again", item_key(i));
                        return 0;
                }
                item_reset(i, &b, ask);
                item_show(i, now);
        } else if (!*b.device || item_has_device(i, b.device)) {
                /* One notification per stick: the first one already says it all. */
                log_info("Already notified about %s", item_key(i));
                return 0;
        } else if (!*i->b[0].device) {
                /* The failed mount came first; the stick's report names what it was. The
                 * notification changes in place, unless a click is already on its way. */
                log_info("The blocked mount of %s was %s", b.type, b.device);
                notify_blocked_done(&i->b[0]);
                /* The medium at this seat is what the person did; the information becomes
                 * the question. */
                i->ask = ask;
                i->b[0] = b;
                b = (NotifyBlocked) {};
                if (!i->call_slot && (i->id != 0 || i->pending == NOTE_BLOCKED))
                        item_show(i, now);
        } else if (i->n_b < DEVICES_MAX && !i->mount_slot && i->ask == ask) {
                /* A second stick, same filesystem: the open question covers it (Allow is per
                 * filesystem), and an Allow mounts it too. No second notification. */
                log_info("Already notified about %s; %s joins it", item_key(i), b.device);
                i->b[i->n_b++] = b;
                b = (NotifyBlocked) {};
                return 0;
        } else {
                log_info("Already notified about %s; not showing %s", item_key(i), b.device);
                return 0;
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
        log_info("Action \"%s\" on notification %" PRIu32 " for %s", action, id, item_key(i));
        /* We offered none on information; a server (or anyone on the session bus) that
         * invokes one anyway does not make a stranger's block a reason to allow. */
        if (!i->ask && (streq(action, "allow") || streq(action, "allow-once"))) {
                log_warning("Ignoring \"%s\" on %s: not offered (nothing says who caused this block)", action,
                            item_key(i));
                return 0;
        }
        if (streq(action, "allow"))
                start_call(i, NOTIFY_REQUEST_ALLOW);
        else if (streq(action, "allow-once"))
                start_call(i, NOTIFY_REQUEST_LOAD);
        else if (streq(action, "dismiss")) {
                /* "Not now": the same as closing it; the next block asks again. */
                if (item_idle(i)) {
                        log_info("Not now for %s; forgetting it", item_key(i));
                        item_remove(i);
                }
        } else if (streq(action, "default")) {
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
        if (!i)
                return 0;
        /* The id may be reused by the server; a follow-up is a new notification. */
        i->id = 0;
        /* Expired or dismissed with nothing under way: no decision was made, so the next
         * block of this stick or filesystem must be shown again. A click on its way (or its
         * outcome still to post) keeps the item. */
        if (item_idle(i)) {
                log_info("Notification %" PRIu32 " for %s closed (reason %" PRIu32 "); forgetting it", id,
                         item_key(i), reason);
                item_remove(i);
        } else
                log_debug("Notification %" PRIu32 " for %s closed (reason %" PRIu32 ")", id, item_key(i), reason);
        return 0;
}

static int on_server_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Context *ctx = userdata;
        const char *name, *old_owner, *new_owner;

        if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0 || !streq(name, NOTIFY_BUS_NAME))
                return 0;
        log_info("Notification server %s%s%s", *old_owner ? "left" : "", *old_owner && *new_owner ? ", " : "",
                 *new_owner ? "appeared" : "");
        /* Its notifications died with it, and a new server numbers its own from scratch.
         * Those that asked a question unanswered are forgotten, as if closed. */
        for (Item *i = ctx->items, *next; i; i = next) {
                next = i->next;
                if (i->id != 0 && item_idle(i))
                        item_remove(i);
                else
                        i->id = 0;
        }
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
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
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
               "     --session-bus-address=ADDRESS Post notifications on this bus instead of the session bus\n"
               "     --late-after=SECONDS         While no notification server runs, drop blocks older than\n"
               "                                  this instead of showing them late (default 60)\n\n"
               "Set SYSTEMD_LOG_LEVEL=debug for more messages. See fsgate-notify(1).\n");
}

int main(int argc, char *argv[]) {
        enum { ARG_VERSION = 0x100, ARG_SYSTEM_ADDRESS, ARG_SESSION_ADDRESS, ARG_LATE_AFTER };
        static const struct option options[] = {
                { "help",                no_argument,       NULL, 'h'                 },
                { "version",             no_argument,       NULL, ARG_VERSION         },
                { "system-bus-address",  required_argument, NULL, ARG_SYSTEM_ADDRESS  },
                { "session-bus-address", required_argument, NULL, ARG_SESSION_ADDRESS },
                { "late-after",          required_argument, NULL, ARG_LATE_AFTER      },
                {}
        };
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        const char *system_address = NULL, *session_address = NULL, *level;
        Context ctx = { .late_usec = LATE_USEC_DEFAULT };
        unsigned long late;
        char *end;
        sigset_t ss;
        int c, r;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h': help(); return 0;
                case ARG_VERSION: printf("fsgate-notify %s\n", FSGATE_VERSION); return 0;
                case ARG_SYSTEM_ADDRESS: system_address = optarg; break;
                case ARG_SESSION_ADDRESS: session_address = optarg; break;
                case ARG_LATE_AFTER:
                        errno = 0;
                        late = strtoul(optarg, &end, 10);
                        if (errno || end == optarg || *end || *optarg == '-' || late > 86400) {
                                fprintf(stderr, "fsgate-notify: --late-after wants seconds (0..86400)\n");
                                return 2;
                        }
                        ctx.late_usec = late * 1000000ULL;
                        break;
                default: return 2;
                }
        if (optind < argc) {
                fprintf(stderr, "fsgate-notify takes no arguments\n");
                return 2;
        }
        /* The texts follow the session's language; the log stays English for whoever reads it. */
        fsg_i18n_init();

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

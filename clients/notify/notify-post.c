/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The notifications: posted to org.freedesktop.Notifications on the session bus, one per
 * item, replaced in place by what follows a click; the server's answers and signals (an
 * action, a closed notification, the server coming and going). */
#include <inttypes.h>

#include "notify.h"
#include "strv.h"

#define NOTIFY_BUS_NAME "org.freedesktop.Notifications"
#define NOTIFY_BUS_PATH "/org/freedesktop/Notifications"
#define NOTIFY_BUS_IFACE "org.freedesktop.Notifications"

/* A post the server refused is tried once more, at the next event (another Blocked signal
 * or the notification server appearing); then it is given up. A missing server is not a
 * failure of any post: the posts wait for it, until they are late (Context.late_usec). */
#define POST_ATTEMPTS_MAX 2

static const char * const note_kind_names[] = {
        [NOTE_NONE] = "none",
        [NOTE_BLOCKED] = "blocked",
        [NOTE_CHOICES] = "choices",
        [NOTE_PROGRESS] = "progress",
        [NOTE_OUTCOME] = "outcome",
};

/* The service called (the notification server, udisks2) is not there or could not be
 * started by the bus: nothing that a retry of the same call could fix. */
bool bus_error_is_no_server(const sd_bus_error *e) {
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
                if (bus_error_is_no_server(e)) {
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
        i->posted = context_now(i->ctx);
        i->shown = kind;
        i->attempts = 0;
        log_info("Posted %s notification %" PRIu32 " for %s", note_kind_names[kind], id, item_key(i));
        /* A click's answer may have arrived while this was in flight. */
        if (i->pending != NOTE_NONE)
                posts_flush(i->ctx);
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

/* The Notify call; replaces_id: the item's notification, if still shown, changes in place. */
static int post_send(Item *i, const char *summary, const char *body, const char **actions) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        Context *ctx = i->ctx;
        int r;

        r = sd_bus_message_new_method_call(ctx->session_bus, &m, NOTIFY_BUS_NAME, NOTIFY_BUS_PATH, NOTIFY_BUS_IFACE,
                                           "Notify");
        if (r >= 0)
                r = sd_bus_message_append(m, "susss", "fsgate", i->id, "drive-removable-media", summary, body);
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
        return r;
}

static int post(Item *i) {
        const char *actions[NOTIFY_ACTIONS_MAX];
        _cleanup_free_ char *summary = NULL, *body = NULL, *escaped = NULL;
        NotifyMount mounts[DEVICES_MAX] = {};
        Context *ctx = i->ctx;
        NoteKind kind = i->pending;
        int r;

        switch (kind) {
        case NOTE_BLOCKED:
                /* Decided now, and kept: a click on it is checked against what was offered. */
                i->open_safely = i->ask && item_can_open_safely(i);
                r = notify_text_blocked(&i->b[0], i->ask, ctx->server_actions, i->open_safely, &summary, &body);
                break;
        case NOTE_CHOICES:
                r = notify_text_choices(i->b, i->n_b, i->ask, i->open_safely, &summary, &body);
                break;
        case NOTE_PROGRESS:
                r = notify_text_progress(&i->b[0], &summary, &body);
                break;
        case NOTE_OUTCOME:
                for (size_t k = 0; k < i->n_mounts; k++)
                        mounts[k] = (NotifyMount) { .where = i->mount_where[k], .error = i->mount_error[k] };
                r = notify_text_outcome(i->b, i->request, i->outcome, i->message, mounts, i->n_mounts, &summary,
                                        &body);
                break;
        default:
                return 0;
        }
        if (r < 0)
                return r;
        notify_actions(kind, i->ask, *i->b[0].device, i->open_safely, i->request, i->outcome, actions);
        /* Our texts carry no markup, but a label may hold "<" or "&". */
        if (ctx->server_markup) {
                escaped = notify_markup_escape(body);
                if (!escaped)
                        return -ENOMEM;
        }

        r = post_send(i, summary, escaped ?: body, actions[0] ? actions : NULL);
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
                if (bus_error_is_no_server(e)) {
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
        posts_flush(ctx);
        return 0;
}

/* A block that waited longer than late_usec for a server to show it is history, not news:
 * the person has long stopped waiting for that stick. */
static void drop_late(Context *ctx) {
        uint64_t now = context_now(ctx);

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

void post_queue(Item *i, NoteKind kind) {
        i->pending = kind;
        i->attempts = 0;
        posts_flush(i->ctx);
}

static int on_flush_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        posts_flush(userdata);
        return 0;
}

/* The flush timer at due, unless it goes off sooner already. */
static void flush_at(Context *ctx, uint64_t due) {
        uint64_t armed;
        int enabled = SD_EVENT_OFF, r;

        if (ctx->flush_timer) {
                (void) sd_event_source_get_enabled(ctx->flush_timer, &enabled);
                if (enabled != SD_EVENT_OFF && sd_event_source_get_time(ctx->flush_timer, &armed) >= 0 && armed <= due)
                        return;
                r = sd_event_source_set_time(ctx->flush_timer, due);
                if (r >= 0)
                        r = sd_event_source_set_enabled(ctx->flush_timer, SD_EVENT_ONESHOT);
        } else
                r = sd_event_add_time(ctx->event, &ctx->flush_timer, CLOCK_MONOTONIC, due, 0, on_flush_timer, ctx);
        if (r < 0)
                /* Then the next event posts it. */
                log_warning("Failed to arm the timer of a notification's follow-up: %s", strerror(-r));
}

/* Posts whatever is pending; called at every event, which is what "retry at the next
 * event" means for an earlier failure. What replaces a progress note posted less than
 * NOTIFY_REPLACE_AFTER_USEC ago waits for that (the flush timer). */
void posts_flush(Context *ctx) {
        uint64_t now;
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
        now = context_now(ctx);
        for (Item *i = ctx->items, *next; i; i = next) {
                next = i->next;
                if (i->pending == NOTE_NONE || i->notify_slot)
                        continue;
                if (i->id != 0 && i->shown == NOTE_PROGRESS && now < i->posted + NOTIFY_REPLACE_AFTER_USEC) {
                        flush_at(ctx, i->posted + NOTIFY_REPLACE_AFTER_USEC);
                        continue;
                }
                NoteKind kind = i->pending;
                r = post(i);
                if (r < 0) {
                        log_warning("Failed to post the %s notification for %s: %s", note_kind_names[kind],
                                    item_key(i), strerror(-r));
                        post_failed(i, kind);
                }
        }
}

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
        if (!i->ask && (streq(action, "allow") || streq(action, "allow-once") || streq(action, "open-read-only") ||
                        streq(action, "open-safely"))) {
                log_warning("Ignoring \"%s\" on %s: not offered (nothing says who caused this block)", action,
                            item_key(i));
                return 0;
        }
        if (streq(action, "open-safely") && i->open_safely)
                ctx->request(i, NOTIFY_REQUEST_OPEN_SAFELY);
        else if (streq(action, "open-read-only") && *i->b[0].device)
                ctx->request(i, NOTIFY_REQUEST_OPEN_READ_ONLY);
        else if (streq(action, "allow"))
                ctx->request(i, NOTIFY_REQUEST_ALLOW);
        else if (streq(action, "allow-once"))
                ctx->request(i, NOTIFY_REQUEST_LOAD);
        else if (streq(action, "default") || streq(action, "choices")) {
                /* Every choice, in place: a notification of its own rather than a window or
                 * Cockpit's page (README, "fsgate-notify"): every server that has actions shows
                 * it, its clicks take the same way through the session's polkit agent, and it
                 * names the commands for a terminal. */
                if (i->pending == NOTE_NONE && !i->notify_slot && !i->call_slot && !i->mount_slot)
                        post_queue(i, NOTE_CHOICES);
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
                posts_flush(ctx);
        return 0;
}

int posts_watch_server(Context *ctx) {
        int r;

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
        return r;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fsgated's Blocked signal: believed only from fsgated, read, judged for this session (only
 * a block this session's person caused asks anything: a medium that appeared at this
 * session's seat while the session was the active one there), and made news or part of an
 * item already shown. */
#define _GNU_SOURCE
#include <stddef.h>
#include <systemd/sd-login.h>

#include "fsgate-api.h"
#include "name.h"
#include "notify.h"

/* Untrusted strings (a stick's label) get one line each, not a screenful. */
#define FIELD_MAX 64

/* Anyone may send us Blocked signals by the thousand: a few lines a minute say so. */
static const RateLimit forged_log_limit = { .interval = 60 * 1000000ULL, .burst = 3 };

#define DBUS_NAME "org.freedesktop.DBus"
#define DBUS_PATH "/org/freedesktop/DBus"

/* One detail into its field of the record (core/block-fields.c): a string cleaned, as any
 * untrusted one; the deciding file may be a long path. */
static int read_detail(sd_bus_message *m, const FsgBlockField *f, NotifyBlocked *b) {
        void *p = fsg_block_field_ptr(b, f);
        int r;

        if (f->type == 's') {
                const char *v;
                r = sd_bus_message_read(m, "v", "s", &v);
                if (r < 0)
                        return r;
                free(*(char **) p);
                *(char **) p = notify_clean(v, streq(f->key, "source") ? 4096 : FIELD_MAX);
                return *(char **) p ? 0 : -ENOMEM;
        }
        if (f->type == 't')
                return sd_bus_message_read(m, "v", "t", (uint64_t *) p);
        int v;
        r = sd_bus_message_read(m, "v", "b", &v);
        if (r >= 0)
                *(bool *) p = v;
        return r;
}

/* Reads Blocked's details dictionary through the table; unknown keys and unexpected types are
 * skipped, so that fsgated may add to it. */
static int read_details(sd_bus_message *m, NotifyBlocked *b) {
        int r;

        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        if (r <= 0)
                return r < 0 ? r : -EBADMSG;
        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                const FsgBlockField *f;
                const char *key, *contents = NULL;

                r = sd_bus_message_read(m, "s", &key);
                if (r < 0)
                        return r;
                r = sd_bus_message_peek_type(m, NULL, &contents);
                if (r < 0)
                        return r;
                f = fsg_block_field_by_key(key);
                if (f && contents && contents[0] == f->type && !contents[1])
                        r = read_detail(m, f, b);
                else
                        r = sd_bus_message_skip(m, "v");
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
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

/* Reads a Blocked signal into b (cleaned, every string set); < 0 (logged) to ignore it.
 * The signal is fsgated's (blocked_from_fsgated), its contents are not to be trusted any
 * further than that. */
static int blocked_read(sd_bus_message *m, NotifyBlocked *b) {
        const char *type, *module, *device;
        int r;

        r = sd_bus_message_read(m, "sss", &type, &module, &device);
        if (r < 0) {
                log_warning("Ignoring a malformed Blocked signal: %s", strerror(-r));
                return r;
        }
        if (!fsg_name_is_valid(type) || !fsg_name_is_valid(module) ||
            (*device && (strncmp(device, "/dev/", 5) != 0 || strlen(device) > 256))) {
                log_warning("Ignoring a Blocked signal with implausible arguments");
                return -EINVAL;
        }
        b->type = strdup(type);
        b->module = strdup(module);
        b->device = notify_clean(device, 256);
        if (!b->type || !b->module || !b->device)
                return log_error("Out of memory"), -ENOMEM;
        /* What was read before a malformed entry is still good: show what we have. */
        r = read_details(m, b);
        if (r < 0)
                log_warning("Ignoring (part of) the details of a Blocked signal for %s: %s", type, strerror(-r));
        if (fsg_block_report_fill_empty(b) < 0)
                return log_error("Out of memory"), -ENOMEM;
        return 0;
}

/* Asked at each block: the session may have become the active one, or stopped being it. */
static NotifyScope blocked_scope(const NotifyBlocked *b) {
        _cleanup_free_ char *seat = session_seat();
        NotifyScope scope = notify_scope(b, seat);

        log_info("Blocked: filesystem %s (module %s)%s%s%s%s, %s", b->type, b->module, *b->device ? " on " : "",
                 b->device, *b->seat ? " at " : "", b->seat, scope_phrase(scope));
        return scope;
}

/* The item a block belongs to; NULL: it is news. */
static Item *blocked_item(Context *ctx, const NotifyBlocked *b) {
        /* The same stick (another type probed on it, or its mount failing): one item. */
        Item *i = *b->device ? item_by_device(ctx, b->device) : NULL;

        /* Otherwise the same filesystem: a failed mount of the stick just reported, or a
         * second stick while the first one's question is open. */
        return i ?: item_by_type(ctx, b->type);
}

/* A block of what item i is already about. Takes b over where it becomes part of i (b is
 * then left empty); true when i has something new to post. */
static bool blocked_merge(Item *i, NotifyBlocked *b, bool ask, uint64_t now) {
        if (i->done) {
                if (i->call_slot || i->mount_slot || i->notify_slot) {
                        log_info("Already busy with %s; not again", item_key(i));
                        return false;
                }
                item_reset(i, b, ask);
                item_show(i, now);
                return true;
        }
        if (!*b->device || item_has_device(i, b->device)) {
                /* One notification per stick: the first one already says it all. */
                log_info("Already notified about %s", item_key(i));
                return false;
        }
        if (!*i->b[0].device) {
                /* The failed mount came first; the stick's report names what it was. The
                 * notification changes in place, unless a click is already on its way. */
                log_info("The blocked mount of %s was %s", b->type, b->device);
                notify_blocked_done(&i->b[0]);
                /* The medium at this seat is what the person did; the information becomes
                 * the question. */
                i->ask = ask;
                i->b[0] = *b;
                *b = (NotifyBlocked) {};
                if (!i->call_slot && (i->id != 0 || i->pending == NOTE_BLOCKED))
                        item_show(i, now);
                return true;
        }
        /* Not while Open read-only grants (or Open safely opens) the sticks the person chose:
         * one that joined now would be granted and mounted without being chosen. */
        if (i->n_b < DEVICES_MAX && !i->mount_slot && i->ask == ask &&
            !(i->call_slot && (i->request == NOTIFY_REQUEST_OPEN_READ_ONLY || i->request == NOTIFY_REQUEST_OPEN_SAFELY))) {
                /* A second stick, same filesystem: the open question covers it (Allow is per
                 * filesystem), and an Allow mounts it too. No second notification. */
                log_info("Already notified about %s; %s joins it", item_key(i), b->device);
                i->b[i->n_b++] = *b;
                *b = (NotifyBlocked) {};
                return false;
        }
        log_info("Already notified about %s; not showing %s", item_key(i), b->device);
        return false;
}

/* ---- who sends Blocked --------------------------------------------------------------------
 *
 * The match names fsgated's bus name as the sender, but dbus-daemon applies match rules to
 * broadcasts only: a signal addressed to our own connection is delivered whatever they say,
 * and sd-bus cannot check a well-known sender by itself (a message carries its sender's
 * unique name), as GLib could not before CVE-2024-34397. So any local account could make us
 * ask for an administrator's password about a drive it made up, or add one to a real
 * stick's question, whose one Open read-only then granted for it too. We therefore follow
 * the owner of fsgated's name ourselves, as GLib now does. */

/* The name's owner is now OWNER ("" or NULL: none). The one before is kept: see
 * blocked_from_fsgated(). */
static void owner_changed(Context *ctx, const char *owner) {
        char *copy = NULL;

        if (streq_ptr(ctx->fsgated_owner, owner && *owner ? owner : NULL))
                return;
        if (owner && *owner && !(copy = strdup(owner)))
                /* Failing closed: Blocked is not believed until the next change. */
                log_error("Out of memory");
        if (ctx->fsgated_owner) {
                free(ctx->fsgated_former);
                ctx->fsgated_former = ctx->fsgated_owner;
        }
        ctx->fsgated_owner = copy;
        log_debug("%s is owned by %s", FSGATE_BUS_NAME, copy ?: "nobody");
}

static int on_name_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Context *ctx = userdata;
        const char *name, *old_owner, *new_owner;

        /* The bus's own: nobody may own its name, and the bus sets every sender. (sd-bus's
         * match compares this sender too; said here, where it matters: a NameOwnerChanged
         * another connection addresses to us passes the bus.) */
        if (!streq_ptr(sd_bus_message_get_sender(m), DBUS_NAME) ||
            sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0 || !streq(name, FSGATE_BUS_NAME))
                return 0;
        owner_changed(ctx, new_owner);
        return 0;
}

static int on_get_name_owner(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Context *ctx = userdata;
        const char *owner = NULL;

        /* An error is NameHasNoOwner: fsgated is not running (it is activated by the first
         * call, whose NameOwnerChanged tells us then). */
        if (!sd_bus_message_is_method_error(reply, NULL) && sd_bus_message_read(reply, "s", &owner) < 0)
                owner = NULL;
        owner_changed(ctx, owner);
        return 0;
}

/* Whether m is fsgated's own broadcast: it never sends Blocked to one connection, and
 * sends it from the connection that owns its name, or owned it last: at its idle exit
 * fsgated releases the name, then still answers the reports sent to it before and signals
 * their blocks. Only root may own the name (the bus policy), and the bus never gives a
 * unique name to a second connection, so either is root's fsgated. Another root connection
 * that never owned the name is not fsgated and need not be believed (root could take the
 * name, but fsgated does not send from elsewhere). What is lost: the blocks a fsgated
 * signals after its release to a notifier that started meanwhile, never having seen it own
 * the name. */
static bool blocked_from_fsgated(Context *ctx, sd_bus_message *m) {
        const char *sender = sd_bus_message_get_sender(m);

        return !sd_bus_message_get_destination(m) && sender &&
               (streq_ptr(sender, ctx->fsgated_owner) || streq_ptr(sender, ctx->fsgated_former));
}

static void log_forged(Context *ctx, sd_bus_message *m) {
        /* The sender is a unique name the bus set (":1.42"): safe to print. */
        const char *sender = sd_bus_message_get_sender(m) ?: "?";
        const char *to_us = sd_bus_message_get_destination(m) ? ", addressed to us alone" : "";
        unsigned held_back = 0;

        if (!ratelimit_below(&forged_log_limit, &ctx->forged_logged, -1, context_now(ctx), &held_back))
                return;
        if (held_back)
                log_warning("Ignoring a Blocked signal that fsgated did not send (from %s%s), and %u more before it "
                            "not logged", sender, to_us, held_back);
        else
                log_warning("Ignoring a Blocked signal that fsgated did not send (from %s%s)", sender, to_us);
}

static int on_blocked(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        _cleanup_(notify_blocked_done) NotifyBlocked b = {};
        Context *ctx = userdata;
        uint64_t now = context_now(ctx);
        NotifyScope scope;
        Item *i;

        if (!blocked_from_fsgated(ctx, m)) {
                log_forged(ctx, m);
                return 0;
        }
        if (blocked_read(m, &b) < 0)
                return 0;
        scope = blocked_scope(&b);
        if (scope == NOTIFY_SCOPE_NONE)
                return 0;
        i = blocked_item(ctx, &b);
        if (!i) {
                i = item_new(ctx, &b, scope == NOTIFY_SCOPE_ASK);
                if (i)
                        item_show(i, now);
        } else if (!blocked_merge(i, &b, scope == NOTIFY_SCOPE_ASK, now))
                return 0;
        posts_flush(ctx);
        return 0;
}

/* In this order, on one connection, whose messages the bus answers and we dispatch in
 * order: each change of the owner from now on; then who owns it now, whose answer comes
 * after the changes before it; then Blocked, whose broadcasts therefore come after that
 * answer. No call waits in the loop: the two matches are set up before it runs. */
int blocked_watch(Context *ctx) {
        int r;

        r = sd_bus_add_match(ctx->system_bus, NULL,
                             "type='signal',sender='" DBUS_NAME "',path='" DBUS_PATH "',interface='" DBUS_NAME "',"
                             "member='NameOwnerChanged',arg0='" FSGATE_BUS_NAME "'",
                             on_name_owner_changed, ctx);
        if (r < 0)
                return r;
        r = sd_bus_call_method_async(ctx->system_bus, NULL, DBUS_NAME, DBUS_PATH, DBUS_NAME, "GetNameOwner",
                                     on_get_name_owner, ctx, "s", FSGATE_BUS_NAME);
        if (r < 0)
                return r;
        /* The rule names the well-known name, which the bus resolves at each delivery, so it
         * keeps matching when fsgated exits idle and is activated again; it spares us other
         * connections' broadcasts, not what they address to us (blocked_from_fsgated). */
        return sd_bus_match_signal(ctx->system_bus, NULL, FSGATE_BUS_NAME, FSGATE_BUS_PATH, FSGATE_BUS_IFACE,
                                   "Blocked", on_blocked, ctx);
}

void blocked_watch_done(Context *ctx) {
        free(ctx->fsgated_owner);
        free(ctx->fsgated_former);
        ctx->fsgated_owner = ctx->fsgated_former = NULL;
}

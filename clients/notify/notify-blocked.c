/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fsgated's Blocked signal: read, judged for this session (only a block this session's
 * person caused asks anything: a medium that appeared at this session's seat while the
 * session was the active one there), and made news or part of an item already shown. */
#define _GNU_SOURCE
#include <stddef.h>
#include <systemd/sd-login.h>

#include "fsgate-api.h"
#include "name.h"
#include "notify.h"

/* Untrusted strings (a stick's label) get one line each, not a screenful. */
#define FIELD_MAX 64

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

/* Reads a Blocked signal into b (cleaned, every string set); < 0 (logged) to ignore it.
 * The match names fsgated's bus name as sender, so the bus delivers only what the name's
 * owner (root, by the bus policy) sends: nobody else can make us ask for a password. */
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
        if (fill_empty(b) < 0)
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
        /* Not while Open read-only grants the sticks the person chose: one that joined now
         * would be granted and mounted without being chosen. */
        if (i->n_b < DEVICES_MAX && !i->mount_slot && i->ask == ask &&
            !(i->call_slot && i->request == NOTIFY_REQUEST_READ_ONLY)) {
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

static int on_blocked(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        _cleanup_(notify_blocked_done) NotifyBlocked b = {};
        Context *ctx = userdata;
        uint64_t now = context_now(ctx);
        NotifyScope scope;
        Item *i;

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

int blocked_watch(Context *ctx) {
        /* The rule names the well-known name, which the bus resolves at each delivery, so it
         * keeps matching when fsgated exits idle and is activated again. */
        return sd_bus_match_signal(ctx->system_bus, NULL, FSGATE_BUS_NAME, FSGATE_BUS_PATH, FSGATE_BUS_IFACE,
                                   "Blocked", on_blocked, ctx);
}

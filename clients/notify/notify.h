/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the files of fsgate-notify share: the items it tracks, the context they hang off, and
 * the one entry point of each file that another one calls. The texts are notify-text.h's. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <syslog.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "macro.h"
#include "notify-text.h"
#include "ratelimit.h"

/* Sticks of one filesystem that joined one notification; more are logged only. */
#define DEVICES_MAX 4
/* A person may be typing a password into the polkit agent; same bound as fsgatectl. */
#define SERVICE_CALL_TIMEOUT_USEC (600 * 1000000ULL)
#define NOTIFY_CALL_TIMEOUT_USEC (25 * 1000000ULL)
/* How long a progress note is left as it is before its outcome replaces it. GNOME Shell 43
 * hides a banner that is replaced while it slides in (0.2 s) once the person has been
 * active (the click that started it): the outcome of a quick Open safely, replacing its
 * "Opening…" note at once, was on screen for a blink only, then in the message list
 * (tests/gnome/test-notify-gnome.py). */
#define NOTIFY_REPLACE_AFTER_USEC (1000000ULL)

/* ---- notify-log.c: stderr, which is the journal under systemd ---------------------------- */

void log_full(int priority, const char *fmt, ...) _printf_(2, 3);
/* SYSTEMD_LOG_LEVEL=debug (or 7) shows the debug lines too. */
void log_parse_environment(void);

#define log_debug(...) log_full(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_full(LOG_INFO, __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, __VA_ARGS__)
#define log_error(...) log_full(LOG_ERR, __VA_ARGS__)

/* ---- notify-item.c: what is tracked per blocked stick or filesystem ---------------------- */


typedef struct Context Context;

/* One stick is one item with at most one notification of its own: the udev report of a
 * device and the failed mount of its type are the same item, and so is a second stick with
 * the same filesystem while the first one's notification is open (Allow decides for the
 * filesystem, so one question is enough). What follows a click (details, outcome) replaces
 * the notification rather than adding another. Once the notification is gone without a
 * decision (expired, dismissed, its server gone), the item is forgotten: the next block is
 * news again. */
typedef struct Item {
        struct Item *next;
        Context *ctx;
        /* b[0]: the stick the notification names, or the bare type when fsgated did not
         * know the device; b[1..]: sticks of the same filesystem that joined it. */
        NotifyBlocked b[DEVICES_MAX];
        size_t n_b;
        uint64_t since;         /* CLOCK_MONOTONIC of the block the pending notification tells of */
        uint32_t id;            /* the server's id of our notification; 0: none we know of */
        uint64_t posted;        /* CLOCK_MONOTONIC when the server answered the Notify of id */
        NoteKind shown;         /* what that Notify posted */
        NoteKind pending;       /* still to post */
        NoteKind posting;       /* Notify in flight */
        unsigned attempts;      /* failed posts of pending */
        sd_bus_slot *notify_slot;
        sd_bus_slot *call_slot; /* Allow, Load, a Grant or an OpenSafely in flight */
        size_t n_granted;       /* Open read-only, Open safely: the sticks b[0..n_granted-1] done so far */
        bool open_safely;       /* the notification offered Open safely (its type has a usable route) */
        sd_bus_slot *mount_slot;/* udisks2's ResolveDevice or Mount in flight */
        bool ask;               /* offers Allow and Allow once (NOTIFY_SCOPE_ASK); else information */
        NotifyRequest request;
        NotifyOutcome outcome;
        char *message;          /* the service's error message, for the outcome */
        size_t n_mounts;        /* sticks udisks2 was asked about (Open safely: opened), b[0..n_mounts-1] */
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
        /* Flushes the posts again once an outcome that waits for its progress note is due
         * (NOTIFY_REPLACE_AFTER_USEC); NULL until first needed. */
        sd_event_source *flush_timer;
        /* Who may send Blocked (notify-blocked.c): the unique names of the connection that
         * owns fsgated's bus name now and of the one that owned it before; NULL: none known. */
        char *fsgated_owner;
        char *fsgated_former;
        RateLimitCount forged_logged;   /* the lines about Blocked signals dropped as forged */
        /* What a click on Allow, Allow once, Open read-only or Open safely starts (notify-call.c's
         * call_start()): set by the program, so that the notifications (notify-post.c) need
         * not know the calls, which post their outcome through them. */
        void (*request)(Item *i, NotifyRequest req);
};

/* The loop's time of this event, CLOCK_MONOTONIC. */
static inline uint64_t context_now(Context *ctx) {
        uint64_t t = 0;

        (void) sd_event_now(ctx->event, CLOCK_MONOTONIC, &t);
        return t;
}

/* The stick's device, or the filesystem type: what the log calls the item. */
const char *item_key(const Item *i);
/* A new item for b (taken over: *b is left empty), first in ctx's list; NULL (logged) past
 * the bound or out of memory. */
Item *item_new(Context *ctx, NotifyBlocked *b, bool ask);
void item_reset(Item *i, NotifyBlocked *b, bool ask);
/* Makes the block the item's pending notification, as news of now. */
void item_show(Item *i, uint64_t now);
void item_forget_mounts(Item *i);
/* Unlinks i from its context's list and frees it. */
void item_remove(Item *i);
/* Frees every item of ctx. */
void items_free(Context *ctx);
bool item_idle(const Item *i);
/* Whether Open safely can be offered for the item's stick: a device, and a userspace driver for
 * its type that fsgated can start, installed on this system. */
bool item_can_open_safely(const Item *i);
bool item_has_device(const Item *i, const char *device);
Item *item_by_device(Context *ctx, const char *device);
Item *item_by_type(Context *ctx, const char *type);
Item *item_by_id(Context *ctx, uint32_t id);

/* ---- notify-post.c: the notification server (org.freedesktop.Notifications) -------------- */

bool bus_error_is_no_server(const sd_bus_error *e);
/* Makes kind the item's pending notification and posts what is pending. */
void post_queue(Item *i, NoteKind kind);
/* Posts what is pending, and again what failed once. May free items. */
void posts_flush(Context *ctx);
/* The server's signals (a click, a closed notification) and its coming and going. */
int posts_watch_server(Context *ctx);

/* ---- notify-mount.c: udisks2 mounts the sticks after an Allow ---------------------------- */

/* Mounts b[n_mounts], then the next one; the outcome once all were asked about. */
void mount_next(Item *i);

/* ---- notify-call.c: Allow and Load on fsgated ---------------------------------------------- */

/* A click's request; its outcome (after the mounts, for an Allowed stick) is posted. */
void call_start(Item *i, NotifyRequest req);

/* ---- notify-blocked.c: fsgated's Blocked signal ------------------------------------------ */

/* Subscribes to fsgated's Blocked signal on the system bus, and follows who owns fsgated's
 * name, the one sender it believes. */
int blocked_watch(Context *ctx);
/* Forgets who owns fsgated's name. */
void blocked_watch_done(Context *ctx);

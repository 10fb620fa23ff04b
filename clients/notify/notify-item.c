/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The items: what fsgate-notify keeps of each blocked stick or filesystem (notify.h says
 * what one item stands for), and how they are found again. */
#include <stdlib.h>

#include "notify.h"
#include "open-route.h"

/* Only memory is at stake: a session sees a handful of filesystems. Beyond this, new
 * ones are logged but not shown; the same bound holds while no notification server runs. */
#define ITEMS_MAX 64

const char *item_key(const Item *i) {
        return *i->b[0].device ? i->b[0].device : i->b[0].type;
}

Item *item_new(Context *ctx, NotifyBlocked *b, bool ask) {
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
void item_reset(Item *i, NotifyBlocked *b, bool ask) {
        for (size_t k = 0; k < i->n_b; k++)
                notify_blocked_done(&i->b[k]);
        item_forget_mounts(i);
        i->ask = ask;
        i->b[0] = *b;
        *b = (NotifyBlocked) {};
        i->n_b = 1;
        i->done = false;
}

void item_show(Item *i, uint64_t now) {
        i->pending = NOTE_BLOCKED;
        i->attempts = 0;
        i->since = now;
}

void item_forget_mounts(Item *i) {
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

void item_remove(Item *i) {
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
bool item_idle(const Item *i) {
        return !i->notify_slot && !i->call_slot && !i->mount_slot && i->pending == NOTE_NONE;
}

bool item_can_open_safely(const Item *i) {
        const FsgOpenRoute *r = fsg_open_route_find(i->b[0].type);
        char path[256];

        /* The running system's drivers, as fsgated, which runs here too, looks them up
         * (fsgatectl routes says the same). Asked when the notification is made: a driver
         * installed later is offered at the next block. */
        return *i->b[0].device && fsg_open_route_usable(r) && fsg_open_route_driver(NULL, r, path, sizeof(path)) >= 0;
}

bool item_has_device(const Item *i, const char *device) {
        for (size_t k = 0; k < i->n_b; k++)
                if (streq(i->b[k].device, device))
                        return true;
        return false;
}

Item *item_by_device(Context *ctx, const char *device) {
        for (Item *i = ctx->items; i; i = i->next)
                if (item_has_device(i, device))
                        return i;
        return NULL;
}

Item *item_by_type(Context *ctx, const char *type) {
        for (Item *i = ctx->items; i; i = i->next)
                if (streq(i->b[0].type, type))
                        return i;
        return NULL;
}

Item *item_by_id(Context *ctx, uint32_t id) {
        if (id == 0)
                return NULL;
        for (Item *i = ctx->items; i; i = i->next)
                if (i->id == id)
                        return i;
        return NULL;
}

void items_free(Context *ctx) {
        while (ctx->items) {
                Item *i = ctx->items;
                ctx->items = i->next;
                item_free(i);
        }
        ctx->n_items = 0;
}

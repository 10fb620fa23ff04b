/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* After an Allow for a device, udisks2 mounts its sticks for the person, one after the
 * other, as a file manager would; the outcome then says where each one is. */
#include "fsg-i18n.h"
#include "notify.h"

#define UDISKS_BUS_NAME "org.freedesktop.UDisks2"
#define UDISKS_MANAGER_PATH "/org/freedesktop/UDisks2/Manager"
#define UDISKS_MANAGER_IFACE "org.freedesktop.UDisks2.Manager"
#define UDISKS_FILESYSTEM_IFACE "org.freedesktop.UDisks2.Filesystem"

#define MOUNT_PATH_MAX 256

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
                if (bus_error_is_no_server(e))
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
        /* Open read-only: the kernel mounts it read-only, whatever is on it. */
        if (r >= 0)
                r = i->request == NOTIFY_REQUEST_OPEN_READ_ONLY ? sd_bus_message_append(m, "a{sv}", 1, "options", "s", "ro")
                                                           : sd_bus_message_append(m, "a{sv}", 0);
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

void mount_next(Item *i) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        Context *ctx = i->ctx;
        const NotifyBlocked *b;
        int r;

        if (i->n_mounts >= i->n_b) {
                post_queue(i, NOTE_OUTCOME);
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

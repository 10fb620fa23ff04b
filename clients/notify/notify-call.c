/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A click's call to fsgated: Allow (from now on) or Load (this boot), with interactive
 * authorization allowed, so the session's polkit agent may ask for a password. */
#include "fsgate-api.h"
#include "notify.h"

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
        post_queue(i, NOTE_OUTCOME);
        return 0;
}

void call_start(Item *i, NotifyRequest req) {
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
                post_queue(i, NOTE_OUTCOME);
                return;
        }
        log_info("Calling %s(%s) for %s, interactive authorization allowed", method, i->b[0].module, item_key(i));
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <linux/capability.h>
#include <stdlib.h>

#include "macro.h"
#include "polkit.h"

typedef struct Query {
        Manager *manager;
        sd_bus_message *call;
        char *action_id;
        PolkitDone done;
        void *userdata;
} Query;

static void query_finish(Query *q, bool granted, const sd_bus_error *error) {
        q->manager->n_pending--;
        q->done(q->manager, q->call, granted, error, q->userdata);
        sd_bus_message_unref(q->call);
        free(q->action_id);
        free(q);
}

static int on_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        Query *q = userdata;
        int authorized = 0, challenge = 0, r;

        if (sd_bus_message_is_method_error(reply, NULL)) {
                /* polkitd missing, crashed or too slow: nobody said yes, so the answer is no. */
                const sd_bus_error *e = sd_bus_message_get_error(reply);
                sd_bus_error_setf(&error, SD_BUS_ERROR_ACCESS_DENIED,
                                  "Authorization check for %s failed (%s); refusing", q->action_id,
                                  e && e->message ? e->message : "no answer from polkit");
                query_finish(q, false, &error);
                goto out;
        }
        r = sd_bus_message_enter_container(reply, 'r', "bba{ss}");
        if (r > 0)
                r = sd_bus_message_read(reply, "bb", &authorized, &challenge);
        else if (r == 0)
                r = -EBADMSG;
        if (r < 0) {
                sd_bus_error_setf(&error, SD_BUS_ERROR_ACCESS_DENIED, "Malformed answer from polkit; refusing");
                query_finish(q, false, &error);
                goto out;
        }
        if (authorized)
                query_finish(q, true, NULL);
        else {
                if (challenge && !sd_bus_message_get_allow_interactive_authorization(q->call))
                        sd_bus_error_setf(&error, SD_BUS_ERROR_INTERACTIVE_AUTHORIZATION_REQUIRED,
                                          "Authentication is required for %s; allow interactive authorization "
                                          "or run the request as root", q->action_id);
                else
                        sd_bus_error_setf(&error, SD_BUS_ERROR_ACCESS_DENIED, "Not authorized: polkit refused %s",
                                          q->action_id);
                query_finish(q, false, &error);
        }
out:
        sd_bus_error_free(&error);
        /* The slot was floating and goes away with this callback. */
        return 0;
}

int polkit_check_async(Manager *m, sd_bus_message *call, const char *action_id, const char *module,
                       const char *message, PolkitDone done, void *userdata) {
        sd_bus_message *req = NULL;
        Query *q;
        bool interactive;
        int r;

        r = sd_bus_query_sender_privilege(call, CAP_SYS_ADMIN);
        if (r > 0) {
                done(m, call, true, NULL, userdata);
                return 0;
        }

        q = calloc(1, sizeof(*q));
        if (!q)
                return -ENOMEM;
        *q = (Query) { .manager = m, .call = sd_bus_message_ref(call), .action_id = strdup(action_id),
                       .done = done, .userdata = userdata };
        m->n_pending++;
        if (!q->action_id) {
                r = -ENOMEM;
                goto fail;
        }

        interactive = sd_bus_message_get_allow_interactive_authorization(call);
        r = sd_bus_message_new_method_call(m->bus, &req, "org.freedesktop.PolicyKit1",
                                           "/org/freedesktop/PolicyKit1/Authority",
                                           "org.freedesktop.PolicyKit1.Authority", "CheckAuthorization");
        if (r >= 0)
                r = sd_bus_message_append(req, "(sa{sv})sa{ss}us",
                                          "system-bus-name", 1, "name", "s", sd_bus_message_get_sender(call),
                                          action_id,
                                          2, "module", module, "polkit.message", message,
                                          (uint32_t) (interactive ? 1 : 0), "");
        /* A person may take a while to type a password; a non-interactive check must be quick. */
        if (r >= 0)
                r = sd_bus_call_async(m->bus, NULL, req, on_reply, q,
                                      interactive ? 300 * 1000000ULL : 25 * 1000000ULL);
        sd_bus_message_unref(req);
        if (r < 0)
                goto fail;
        return 0;
fail:
        {
                sd_bus_error error = SD_BUS_ERROR_NULL;
                sd_bus_error_setf(&error, SD_BUS_ERROR_ACCESS_DENIED, "Could not ask polkit (%s); refusing",
                                  strerror(-r));
                query_finish(q, false, &error);
                sd_bus_error_free(&error);
        }
        return 0;
}

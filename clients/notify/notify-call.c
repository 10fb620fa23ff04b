/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A click's call to fsgated: Allow (from now on), Load (this boot), a Grant for each stick
 * (Open read-only) or an OpenSafely for each stick, with interactive authorization allowed,
 * so the session's polkit agent may ask for a password. */
#include <fcntl.h>
#include <unistd.h>

#include "fsgate-api.h"
#include "notify.h"

static const char *method_of(NotifyRequest req) {
        switch (req) {
        case NOTIFY_REQUEST_LOAD: return "Load";
        case NOTIFY_REQUEST_OPEN_READ_ONLY: return "Grant";
        case NOTIFY_REQUEST_OPEN_SAFELY: return "OpenSafely";
        default: return "Allow";
        }
}

/* One call a stick: each grant ends with its own stick, each open is a mount of its own. */
static bool per_stick(NotifyRequest req) {
        return req == NOTIFY_REQUEST_OPEN_READ_ONLY || req == NOTIFY_REQUEST_OPEN_SAFELY;
}

/* What the call in flight is about, for the log: Open read-only and Open safely take one
 * stick at a time (b[n_granted]), the others decide for the item. */
static const char *call_subject(const Item *i) {
        if (per_stick(i->request) && i->n_granted < i->n_b && *i->b[i->n_granted].device)
                return i->b[i->n_granted].device;
        return item_key(i);
}

static int call_send(Item *i);

/* OpenSafely's answer for stick b[n_granted]: where its files are, for the outcome. */
static int on_opened(Item *i, sd_bus_message *reply, const char *subject) {
        const char *mountpoint, *id;
        size_t k = i->n_granted;
        int r;

        r = sd_bus_message_read(reply, "ss", &mountpoint, &id);
        if (r < 0) {
                log_warning("Malformed reply to OpenSafely for %s: %s", subject, strerror(-r));
                free(i->message);
                i->message = strdup(strerror(-r));
                return r;
        }
        log_info("OpenSafely for %s: open at %s (%s)", subject, mountpoint, id);
        free(i->mount_where[k]);
        i->mount_where[k] = notify_clean(mountpoint, 256);
        i->n_mounts = k + 1;
        return 0;
}

static int on_call_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Item *i = userdata;
        const char *method = method_of(i->request);
        /* Before n_granted counts this answer. */
        const char *subject = call_subject(i);

        i->call_slot = sd_bus_slot_unref(i->call_slot);
        free(i->message);
        i->message = NULL;
        if (sd_bus_message_is_method_error(reply, NULL)) {
                const sd_bus_error *e = sd_bus_message_get_error(reply);
                const char *name = e ? e->name : NULL, *msg = e && e->message ? e->message : name;

                const char *words = i->request == NOTIFY_REQUEST_OPEN_SAFELY ? notify_open_error_text(name) : NULL;

                i->outcome = notify_classify_error(name);
                i->message = words ? strdup(words) : msg ? notify_clean(msg, 512) : NULL;
                log_info("%s(%s) for %s: %s (%s)", method, i->b[0].module, subject, name ?: "error", msg ?: "");
        } else if (i->request == NOTIFY_REQUEST_OPEN_SAFELY && on_opened(i, reply, subject) < 0)
                i->outcome = NOTIFY_OUTCOME_FAILED;
        else if (per_stick(i->request) && ++i->n_granted < i->n_b) {
                log_info("%s(%s) for %s: done", method, i->b[0].module, subject);
                if (call_send(i) >= 0) {
                        log_info("Calling %s(%s) for %s, interactive authorization allowed", method, i->b[0].module,
                                 call_subject(i));
                        return 0;
                }
                log_warning("Failed to call %s(%s) for %s", method, i->b[0].module, call_subject(i));
                i->outcome = NOTIFY_OUTCOME_FAILED;
        } else if (i->request == NOTIFY_REQUEST_OPEN_SAFELY) {
                /* Nothing to mount: fsgated did, where the outcome says. The module stays as
                 * it was, so the next block of the type is news again. */
                i->outcome = NOTIFY_OUTCOME_ALLOWED;
                i->done = true;
                log_info("%s(%s) for %s: done", method, i->b[0].module, subject);
        } else {
                i->outcome = NOTIFY_OUTCOME_ALLOWED;
                i->done = true;
                log_info("%s(%s) for %s: done", method, i->b[0].module, subject);
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

/* The call of i->request (for Open read-only: the grant of stick b[n_granted]). */
static int call_send(Item *i) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        Context *ctx = i->ctx;
        int r;

        r = sd_bus_message_new_method_call(ctx->system_bus, &m, FSGATE_BUS_NAME, FSGATE_BUS_PATH, FSGATE_BUS_IFACE,
                                           method_of(i->request));
        if (r >= 0)
                switch (i->request) {
                case NOTIFY_REQUEST_LOAD:
                        r = sd_bus_message_append(m, "s", i->b[0].module);
                        break;
                case NOTIFY_REQUEST_OPEN_READ_ONLY:
                        r = sd_bus_message_append(m, "sa{sv}t", i->b[0].module, 1, "device", "s",
                                                  i->b[i->n_granted].device, (uint64_t) 0);
                        break;
                case NOTIFY_REQUEST_OPEN_SAFELY: {
                        /* fsgated opens the device itself; the descriptor is then ignored, and
                         * /dev/null is what the interface suggests. Any route: fsgated picks the
                         * type's (the one item_can_open_safely() found). sd-bus sends a copy. */
                        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC | O_NOCTTY);
                        if (fd < 0)
                                return -errno;
                        r = sd_bus_message_append(m, "shst", i->b[i->n_granted].device, fd, "", (uint64_t) 0);
                        safe_close(fd);
                        break;
                }
                default:
                        r = sd_bus_message_append(m, "st", i->b[0].module, (uint64_t) 0);
                }
        /* The point of the click: the session's polkit agent may ask for a password. */
        if (r >= 0)
                r = sd_bus_message_set_allow_interactive_authorization(m, 1);
        if (r >= 0)
                r = sd_bus_call_async(ctx->system_bus, &i->call_slot, m, on_call_reply, i, SERVICE_CALL_TIMEOUT_USEC);
        return r;
}

void call_start(Item *i, NotifyRequest req) {
        const char *method = method_of(req);
        int r;

        if (i->call_slot || i->mount_slot) {
                log_info("Still waiting for the answer about %s; ignoring the click", item_key(i));
                return;
        }
        i->request = req;
        i->n_granted = 0;
        item_forget_mounts(i);
        r = call_send(i);
        if (r < 0) {
                log_warning("Failed to call %s(%s) for %s: %s", method, i->b[0].module, call_subject(i), strerror(-r));
                free(i->message);
                i->message = strdup(strerror(-r));
                i->outcome = NOTIFY_OUTCOME_FAILED;
                post_queue(i, NOTE_OUTCOME);
                return;
        }
        log_info("Calling %s(%s) for %s, interactive authorization allowed", method, i->b[0].module, call_subject(i));
        /* The driver's start and the first listing take a moment (a second or more on a busy
         * machine): say that something happens. */
        if (req == NOTIFY_REQUEST_OPEN_SAFELY)
                post_queue(i, NOTE_PROGRESS);
}

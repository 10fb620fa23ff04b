/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <signal.h>
#include <syslog.h>

#include "conffile.h"
#include "grants.h"
#include "lock.h"
#include "lock-wait.h"
#include "log.h"
#include "bus-object.h"
#include "bus-open.h"
#include "manager.h"
#include "polkit-bridge.h"
#include "state-cache.h"
#include "store.h"
#include "strv.h"

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        return sd_event_exit(sd_event_source_get_event(s), 0);
}

int manager_new(const char *root, const char *kver, Manager **ret) {
        Manager *m;
        FsgError e = {};
        sigset_t ss;
        int r;

        /* Blocked before anything else, so that a SIGTERM that comes while the name is being
         * requested (or the context loaded) waits for the event loop and ends in a clean exit,
         * instead of killing the process halfway. sd-event needs them blocked anyway. */
        sigemptyset(&ss);
        sigaddset(&ss, SIGTERM);
        sigaddset(&ss, SIGINT);
        if (sigprocmask(SIG_BLOCK, &ss, NULL) < 0)
                return -errno;

        m = calloc(1, sizeof(Manager));
        if (!m)
                return -ENOMEM;
        if (fsg_context_new(root, kver, &m->ctx, &e) < 0) {
                log_plain(LOG_ERR, "%s", e.message);
                free(m);
                return -EINVAL;
        }
        m->ctx->lock_timeout_usec = FSGATED_LOCK_TIMEOUT_USEC;
        r = manager_cache_init(m);
        if (!m->state_cache) {
                manager_free(m);
                return r;
        }
        if (r < 0)
                log_plain(LOG_WARNING, "inotify unavailable (%s): every answer rebuilds the state", strerror(-r));
        r = sd_event_default(&m->event);
        if (r >= 0)
                r = sd_event_add_signal(m->event, NULL, SIGTERM, on_signal, NULL);
        if (r >= 0)
                r = sd_event_add_signal(m->event, NULL, SIGINT, on_signal, NULL);
        if (r < 0) {
                manager_free(m);
                return r;
        }
        *ret = m;
        return 0;
}

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;
        if (m->bus) {
                polkit_cancel_all(m);
                manager_lock_cancel_all(m);
        }
        manager_grants_done(m);
        manager_opens_done(m);
        sd_bus_slot_unref(m->vtable_slot);
        sd_bus_flush_close_unref(m->bus);
        sd_event_unref(m->event);
        manager_cache_done(m);
        strv_free(m->reported);
        fsg_context_free(m->ctx);
        free(m);
        return NULL;
}

/* A writer killed between creating its temp file and the rename leaves the temp behind;
 * nobody else can be writing while we hold the lock, so every temp is stale. */
static void clean_stale_temp_files(Manager *m) {
        static const char * const dirs[] = { "/etc/modprobe.d", "/run/modprobe.d" };
        _cleanup_(fsg_lock_holdp) FsgLockHold lock = FSG_LOCK_HOLD(m->ctx);

        /* One try: a start must never wait for another writer (it cleans up next time). */
        if (fsg_lock(m->ctx, 0, &lock.fd, NULL) < 0)
                return;
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                _cleanup_close_ int dfd = fsg_open_dir(m->ctx, dirs[i], false);
                if (dfd >= 0)
                        fsg_clean_temp_files_at(dfd);
        }
}

int manager_connect(Manager *m) {
        int r;

        clean_stale_temp_files(m);
        r = sd_bus_open_system(&m->bus);
        if (r < 0)
                return log_plain(LOG_ERR, "Failed to connect to the system bus: %s", strerror(-r)), r;
        r = sd_bus_add_object_vtable(m->bus, &m->vtable_slot, FSGATE_BUS_PATH, FSGATE_BUS_IFACE, manager_vtable, m);
        if (r < 0)
                return log_plain(LOG_ERR, "Failed to add object: %s", strerror(-r)), r;
        r = sd_bus_attach_event(m->bus, m->event, 0);
        if (r < 0)
                return r;
        /* Before the name is taken, so that whoever sees fsgated there sees its grants armed:
         * one whose end passed while no fsgated ran ends now (its signal goes out from the
         * unique name). */
        manager_grants_start(m);
        r = sd_bus_request_name(m->bus, FSGATE_BUS_NAME, 0);
        if (r < 0)
                return log_plain(LOG_ERR, "Failed to acquire %s: %s", FSGATE_BUS_NAME, strerror(-r)), r;
        /* Only once the name is ours: a second fsgated that fails to get it must not unmount
         * what the first opened. */
        manager_opens_start(m);
        return 0;
}

/* Bus-activated: stay while busy or a grant is active (its end is ours to keep; staying is
 * cheaper and surer than a timer of systemd's), leave after idle_usec of silence. The name is released
 * before exiting and what arrived meanwhile is still answered, so no call is lost. */
int manager_run(Manager *m, uint64_t idle_usec) {
        int r;

again:
        for (;;) {
                r = sd_event_get_state(m->event);
                if (r < 0)
                        return r;
                if (r == SD_EVENT_FINISHED)
                        break;
                r = sd_event_run(m->event, idle_usec ? idle_usec : UINT64_MAX);
                if (r < 0)
                        return r;
                if (r == 0 && idle_usec && m->n_pending == 0 && !manager_grants_hold(m) &&
                    !manager_opens_hold(m)) {
                        log_plain(LOG_DEBUG, "Idle, exiting");
                        break;
                }
        }
        (void) sd_bus_release_name(m->bus, FSGATE_BUS_NAME);
        /* What was sent to the name before it went away is ours to answer, a call that needs
         * polkit included: keep running until it is done, unless a signal asked us to stop. */
        for (;;) {
                r = sd_bus_process(m->bus, NULL);
                if (r > 0)
                        continue;
                if (r < 0 || m->n_pending == 0 || sd_event_get_state(m->event) == SD_EVENT_FINISHED)
                        break;
                r = sd_event_run(m->event, UINT64_MAX);
                if (r < 0)
                        return r;
        }
        /* One of those calls made a grant: its end is ours, so back on the bus. (Stopped by a
         * signal, the record stays and the next start arms it again.) */
        if (r >= 0 && manager_grants_hold(m) && sd_event_get_state(m->event) != SD_EVENT_FINISHED &&
            sd_bus_request_name(m->bus, FSGATE_BUS_NAME, 0) >= 0) {
                log_plain(LOG_DEBUG, "A grant came while exiting; staying");
                goto again;
        }
        return 0;
}

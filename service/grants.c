/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <syslog.h>

#include "fsgate-api.h"
#include "grants.h"
#include "log.h"
#include "state-cache.h"
#include "load.h"
#include "store.h"
#include "strv.h"

#define USEC_PER_SEC UINT64_C(1000000)
/* How often the media of device grants are looked for, and a module whose last grant ended
 * but that is still in use (mounted, held by another module) is looked at again. */
#define WATCH_USEC (2 * USEC_PER_SEC)

static void emit_grants_changed(Manager *m) {
        manager_cache_grants_changed(m);
        if (m->bus)
                (void) sd_bus_emit_properties_changed(m->bus, FSGATE_BUS_PATH, FSGATE_BUS_IFACE, "Grants", NULL);
}

unsigned manager_grants_of_uid(const Manager *m, uint32_t uid) {
        unsigned n = 0;

        for (size_t i = 0; i < m->n_grants; i++)
                n += m->grants[i].uid == uid;
        return n;
}

bool manager_module_granted(const Manager *m, const char *module) {
        for (size_t i = 0; i < m->n_grants; i++)
                if (streq(m->grants[i].module, module))
                        return true;
        return false;
}

static bool any_medium(const Manager *m) {
        for (size_t i = 0; i < m->n_grants; i++)
                if (*m->grants[i].device)
                        return true;
        return false;
}

bool manager_grants_hold(const Manager *m) {
        return m->n_grants > 0 || !strv_isempty(m->unload_pending);
}

static void arm(Manager *m);

/* After module went (or was never loaded): what its grants loaded with it goes too, newest
 * first, one try each (only the kernel's refcount keeps one: then something else uses it).
 * keep: module stays (allowed now), and so does what it needs. */
static void end_dependencies(Manager *m, const char *module, bool keep) {
        for (size_t i = 0; m->unload_deps && m->unload_deps[i] && m->unload_deps[i + 1];) {
                _cleanup_strv_free_ char **deps = NULL;
                char *list = m->unload_deps[i + 1];

                if (!streq(m->unload_deps[i], module)) {
                        i += 2;
                        continue;
                }
                if (!keep)
                        deps = strv_split_spaces(list);
                for (size_t k = strv_length(deps); k-- > 0;) {
                        FsgError e = {};
                        int r;

                        if (manager_module_granted(m, deps[k]))
                                continue;
                        r = fsg_unload(m->ctx, deps[k], &e);
                        if (r == -EBUSY)
                                log_plain(LOG_NOTICE, "%s stays loaded: loaded with %s's grant, it is in use by "
                                          "something else now", deps[k], module);
                        else if (r < 0)
                                log_plain(r == -EOPNOTSUPP ? LOG_INFO : LOG_WARNING, "%s", e.message);
                        else
                                log_grant(FSGATE_MESSAGE_GRANT_ENDED, LOG_NOTICE, deps[k], UINT32_MAX, NULL,
                                          "%s unloaded: loaded with %s's grant, which ended", deps[k], module);
                }
                free(m->unload_deps[i]);
                free(list);
                memmove(&m->unload_deps[i], &m->unload_deps[i + 2],
                        (strv_length(m->unload_deps + i + 2) + 1) * sizeof(char *));
        }
        if (strv_isempty(m->unload_deps))
                m->unload_deps = strv_free(m->unload_deps);
}

/* One pass over the modules whose last grant ended: unloaded where nothing else allows or
 * uses them; the others wait for the next pass. */
static void try_unloads(Manager *m) {
        _cleanup_strv_free_ char **pending = TAKE_PTR(m->unload_pending);

        for (char **p = pending; p && *p; p++) {
                _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
                const FsgEntry *x;
                FsgError e = {};
                int r;

                if (manager_module_granted(m, *p)) {
                        strv_remove(m->unload_announced, *p);
                        continue; /* a new grant took it over */
                }
                if (manager_state(m, &s, &e) < 0) {
                        log_plain(LOG_WARNING, "Cannot tell whether %s may be unloaded: %s", *p, e.message);
                        (void) strv_extend(&m->unload_pending, *p);
                        continue;
                }
                x = fsg_state_find_module(s, *p);
                if (!x || !x->loaded || x->builtin || !x->denied) {
                        bool stays = x && x->loaded && !x->builtin;

                        if (stays)
                                log_plain(LOG_NOTICE, "%s stays loaded after its grant: %s allows it now", *p,
                                          *x->deciding_file ? x->deciding_file : "the default");
                        strv_remove(m->unload_announced, *p);
                        end_dependencies(m, *p, stays);
                        continue;
                }
                r = x->mounted ? -EBUSY : fsg_unload(m->ctx, *p, &e);
                if (r == -EBUSY) {
                        if (!strv_contains(m->unload_announced, *p)) {
                                log_grant(FSGATE_MESSAGE_GRANT_ENDED, LOG_NOTICE, *p, UINT32_MAX, NULL,
                                          "%s stays loaded while it is %s; it is unloaded once it is not "
                                          "(nothing is unmounted)", *p, x->mounted ? "mounted" : "in use");
                                (void) strv_extend(&m->unload_announced, *p);
                        }
                        (void) strv_extend(&m->unload_pending, *p);
                        continue;
                }
                if (r < 0)
                        log_plain(r == -EOPNOTSUPP ? LOG_INFO : LOG_WARNING, "%s", e.message);
                else
                        log_grant(FSGATE_MESSAGE_GRANT_ENDED, LOG_NOTICE, *p, UINT32_MAX, NULL,
                                  "%s unloaded: its grant ended and nothing uses it; the deny is in force again", *p);
                strv_remove(m->unload_announced, *p);
                end_dependencies(m, *p, r < 0);
        }
        if (strv_isempty(m->unload_pending))
                m->unload_pending = strv_free(m->unload_pending);
        arm(m);
}

static void grant_end(Manager *m, size_t i, const char *reason) {
        FsgGrant g = m->grants[i];
        char until[32];
        FsgError e = {};

        memmove(&m->grants[i], &m->grants[i + 1], (m->n_grants - i - 1) * sizeof(FsgGrant));
        m->n_grants--;
        if (fsg_grant_remove(m->ctx, g.id, &e) < 0)
                log_plain(LOG_WARNING, "%s", e.message);
        log_grant(FSGATE_MESSAGE_GRANT_ENDED, LOG_NOTICE, g.module, g.uid, g.id, "Grant %s of %s (until %s) ended: %s",
                  g.id, g.module, fsg_grant_time_string(g.until_usec, until), reason);
        if (m->bus)
                (void) sd_bus_emit_signal(m->bus, FSGATE_BUS_PATH, FSGATE_BUS_IFACE, "GrantEnded", "sss", g.id,
                                          g.module, reason);
        emit_grants_changed(m);
        /* No grant left: the directory goes too, so that the udev rule's cheap test
         * (TEST=="/run/fsgate/grants") starts no program for every medium. */
        if (m->n_grants == 0)
                fsg_grants_dir_remove_if_empty(m->ctx);
        if (*g.deps && (strv_extend(&m->unload_deps, g.module) < 0 || strv_extend(&m->unload_deps, g.deps) < 0))
                log_plain(LOG_WARNING, "Out of memory: %s, loaded with %s's grant, may stay loaded", g.deps, g.module);
        if (!manager_module_granted(m, g.module) && !strv_contains(m->unload_pending, g.module))
                (void) strv_extend(&m->unload_pending, g.module);
}

static void end_expired(Manager *m) {
        uint64_t now = fsg_boottime_usec();

        /* Sorted by end: the expired ones are the first. */
        while (m->n_grants > 0 && m->grants[0].ends_usec <= now)
                grant_end(m, 0, "expired");
}

/* A grant for a medium ends when it is gone: removed, or another one in its place. */
static void end_gone_media(Manager *m) {
        for (size_t i = 0; i < m->n_grants;)
                if (!fsg_grant_medium_present(&m->grants[i]))
                        grant_end(m, i, "device removed");
                else
                        i++;
}

static int on_grant_time(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        end_expired(m);
        try_unloads(m);
        return 0;
}

static int on_watch_time(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        /* One-shot: gone, so that arm() makes the next one. */
        m->watch_timer = sd_event_source_disable_unref(m->watch_timer);
        end_gone_media(m);
        try_unloads(m);
        return 0;
}

/* The grant timer at the next end; the watch timer while a medium or an unload is waited for. */
static void arm(Manager *m) {
        uint64_t now;
        int r;

        m->grant_timer = sd_event_source_disable_unref(m->grant_timer);
        if (m->n_grants > 0) {
                r = sd_event_add_time(m->event, &m->grant_timer, CLOCK_BOOTTIME, m->grants[0].ends_usec,
                                      USEC_PER_SEC / 10, on_grant_time, m);
                if (r < 0)
                        log_plain(LOG_ERR, "Cannot arm the end of grant %s: %s", m->grants[0].id, strerror(-r));
        }
        if (strv_isempty(m->unload_pending) && !any_medium(m)) {
                m->watch_timer = sd_event_source_disable_unref(m->watch_timer);
                return;
        }
        if (m->watch_timer)
                return;
        if (sd_event_now(m->event, CLOCK_MONOTONIC, &now) < 0)
                now = 0;
        r = sd_event_add_time(m->event, &m->watch_timer, CLOCK_MONOTONIC, now + WATCH_USEC, USEC_PER_SEC / 10,
                              on_watch_time, m);
        if (r < 0)
                log_plain(LOG_ERR, "Cannot arm the next look at media and unloads: %s", strerror(-r));
}

static int cmp_until(const void *a, const void *b) {
        const FsgGrant *x = a, *y = b;
        return x->ends_usec < y->ends_usec ? -1 : x->ends_usec > y->ends_usec ? 1 : strcmp(x->id, y->id);
}

int manager_grant_add(Manager *m, const FsgGrant *g, FsgError *e) {
        FsgGrant *v;
        int r;

        if (m->n_grants >= FSG_GRANTS_MAX)
                return fsg_error(e, FSG_ERR_BUSY, "There are %u grants already, the most fsgated keeps; end one first",
                                 FSG_GRANTS_MAX);
        r = fsg_grant_write(m->ctx, g, e);
        if (r < 0)
                return r;
        v = realloc(m->grants, (m->n_grants + 1) * sizeof(FsgGrant));
        if (!v) {
                (void) fsg_grant_remove(m->ctx, g->id, NULL);
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        }
        m->grants = v;
        m->grants[m->n_grants++] = *g;
        qsort(m->grants, m->n_grants, sizeof(FsgGrant), cmp_until);
        emit_grants_changed(m);
        arm(m);
        return 0;
}

void manager_grant_end_id(Manager *m, const char *id, const char *reason) {
        for (size_t i = 0; i < m->n_grants; i++)
                if (streq(m->grants[i].id, id)) {
                        grant_end(m, i, reason);
                        try_unloads(m);
                        return;
                }
}

unsigned manager_grants_end_module(Manager *m, const char *module, const char *reason) {
        unsigned n = 0;

        for (size_t i = 0; i < m->n_grants;)
                if (streq(m->grants[i].module, module)) {
                        grant_end(m, i, reason);
                        n++;
                } else
                        i++;
        if (n > 0)
                try_unloads(m);
        return n;
}

void manager_grants_start(Manager *m) {
        _cleanup_free_ FsgGrant *g = NULL;
        unsigned skipped;
        FsgError e = {};
        size_t n;

        if (fsg_grants_read(m->ctx, &g, &n, &skipped, &e) < 0) {
                log_plain(LOG_ERR, "Grants not armed: %s", e.message);
                return;
        }
        if (skipped > 0)
                log_plain(LOG_WARNING, "%u files in %s%s are no grant records of fsgate's: ignored", skipped,
                          m->ctx->root, FSG_GRANTS_DIR);
        for (size_t i = 0; i < n; i++) {
                if (g[i].other_boot || m->n_grants >= FSG_GRANTS_MAX) {
                        /* A past boot's (its module is long gone with that kernel), or past the
                         * cap: no grant now. */
                        (void) fsg_grant_remove(m->ctx, g[i].id, NULL);
                        continue;
                }
                FsgGrant *v = realloc(m->grants, (m->n_grants + 1) * sizeof(FsgGrant));
                if (!v)
                        break;
                m->grants = v;
                m->grants[m->n_grants++] = g[i];
        }
        end_expired(m);
        end_gone_media(m);
        try_unloads(m);
        /* Left empty by an fsgated that stopped: gone, as after the last end. */
        if (m->n_grants == 0)
                fsg_grants_dir_remove_if_empty(m->ctx);
}

void manager_grants_done(Manager *m) {
        m->grant_timer = sd_event_source_disable_unref(m->grant_timer);
        m->watch_timer = sd_event_source_disable_unref(m->watch_timer);
        free(m->grants);
        m->grants = NULL;
        m->n_grants = 0;
        m->unload_pending = strv_free(m->unload_pending);
        m->unload_announced = strv_free(m->unload_announced);
        m->unload_deps = strv_free(m->unload_deps);
}

int manager_append_grants(const Manager *m, sd_bus_message *reply) {
        int r = sd_bus_message_open_container(reply, 'a', "(ssutts)");

        for (size_t i = 0; r >= 0 && i < m->n_grants; i++)
                r = sd_bus_message_append(reply, "(ssutts)", m->grants[i].id, m->grants[i].module, m->grants[i].uid,
                                          m->grants[i].since_usec, m->grants[i].until_usec, m->grants[i].device);
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

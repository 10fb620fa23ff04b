/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <sys/inotify.h>

#include "confscan.h"
#include "manager.h"

/* The computed state is kept until inotify says a modprobe.d directory or the module tree
 * changed. The queue is drained right before each answer, so a change completed before a
 * request arrived is always seen: never stale, and no rebuild while nothing changes. */

#define DIR_EVENTS (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_MODIFY | \
                    IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF)

static void add_watch(Manager *m, const char *dir, bool watch_parent_if_missing) {
        if (inotify_add_watch(m->inotify_fd, dir, DIR_EVENTS) >= 0 || !watch_parent_if_missing)
                return;
        /* Not there yet (often /run/modprobe.d): learn when it is created. */
        _cleanup_free_ char *parent = strdup(dir);
        char *slash = parent ? strrchr(parent, '/') : NULL;
        if (slash && slash != parent) {
                *slash = 0;
                (void) inotify_add_watch(m->inotify_fd, parent, IN_CREATE | IN_MOVED_TO | IN_ONLYDIR);
        }
}

static void add_watches(Manager *m) {
        for (size_t i = 0; i < fsg_n_conf_dirs; i++) {
                _cleanup_free_ char *p = fsg_path(m->ctx, fsg_conf_dirs[i].path);
                if (p)
                        add_watch(m, p, true);
        }
        if (m->ctx->moddir)
                add_watch(m, m->ctx->moddir, false);
}

int manager_cache_init(Manager *m) {
        m->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (m->inotify_fd < 0)
                return -errno;
        add_watches(m);
        return 0;
}

void manager_cache_done(Manager *m) {
        m->cache = fsg_state_free(m->cache);
        if (m->inotify_fd >= 0)
                close(m->inotify_fd);
        m->inotify_fd = -1;
}

static bool drain_events(Manager *m) {
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        bool any = false;

        if (m->inotify_fd < 0)
                return true; /* no watch: rebuild every time rather than risk staleness */
        while (read(m->inotify_fd, buf, sizeof(buf)) > 0)
                any = true;
        return any;
}

int manager_state(Manager *m, const FsgState **ret, FsgError *e) {
        if (drain_events(m)) {
                m->cache = fsg_state_free(m->cache);
                if (m->inotify_fd >= 0)
                        add_watches(m); /* a directory may have appeared or been replaced */
        }
        if (!m->cache) {
                if (fsg_state_build(m->ctx, NULL, &m->cache, e) < 0)
                        return -1;
                m->n_rebuilds++;
        } else if (fsg_state_update_usage(m->ctx, m->cache) < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Failed to read %s/proc", m->ctx->root);
        *ret = m->cache;
        return 0;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/netlink.h>
#include <malloc.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/vfs.h>
#include <syslog.h>

#include "confscan.h"
#include "log.h"
#include "routes.h"
#include "state-cache.h"
#include "usage.h"

/* The computed state is kept until inotify says a modprobe.d directory or the module tree
 * changed. Loaded modules and mounts are kept too, each until its own signal says it changed:
 *   - ROOT/proc a plain directory (a scratch root, an image): inotify on the files' directory;
 *   - ROOT/proc the kernel's procfs: for modules the kernel's uevents (subsystem "module", sent
 *     once a module is live and when it goes away), for mounts POLLPRI on
 *     /proc/self/mountinfo, raised by every mount change in our namespace.
 * Where a signal is missing (no netlink socket allowed, no inotify) that part is read again for
 * every answer, which allocates nothing. All signals are queued by the kernel before the
 * change they announce completes, and the queue is looked at right before each answer, so a
 * change completed before a request arrived is always seen: never stale, and no work while
 * nothing changes. One epoll_wait() without timeout is the whole cost of that look. */

#define DIR_EVENTS (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_MODIFY | \
                    IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF)

enum {
        TAG_CONFIG,
        TAG_PROC,
        TAG_UEVENT,
        TAG_MOUNTS,
};

typedef struct StateCache {
        FsgState *state;        /* NULL until the next answer builds it */
        FsgWhatIfMemo what_if;  /* planning answers for state's configuration, cleared with it */
        int inotify_fd;         /* the modprobe.d directories and the module tree */
        int epoll_fd;
        int proc_inotify_fd;    /* ROOT/proc is a plain directory */
        int uevent_fd;          /* ROOT/proc is procfs */
        int mountinfo_fd;       /* always: a mount can also put procfs over ROOT/proc */
        bool live_proc;
        bool loaded_stale;
        bool mounted_stale;
} StateCache;

static void add_watch(int fd, const char *dir, uint32_t mask, bool watch_parent_if_missing) {
        if (inotify_add_watch(fd, dir, mask) >= 0 || !watch_parent_if_missing)
                return;
        /* Not there yet (often /run/modprobe.d): learn when it is created. */
        _cleanup_free_ char *parent = strdup(dir);
        char *slash = parent ? strrchr(parent, '/') : NULL;
        if (slash && slash != parent) {
                *slash = 0;
                (void) inotify_add_watch(fd, parent, IN_CREATE | IN_MOVED_TO | IN_ONLYDIR);
        }
}

static void add_watches(Manager *m) {
        StateCache *sc = m->state_cache;

        for (size_t i = 0; i < fsg_n_conf_dirs; i++) {
                _cleanup_free_ char *p = fsg_path(m->ctx, fsg_conf_dirs[i].path);
                if (p)
                        add_watch(sc->inotify_fd, p, DIR_EVENTS, true);
        }
        if (m->ctx->moddir)
                add_watch(sc->inotify_fd, m->ctx->moddir, DIR_EVENTS, false);
}

static void close_fd(StateCache *sc, int *fd) {
        if (*fd < 0)
                return;
        (void) epoll_ctl(sc->epoll_fd, EPOLL_CTL_DEL, *fd, NULL);
        close(*fd);
        *fd = -1;
}

static int watch_fd(StateCache *sc, int fd, uint32_t events, uint64_t tag) {
        struct epoll_event ev = { .events = events, .data.u64 = tag };
        return epoll_ctl(sc->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

static int open_uevents(void) {
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = 1 /* the kernel's own */ };
        int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);

        if (fd < 0)
                return -errno;
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        return fd;
}

/* Whether any queued uevent is about a module; drains the queue. A full queue lost events,
 * so it counts as a change. */
static bool drain_uevents(int fd) {
        char buf[8192];
        bool any = false;
        ssize_t n;

        for (;;) {
                n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == ENOBUFS) {
                        any = true;
                        continue;
                }
                if (n < 0)
                        return any;
                buf[n] = 0;
                /* The first string is "ACTION@DEVPATH"; a module's devpath is /module/NAME. */
                char *at = strchr(buf, '@');
                any = any || (at && strncmp(at + 1, "/module/", strlen("/module/")) == 0);
        }
}

static bool drain_inotify(int fd) {
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        bool any = false;

        while (read(fd, buf, sizeof(buf)) > 0)
                any = true;
        return any;
}

/* The directories ROOT/proc/modules and ROOT/proc/mounts are in, as links or as files (either
 * may be a symlink). Again after every event: a directory may have been replaced. */
static void add_proc_watches(Manager *m) {
        static const char * const files[] = { "/proc/modules", "/proc/mounts" };
        int fd = m->state_cache->proc_inotify_fd;

        for (size_t i = 0; i < 2 * ELEMENTSOF(files); i++) {
                _cleanup_free_ char *p = i % 2 ? fsg_path(m->ctx, files[i / 2]) : fsg_path_nofollow(m->ctx, files[i / 2]);
                char *slash = p ? strrchr(p, '/') : NULL;

                if (slash && slash != p) {
                        *slash = 0;
                        add_watch(fd, p, DIR_EVENTS, true);
                }
        }
}

/* Decides how loaded modules and mounts are watched, from what ROOT/proc is now. */
static void setup_proc(Manager *m) {
        StateCache *sc = m->state_cache;
        _cleanup_free_ char *proc = fsg_path(m->ctx, "/proc");
        struct statfs sfs;

        close_fd(sc, &sc->proc_inotify_fd);
        sc->live_proc = proc && statfs(proc, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC;
        sc->loaded_stale = sc->mounted_stale = true;
        if (sc->live_proc) {
                if (sc->uevent_fd < 0) {
                        sc->uevent_fd = open_uevents();
                        if (sc->uevent_fd >= 0 && watch_fd(sc, sc->uevent_fd, EPOLLIN, TAG_UEVENT) < 0)
                                close_fd(sc, &sc->uevent_fd);
                }
                return;
        }
        close_fd(sc, &sc->uevent_fd);
        sc->proc_inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (sc->proc_inotify_fd < 0)
                return;
        if (watch_fd(sc, sc->proc_inotify_fd, EPOLLIN, TAG_PROC) < 0) {
                close_fd(sc, &sc->proc_inotify_fd);
                return;
        }
        add_proc_watches(m);
}

int manager_cache_init(Manager *m) {
        StateCache *sc = calloc(1, sizeof(StateCache));

        if (!sc)
                return -ENOMEM;
        *sc = (StateCache) { .inotify_fd = -1, .epoll_fd = -1, .proc_inotify_fd = -1, .uevent_fd = -1,
                             .mountinfo_fd = -1 };
        m->state_cache = sc;
        sc->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
        if (sc->epoll_fd < 0)
                return -errno;
        sc->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (sc->inotify_fd < 0)
                return -errno;
        if (watch_fd(sc, sc->inotify_fd, EPOLLIN, TAG_CONFIG) < 0) {
                int r = -errno;
                close(sc->inotify_fd);
                sc->inotify_fd = -1;
                return r;
        }
        add_watches(m);
        sc->mountinfo_fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
        if (sc->mountinfo_fd >= 0 && watch_fd(sc, sc->mountinfo_fd, EPOLLPRI, TAG_MOUNTS) < 0)
                close_fd(sc, &sc->mountinfo_fd);
        setup_proc(m);
        return 0;
}

void manager_cache_done(Manager *m) {
        StateCache *sc = m->state_cache;

        if (!sc)
                return;
        fsg_state_unref(sc->state);
        fsg_what_if_memo_clear(&sc->what_if);
        close_fd(sc, &sc->inotify_fd);
        close_fd(sc, &sc->proc_inotify_fd);
        close_fd(sc, &sc->uevent_fd);
        close_fd(sc, &sc->mountinfo_fd);
        if (sc->epoll_fd >= 0)
                close(sc->epoll_fd);
        free(sc);
        m->state_cache = NULL;
}

/* Whether the configuration changed; marks loaded/mounted stale as their signals say. */
static bool poll_changes(Manager *m) {
        StateCache *sc = m->state_cache;
        struct epoll_event ev[8];
        bool config = false;
        int n;

        if (sc->inotify_fd < 0 || sc->epoll_fd < 0)
                return true; /* no watch: rebuild every time rather than risk staleness */
        n = epoll_wait(sc->epoll_fd, ev, ELEMENTSOF(ev), 0);
        if (n < 0) {
                /* Cannot tell: everything counts as changed. */
                sc->loaded_stale = sc->mounted_stale = true;
                return true;
        }
        for (int i = 0; i < n; i++)
                switch (ev[i].data.u64) {
                case TAG_CONFIG:
                        config = drain_inotify(sc->inotify_fd) || config;
                        break;
                case TAG_PROC:
                        if (drain_inotify(sc->proc_inotify_fd)) {
                                sc->loaded_stale = sc->mounted_stale = true;
                                add_proc_watches(m);
                        }
                        break;
                case TAG_UEVENT:
                        if (drain_uevents(sc->uevent_fd))
                                sc->loaded_stale = true;
                        break;
                case TAG_MOUNTS:
                        /* epoll's look at the file took the event. Something may have been
                         * mounted over ROOT/proc (or taken away): look at it again. */
                        setup_proc(m);
                        break;
                }
        return config;
}

int manager_state(Manager *m, FsgState **ret, FsgError *e) {
        StateCache *sc = m->state_cache;
        bool loaded_watched, mounted_watched, update_loaded, update_mounted;
        int r;

        if (poll_changes(m)) {
                sc->state = fsg_state_unref(sc->state);
                fsg_what_if_memo_clear(&sc->what_if);
                if (sc->inotify_fd >= 0)
                        add_watches(m); /* a directory may have appeared or been replaced */
        }
        loaded_watched = (sc->live_proc ? sc->uevent_fd >= 0 : sc->proc_inotify_fd >= 0);
        mounted_watched = (sc->live_proc ? sc->mountinfo_fd >= 0 : sc->proc_inotify_fd >= 0);
        update_loaded = sc->state && (!loaded_watched || sc->loaded_stale || sc->state->loaded_transient);
        update_mounted = sc->state && (!mounted_watched || sc->mounted_stale);
        /* A state someone else holds is never changed under them: a new one instead. */
        if ((update_loaded || update_mounted) && sc->state->n_ref > 1)
                sc->state = fsg_state_unref(sc->state);
        if (!sc->state) {
                r = fsg_state_build(m->ctx, NULL, &sc->state, e);
                if (r < 0)
                        return r;
                for (char **u = sc->state->unreadable; u && *u; u++)
                        log_plain(LOG_WARNING, "Cannot read %s%s: skipped, answers may be incomplete", m->ctx->root, *u);
                /* A build leaves its garbage (kmod's indexes, the parsed files) in the heap's
                 * free lists: give it back, since nothing else is as big until the next one. */
                (void) malloc_trim(0);
        } else {
                if (update_loaded && fsg_state_update_loaded(m->ctx, sc->state) < 0)
                        return fsg_error(e, FSG_ERR_FAILED, "Failed to read %s/proc/modules", m->ctx->root);
                if (update_mounted && fsg_state_update_mounted(m->ctx, sc->state) < 0)
                        return fsg_error(e, FSG_ERR_FAILED, "Failed to read %s/proc/mounts", m->ctx->root);
        }
        sc->loaded_stale = sc->mounted_stale = false;
        *ret = fsg_state_ref(sc->state);
        return 0;
}

void manager_cache_grants_changed(Manager *m) {
        StateCache *sc = m->state_cache;
        FsgError e = {};

        /* Cannot read them, or someone holds it: the next answer builds everything again. */
        if (sc->state && (sc->state->n_ref > 1 || fsg_state_update_grants(m->ctx, sc->state, &e) < 0))
                sc->state = fsg_state_unref(sc->state);
}

int manager_plan(Manager *m, FsgOp op, const char *name, uint64_t flags, FsgPlan *ret, FsgError *e) {
        StateCache *sc = m->state_cache;
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        int r;

        r = manager_state(m, &s, e);
        if (r < 0)
                return r;
        return fsg_plan_cached(m->ctx, s, &sc->what_if, op, name, flags, ret, e);
}

void manager_plan_refusals(Manager *m, const FsgEntry *x, FsgError *ret_allow, FsgError *ret_reset) {
        StateCache *sc = m->state_cache;
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        FsgError e = {};

        /* Without a state nothing can be planned: what would need a plan is refused for that
         * reason; what needs none stays "" (fsg_plan_refusals()'s rule). */
        if (manager_state(m, &s, &e) < 0) {
                uint64_t flags;

                *ret_allow = *ret_reset = (FsgError) {};
                if (fsg_refusal_wants_plan(x, FSG_OP_ALLOW, &flags))
                        *ret_allow = e;
                if (fsg_refusal_wants_plan(x, FSG_OP_RESET, &flags))
                        *ret_reset = e;
                return;
        }
        fsg_plan_refusals(m->ctx, s, &sc->what_if, x, ret_allow, ret_reset);
}

/* After a change of fsgate's, under the same lock as its write: a deny of its own now reports
 * what a route did (two aliases would run the hook twice), a reset may leave another file's
 * deny silent again. */
void manager_update_routes_locked(Manager *m) {
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        FsgError e = {};

        /* The state is asked for with the lock held: inotify has queued every change made
         * before it, so the cache is rebuilt if one came since (fsg_routes_refresh()). */
        if (manager_state(m, &s, &e) < 0 || fsg_routes_write_locked(m->ctx, s, NULL, &e) < 0)
                log_plain(LOG_WARNING, "Could not update %s%s: %s", m->ctx->root, FSG_ROUTES_PATH, e.message);
}

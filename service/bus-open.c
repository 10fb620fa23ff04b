/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <syslog.h>

#include "bus-reply.h"
#include "bus-open.h"
#include "fsgate-api.h"
#include "grant.h"
#include "log.h"
#include "open-route.h"
#include "open-medium.h"
#include "open-request.h"
#include "open-sandbox.h"
#include "open-unit.h"
#include "open-vm.h"
#include "polkit-bridge.h"
#include "store.h"
#include "time-util.h"
#include "utf8.h"

static unsigned opens_of_uid(const Manager *m, uint32_t uid) {
        unsigned n = 0;
        LIST_FOREACH(opens, o, m->opens)
                n += o->uid == uid;
        return n;
}

bool manager_opens_hold(const Manager *m) {
        return m->opens != NULL;
}

/* An unplugged stick's open ends: its driver would only read errors, and a new stick in the
 * same port is another medium (diskseq). Looked for every 2 s, as a grant's medium is; the
 * kernel announces no removal to an open descriptor. */
#define OPENS_WATCH_USEC (2 * 1000000ULL)

static int on_opens_watch(sd_event_source *s, uint64_t usec, void *userdata);

static void opens_watch_arm(Manager *m) {
        bool any = false;

        for (const OpenMedium *o = m->opens; o && !any; o = o->opens_next)
                any = *o->device;
        if (!any) {
                m->opens_watch = sd_event_source_disable_unref(m->opens_watch);
                return;
        }
        if (!m->opens_watch &&
            sd_event_add_time_relative(m->event, &m->opens_watch, CLOCK_MONOTONIC, OPENS_WATCH_USEC, 100000,
                                       on_opens_watch, m) < 0)
                log_plain(LOG_ERR, "Cannot watch the opened media: an unplug ends its open only at close");
}

static int on_opens_watch(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        m->opens_watch = sd_event_source_disable_unref(m->opens_watch);
        for (OpenMedium *o = m->opens, *next; o; o = next) {
                next = o->opens_next;
                if (!*o->device || o->call || fsg_grant_medium_present(&o->medium))
                        continue;
                log_grant(FSGATE_MESSAGE_CLOSED, LOG_NOTICE, "", o->uid, NULL,
                          "Closed %s at %s (open %s): the medium was removed", o->device, o->mountpoint, o->id);
                open_medium_teardown(o);
                open_medium_emit_changed(m);
        }
        opens_watch_arm(m);
        return 0;
}

/* A user's logout (logind's UserRemoved: their last session ended, their manager stopped)
 * closes what they opened: the files of a stick stay readable for nobody after its owner
 * left, and a driver has no reason to run on. Opens by a user without a session (a cron
 * job, a script) end with close or unplug only: no session of theirs ends. */
static int on_user_removed(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        Manager *m = userdata;
        const char *path;
        uint32_t uid;

        if (sd_bus_message_read(msg, "uo", &uid, &path) < 0)
                return 0;
        for (OpenMedium *o = m->opens, *next; o; o = next) {
                next = o->opens_next;
                if (o->uid != uid || o->call)
                        continue;
                log_grant(FSGATE_MESSAGE_CLOSED, LOG_NOTICE, "", o->uid, NULL,
                          "Closed %s at %s (open %s): its user logged out", open_medium_name(o), o->mountpoint, o->id);
                open_medium_teardown(o);
                open_medium_emit_changed(m);
        }
        return 0;
}

static void opens_watch_logout(Manager *m) {
        if (!m->opens_logout &&
            sd_bus_match_signal_async(m->bus, &m->opens_logout, "org.freedesktop.login1", "/org/freedesktop/login1",
                                      "org.freedesktop.login1.Manager", "UserRemoved", on_user_removed, NULL, m) < 0)
                log_plain(LOG_ERR, "Cannot follow logouts: an open ends at close or unplug only");
}

static int on_driver_exit(sd_event_source *s, const siginfo_t *si, void *userdata) {
        OpenMedium *o = userdata;
        char why[64];

        if (o->closed) {
                o->pid = 0;
                open_medium_reaped(o);
                return 0;
        }
        o->pid = 0;     /* reaped by sd-event */
        /* Its group's number stays taken while QEMU is in it: nothing else's is killed. */
        if (o->pgid > 0)
                (void) kill(-o->pgid, SIGKILL);
        open_medium_on_output(NULL, o->err_fd, 0, o);
        snprintf(why, sizeof(why), si->si_code == CLD_EXITED ? "it exited with status %d" : "it was killed by signal %d",
                 si->si_status);
        if (o->call) {
                open_medium_failed(o, why);
                return 0;
        }
        open_medium_ended(o, why);
        return 0;
}

static int on_probe_exit(sd_event_source *s, const siginfo_t *si, void *userdata) {
        OpenMedium *o = userdata;

        if (o->closed) {
                o->probe_pid = 0;
                open_medium_reaped(o);
                return 0;
        }
        o->probe_pid = 0;
        o->probe = sd_event_source_disable_unref(o->probe);
        if (si->si_code != CLD_EXITED || si->si_status != 0) {
                char why[96];

                /* The probe's status: 1 and the errno of the listing, or 2 (it could not start). */
                snprintf(why, sizeof(why), "its mount could not be listed (%s)",
                         si->si_code != CLD_EXITED ? "probe killed" : si->si_status == 2 ? "probe failed to start" :
                         si->si_status == 3 ? "not mounted" :
                         si->si_status > 10 ? strerror(si->si_status - 10) : "empty");
                open_medium_failed(o, why);
                return 0;
        }
        open_medium_ready(o);
        return 0;
}

static int on_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        OpenMedium *o = userdata;
        char why[64];

        snprintf(why, sizeof(why), "it did not answer within %llu s",
                 (unsigned long long) ((o->ready_usec ?: OPEN_READY_USEC) / 1000000ULL));
        open_medium_failed(o, why);
        return 0;
}

/* FSG_OPEN_DIR/ID, made by fsgated under a directory only root may write; its host path. */
static int make_mountpoint(Manager *m, OpenMedium *o, FsgError *e) {
        _cleanup_close_ int dfd = fsg_open_dir(m->ctx, FSG_OPEN_DIR, true);
        char path[64];
        struct stat st;

        if (dfd < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Cannot make %s: %s", FSG_OPEN_DIR, strerror(-dfd));
        if (fstat(dfd, &st) < 0 || st.st_uid != 0 || (st.st_mode & 0022))
                return fsg_error(e, FSG_ERR_FAILED, "%s is not root's alone; nothing was mounted", FSG_OPEN_DIR);
        if (mkdirat(dfd, o->id, 0755) < 0 || fchmodat(dfd, o->id, 0755, 0) < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Cannot make a mountpoint in %s: %s", FSG_OPEN_DIR, strerror(errno));
        snprintf(path, sizeof(path), FSG_OPEN_DIR "/%s", o->id);
        o->mountpoint = fsg_path(m->ctx, path);
        return o->mountpoint ? 0 : fsg_error(e, FSG_ERR_FAILED, "Out of memory");
}

/* fuse.DRIVER on the mountpoint, read-only and inert, for the caller's uid only (no
 * allow_other: not even root's processes enter it); fd the connection the driver serves. */
static int mount_fuse(OpenMedium *o, int fuse_fd, FsgError *e) {
        char type[48], opts[128];

        snprintf(type, sizeof(type), "fuse.%s", o->driver);
        snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=%u,group_id=%u", fuse_fd, (unsigned) o->uid,
                 (unsigned) o->gid);
        if (mount("fsgate", o->mountpoint, type, MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, opts) < 0)
                return fsg_error(e, FSG_ERR_OPEN_FAILED, "Cannot mount %s: %s", o->mountpoint, strerror(errno));
        return 0;
}

static int start_driver(OpenMedium *o, const OpenRequest *q, FsgError *e) {
        _cleanup_close_ int fuse_fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
        char preload[PATH_MAX + 32], fusermount[PATH_MAX + 32];
        bool standin = q->route->start == FSG_OPEN_START_FUSERMOUNT || q->route->start == FSG_OPEN_START_VM;
        int pipefd[2], r;

        /* The one module an open needs; loaded by the kernel on this open unless denied. */
        if (fuse_fd < 0)
                return fsg_error(e, FSG_ERR_OPEN_FAILED, "Cannot open /dev/fuse: %s%s", strerror(errno),
                                 errno == ENODEV || errno == ENXIO || errno == ENOENT ?
                                 " (is the fuse module denied? fsgatectl status fuse)" : "");
        r = open_helper_path("fsgate-open-fd.so", preload, sizeof(preload), e);
        if (r >= 0 && standin)
                r = open_helper_path("fsgate-fusermount", fusermount, sizeof(fusermount), e);
        if (r < 0)
                return r;
        r = mount_fuse(o, fuse_fd, e);
        if (r < 0)
                return r;
        if (pipe2(pipefd, O_CLOEXEC | O_NONBLOCK) < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Cannot make a pipe: %s", strerror(errno));
        o->err_fd = pipefd[0];
        o->pid = open_spawn_driver(q->driver_path, (char * const *) q->route->argv, preload,
                                   standin ? fusermount : NULL, *q->appliance ? q->appliance : NULL, q->kvm,
                                   q->medium_fd, fuse_fd, pipefd[1]);
        close(pipefd[1]);
        if (o->pid < 0)
                return fsg_error(e, FSG_ERR_OPEN_FAILED, "Cannot start %s: %s", o->driver, strerror(-o->pid));
        o->pgid = o->pid;       /* setsid() in the child */
        /* fuse_fd is closed here: the driver holds the connection's only descriptor, so its
         * death ends the mount's requests (ENOTCONN), whatever it was doing. */
        return 0;
}

/* Through systemd: the unit's output into fsgated's pipe (a failure's words, and its end). */
static int open_start_unit(OpenMedium *o, const OpenRequest *q, FsgError *e) {
        int pipefd[2], r;

        if (pipe2(pipefd, O_CLOEXEC | O_NONBLOCK) < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Cannot make a pipe: %s", strerror(errno));
        o->err_fd = pipefd[0];
        r = open_unit_start(o, q, pipefd[1], e);
        close(pipefd[1]);
        if (r >= 0 && (sd_event_add_io(o->manager->event, &o->err_source, o->err_fd, EPOLLIN, open_medium_on_output, o) < 0 ||
                       sd_event_add_time_relative(o->manager->event, &o->timer, CLOCK_MONOTONIC,
                                                  OPEN_READY_USEC + 5 * 1000000ULL, 0, on_timeout, o) < 0))
                r = fsg_error(e, FSG_ERR_FAILED, "Cannot watch the driver");
        return r;
}

static int open_start(Manager *m, sd_bus_message *call, const OpenRequest *q, FsgError *e) {
        OpenMedium *o = calloc(1, sizeof(OpenMedium));
        uint8_t rnd[8];
        int r;

        if (!o)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        *o = (OpenMedium) { .manager = m, .uid = q->uid, .gid = q->gid, .err_fd = -1,
                            .since_usec = fsg_realtime_usec() };
        LIST_PREPEND(opens, m->opens, o);
        m->n_opens++;
        if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
                memset(rnd, 0, sizeof(rnd));
        for (size_t i = 0; i < sizeof(rnd); i++)
                sprintf(o->id + 2 * i, "%02x", rnd[i]);
        snprintf(o->device, sizeof(o->device), "%s", q->device);
        o->medium = q->medium;
        snprintf(o->fstype, sizeof(o->fstype), "%s", q->fstype);
        snprintf(o->driver, sizeof(o->driver), "%s", q->driver);
        o->ready_usec = q->route->start == FSG_OPEN_START_VM ? open_vm_ready_usec() : OPEN_READY_USEC;
        if (q->via_unit) {
                r = open_start_unit(o, q, e);
                goto started;
        }
        r = make_mountpoint(m, o, e);
        if (r >= 0)
                r = start_driver(o, q, e);
        if (r >= 0 && (o->probe_pid = open_spawn_probe(o->mountpoint, o->uid, o->gid)) < 0)
                r = fsg_error(e, FSG_ERR_FAILED, "Cannot start the probe: %s", strerror(-o->probe_pid));
        if (r >= 0 && (sd_event_add_child(m->event, &o->child, o->pid, WEXITED, on_driver_exit, o) < 0 ||
                       sd_event_add_child(m->event, &o->probe, o->probe_pid, WEXITED, on_probe_exit, o) < 0 ||
                       sd_event_add_io(m->event, &o->err_source, o->err_fd, EPOLLIN, open_medium_on_output, o) < 0 ||
                       sd_event_add_time_relative(m->event, &o->timer, CLOCK_MONOTONIC, o->ready_usec, 0,
                                                  on_timeout, o) < 0))
                r = fsg_error(e, FSG_ERR_FAILED, "Cannot watch the driver");
started:
        if (r < 0) {
                open_medium_teardown(o);
                return r;
        }
        o->call = sd_bus_message_ref(call);
        opens_watch_arm(m);
        opens_watch_logout(m);
        return 0;
}

static void on_open_authorized(Manager *m, sd_bus_message *call, bool granted, const sd_bus_error *error,
                               void *userdata) {
        OpenRequest *q = userdata;
        FsgError e = {};

        if (!granted) {
                if (!sd_bus_error_has_name(error, SD_BUS_ERROR_LIMITS_EXCEEDED))
                        log_refusal(call, "", "Refused opening %s: %s", *q->device ? q->device : "an image",
                                    error->message);
                (void) sd_bus_reply_method_error(call, error);
        } else if (m->n_opens >= OPEN_MAX || opens_of_uid(m, q->uid) >= OPEN_PER_UID_MAX)
                (void) sd_bus_reply_method_errorf(call, SD_BUS_ERROR_LIMITS_EXCEEDED,
                                                  "At most %u media may be open for one user, %u in all",
                                                  OPEN_PER_UID_MAX, OPEN_MAX);
        else if (open_start(m, call, q, &e) < 0) {
                log_request(call, FSGATE_MESSAGE_REFUSED, LOG_WARNING, "", "Open of %s failed: %s",
                            *q->device ? q->device : "an image", e.message);
                (void) manager_reply_error(call, &e);
        }
        open_request_free(q);
}

static const char open_message[] =
        N_("Authentication is required to open the files of $(device) read-only without a kernel module.");
static const char open_image_message[] =
        N_("Authentication is required to open the files of an image read-only without a kernel module.");

int method_open_safely(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        OpenRequest *q = calloc(1, sizeof(OpenRequest));
        FsgError e = {};
        sigset_t ss;
        int r;

        if (!q)
                return -ENOMEM;
        q->medium_fd = -1;
        r = open_request_read(m, call, q, &e);
        if (r < 0) {
                open_request_free(q);
                /* A refusal is named (e); anything else is a malformed call, sd-bus's to answer. */
                return e.code != FSG_OK ? manager_reply_error(call, &e) : r;
        }
        if (m->n_opens >= OPEN_MAX || opens_of_uid(m, q->uid) >= OPEN_PER_UID_MAX) {
                open_request_free(q);
                return sd_bus_reply_method_errorf(call, SD_BUS_ERROR_LIMITS_EXCEEDED,
                                                  "At most %u media may be open for one user, %u in all",
                                                  OPEN_PER_UID_MAX, OPEN_MAX);
        }
        /* sd-event's child sources need SIGCHLD blocked; the children unblock it. */
        sigemptyset(&ss);
        sigaddset(&ss, SIGCHLD);
        (void) sigprocmask(SIG_BLOCK, &ss, NULL);
        /* An image is one its caller could read anyway; a device is theirs only if removable. */
        polkit_check_async(m, call, !*q->device || q->removable ? FSGATE_ACTION_OPEN : FSGATE_ACTION_OPEN_SYSTEM,
                           (const char * const[]) { "device", q->device, "fstype", q->fstype, "route", q->driver,
                                                    "removable", !*q->device ? "" : q->removable ? "true" : "false",
                                                    NULL },
                           *q->device ? open_message : open_image_message, on_open_authorized, q);
        return 1;
}

static OpenMedium *find_open(Manager *m, const char *what) {
        LIST_FOREACH(opens, o, m->opens)
                if (!o->call && (streq(o->id, what) || streq(o->mountpoint, what) || (*o->device && streq(o->device, what))))
                        return o;
        return NULL;
}

int method_close_safely(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        Manager *m = userdata;
        const char *what;
        uid_t uid = UINT32_MAX;
        OpenMedium *o;
        FsgError e = {};
        int r;

        r = sd_bus_message_read(call, "s", &what);
        if (r < 0)
                return r;
        if (sd_bus_query_sender_creds(call, SD_BUS_CREDS_EUID | SD_BUS_CREDS_AUGMENT, &creds) >= 0)
                (void) sd_bus_creds_get_euid(creds, &uid);
        o = find_open(m, what);
        if (!o) {
                _cleanup_free_ char *w = fsg_utf8_escape(what);
                fsg_error(&e, FSG_ERR_NOT_OPEN, "Nothing is open safely as \"%.200s\"", w ?: "?");
                return manager_reply_error(call, &e);
        }
        /* Its owner's, or root's: closing takes nothing from anyone else. */
        if (uid != 0 && uid != o->uid)
                return sd_bus_reply_method_errorf(call, SD_BUS_ERROR_ACCESS_DENIED, "%s was opened by another user",
                                                  o->mountpoint);
        log_request(call, FSGATE_MESSAGE_CLOSED, LOG_NOTICE, "", "Closed %s at %s (open %s): unmounted, %s ended",
                    open_medium_name(o), o->mountpoint, o->id, o->driver);
        if (o->unit)    /* answered once its unit has stopped, which unmounts */
                o->close_call = sd_bus_message_ref(call);
        open_medium_teardown(o);
        open_medium_emit_changed(m);
        return o->unit ? 1 : sd_bus_reply_method_return(call, NULL);
}

int property_open_media(sd_bus *bus, const char *path, const char *interface, const char *property,
                        sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        int r = sd_bus_message_open_container(reply, 'a', "(sssusst)");

        for (OpenMedium *o = m->opens; r >= 0 && o; o = o->opens_next)
                if (!o->call)
                        r = sd_bus_message_append(reply, "(sssusst)", o->id, o->mountpoint, o->device, o->uid,
                                                  o->fstype, o->driver, o->since_usec);
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

void manager_opens_start(Manager *m) {
        open_unit_stop_leftovers(m);
        _cleanup_close_ int dfd = fsg_open_dir(m->ctx, FSG_OPEN_DIR, false);
        _cleanup_free_ char *dir = fsg_path(m->ctx, FSG_OPEN_DIR);
        struct dirent *de;
        struct stat st;
        DIR *d;

        /* Only in fsgated's own directory, as it made it: root's alone. */
        if (dfd < 0 || !dir || fstat(dfd, &st) < 0 || st.st_uid != 0 || (st.st_mode & 0022))
                return;
        d = fdopendir(dfd);
        if (!d)
                return;
        dfd = -1;
        while ((de = readdir(d))) {
                _cleanup_free_ char *mp = NULL;

                if (de->d_name[0] == '.' || asprintf(&mp, "%s/%s", dir, de->d_name) < 0)
                        continue;
                if (umount2(mp, MNT_DETACH | UMOUNT_NOFOLLOW) >= 0)
                        log_plain(LOG_NOTICE, "Unmounted %s, left by an fsgated that stopped without closing it", mp);
                (void) rmdir(mp);
        }
        closedir(d);
}

void manager_opens_done(Manager *m) {
        m->opens_watch = sd_event_source_disable_unref(m->opens_watch);
        m->opens_jobs = sd_bus_slot_unref(m->opens_jobs);
        m->opens_logout = sd_bus_slot_unref(m->opens_logout);
        while (m->opens) {
                OpenMedium *o = m->opens;

                if (o->call)
                        (void) sd_bus_reply_method_errorf(o->call, SD_BUS_ERROR_FAILED, "fsgated is stopping");
                else
                        log_grant(FSGATE_MESSAGE_CLOSED, LOG_NOTICE, "", o->uid, NULL,
                                  "Closed %s at %s (open %s): fsgated is stopping", open_medium_name(o), o->mountpoint, o->id);
                open_medium_teardown(o);
        }
        /* Killed and not reaped yet: left to init. */
        while (m->opens_closed) {
                OpenMedium *o = m->opens_closed;

                LIST_REMOVE(opens, m->opens_closed, o);
                open_medium_free(o);
        }
}

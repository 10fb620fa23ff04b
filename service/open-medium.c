/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One open's life after its start, whichever way its driver runs (in fsgated's sandbox,
 * bus-open.c, or in a transient unit, open-unit.c): its first answer, its failure, its end,
 * the teardown and the free. Below both, so that neither calls back up into the other. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "alloc-util.h"
#include "bus-reply.h"
#include "fsgate-api.h"
#include "log.h"
#include "open-medium.h"
#include "utf8.h"

void open_medium_emit_changed(Manager *m) {
        (void) sd_bus_emit_properties_changed(m->bus, FSGATE_BUS_PATH, FSGATE_BUS_IFACE, "OpenMedia", NULL);
}

void open_medium_free(OpenMedium *o) {
        sd_event_source_disable_unref(o->child);
        sd_event_source_disable_unref(o->probe);
        sd_bus_slot_unref(o->unit_slot);
        sd_bus_message_unref(o->close_call);
        free_many(o->unit, o->mountpoint, o);
}

void open_medium_release(OpenMedium *o) {
        LIST_REMOVE(opens, o->manager->opens_closed, o);
        /* CloseSafely's answer, once its unit has stopped: unmounted by then. */
        if (o->close_call)
                (void) sd_bus_reply_method_return(o->close_call, NULL);
        open_medium_free(o);
}

/* A closed open whose children are gone is freed; one in a unit once the unit has stopped. */
void open_medium_reaped(OpenMedium *o) {
        if ((o->pid > 0 && o->child) || (o->probe_pid > 0 && o->probe) || o->unit)
                return;
        open_medium_release(o);
}

/* Unmounted first (a detach: a process in the mount keeps what it has open, nothing new),
 * then the driver killed, its pipe closed and the mountpoint removed; o unlinked and freed. */
void open_medium_teardown(OpenMedium *o) {
        Manager *m = o->manager;

        /* In a unit, its ExecStopPost= unmounts, and systemd ends the driver (open-unit.c). */
        if (o->mountpoint && !o->unit) {
                if (umount2(o->mountpoint, MNT_DETACH | UMOUNT_NOFOLLOW) < 0 && errno != EINVAL && errno != ENOENT)
                        log_plain(LOG_WARNING, "Cannot unmount %s: %s", o->mountpoint, strerror(errno));
                if (rmdir(o->mountpoint) < 0 && errno != ENOENT)
                        log_plain(LOG_WARNING, "Cannot remove %s: %s", o->mountpoint, strerror(errno));
        }
        if (o->probe_pid > 0)
                (void) kill(o->probe_pid, SIGKILL);
        if (o->pid > 0)
                (void) kill(o->pid, SIGKILL);
        /* The rest of its session: the VM route's QEMU, which would outlive guestmount. */
        if (o->pgid > 0)
                (void) kill(-o->pgid, SIGKILL);
        o->timer = sd_event_source_disable_unref(o->timer);
        o->err_source = sd_event_source_disable_unref(o->err_source);
        if (o->err_fd >= 0)
                close(o->err_fd);
        o->err_fd = -1;
        o->call = sd_bus_message_unref(o->call);
        LIST_REMOVE(opens, m->opens, o);
        m->n_opens--;
        /* Its children are reaped by the loop, never waited for in place: a driver reading a
         * failing stick may sit in the kernel for minutes, fsgated must not. Kept until then. */
        o->closed = true;
        LIST_PREPEND(opens, m->opens_closed, o);
        if (o->unit)
                o->unit_stop(o);
        else
                open_medium_reaped(o);
}

const char *open_medium_name(const OpenMedium *o) {
        return *o->device ? o->device : "an image";
}

/* The driver failed before its first answer: the caller hears why, nothing stays. */
void open_medium_failed(OpenMedium *o, const char *why) {
        FsgError e = {};

        if (o->err_source)      /* what the driver said so far */
                open_medium_on_output(NULL, o->err_fd, 0, o);

        fsg_error(&e, FSG_ERR_OPEN_FAILED, "%s could not read %s (%s filesystem): %s%s%s; nothing was mounted",
                  o->driver, open_medium_name(o), o->fstype, why, *o->err_tail ? ": " : "", o->err_tail);
        log_request(o->call, FSGATE_MESSAGE_REFUSED, LOG_WARNING, NULL, "%s", e.message);
        (void) manager_reply_error(o->call, &e);
        open_medium_teardown(o);
}

/* The driver's output, drained as it comes (a chatty or hostile driver costs a pipe's worth);
 * its last line kept for the message of a failure. */
int open_medium_on_output(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        OpenMedium *o = userdata;
        char buf[4096];
        ssize_t n = read(fd, buf, sizeof(buf) - 1);

        if (n <= 0) {
                if (n < 0 && errno == EAGAIN)
                        return 0;
                o->err_source = sd_event_source_disable_unref(o->err_source);
                /* In a unit, systemd holds the pipe as long as the unit is there: its end. */
                if (s && o->unit && !o->call && !o->closed)
                        open_medium_ended(o, "its unit ended");
                return 0;
        }
        buf[n] = 0;
        while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
                buf[--n] = 0;
        char *line = strrchr(buf, '\n');
        _cleanup_free_ char *esc = fsg_cescape(line ? line + 1 : buf);
        if (esc && *esc)
                snprintf(o->err_tail, sizeof(o->err_tail), "%s", esc);
        return 0;
}

void open_medium_ended(OpenMedium *o, const char *why) {
        log_grant(FSGATE_MESSAGE_CLOSED, LOG_WARNING, "", o->uid, NULL,
                  "%s of %s at %s (open %s) ended: %s%s%s; unmounted", o->driver, open_medium_name(o), o->mountpoint,
                  o->id, why, *o->err_tail ? ": " : "", o->err_tail);
        open_medium_emit_changed(o->manager);
        open_medium_teardown(o);
}

void open_medium_ready(OpenMedium *o) {
        o->timer = sd_event_source_disable_unref(o->timer);
        log_request(o->call, FSGATE_MESSAGE_OPENED, LOG_NOTICE, NULL,
                    "Opened %s (%s) read-only at %s with %s as %s, for uid %u (open %s); no kernel module loaded",
                    open_medium_name(o), o->fstype, o->mountpoint, o->driver, o->unit ? o->unit : "nobody",
                    (unsigned) o->uid, o->id);
        (void) sd_bus_reply_method_return(o->call, "ss", o->mountpoint, o->id);
        o->call = sd_bus_message_unref(o->call);
        open_medium_emit_changed(o->manager);
}

/* A helper of the driver's installed beside fsgated (libexecdir, or the build tree's
 * service/): the shim it preloads (open-fd-preload.c), the fusermount it finds
 * (open-fusermount.c). Root's, and writable by nobody else. */
int open_helper_path(const char *name, char *ret, size_t size, FsgError *e) {
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        struct stat st;
        char *slash;

        if (n <= 0)
                return fsg_error(e, FSG_ERR_FAILED, "Cannot find fsgated's own directory: %s", strerror(errno));
        exe[n] = 0;
        slash = strrchr(exe, '/');
        if (!slash)
                return fsg_error(e, FSG_ERR_FAILED, "Cannot find fsgated's own directory");
        *slash = 0;
        if ((size_t) snprintf(ret, size, "%s/%s", exe, name) >= size)
                return fsg_error(e, FSG_ERR_FAILED, "fsgated's directory has too long a name");
        if (stat(ret, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 0022))
                return fsg_error(e, FSG_ERR_NO_ROUTE, "%s is missing or not root's alone", ret);
        return 0;
}

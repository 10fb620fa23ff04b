/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
/* What an observed request (fsgate-blocked --observe) leaves behind: who asked, found in
 * /proc, and the "would block" entry in the journal, with a kernel log line beside it. */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <syslog.h>
#include <systemd/sd-device.h>
#include <systemd/sd-journal.h>
#include <systemd/sd-login.h>
#include <unistd.h>

#include "alloc-util.h"
#include "hook.h"
#include "journal-ids.h"
#include "macro.h"
#include "name.h"
#include "utf8.h"

/* A host with more processes than this is searched that far: the request is attributed to
 * nobody rather than holding up the kernel. */
#define REQUESTER_SCAN_MAX 65536

/* Reads a NUL-terminated string of another process, never across into a page that may not be
 * mapped. 0, or -1 when it could not be read whole. */
static int remote_string(pid_t pid, uintptr_t addr, char *buf, size_t size) {
        size_t got = 0, page = (size_t) sysconf(_SC_PAGESIZE);

        while (got < size - 1) {
                size_t room = size - 1 - got, to_page = page - ((addr + got) % page);
                size_t want = room < to_page ? room : to_page;
                struct iovec local = { buf + got, want }, remote = { (void *) (addr + got), want };
                ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

                if (n <= 0)
                        return -1;
                if (memchr(buf + got, 0, (size_t) n))
                        return 0;
                got += (size_t) n;
        }
        return -1;
}

/* Whether pid waits in mount(2) or fsopen(2) for a filesystem of type type; *source gets
 * mount's first argument. /proc/PID/syscall holds the number and arguments of the call a
 * sleeping task is in: the kernel asks for the module from inside that call, and the task
 * sleeps until the request (this hook) is done. */
static bool waits_for_type(pid_t pid, const char *type, char *source, size_t source_size) {
        char path[64], line[256], name[FSG_NAME_MAX + 2];
        unsigned long long a[6] = {};
        _cleanup_close_ int fd = -1;
        long nr;
        ssize_t n;

        snprintf(path, sizeof(path), "/proc/%d/syscall", (int) pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || (n = read(fd, line, sizeof(line) - 1)) <= 0)
                return false;
        line[n] = 0;
        if (sscanf(line, "%ld %llx %llx %llx %llx %llx %llx", &nr, &a[0], &a[1], &a[2], &a[3], &a[4], &a[5]) != 7)
                return false;
        if (nr == SYS_mount) {
                if (remote_string(pid, a[2], name, sizeof(name)) < 0 || !streq(name, type))
                        return false;
                if (!a[0] || remote_string(pid, a[0], source, source_size) < 0 || !fsg_utf8_is_valid(source))
                        *source = 0;
                return true;
        }
#ifdef SYS_fsopen
        if (nr == SYS_fsopen)
                return remote_string(pid, a[0], name, sizeof(name)) == 0 && streq(name, type);
#endif
        return false;
}

static uid_t pid_uid(pid_t pid) {
        _cleanup_fclose_ FILE *f = NULL;
        char path[64], line[256];
        unsigned long uid;

        snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        f = fopen(path, "re");
        while (f && fgets(line, sizeof(line), f))
                if (sscanf(line, "Uid: %lu", &uid) == 1)
                        return (uid_t) uid;
        return (uid_t) -1;
}

int hook_requester_find(const char *type, HookRequester *ret) {
        _cleanup_closedir_ DIR *d = opendir("/proc");
        struct dirent *de;
        unsigned seen = 0;

        *ret = (HookRequester) { .uid = (uid_t) -1 };
        while (d && (de = readdir(d)) && seen++ < REQUESTER_SCAN_MAX) {
                char *end, path[64];
                long pid = strtol(de->d_name, &end, 10);
                _cleanup_close_ int fd = -1;
                ssize_t n;

                if (*end || pid <= 1 || !waits_for_type((pid_t) pid, type, ret->source, sizeof(ret->source)))
                        continue;
                /* The first found is named; a second one asking at the same moment is counted,
                 * so the entry does not pretend to know which one this request is. */
                if (ret->pid > 0) {
                        ret->n_more++;
                        continue;
                }
                ret->pid = (pid_t) pid;
                ret->uid = pid_uid(ret->pid);
                snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd >= 0 && (n = read(fd, ret->comm, sizeof(ret->comm) - 1)) > 0)
                        ret->comm[n - (ret->comm[n - 1] == '\n')] = 0;
                if (!fsg_utf8_is_valid(ret->comm))
                        ret->comm[0] = 0;
        }
        return ret->pid > 0 ? 0 : -ESRCH;
}

/* The user's name, "" when the uid has none here. */
static void user_name(uid_t uid, char *buf, size_t size) {
        struct passwd pw, *res = NULL;
        char tmp[1024];

        *buf = 0;
        if (uid != (uid_t) -1 && getpwuid_r(uid, &pw, tmp, sizeof(tmp), &res) == 0 && res &&
            fsg_utf8_is_valid(res->pw_name))
                snprintf(buf, size, "%s", res->pw_name);
}

/* The label udev read on the medium (its database, as fsgated's reports use it), "" if none. */
static void device_label(const char *device, char *buf, size_t size) {
        sd_device *d = NULL;
        const char *label = NULL;

        *buf = 0;
        if (!*device || sd_device_new_from_devname(&d, device) < 0)
                return;
        if (sd_device_get_property_value(d, "ID_FS_LABEL", &label) >= 0 && label && fsg_utf8_is_valid(label))
                snprintf(buf, size, "%s", label);
        sd_device_unref(d);
}

void hook_observe_record(const char *type, const char *module, const char *profile, const HookVerdict *v) {
        _cleanup_free_ char *session = NULL;
        char label[128];
        HookRequester q;
        char user[64], who[512] = "";
        const char *device;

        if (v->summary > 0) {
                hook_kmsg("<5>fsgate: %u more autoloads of filesystem %s (module %s) that profile %s would block "
                          "were not logged; at most %u are logged per %u s\n",
                          v->summary, type, module, profile, v->burst, v->window_sec);
                (void) sd_journal_send("MESSAGE=%u more autoloads of filesystem %s that profile %s would block were "
                                       "not logged", v->summary, type, profile,
                                       "MESSAGE_ID=" FSGATE_MESSAGE_WOULD_BLOCK, "PRIORITY=%i", LOG_NOTICE,
                                       "SYSLOG_IDENTIFIER=fsgate-blocked", "FSGATE_TYPE=%s", type,
                                       "FSGATE_MODULE=%s", module, "FSGATE_PROFILE=%s", profile,
                                       "FSGATE_COUNT=%u", v->summary, "FSGATE_REQUEST_UID=-1", NULL);
        }
        if (!v->log)
                return;
        (void) hook_requester_find(type, &q);
        user_name(q.uid, user, sizeof(user));
        if (q.pid > 0 && sd_pid_get_session(q.pid, &session) < 0)
                session = NULL;
        device = strncmp(q.source, "/dev/", 5) == 0 ? q.source : "";
        device_label(device, label, sizeof(label));
        if (q.pid > 0)
                snprintf(who, sizeof(who), "; asked by uid %d%s%s (%s, pid %d%s%s)%s", (int) q.uid, *user ? " " : "",
                         user, q.comm, (int) q.pid, *device ? ", " : "", device,
                         q.n_more ? ", and others at the same moment" : "");
        hook_kmsg("<5>fsgate: profile %s would block autoload of filesystem %s (module %s)%s; loading it "
                  "(observing: nothing is denied)\n", profile, type, module, who);
        (void) sd_journal_send("MESSAGE=Profile %s would block autoload of filesystem %s (module %s)%s", profile, type,
                               module, who, "MESSAGE_ID=" FSGATE_MESSAGE_WOULD_BLOCK, "PRIORITY=%i", LOG_NOTICE,
                               "SYSLOG_IDENTIFIER=fsgate-blocked", "FSGATE_TYPE=%s", type, "FSGATE_MODULE=%s", module,
                               "FSGATE_PROFILE=%s", profile, "FSGATE_COUNT=1", "FSGATE_DEVICE=%s", device,
                               "FSGATE_LABEL=%s", label, "FSGATE_CAUSE=kernel",
                               "FSGATE_REQUEST_UID=%d", q.pid > 0 ? (int) q.uid : -1,
                               "FSGATE_REQUEST_PID=%d", (int) q.pid, "FSGATE_REQUEST_COMM=%s", q.comm,
                               "FSGATE_USER=%s", user, "FSGATE_SESSION=%s", session ?: "", NULL);
}

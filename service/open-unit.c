/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <syslog.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "log.h"
#include "open-unit.h"
#include "unit-name.h"

#define STRV_MAKE(...) ((char *[]) { __VA_ARGS__, NULL })

#define SD_DEST  "org.freedesktop.systemd1"
#define SD_PATH  "/org/freedesktop/systemd1"
#define SD_IFACE "org.freedesktop.systemd1.Manager"

/* A little longer than the unit's own start timeout, so that systemd's "timeout" is what the
 * caller hears; fsgated's timer (bus-open.c) stays the bound a driver cannot extend. */
#define UNIT_START_USEC (15 * 1000000ULL)

bool open_unit_possible(void) {
        return sd_booted() > 0;
}

/* A property's (sv), opened up to its value of the given signature: the caller appends the
 * value, then closes what it opened and these two (close_containers()). */
static int open_property(sd_bus_message *m, const char *property, const char *signature) {
        int r = sd_bus_message_open_container(m, 'r', "sv");

        if (r >= 0)
                r = sd_bus_message_append(m, "s", property);
        return r >= 0 ? sd_bus_message_open_container(m, 'v', signature) : r;
}

/* The n innermost containers closed, unless r says an append failed already. */
static int close_containers(sd_bus_message *m, unsigned n, int r) {
        for (unsigned i = 0; r >= 0 && i < n; i++)
                r = sd_bus_message_close_container(m);
        return r;
}

/* One Exec*= line: path, argv, and "privileged" for the "+" steps (outside the sandbox). */
static int append_exec(sd_bus_message *m, const char *property, const char *path, char **argv, bool privileged) {
        int r = open_property(m, property, "a(sasas)");

        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "(sasas)");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'r', "sasas");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", path);
        if (r >= 0)
                r = sd_bus_message_append_strv(m, argv);
        if (r >= 0)
                r = sd_bus_message_append_strv(m, privileged ? (char *[]) { (char *) "privileged", NULL } :
                                                               (char *[]) { NULL });
        return close_containers(m, 4, r);
}

static int append_strv(sd_bus_message *m, const char *property, char **v) {
        int r = open_property(m, property, "as");

        if (r >= 0)
                r = sd_bus_message_append_strv(m, v);
        return close_containers(m, 2, r);
}

/* A list of system calls or address families: (allow list?, names). */
static int append_filter(sd_bus_message *m, const char *property, bool allow, char **v) {
        int r = open_property(m, property, "(bas)");

        if (r >= 0)
                r = sd_bus_message_open_container(m, 'r', "bas");
        if (r >= 0)
                r = sd_bus_message_append(m, "b", allow);
        if (r >= 0)
                r = sd_bus_message_append_strv(m, v);
        return close_containers(m, 3, r);
}

/* What the driver may do, as systemd.exec(5) says it. The same bounds as fsgated's own
 * sandbox for it (open-sandbox.c), and a dynamic user of its own: one compromised driver
 * cannot signal another. systemd-analyze security of the unit: tests/system/scenarios. */
static int append_sandbox(sd_bus_message *m) {
        int r = sd_bus_message_append(m, "(sv)(sv)(sv)(sv)(sv)(sv)(sv)(sv)(sv)(sv)(sv)(sv)(sv)(sv)(sv)(sv)",
                                      "DynamicUser", "b", 1,
                                      "NoNewPrivileges", "b", 1,
                                      "CapabilityBoundingSet", "t", (uint64_t) 0,
                                      "PrivateNetwork", "b", 1,
                                      "PrivateDevices", "b", 1,
                                      "PrivateIPC", "b", 1,
                                      "PrivateUsers", "b", 1,
                                      "ProtectSystem", "s", "strict",
                                      "ProtectHome", "s", "yes",
                                      "ProtectKernelTunables", "b", 1,
                                      "ProtectKernelModules", "b", 1,
                                      "ProtectKernelLogs", "b", 1,
                                      "ProtectControlGroups", "b", 1,
                                      "ProtectClock", "b", 1,
                                      "ProtectHostname", "b", 1,
                                      "ProtectProc", "s", "invisible");
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)(sv)(sv)(sv)(sv)(sv)(sv)(sv)(sv)(sv)",
                                          "ProcSubset", "s", "pid",
                                          "RestrictNamespaces", "t", (uint64_t) 0,
                                          "RestrictRealtime", "b", 1,
                                          "RestrictSUIDSGID", "b", 1,
                                          "LockPersonality", "b", 1,
                                          "MemoryDenyWriteExecute", "b", 1,
                                          "RemoveIPC", "b", 1,
                                          "KeyringMode", "s", "private",
                                          "UMask", "u", (uint32_t) 0077,
                                          "SystemCallErrorNumber", "i", (int32_t) EPERM);
        /* Limits: its memory, its tasks (no fork bomb), its files; it writes none. */
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)(sv)(sv)(sv)(sv)(sv)(sv)(sv)",
                                          "MemoryMax", "t", (uint64_t) 512 << 20,
                                          "TasksMax", "t", (uint64_t) 32,
                                          "LimitNOFILE", "t", (uint64_t) 64,
                                          "LimitNOFILESoft", "t", (uint64_t) 64,
                                          "LimitFSIZE", "t", (uint64_t) 0,
                                          "LimitFSIZESoft", "t", (uint64_t) 0,
                                          "LimitCORE", "t", (uint64_t) 0,
                                          "LimitCORESoft", "t", (uint64_t) 0);
        /* No address at all (PrivateNetwork= leaves it none; this says so to the analysis). */
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)", "IPAddressDeny", "a(iayu)", 2,
                                          AF_INET, 4, 0, 0, 0, 0, (uint32_t) 0,
                                          AF_INET6, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (uint32_t) 0);
        /* The mount step opens /dev/fuse in this unit's cgroup, whose device policy
         * PrivateDevices= closes; the driver's private /dev has no fuse node to open. */
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)", "DeviceAllow", "a(ss)", 1, "/dev/fuse", "rw");
        if (r >= 0)
                r = append_filter(m, "SystemCallFilter", true, STRV_MAKE("@system-service"));
        if (r >= 0)
                r = append_filter(m, "SystemCallFilter", false,
                                  STRV_MAKE("@privileged", "@resources", "@mount", "@module", "@raw-io",
                                            "@reboot", "@swap", "@debug", "@cpu-emulation", "@obsolete"));
        if (r >= 0)
                r = append_filter(m, "RestrictAddressFamilies", true, STRV_MAKE("AF_UNIX"));
        if (r >= 0)
                r = append_strv(m, "SystemCallArchitectures", STRV_MAKE("native"));
        return r;
}

/* Ends, or rather its unit's jobs: a start's result is the open's; a stop's the close's. */
static int on_job_removed(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        Manager *m = userdata;
        const char *job, *unit, *result;
        uint32_t id;

        if (sd_bus_message_read(msg, "uoss", &id, &job, &unit, &result) < 0)
                return 0;
        LIST_FOREACH(opens, o, m->opens)
                if (o->unit && streq(o->unit, unit) && o->call) {
                        char why[96];

                        if (streq(result, "done")) {
                                open_medium_ready(o);
                                return 0;
                        }
                        snprintf(why, sizeof(why), "its unit %s did not start (%s)", unit, result);
                        open_medium_failed(o, why);
                        return 0;
                }
        LIST_FOREACH(opens, o, m->opens_closed)
                if (o->unit && streq(o->unit, unit)) {
                        open_medium_release(o);
                        return 0;
                }
        return 0;
}

static int watch_jobs(Manager *m) {
        if (m->opens_jobs)
                return 0;
        return sd_bus_match_signal_async(m->bus, &m->opens_jobs, SD_DEST, SD_PATH, SD_IFACE, "JobRemoved",
                                         on_job_removed, NULL, m);
}

static int on_start_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        OpenMedium *o = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);

        o->unit_slot = sd_bus_slot_unref(o->unit_slot);
        if (e && o->call) {
                char why[200];

                snprintf(why, sizeof(why), "systemd did not make its unit (%s)", e->message ?: e->name);
                open_medium_failed(o, why);
        }
        return 0;
}

/* The unit's properties: its steps (the helper's mount, the driver, the probe, the unmount),
 * the medium's and the output's file descriptors, its sandbox and its tie to the device. path:
 * fsgate-open-helper's. */
static int append_unit_properties(sd_bus_message *m, OpenMedium *o, const OpenRequest *q, char *path, int err_fd) {
        char uid[16], gid[16], device_unit[FSG_UNIT_NAME_MAX + 1], description[160];
        char number[32], seq[32];
        const char *fusermount_bin = "/bin/fusermount";
        bool standin = q->route->start == FSG_OPEN_START_FUSERMOUNT;
        const char *exec_argv[16];
        size_t n = 0;
        int r;

        snprintf(uid, sizeof(uid), "%u", (unsigned) o->uid);
        snprintf(gid, sizeof(gid), "%u", (unsigned) o->gid);
        snprintf(number, sizeof(number), "%u:%u", (unsigned) q->medium.major, (unsigned) q->medium.minor);
        snprintf(seq, sizeof(seq), "%llu", (unsigned long long) q->medium.diskseq);
        snprintf(description, sizeof(description), "fsgate: the files of %s read-only by %s",
                 *o->device ? o->device : "an image", o->driver);
        exec_argv[n++] = path;
        exec_argv[n++] = "exec";
        if (standin)
                exec_argv[n++] = "--fusermount";
        exec_argv[n++] = q->driver_path;
        for (size_t i = 0; q->route->argv[i] && n < ELEMENTSOF(exec_argv) - 1; i++)
                exec_argv[n++] = q->route->argv[i];
        exec_argv[n] = NULL;

        r = sd_bus_message_append(m, "(sv)(sv)(sv)(sv)(sv)(sv)(sv)",
                                  "Description", "s", description,
                                  "CollectMode", "s", "inactive-or-failed",
                                  "TimeoutStartUSec", "t", UNIT_START_USEC,
                                  "NotifyAccess", "s", "all",
                                  "FileDescriptorStoreMax", "u", (uint32_t) 2,
                                  "StandardOutputFileDescriptor", "h", err_fd,
                                  "StandardErrorFileDescriptor", "h", err_fd);
        /* squashfuse exits 8 when stopped (measured on Debian 12): a close, not a failure. */
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)", "SuccessExitStatus", "(aiai)", 1, (int32_t) 8, 0);
        /* An image its caller opened comes as stdin; a device the mount step opens, read-only,
         * past the device policy PrivateDevices= closes (the driver's /dev has no node of it). */
        if (r >= 0 && q->medium_fd >= 0)
                r = sd_bus_message_append(m, "(sv)", "StandardInputFileDescriptor", "h", q->medium_fd);
        else if (r >= 0)
                r = sd_bus_message_append(m, "(sv)", "DeviceAllow", "a(ss)", 1, o->device, "r");
        if (r >= 0)
                r = append_exec(m, "ExecStartPreEx", path,
                                *o->device ? STRV_MAKE(path, "mount", o->id, uid, gid, o->driver, o->device, number, seq) :
                                             STRV_MAKE(path, "mount", o->id, uid, gid, o->driver), true);
        if (r >= 0)
                r = append_exec(m, "ExecStartEx", path, (char **) exec_argv, false);
        if (r >= 0)
                r = append_exec(m, "ExecStartPostEx", path, STRV_MAKE(path, "probe", o->id, uid, gid), true);
        if (r >= 0)
                r = append_exec(m, "ExecStopPostEx", path, STRV_MAKE(path, "unmount", o->id), true);
        if (r >= 0)
                r = append_sandbox(m);
        /* libfuse2 runs /bin/fusermount before any on PATH: there, the stand-in. */
        if (r >= 0 && standin && access(fusermount_bin, F_OK) >= 0) {
                char standin_path[PATH_MAX + 32];

                snprintf(standin_path, sizeof(standin_path), "%.*s/fsgate-fusermount",
                         (int) (strrchr(path, '/') - path), path);
                r = sd_bus_message_append(m, "(sv)", "BindReadOnlyPaths", "a(ssbt)", 1, standin_path,
                                          fusermount_bin, 0, (uint64_t) 0);
        }
        /* An unplugged stick stops its unit (and so unmounts) even before fsgated looks. */
        if (r >= 0 && *o->device && fsg_unit_name_of_path(o->device, ".device", device_unit, sizeof(device_unit)) >= 0)
                r = sd_bus_message_append(m, "(sv)(sv)", "BindsTo", "as", 1, device_unit, "After", "as", 1,
                                          device_unit);
        return r;
}

int open_unit_start(OpenMedium *o, const OpenRequest *q, int err_fd, FsgError *e) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        char path[PATH_MAX];
        int r;

        r = open_helper_path("fsgate-open-helper", path, sizeof(path), e);
        if (r < 0)
                return r;
        /* Before o->unit: the teardown of an open with a unit's name stops that unit. */
        o->unit_stop = open_unit_stop;
        if (asprintf(&o->unit, "fsgate-open-%s.service", o->id) < 0 ||
            asprintf(&o->mountpoint, FSG_OPEN_DIR "/%s", o->id) < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        r = watch_jobs(o->manager);
        if (r < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Cannot follow systemd's jobs: %s", strerror(-r));

        r = sd_bus_message_new_method_call(o->manager->bus, &m, SD_DEST, SD_PATH, SD_IFACE, "StartTransientUnit");
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", o->unit, "fail");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "(sv)");
        if (r >= 0)
                r = append_unit_properties(m, o, q, path, err_fd);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_append(m, "a(sa(sv))", 0);
        if (r >= 0)
                r = sd_bus_call_async(o->manager->bus, &o->unit_slot, m, on_start_reply, o, 0);
        if (r < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Cannot ask systemd for a unit: %s", strerror(-r));
        return 0;
}

static int on_stop_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        OpenMedium *o = userdata;

        o->unit_slot = sd_bus_slot_unref(o->unit_slot);
        /* No such unit (it ended by itself) or no answer: nothing to wait for. */
        if (sd_bus_message_is_method_error(reply, NULL))
                open_medium_release(o);
        return 0;
}

void open_unit_stop(OpenMedium *o) {
        int r;

        o->unit_slot = sd_bus_slot_unref(o->unit_slot);
        r = sd_bus_call_method_async(o->manager->bus, &o->unit_slot, SD_DEST, SD_PATH, SD_IFACE, "StopUnit",
                                     on_stop_reply, o, "ss", o->unit, "replace");
        if (r < 0) {
                log_plain(LOG_WARNING, "Cannot stop %s: %s", o->unit, strerror(-r));
                open_medium_release(o);
        }
}

void open_unit_stop_leftovers(Manager *m) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *name;
        int r;

        if (!open_unit_possible())
                return;
        r = sd_bus_call_method(m->bus, SD_DEST, SD_PATH, SD_IFACE, "ListUnitsByPatterns", NULL, &reply, "asas", 0, 1,
                               "fsgate-open-*.service");
        if (r < 0)
                return;
        r = sd_bus_message_enter_container(reply, 'a', "(ssssssouso)");
        while (r >= 0 && sd_bus_message_read(reply, "(ssssssouso)", &name, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                             NULL, NULL) > 0) {
                log_plain(LOG_NOTICE, "Stopping %s, left by an fsgated that stopped without closing it", name);
                (void) sd_bus_call_method(m->bus, SD_DEST, SD_PATH, SD_IFACE, "StopUnit", NULL, NULL, "ss", name,
                                          "replace");
        }
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
/* fsgate-blocked's device paths: a new block device udev reports (--device), the medium a
 * grant for another one hides from udisks2 (--udev-import), a device's report handed to a
 * unit when fsgated was too slow for udev (--report), and the disks that were there before
 * the bus (--boot). Not rate limited: udev runs them synchronously in a bounded number of
 * workers, and fsgated reports a medium only once. */
#include <stdio.h>
#include <string.h>
#include <systemd/sd-device.h>

#include "context.h"
#include "device-check.h"
#include "hook.h"
#include "macro.h"
#include "name.h"
#include "state.h"
#include "time-util.h"
#include "unit-name.h"
#include "utf8.h"

/* Of the device path's budget (HOOK_DEVICE_BUDGET_USEC), the call to fsgated gets at most
 * DEVICE_CALL_USEC of what the state build left, the hand-over to systemd the rest. */
#define DEVICE_CALL_USEC 1500000ULL
#define DEVICE_CALL_MIN_USEC 200000ULL
#define HANDOVER_CALL_USEC 800000ULL

static uint64_t device_call_timeout_usec(void) {
        uint64_t spent = fsg_now_usec() - hook_start_usec, t;

        t = spent + HANDOVER_CALL_USEC < HOOK_DEVICE_BUDGET_USEC ?
                HOOK_DEVICE_BUDGET_USEC - HANDOVER_CALL_USEC - spent : 0;
        if (t > DEVICE_CALL_USEC)
                t = DEVICE_CALL_USEC;
        return t < DEVICE_CALL_MIN_USEC ? DEVICE_CALL_MIN_USEC : t;
}

#define REPORT_UNIT_TEMPLATE "fsgate-report-device@.service"
/* PID 1's own socket (root only): it answers while dbus-daemon waits for fsgated to start. */
#define SYSTEMD_PRIVATE_ADDRESS "unix:path=/run/systemd/private"

/* fsgated did not take the report in time: on a slow machine its bus activation can take
 * longer than the budget, and dbus-daemon drops a queued call whose sender has gone. A unit
 * may wait as long as activation takes, so systemd is asked to start the device's instance
 * of fsgate-report-device@.service, without waiting for it. A unit rather than a child:
 * udevd kills what a RUN program leaves in its cgroup. */
static int hand_over(const char *devnode) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        char unit[FSG_UNIT_NAME_MAX + 1];
        int r;

        r = fsg_unit_name_from_path(REPORT_UNIT_TEMPLATE, devnode, unit, sizeof(unit));
        if (r < 0)
                return r;
        r = hook_bus_open(SYSTEMD_PRIVATE_ADDRESS, HANDOVER_CALL_USEC, &bus);
        if (r < 0)
                return r;
        /* "replace": an instance already starting for this device takes this start as its own. */
        return sd_bus_call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                  "org.freedesktop.systemd1.Manager", "StartUnit", NULL, NULL, "ss", unit, "replace");
}

/* A new block device: report it only if its filesystem type may not autoload, so that
 * ordinary disks do not start the service at every boot. */
int hook_device_mode(char **args, const FsgHookArgs *line) {
        const char *devnode = args[0];
        _cleanup_(fsg_context_freep) FsgContext *c = NULL;
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        const char *type = getenv("ID_FS_TYPE"), *root = secure_getenv("FSGATE_ROOT");
        const FsgEntry *x;

        if (!type || !fsg_name_is_valid(type) || !fsg_utf8_is_valid(devnode) || strncmp(devnode, "/dev/", 5) != 0)
                return 0;
        /* FSGATE_ROOT: tests judge against a scratch root; udev never sets it. A type a grant
         * for another medium loaded is registered, yet this medium must be reported:
         * --udev-import said so (FSGATE_GRANTED_ELSEWHERE). */
        if (fsg_context_new(root, NULL, &c, NULL) < 0 ||
            (!streq_ptr(getenv("FSGATE_GRANTED_ELSEWHERE"), "1") && !device_type_may_be_denied(c, type)) ||
            fsg_state_build(c, NULL, &s, NULL) < 0)
                return 0;
        x = fsg_state_find(s, type);
        if (!x || !x->denied || x->builtin)
                return 0;
        /* Synchronous, unlike the kernel's path: udevd kills what a RUN program leaves
         * behind in its cgroup once the event is done, and it can wait a few seconds. The
         * budget main() armed bounds the whole path: during boot the bus socket accepts
         * before dbus-daemon answers (sd-bus's own wait for the bus to start has no timeout),
         * and fsgate-boot-report.service reports such a disk once the bus is up. A scratch
         * root is no booted system: no hand-over there. */
        if (hook_call("ReportDevice", devnode, type, device_call_timeout_usec()) < 0 && !root)
                (void) hand_over(devnode);
        return 0;
}

/* udev's IMPORT{program}: a medium of a type that a grant for another medium loaded is
 * hidden from udisks2 (UDISKS_IGNORE: desktops neither show nor mount it on their own), and
 * --device then reports it, so that someone is asked. Root can still mount it by hand. */
int hook_udev_import_mode(char **args, const FsgHookArgs *line) {
        const char *devnode = args[0];
        _cleanup_(fsg_context_freep) FsgContext *c = NULL;
        const char *type = getenv("ID_FS_TYPE");

        if (!type || !fsg_name_is_valid(type) || !fsg_utf8_is_valid(devnode) || strncmp(devnode, "/dev/", 5) != 0 ||
            fsg_context_new(secure_getenv("FSGATE_ROOT"), NULL, &c, NULL) < 0)
                return 0;
        if (device_granted_elsewhere(c, type, devnode))
                printf("UDISKS_IGNORE=1\nFSGATE_GRANTED_ELSEWHERE=1\n");
        return 0;
}

/* The report of one device, from a unit: it may wait for fsgated's activation. The
 * configuration is read again (it may have changed since udev's event), and built once for
 * all of a boot's disks (*s). */
static void report_device(const FsgContext *c, FsgState **s, sd_device *d) {
        const char *devnode = NULL, *type = NULL;
        const FsgEntry *x;

        if (sd_device_get_devname(d, &devnode) < 0 || sd_device_get_property_value(d, "ID_FS_TYPE", &type) < 0 ||
            !fsg_name_is_valid(type) || !fsg_utf8_is_valid(devnode) || strncmp(devnode, "/dev/", 5) != 0 ||
            !device_type_may_be_denied(c, type))
                return;
        if (!*s && fsg_state_build(c, NULL, s, NULL) < 0)
                return;
        x = fsg_state_find(*s, type);
        if (x && x->denied && !x->builtin)
                (void) hook_call("ReportDevice", devnode, type, 25000000ULL);
}

/* One device the udev hook could not report in time (hand_over()), from
 * fsgate-report-device@.service. What udev knows of it comes from udev's database. */
int hook_report_mode(char **args, const FsgHookArgs *line) {
        const char *devnode = args[0];
        _cleanup_(sd_device_unrefp) sd_device *d = NULL;
        _cleanup_(fsg_context_freep) FsgContext *c = NULL;
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;

        if (strncmp(devnode, "/dev/", 5) != 0 || sd_device_new_from_devname(&d, devnode) < 0 ||
            fsg_context_new(secure_getenv("FSGATE_ROOT"), NULL, &c, NULL) < 0)
                return 0;
        report_device(c, &s, d);
        return 0;
}

/* Disks that were there before the system bus (at boot, or plugged in before dbus.service
 * ran): their udev "add" found no one to tell. fsgate-boot-report.service runs this once the
 * bus is up; the service reports each medium only once, so a disk udev did report is not
 * reported again. Not in a udev worker: it may wait for bus activation. */
int hook_boot_mode(char **args, const FsgHookArgs *line) {
        _cleanup_(sd_device_enumerator_unrefp) sd_device_enumerator *e = NULL;
        _cleanup_(fsg_context_freep) FsgContext *c = NULL;
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;

        if (sd_device_enumerator_new(&e) < 0 || sd_device_enumerator_add_match_subsystem(e, "block", true) < 0 ||
            sd_device_enumerator_add_match_property(e, "ID_FS_TYPE", "*") < 0 ||
            fsg_context_new(secure_getenv("FSGATE_ROOT"), NULL, &c, NULL) < 0)
                return 0;
        for (sd_device *d = sd_device_enumerator_get_device_first(e); d; d = sd_device_enumerator_get_device_next(e))
                report_device(c, &s, d);
        return 0;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <syslog.h>
#include <systemd/sd-device.h>
#include <systemd/sd-journal.h>

#include "blocked.h"
#include "log.h"
#include "name.h"
#include "strv.h"
#include "utf8.h"

/* One stick must not produce a storm: one signal per device and type while we run. The
 * bound only protects memory; real systems see a handful of devices. */
#define REPORTED_MAX 1024

static void device_unrefp(sd_device **d) {
        sd_device_unref(*d);
}

static int append_str(sd_bus_message *m, const char *key, const char *value) {
        if (!value || !*value || !fsg_utf8_is_valid(value))
                return 0;
        return sd_bus_message_append(m, "{sv}", key, "s", value);
}

/* What udev knows about the device: enough for a person to recognize the stick. */
static int append_device_details(sd_bus_message *m, const char *devnode) {
        _cleanup_(device_unrefp) sd_device *d = NULL;
        const char *v = NULL;
        int r;

        /* By sysname, not by node: the service has no /dev of its own (PrivateDevices=). */
        if (sd_device_new_from_subsystem_sysname(&d, "block", strrchr(devnode, '/') + 1) < 0)
                return 0;
        if (sd_device_get_property_value(d, "ID_FS_LABEL", &v) >= 0 && (r = append_str(m, "label", v)) < 0)
                return r;
        if (sd_device_get_property_value(d, "ID_FS_UUID", &v) >= 0 && (r = append_str(m, "uuid", v)) < 0)
                return r;
        if (sd_device_get_property_value(d, "ID_VENDOR", &v) >= 0 && (r = append_str(m, "vendor", v)) < 0)
                return r;
        if (sd_device_get_property_value(d, "ID_MODEL", &v) >= 0 && (r = append_str(m, "model", v)) < 0)
                return r;
        if (sd_device_get_sysattr_value(d, "size", &v) >= 0) {
                unsigned long long sectors = strtoull(v, NULL, 10);
                r = sd_bus_message_append(m, "{sv}", "size", "t", (uint64_t) sectors * 512);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int emit_blocked(Manager *m, const FsgEntry *x, const char *type, const char *device) {
        sd_bus_message *sig = NULL;
        int r;

        r = sd_bus_message_new_signal(m->bus, &sig, FSGATE_BUS_PATH, FSGATE_BUS_IFACE, "Blocked");
        if (r >= 0)
                r = sd_bus_message_append(sig, "sss", type, x->module, device);
        if (r >= 0)
                r = sd_bus_message_open_container(sig, 'a', "{sv}");
        if (r >= 0)
                r = append_str(sig, "source", x->source);
        if (r >= 0)
                r = sd_bus_message_append(sig, "{sv}", "origin", "s", fsg_origin_to_string(x->origin));
        if (r >= 0 && *device)
                r = append_device_details(sig, device);
        if (r >= 0)
                r = sd_bus_message_close_container(sig);
        if (r >= 0)
                r = sd_bus_send(m->bus, sig, NULL);
        sd_bus_message_unref(sig);

        (void) sd_journal_send("MESSAGE=Blocked autoload of filesystem %s (module %s%s%s), denied by %s; "
                               "allow with: fsgatectl allow %s",
                               type, x->module, *device ? ", device " : "", device,
                               *x->source ? x->source : fsg_origin_to_string(x->origin), x->module,
                               "MESSAGE_ID=" FSGATE_MESSAGE_BLOCKED,
                               "PRIORITY=%i", LOG_WARNING,
                               "SYSLOG_IDENTIFIER=fsgated",
                               "FSGATE_TYPE=%s", type,
                               "FSGATE_MODULE=%s", x->module,
                               "FSGATE_DEVICE=%s", device,
                               "FSGATE_SOURCE=%s", x->source,
                               NULL);
        return r;
}

static int report(sd_bus_message *call, Manager *m, const char *type, const char *device) {
        const FsgState *s;
        const FsgEntry *x;
        FsgError e = {};

        if (!fsg_name_is_valid(type))
                return sd_bus_reply_method_errorf(call, fsg_error_dbus_name(FSG_ERR_INVALID_NAME), "Invalid type");
        if (manager_state(m, &s, &e) < 0)
                return sd_bus_reply_method_errorf(call, fsg_error_dbus_name(e.code), "%s", e.message);
        x = fsg_state_find(s, type);
        /* The hook only runs for a deny; a type that is allowed now was allowed meanwhile. */
        if (!x || !x->denied)
                return sd_bus_reply_method_return(call, NULL);
        (void) emit_blocked(m, x, type, device);
        return sd_bus_reply_method_return(call, NULL);
}

int method_report_blocked(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        const char *type, *module;
        int r = sd_bus_message_read(call, "ss", &type, &module);
        if (r < 0)
                return r;
        return report(call, userdata, type, "");
}

int method_report_device(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        _cleanup_free_ char *key = NULL;
        const char *device, *type;
        int r;

        r = sd_bus_message_read(call, "ss", &device, &type);
        if (r < 0)
                return r;
        if (strncmp(device, "/dev/", 5) != 0 || strstr(device, "/.."))
                return sd_bus_reply_method_errorf(call, SD_BUS_ERROR_INVALID_ARGS, "Not a device node: %s", device);
        if (asprintf(&key, "%s\t%s", device, type) < 0)
                return -ENOMEM;
        if (strv_contains(m->reported, key))
                return sd_bus_reply_method_return(call, NULL);
        if (strv_length(m->reported) < REPORTED_MAX && strv_extend(&m->reported, key) < 0)
                return -ENOMEM;
        return report(call, m, type, device);
}

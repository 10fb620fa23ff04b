/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "fsg-error.h"
#include "grant.h"
#include "list.h"
#include "manager.h"
#include "open-route.h"

/* One opened medium, shared by bus-open.c (the methods, the in-process driver) and
 * open-unit.c (the driver in a transient systemd unit, when fsgated's own unit forbids it to
 * mount). */
typedef struct OpenMedium {
        Manager *manager;
        LIST_FIELDS(struct OpenMedium, opens);  /* in manager->opens, or once ended in opens_closed */
        char id[17];
        char *mountpoint;       /* the host's path */
        char device[64];        /* "/dev/NAME", or "" for an image its caller opened */
        FsgGrant medium;        /* the device's number and diskseq: gone or another medium, the open ends */
        char fstype[32], driver[32];
        uint32_t uid, gid;
        uint64_t since_usec;
        pid_t pid, probe_pid;
        pid_t pgid;             /* the driver's session, whose group QEMU is in too: killed whole */
        uint64_t ready_usec;    /* the time limit for the first answer */
        sd_event_source *child, *probe, *timer, *err_source;
        int err_fd;
        char err_tail[200];     /* the driver's last line: what a failure says */
        sd_bus_message *call;   /* OpenSafely's, answered once the driver answered */
        bool closed;            /* ended, in opens_closed until its children are reaped */
        /* In a unit (open-unit.c): its name, the call to systemd under way (start or stop),
         * and CloseSafely's, answered once the unit has stopped (unmounted). */
        char *unit;
        sd_bus_slot *unit_slot;
        sd_bus_message *close_call;
        void (*unit_stop)(struct OpenMedium *o);        /* open_unit_stop(), set with unit */
} OpenMedium;

/* What OpenSafely checked before polkit, carried to its answer. */
typedef struct OpenRequest {
        const FsgOpenRoute *route;
        bool removable;         /* a device's: on USB or MMC, or removable media */
        bool via_unit;          /* fsgated may not mount itself: systemd runs it all */
        FsgGrant medium;        /* a device's number and diskseq (device fields only) */
        int medium_fd;
        char device[64], fstype[32], driver_path[128], driver[32];
        char appliance[256];    /* the VM route's (open-vm.h), "" for a FUSE driver */
        bool kvm;               /* the VM route may use KVM */
        uint32_t uid, gid;
} OpenRequest;

/* The outcomes (open-medium.c), whichever way the driver runs: its first answer came (the call
 * is answered with the mountpoint); it failed before (the call gets OpenFailed with why and
 * the driver's last line; everything is torn down); a running one ended (logged, torn down). */
void open_medium_ready(OpenMedium *o);
void open_medium_failed(OpenMedium *o, const char *why);
void open_medium_ended(OpenMedium *o, const char *why);
/* Ended for any cause: unmounted (in a unit: its stop unmounts), the driver killed, moved to
 * opens_closed until its processes or unit are gone. The caller emits the change. */
void open_medium_teardown(OpenMedium *o);
/* A closed one: freed once its processes (or unit) are gone, else left for their end. */
void open_medium_reaped(OpenMedium *o);
/* A closed one whose processes or unit are gone: unlinked from opens_closed and freed. */
void open_medium_release(OpenMedium *o);
void open_medium_free(OpenMedium *o);
/* The driver's output, drained as it comes; its last line kept for a failure's message. */
int open_medium_on_output(sd_event_source *s, int fd, uint32_t revents, void *userdata);
/* OpenMedia changed (a PropertiesChanged signal). */
void open_medium_emit_changed(Manager *m);
/* The device's name, or "an image", for log lines. */
const char *open_medium_name(const OpenMedium *o);
/* A helper installed beside fsgated (libexecdir, or the build tree's service/): ret filled
 * with its path if it is there, root's and writable by nobody else (the unit's steps run it
 * as root); else NoRoute in e. */
int open_helper_path(const char *name, char *ret, size_t size, FsgError *e);

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

/* The profiles' methods (bus-profile.c). */
/* ApplyProfile(s name, t flags) → a(sss) changes */
int method_apply_profile(sd_bus_message *call, void *userdata, sd_bus_error *error);
/* UndoProfile(s name, t flags) → a(sss) changes: resets of the files the profile's apply wrote,
 * and the modules left alone ("kept-edited", "kept-by-hand") */
int method_undo_profile(sd_bus_message *call, void *userdata, sd_bus_error *error);
/* StopObserving() → s the profile whose observation ended ("": none was on) */
int method_stop_observing(sd_bus_message *call, void *userdata, sd_bus_error *error);
/* GetObservation() → s profile, t since (µs, CLOCK_REALTIME), as modules */
int method_get_observation(sd_bus_message *call, void *userdata, sd_bus_error *error);
/* AuditProfile(s name, t flags) → s profile, b hard_required, b compliant, a(sbbbs) modules */
int method_audit_profile(sd_bus_message *call, void *userdata, sd_bus_error *error);

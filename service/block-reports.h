/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "manager.h"

/* Reports from fsgate-blocked (the deny hook and the udev rule), root only: each becomes a
 * Blocked signal and a journal entry. */
int method_report_blocked(sd_bus_message *call, void *userdata, sd_bus_error *error);
int method_report_device(sd_bus_message *call, void *userdata, sd_bus_error *error);

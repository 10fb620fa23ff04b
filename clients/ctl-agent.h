/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

void ctl_agent_open(void);
void ctl_agent_close(void);

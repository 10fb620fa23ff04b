// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Debian's chromium as the Cockpit tests drive it through playwright-core: run as root (no
// sandbox), no GPU, nothing of its own fetched or synced in the background.

import { chromium } from 'playwright-core';

export function launchChromium() {
    return chromium.launch({
        executablePath: '/usr/bin/chromium',
        args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
            '--disable-sync', '--no-first-run'],
        timeout: 30_000,
    });
}

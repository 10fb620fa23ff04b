// SPDX-License-Identifier: LGPL-2.1-or-later
//
// fsgate's page inside Cockpit's shell, reached as its users reach it: the real login page
// (a local user's password, checked by PAM), the shell's navigation, the page in the shell's
// frame; fsuser has no administrative rights, fsadmin gets them through the shell's own
// "Administrative access" (sudo). run-cockpit-test starts cockpit-ws for this
// (cockpit-login-ns.sh) against the same fsgated and scratch root as test-cockpit.mjs.
// TAP lines as there; screenshots of the page in the shell, light and dark.

import { copyFileSync, existsSync, lstatSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { launchChromium } from './chromium.mjs';
import { check, tapSteps } from './tap.mjs';

const { values: opt } = parseArgs({
    options: {
        url: { type: 'string' },
        root: { type: 'string' },
        artifacts: { type: 'string' },
        'docs-dir': { type: 'string' },
    },
});
for (const k of ['url', 'root', 'artifacts'])
    if (!opt[k])
        throw new Error(`--${k} is required`);
const PASSWORD = process.env.FSGATE_TEST_PASSWORD;
if (!PASSWORD)
    throw new Error('FSGATE_TEST_PASSWORD is not set');

const WAIT = 20_000;      // the shell loads more than the bare page
let browser, page;
const { step, problems, plan } = tapSteps({ artifacts: opt.artifacts, prefix: 'shell-failure-step', fullPage: false,
                                           current: () => ({ page, browser }) });

async function login(user) {
    const p = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    p.setDefaultTimeout(WAIT);
    p.on('pageerror', e => problems.push(`pageerror: ${e.message}`));
    await p.goto(opt.url);
    await p.fill('#login-user-input', user);
    await p.fill('#login-password-input', PASSWORD);
    await p.click('#login-button');
    return p;
}

// The shell names a package's frame after host and path.
const frame = () => page.frameLocator('iframe[name="cockpit1:localhost/fsgate"]');
const frameRow = m => frame().locator(`tbody[data-module="${m}"]`);

async function openFromNavigation() {
    const link = page.locator('a[href="/fsgate"]');
    await link.waitFor();
    check((await link.textContent()).trim() === 'Filesystems', `the navigation names it "${await link.textContent()}"`);
    await link.click();
    await frameRow('hfs').waitFor();
}

browser = await launchChromium();

await step('the real login page: fsuser, no administrative rights, logs in with a password (PAM)', async () => {
    page = await login('fsuser');
    await page.locator('a[href="/system"]').waitFor();
    // The shell sets its title once the session is up: "Overview - fsuser@HOST".
    await page.waitForFunction(() => /^Overview - fsuser@/.test(document.title));
});

await step('the shell\'s navigation lists Filesystems; it opens the page in the shell\'s frame', async () => {
    await openFromNavigation();
    check(/\/fsgate$/.test(new URL(page.url()).pathname), `the shell's address is ${page.url()}`);
});

await step('fsuser sees the read-only form, every action disabled with the reason', async () => {
    await frame().locator('#readonly-note:not([hidden])').waitFor();
    check(await frameRow('hfs').locator('.badge').textContent() === 'denied', 'hfs is not shown as denied');
    check(await frame().locator('tbody button[data-action]:enabled').count() === 0, 'an action button is enabled');
    const why = await frameRow('hfs').locator('.btn-wrap:has(button[data-action="deny"])').getAttribute('title');
    check(/administrative access/.test(why), `the reason: ${why}`);
    // The journal's history is root's: said in words, with the way to it, not an empty list and
    // not "Failed to open the journal: Permission denied" (issue 41).
    await frame().locator('#history-note', { hasText: 'which only administrators can read. Turn on administrative ' +
                                                      'access (the lock at the top) or ask an administrator.' }).waitFor();
});

await step('screenshots in the shell: light, then dark by the shell\'s own setting', async () => {
    await page.screenshot({ path: join(opt.artifacts, 'cockpit-shell.png') });
    // As a person switches it: the shell's Session menu, Style: Dark. The shell keeps it in
    // localStorage "shell:style"; the page, open in its frame, follows at once (no reload:
    // a reload here sometimes met "Server has closed the connection" from cockpit-ws).
    const style = async which => {
        await page.locator('#toggle-menu').click();
        await page.locator(`button#${which}`).click();
        await page.keyboard.press('Escape');
        // The focus (and its outline) off the menu's button, into the page.
        await frame().locator('h1').click();
    };
    await style('dark');
    await frame().locator('html.pf-theme-dark').waitFor({ state: 'attached' });
    await frameRow('hfs').waitFor();
    await page.screenshot({ path: join(opt.artifacts, 'cockpit-shell-dark.png') });
    await style('light');
    await frame().locator('html:not(.pf-theme-dark)').waitFor({ state: 'attached' });
    if (opt['docs-dir']) {
        copyFileSync(join(opt.artifacts, 'cockpit-shell.png'), join(opt['docs-dir'], 'cockpit-shell.png'));
        copyFileSync(join(opt.artifacts, 'cockpit-shell-dark.png'), join(opt['docs-dir'], 'cockpit-shell-dark.png'));
    }
    await page.close();
});

await step('fsadmin logs in, turns on administrative access with the password (sudo), the form becomes active', async () => {
    page = await login('fsadmin');
    await openFromNavigation();
    await frame().locator('#readonly-note:not([hidden])').waitFor();
    await page.getByRole('button', { name: /Limited access/ }).click();
    await page.locator('input[type="password"]').fill(PASSWORD);
    await page.getByRole('button', { name: /^Authenticate$/ }).click();
    await page.getByText('Administrative access', { exact: true }).waitFor();
    await frameRow('affs').locator('button[data-action="allow"]:enabled').waitFor();
    check(await frame().locator('#readonly-note').isHidden(), 'the read-only note stays');
});

await step('fsadmin allows affs from the page in the shell: the mask is on disk, the row follows', async () => {
    const file = join(opt.root, 'etc/modprobe.d/60-blacklist_fs-affs.conf');
    check(!existsSync(file), `${file} exists before the allow`);
    await frameRow('affs').locator('button[data-action="allow"]:enabled').click();
    await frameRow('affs').locator('button[data-confirm="allow"]').click();
    await frame().locator('tbody[data-module="affs"][data-state="allowed"]').waitFor();
    check(lstatSync(file).isSymbolicLink() && readlinkSync(file) === '/dev/null', 'no /dev/null mask on disk');
    // As root (sudo's bridge), the history of blocks is readable.
    await frame().locator('#history-rows tr.history-row').first().waitFor();
    await frameRow('affs').locator('button[data-action="reset"]:enabled').click();
    await frameRow('affs').locator('button[data-confirm="reset"]').click();
    await frame().locator('tbody[data-module="affs"][data-state="denied"]').waitFor();
    check(!existsSync(file), 'the mask is still there after the reset');
});

await browser.close();
plan();

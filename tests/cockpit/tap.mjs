// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The Cockpit tests' results as TAP lines ("ok N - what", "not ok N - what"). In the browser
// (tapSteps) the first failure, or an error the page reported meanwhile, ends the run with a
// screenshot of the page as it was; in plain node (runTests) every test runs.

import { join } from 'node:path';

export function check(cond, what) {
    if (!cond)
        throw new Error(what);
}

// current() gives the test's { page, browser } at the time of a failure; a failure's
// screenshot is ARTIFACTS/PREFIXN.png.
export function tapSteps({ artifacts, prefix, fullPage, current }) {
    const problems = [];  // uncaught page errors and console errors: each one fails the run
    let n = 0;

    async function step(name, fn) {
        n++;
        const t0 = Date.now();
        try {
            await fn();
            check(problems.length === 0, `the page reported errors:\n  ${problems.join('\n  ')}`);
            console.log(`ok ${n} - ${name} (${Date.now() - t0} ms)`);
        } catch (ex) {
            const { page, browser } = current();
            console.log(`not ok ${n} - ${name}`);
            console.log(`  ${String(ex.stack || ex).split('\n').join('\n  ')}`);
            if (page) {
                const shot = join(artifacts, `${prefix}${n}.png`);
                await page.screenshot({ path: shot, fullPage }).catch(() => {});
                console.log(`  screenshot: ${shot}`);
            }
            await browser?.close();
            process.exit(1);
        }
    }

    return { step, problems, plan: () => console.log(`1..${n}`) };
}

// Runs each of tests ({ name: function }) in plain node, failures included, prints the TAP
// lines and the plan, and exits 1 if any failed.
export function runTests(tests) {
    let n = 0, failed = 0;
    for (const [name, fn] of Object.entries(tests)) {
        n++;
        try {
            fn();
            console.log(`ok ${n} - ${name}`);
        } catch (ex) {
            failed++;
            console.log(`not ok ${n} - ${name}`);
            console.log(`  ${String(ex.message).split('\n').join('\n  ')}`);
        }
    }
    console.log(`1..${n}`);
    process.exit(failed ? 1 : 0);
}

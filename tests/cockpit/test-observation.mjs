// SPDX-License-Identifier: LGPL-2.1-or-later
//
// node test-observation.mjs: what the Cockpit page says of an observation (cockpit/observation.js,
// issue 39) without a browser: GetObservation's reply, the rows it names, the notice's words and
// command, and the History card's would-blocks (fsgatectl log --json, "would_block": true) as
// "would be blocked by PROFILE (observing; loaded)", never as blocks. Texts go through a stand-in
// of cockpit.gettext that marks them, to show that each one is translated.

import assert from 'node:assert/strict';
import { runTests } from './tap.mjs';

globalThis.cockpit = {
    gettext: s => `«${s}»`,
    ngettext: (s, p, n) => `«${n === 1 ? s : p}»`,
    format: (fmt, ...args) => fmt.replace(/\$(\d+)/g, (m, i) => String(args[Number(i)])),
};
const obs = await import('../../cockpit/observation.js');

const SINCE = Date.UTC(2024, 4, 17, 9, 30) * 1000;   // microseconds, as GetObservation's t
const CIS = ['cramfs', 'freevxfs', 'hfs', 'hfsplus', 'jffs2', 'udf'];
const observing = obs.parseObservation(['cis', SINCE, CIS]);

// fsgatectl log --json's entries: a block, a would-block (the hook read who asked), and one
// nobody waited for that stands for 5 requests in one minute.
const block = { type: 'hfs', module: 'hfs', deciding_file: '/usr/lib/modprobe.d/60-blacklist_fs-hfs.conf',
    would_block: false, profile: '', asked_uid: -1, asked_user: '', asked_command: '', count: 1 };
const would = { type: 'udf', module: 'udf', deciding_file: '', would_block: true, profile: 'cis', asked_uid: 1000,
    asked_user: 'alice', asked_command: 'mount', count: 1 };
const storm = { ...would, asked_uid: -1, asked_user: '', asked_command: '', count: 5 };

const tests = {
    'nothing observed: GetObservation\'s ("", 0, []) is null, and no row is observed': () => {
        assert.equal(obs.parseObservation(['', 0, []]), null);
        assert.equal(obs.observedBy(null, 'udf'), '');
    },
    'an observation: its profile, since (µs), modules': () => {
        assert.deepEqual(observing, { profile: 'cis', since: SINCE, modules: CIS });
        assert.equal(obs.observedBy(observing, 'udf'), 'cis');
        assert.equal(obs.observedBy(observing, 'ext4'), '');
    },
    'the notice names the profile and since when, says nothing is denied, translated': () => {
        const t = obs.noticeTitle(observing);
        assert.match(t, /^«Observing profile cis since .+: nothing is denied; each autoload it would block goes ahead and is recorded\.»$/);
        assert.ok(t.includes(new Date(SINCE / 1000).toLocaleString()), t);
    },
    'the evidence\'s command is fsgatectl audit PROFILE, never translated': () =>
        assert.equal(obs.auditCommand(observing), 'fsgatectl audit cis'),
    'a block in the history stays a block: its deciding file, nobody asked': () => {
        assert.equal(obs.isWouldBlock(block), false);
        assert.equal(obs.historyDecidedBy(block), '/usr/lib/modprobe.d/60-blacklist_fs-hfs.conf');
        assert.equal(obs.historyAskedBy(block), '');
        assert.equal(obs.historyWords(block), '');
    },
    'a would-block is "would be blocked by cis (observing; loaded)", with who asked': () => {
        assert.equal(obs.isWouldBlock(would), true);
        assert.equal(obs.historyDecidedBy(would), '«would be blocked by cis (observing; loaded)»');
        assert.equal(obs.historyAskedBy(would), '«asked by alice (uid 1000, mount)»');
    },
    'a would-block nobody waited for, counted 5 times: no asker, the count': () => {
        assert.equal(obs.historyAskedBy(storm), '');
        assert.equal(obs.historyDecidedBy(storm), '«would be blocked by cis (observing; loaded)» · «5 requests»');
    },
    'the history\'s filter finds would-blocks by observing, profile, user and command': () => {
        const w = obs.historyWords(would).toLowerCase();
        for (const word of ['would-block', 'observing', 'cis', 'alice', 'mount'])
            assert.ok(w.split(/\s+/).includes(word), `${word} in ${w}`);
    },
};

runTests(tests);

// SPDX-License-Identifier: LGPL-2.1-or-later
//
// node test-filter.mjs: the Cockpit page's table filter (cockpit/filter.mjs) on entries as
// the service lists them, without a browser. Issue 41 item 4: "hfs" showed ib_qib and
// squashfs, whose types ipathfs and squashfs contain it; names come first, then types,
// matched where a name or a part of it begins, and a row found by a type says which.

import assert from 'node:assert/strict';
import { matchEntry, nameMatches } from '../../cockpit/filter.mjs';
import { runTests } from './tap.mjs';

const entry = (module, types, texts = []) => ({ module, types, texts });
const ENTRIES = [
    entry('hfs', ['hfs'], ['denied', 'vendor', '/usr/lib/modprobe.d/60-blacklist_fs-hfs.conf', 'orphaned upstream']),
    entry('hfsplus', ['hfsplus'], ['allowed', 'default']),
    entry('ib_qib', ['ipathfs'], ['allowed', 'default']),
    entry('squashfs', ['squashfs'], ['allowed', 'default']),
    entry('freevxfs', ['vxfs'], ['allowed', 'default']),
    entry('ext4', ['ext2', 'ext3', 'ext4'], ['allowed', 'default', 'mounted']),
    entry('vfat', ['vfat'], ['allowed', 'default']),
    entry('msdos', ['msdos'], ['allowed', 'default']),
];

// What the filter text shows: module → the type it was found by ("" by its name).
function shown(text) {
    const words = text.trim().toLowerCase().split(/\s+/).filter(Boolean);
    const out = {};
    for (const e of ENTRIES) {
        const m = matchEntry(e, words, e.texts);
        if (m)
            out[e.module] = m.type || '';
    }
    return out;
}

const tests = {
    'hfs is hfs and hfsplus, never ib_qib (ipathfs) or squashfs': () =>
        assert.deepEqual(shown('hfs'), { hfs: '', hfsplus: '' }),
    'a type matched says which': () => {
        assert.deepEqual(shown('ipathfs'), { ib_qib: 'ipathfs' });
        assert.deepEqual(shown('VXFS'), { freevxfs: 'vxfs' });
        assert.deepEqual(shown('ext3'), { ext4: 'ext3' });
    },
    'names first: a word that is the module name is no type match': () =>
        assert.deepEqual(shown('ext4'), { ext4: '' }),
    'a part of a name after _ or -, either spelling of the module': () => {
        assert.deepEqual(shown('qib'), { ib_qib: '' });
        assert.deepEqual(shown('ib-qib'), { ib_qib: '' });
    },
    'never inside a word': () => {
        assert.deepEqual(shown('fat'), {});
        assert.deepEqual(shown('pathfs'), {});
    },
    'a glob matches a whole name, as fsgatectl list PATTERN': () => {
        assert.deepEqual(shown('*fat'), { vfat: '' });
        assert.deepEqual(shown('*fs'), { hfs: '', squashfs: '', freevxfs: '', ib_qib: 'ipathfs' });
        assert.deepEqual(shown('[hm]*'), { hfs: '', hfsplus: '', msdos: '' });
        assert.deepEqual(shown('[!a-h]*'), { ib_qib: '', squashfs: '', freevxfs: 'vxfs', vfat: '', msdos: '' });
        assert.equal(nameMatches('ext?', 'ext4'), true);
        assert.equal(nameMatches('ext[', 'ext['), true);      // no closing bracket: a plain [
    },
    'the row\'s other words, where one of theirs begins': () => {
        assert.deepEqual(shown('orphaned'), { hfs: '' });
        assert.deepEqual(shown('60-blacklist_fs-hfs'), { hfs: '' });
        assert.deepEqual(shown('denied'), { hfs: '' });
        assert.deepEqual(shown('phaned'), {});
        assert.deepEqual(shown('mounted ext2'), { ext4: 'ext2' });
    },
    'every word must match': () =>
        assert.deepEqual(shown('hfs default'), { hfsplus: '' }),
    'no words: every row': () =>
        assert.equal(Object.keys(shown('  ')).length, ENTRIES.length),
};

runTests(tests);

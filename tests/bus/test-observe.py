#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Observing a profile before enforcing it (issue 39), on the host: `apply --observe` writes the
observation and denies nothing; kmod's own dry run sends the kernel's request to the hook; the
hook records "would block" in the real systemd-journald (run in a private mount namespace) and
asks modprobe to load the module (a stand-in /sbin/modprobe: the host loads nothing); `audit`
shows the evidence (text and JSON), `log --would-block` lists it; `apply` then names what it
would block and refuses without --force, and ends the observation with it; a storm of requests
costs a few journal lines; a vendor file that denies a module meanwhile wins over the
observation; the polkit check is the deny action's (MOCK polkit), and nothing is written
without it."""

import json
import os
import subprocess
import sys
import time

sys.dont_write_bytecode = True      # keep the source tree clean
from fsgatetest import (ACTION_DENY, CONFIG, E_ACCESS_DENIED, ERR, NOBODY, BusTestCase, conf_name,  # noqa: E402
                        snapshot, write)
from fsgatetest import suse  # noqa: E402
from fsgatetest.hookrun import HookRun  # noqa: E402
from fsgatetest.journal import NOW, WOULD_BLOCK, Journald, blocked, export_entry, write_journal  # noqa: E402

OBSERVE = 0x80
OBSERVE_FILE = 'etc/modprobe.d/fsgate-observe.conf'
CIS = ['cramfs', 'freevxfs', 'hfs', 'hfsplus', 'jffs2', 'udf']


class ObserveTest(BusTestCase):

    def setUp(self):
        super().setUp()
        self.run = HookRun(self.workdir)
        scratch = self.run.scratch
        self.journal = Journald(scratch)
        self.addCleanup(self.journal.stop)
        self.stack.env['FSGATE_JOURNAL_DIR'] = self.journal.dir
        self.addCleanup(self.stack.env.pop, 'FSGATE_JOURNAL_DIR', None)

    def observed_file(self):
        try:
            with open(os.path.join(self.root, OBSERVE_FILE)) as f:
                return f.read()
        except FileNotFoundError:
            return None

    def hook(self, *args):
        p = self.journal.run([CONFIG.hook, *args], env=self.run.env(self.stack.env, self.root))
        self.assertEqual(p.returncode, 0, p)
        return p

    def loads(self):
        return self.run.loads()

    def entries(self):
        self.journal.sync()
        p = subprocess.run(['journalctl', '-D', self.journal.dir, '-o', 'json', 'MESSAGE_ID=' + WOULD_BLOCK],
                           capture_output=True, text=True, timeout=30)
        return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]

    def test_observe_records_loads_and_apply_names_it(self):
        st = self.stack
        before = {m: st.busctl('GetFilesystem', 's', m).data for m in ('hfs', 'udf')}
        r = st.ctl('apply', '--observe', 'cis')
        self.assertEqual(r.rc, 0, r)
        self.assertIn('Profile cis: observing', r.out)
        self.assertIn('fsgatectl audit cis', r.out)
        text = self.observed_file()
        self.assertIsNotNone(text, 'no observation written')
        self.assertIn('alias fs-udf fsgate_observed_udf\n', text)
        self.assertRegex(text, r'\ninstall fsgate_observed_udf /\S*/fsgate-blocked --observe udf udf cis\n')
        # Nothing denied, nothing else written: the modules are as they were.
        for m, data in before.items():
            self.assertEqual(st.busctl('GetFilesystem', 's', m).data, data, m)
        self.assertFalse(os.path.exists(self.etc(module='udf')))
        r = st.busctl('GetObservation', '')
        self.assertReplyOk(r)
        self.assertEqual(r.data[0], 'cis')
        self.assertIn('udf', r.data[2])
        self.assertIn('Observed: profile cis would deny it', st.ctl('status', 'udf').out)

        # kmod itself sends the kernel's request for udf to the hook, with the profile's name.
        rc, out = suse.run_with_root_config(self.root, ['modprobe', '-n', '-v', '-d', self.root, '-S', self.kver,
                                                        'fs-udf'])
        self.assertIn('--observe udf udf cis', out)

        # The hook records the would-block and loads the module as kmod would have.
        self.hook('--observe', 'udf', 'udf', 'cis')
        self.assertEqual(self.loads(), ['-q -- udf'])
        with open(self.run.kmsg) as f:
            self.assertIn('fsgate: profile cis would block autoload of filesystem udf (module udf)', f.read())
        e = self.entries()
        self.assertEqual(len(e), 1, e)
        self.assertEqual((e[0]['FSGATE_TYPE'], e[0]['FSGATE_MODULE'], e[0]['FSGATE_PROFILE'], e[0]['_UID']),
                         ('udf', 'udf', 'cis', '0'))
        self.assertEqual(e[0]['FSGATE_COUNT'], '1')

        # log marks it as what it is, among real blocks; --would-block keeps it alone.
        write_journal(os.path.join(self.journal.dir, 'blocks.journal'), [blocked('hfs', NOW - 60 * 1000000)])
        r = st.ctl('log')
        self.assertEqual(r.rc, 0, r)
        self.assertIn('udf (module udf) WOULD be blocked by profile cis (observing: it was loaded)', r.out)
        self.assertIn('hfs (module hfs) blocked', r.out)
        r = st.ctl('log', '--would-block')
        self.assertIn('WOULD be blocked', r.out)
        self.assertNotIn('hfs', r.out)
        doc = json.loads(st.ctl('--json', 'log', '--would-block').out)
        self.assertEqual([(x['module'], x['would_block'], x['profile'], x['count']) for x in doc],
                         [('udf', True, 'cis', 1)])
        self.assertEqual(st.ctl('status', '--would-block', 'udf').rc, 2)

        # The evidence, beside the verdict.
        r = st.ctl('audit', 'cis')
        self.assertEqual(r.rc, 9, r)        # observing: nothing is denied, not compliant
        self.assertIn('Would have been blocked while observed:', r.out)
        self.assertIn('udf: 1 autoload observed', r.out)
        r = st.ctl('--json', 'audit', 'cis')
        obs = json.loads(r.out)['observed']
        self.assertEqual(obs['profile'], 'cis')
        self.assertEqual([(x['module'], x['count'], x['types']) for x in obs['modules']], [('udf', 1, 'udf')])

        # Enforcing names it and refuses; --force enforces and ends the observation.
        snap = snapshot(self.root)
        r = st.ctl('apply', 'cis')
        self.assertEqual(r.rc, 5, r)
        self.assertIn('udf: 1 autoload observed', r.out)
        self.assertIn('fsgatectl apply --force cis', r.err)
        self.assertEqual(snapshot(self.root), snap, 'a refused apply changed something')
        r = st.ctl('--json', 'apply', 'cis')
        self.assertEqual(json.loads(r.err)['error'], ERR + 'ObservedUse')
        self.assertEqual(r.out, '', '--json: no lines for people on stdout')
        r = st.ctl('--json', 'apply', '--dry-run', 'cis')
        self.assertEqual(r.rc, 0, r)
        self.assertEqual(json.loads(r.out)['profile'], 'cis')       # one JSON document
        r = st.ctl('apply', '--force', 'cis')
        self.assertEqual(r.rc, 0, r)
        self.assertIn('The observation of profile cis ended', r.out)
        self.assertIsNone(self.observed_file())
        self.assertState('udf', 'denied', 'admin')
        # Denied now, a request that still reaches an observation's line loads nothing.
        os.unlink(self.run.modprobe_log)
        self.hook('--observe', 'udf', 'udf', 'cis')
        self.assertEqual(self.loads(), [])

    def test_says_whether_open_safely_would_still_read_it(self):
        # Entries as the hook writes them (made here with systemd's journal writer): squashfs,
        # which squashfuse reads without the module, and udf, which nothing here reads.
        def entry(module, usec):
            return export_entry({'MESSAGE': 'would block', 'MESSAGE_ID': WOULD_BLOCK, 'FSGATE_TYPE': module,
                                 'FSGATE_MODULE': module, 'FSGATE_PROFILE': 'cis', 'FSGATE_COUNT': '1',
                                 'FSGATE_DEVICE': '/dev/sdb', 'FSGATE_LABEL': 'DVD 2026', 'FSGATE_REQUEST_UID': '1000',
                                 'FSGATE_USER': 'alice',
                                 'FSGATE_REQUEST_COMM': 'mount', 'FSGATE_REQUEST_PID': '42', 'FSGATE_SESSION': '3'},
                                usec)
        write_journal(os.path.join(self.journal.dir, 'seen.journal'), [entry('squashfs', NOW), entry('udf', NOW)])
        r = self.stack.ctl('audit', 'cis')
        if os.path.exists('/usr/bin/squashfuse'):
            self.assertIn('squashfs: 1 autoload observed', r.out)
            self.assertIn('they would still have their files, read-only: fsgatectl open (Open safely, by squashfuse)',
                          r.out)
        self.assertIn('once enforced, they would not have their files: no userspace driver here reads udf', r.out)
        self.assertIn('/dev/sdb “DVD 2026”, asked by alice (uid 1000, mount, session 3)', r.out)
        mods = {x['module']: x for x in json.loads(self.stack.ctl('--json', 'audit', 'cis').out)['observed']['modules']}
        self.assertEqual(mods['udf']['open_safely'], '')
        self.assertEqual(mods['udf']['last_label'], 'DVD 2026')
        if os.path.exists('/usr/bin/squashfuse'):
            self.assertEqual(mods['squashfs']['open_safely'], 'squashfuse')

    def test_storm_costs_a_few_lines(self):
        # Any user can make the kernel ask as often as a user namespace lets them: per type and
        # window, at most the burst (3) is logged; the rest are counted in the next entry. The
        # bound is per window, so it is taken over the windows the storm lasted (a loaded CI
        # host may make 40 runs outlast one).
        st = self.stack
        window = 3
        self.assertEqual(st.ctl('apply', '--observe', 'cis').rc, 0)
        env = self.run.env(self.stack.env, self.root, FSGATE_HOOK_WINDOW_SEC=str(window))
        script = f'for i in $(seq 40); do {CONFIG.hook} --observe hfs hfs cis; done'
        start = time.monotonic()
        p = self.journal.run(['sh', '-c', script], env=env, timeout=120)
        windows = int((time.monotonic() - start) // window) + 1
        self.assertEqual(p.returncode, 0, p)
        self.assertEqual(len(self.loads()), 40, 'every request must still load')
        e = self.entries()
        self.assertLessEqual(len(e), 3 * windows + (windows - 1), e)
        self.assertLess(len(e), 40, e)
        time.sleep(window + 0.2)
        p = self.journal.run([CONFIG.hook, '--observe', 'hfs', 'hfs', 'cis'], env=env)
        e = self.entries()
        # Every request is in the journal once: logged, or counted in a summary entry.
        self.assertEqual(sum(int(x['FSGATE_COUNT']) for x in e), 41, e)
        r = st.ctl('--json', 'audit', 'cis')
        self.assertEqual([(x['module'], x['count']) for x in json.loads(r.out)['observed']['modules']], [('hfs', 41)])

    def test_vendor_deny_during_observation_wins(self):
        # A package's vendor file that denies hfs arrives during the observation: the
        # observation's line must not load it, and the routes report the block.
        st = self.stack
        self.assertEqual(st.ctl('apply', '--observe', 'cis').rc, 0)
        write(self.root, 'usr/lib/modprobe.d/' + conf_name('hfs'), 'blacklist hfs\n')
        self.hook('--observe', 'hfs', 'hfs', 'cis')
        self.assertEqual(self.loads(), [])
        self.assertEqual(self.entries(), [])
        self.hook('--refresh-routes')
        with open(os.path.join(self.root, 'run/modprobe.d/fsgate-routes.conf')) as f:
            self.assertIn(' --route hfs hfs\n', f.read())
        # The observation still holds hfs: allowed again, it is observed again.
        os.unlink(os.path.join(self.root, 'usr/lib/modprobe.d', conf_name('hfs')))
        self.hook('--observe', 'hfs', 'hfs', 'cis')
        self.assertEqual(self.loads(), ['-q -- hfs'])

    def test_stop_and_polkit(self):
        st = self.stack
        snap = snapshot(self.root)
        self.assertError(st.send('ApplyProfile', 'cis', OBSERVE, uid=NOBODY), E_ACCESS_DENIED)
        self.assertEqual([c[0] for c in st.mock_polkit_calls()], [ACTION_DENY])
        self.assertEqual(snapshot(self.root), snap)
        st.mock_polkit_clear()
        r = st.busctl('ApplyProfile', 'st', 'cis', OBSERVE | 0x10, uid=NOBODY)       # a dry run asks nobody
        self.assertReplyOk(r)
        self.assertIn(['udf', 'observe', '/' + OBSERVE_FILE], r.data[0])
        self.assertEqual(st.mock_polkit_calls(), [])
        self.assertEqual(snapshot(self.root), snap)
        self.assertEqual(st.ctl('apply', '--observe', 'cis').rc, 0)
        since = st.busctl('GetObservation', '').data[1]
        # Observing again keeps when it began: the evidence gathered stays its.
        self.assertEqual(st.ctl('apply', '--observe', 'cis').rc, 0)
        self.assertEqual(st.busctl('GetObservation', '').data[1], since)
        self.assertError(st.send('StopObserving', uid=NOBODY), E_ACCESS_DENIED)
        self.assertIsNotNone(self.observed_file())
        r = st.ctl('stop-observing')
        self.assertEqual(r.rc, 0, r)
        self.assertIn('The observation of profile cis ended', r.out)
        self.assertIsNone(self.observed_file())
        r = st.ctl('stop-observing')
        self.assertEqual(r.rc, 0, r)
        self.assertIn('nothing to stop', r.out)
        self.assertEqual(st.busctl('GetObservation', '').data, ['', 0, []])
        # Offline, on an image: the same file, the same end.
        root = '--root=' + self.root
        self.assertEqual(st.ctl(root, 'apply', '--observe', 'cis').rc, 0)
        self.assertIn('install fsgate_observed_udf', self.observed_file())
        self.assertEqual(st.ctl(root, 'stop-observing').rc, 0)
        self.assertIsNone(self.observed_file())


if __name__ == '__main__':
    from fsgatetest import main
    main()

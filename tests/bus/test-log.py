#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""fsgatectl log over journal files made here by systemd's own writer (systemd-journal-remote
from export format: the host runs no journald; FSGATE_JOURNAL_DIR points fsgatectl at them).
The entries carry the fields fsgated writes (service/block-reports.c, service/log.c). What a
real journald and its group rules give: tests/system/scenarios/install.sh."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.dont_write_bytecode = True      # keep the source tree clean
from fsgatetest import CONFIG, cli_main  # noqa: E402
from fsgatetest.journal import (CHANGED, JOURNAL_REMOTE, LOADED, MIN, NOW, REFUSED, blocked, request,  # noqa: E402
                               write_journal)

class LogTest(unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix='fsgate-log.')
        self.addCleanup(shutil.rmtree, self.dir)

    def write_journal(self, *entries, name='system.journal'):
        write_journal(os.path.join(self.dir, name), entries)

    def ctl(self, *args, want=0, env_extra=None):
        env = dict(os.environ, FSGATE_JOURNAL_DIR=self.dir, TZ='UTC', LC_ALL='C.UTF-8')
        env.update(env_extra or {})
        p = subprocess.run([CONFIG.fsgatectl, *args], capture_output=True, text=True, env=env, timeout=60)
        self.assertEqual(p.returncode, want, p)
        return p

    def test_blocks_and_what_came_after(self):
        self.write_journal(
            request(CHANGED, 'hfs', NOW - 50 * MIN),                  # before the block: not "afterwards"
            blocked('hfs', NOW - 40 * MIN, FSGATE_DEVICE='/dev/sdb1', FSGATE_LABEL='FSGATE STICK',
                    FSGATE_CAUSE='device', FSGATE_SEAT='seat0', FSGATE_SESSION='3', FSGATE_SESSION_UID='1000'),
            request(REFUSED, 'hfs', NOW - 35 * MIN, uid=1000),        # refused: nothing was done
            request(CHANGED, 'minix', NOW - 33 * MIN),                # another module's change
            request(CHANGED, 'hfs', NOW - 30 * MIN, uid=1000),        # the allow
            request(LOADED, 'hfs', NOW - 20 * MIN, uid=1000),
            blocked('minix', NOW - 10 * MIN),                         # nothing after it
        )
        j = json.loads(self.ctl('--json', 'log').stdout)
        self.assertEqual([b['module'] for b in j], ['hfs', 'minix'], 'oldest first')
        hfs, minix = j
        self.assertEqual((hfs['device'], hfs['label'], hfs['cause'], hfs['seat'], hfs['session'], hfs['session_uid']),
                         ('/dev/sdb1', 'FSGATE STICK', 'device', 'seat0', '3', 1000))
        self.assertEqual(hfs['deciding_file'], '/usr/lib/modprobe.d/60-blacklist_fs-hfs.conf')
        self.assertEqual((hfs['afterwards'], hfs['afterwards_usec'], hfs['afterwards_uid']),
                         ('changed', NOW - 30 * MIN, 1000))
        self.assertEqual((minix['afterwards'], minix['afterwards_usec'], minix['cause']), ('', 0, 'kernel'))
        text = self.ctl('log').stdout
        when = time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime((NOW - 40 * MIN) // 1000000))
        self.assertIn(f'{when}  hfs (module hfs) blocked on /dev/sdb1 “FSGATE STICK”, at seat0 (uid 1000, session 3)\n'
                      '    denied by /usr/lib/modprobe.d/60-blacklist_fs-hfs.conf\n'
                      '    afterwards: changed by fsgate at ', text)
        self.assertIn('minix (module minix) blocked, a mount request (any user, fsgate cannot tell who)\n'
                      '    denied by /usr/lib/modprobe.d/60-blacklist_fs-minix.conf\n', text)
        self.assertEqual(text.count('afterwards'), 1, text)

    def test_since_and_lines_bound_the_answer(self):
        self.write_journal(*(blocked('hfs' if i % 2 else 'ufs', NOW - (100 - i) * MIN) for i in range(100)))
        self.assertEqual(len(json.loads(self.ctl('--json', 'log').stdout)), 100)
        p = self.ctl('--json', '--lines=7', 'log')
        j = json.loads(p.stdout)
        self.assertEqual(len(j), 7)
        self.assertEqual(j[-1]['realtime_usec'], NOW - 1 * MIN, 'the newest ones')
        self.assertIn('Only the newest 7 blocks are shown', p.stderr)
        j = json.loads(self.ctl('--json', '--since=30min', 'log').stdout)
        self.assertTrue(25 <= len(j) <= 30, len(j))
        self.assertTrue(all(b['realtime_usec'] >= NOW - 31 * MIN for b in j))
        since = time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime((NOW - 10 * MIN) // 1000000 + 1))
        self.assertEqual(len(json.loads(self.ctl('--json', f'--since={since}', 'log').stdout)), 9)
        # Default: the newest 100, by time across files (older ones in a second file).
        self.write_journal(*(blocked('minix', NOW - 200 * MIN + i) for i in range(50)), name='system@older.journal')
        p = self.ctl('--json', 'log')
        j = json.loads(p.stdout)
        self.assertEqual(len(j), 100)
        self.assertEqual({b['module'] for b in j}, {'hfs', 'ufs'}, 'not the newest 100')
        self.assertIn('Only the newest 100', p.stderr)

    def test_since_takes_journalctls_words(self):
        """--since as journalctl takes it: "-30min" and "30min ago" are "30min"; "1h 30min" and
        "90 minutes" one span; now, today and yesterday."""
        self.write_journal(*(blocked('hfs', NOW - (100 - i) * MIN) for i in range(100)))
        def count(since):
            return len(json.loads(self.ctl('--json', f'--since={since}', 'log').stdout))
        thirty = count('30min')
        self.assertTrue(25 <= thirty <= 30, thirty)
        for same in ('-30min', '30min ago', '30 minutes', '1800s', '0h 30m'):
            self.assertEqual(count(same), thirty, same)
        self.assertEqual(count('1h 30min'), count('90 minutes'))
        self.assertEqual(count('now'), 0)
        midnight = time.mktime(time.localtime()[:3] + (0, 0, 0, 0, 0, -1))
        today = sum(1 for i in range(100) if NOW - (100 - i) * MIN >= midnight * 1000000)
        self.assertEqual(count('today'), today)
        self.assertEqual(count('yesterday'),
                         sum(1 for i in range(100) if NOW - (100 - i) * MIN >= (midnight - 86400) * 1000000))

    def test_only_roots_entries_count(self):
        """Anyone may send fsgate's message ids; only entries journald records for uid 0 are fsgated's."""
        self.write_journal(blocked('hfs', NOW - 2 * MIN),
                           blocked('minix', NOW - MIN, _UID='1000', FSGATE_SOURCE='/etc/forged.conf'),
                           request(CHANGED, 'hfs', NOW, uid=0) .replace(b'_UID=0\n', b'_UID=1000\n'))
        j = json.loads(self.ctl('--json', 'log').stdout)
        self.assertEqual([b['module'] for b in j], ['hfs'])
        self.assertEqual(j[0]['afterwards'], '', 'a forged change counted')

    def test_hostile_fields_are_escaped(self):
        """A stick's label and a device node come from the medium and udev: a terminal escape or a
        newline in them must not reach the terminal raw, nor break the JSON."""
        evil = 'X\x1b]0;owned\x07\nFAKE LINE\u202e'
        self.write_journal(blocked('hfs', NOW - MIN, FSGATE_LABEL=evil, FSGATE_DEVICE='/dev/sdb1\r',
                                   FSGATE_CAUSE='device'),
                           blocked('ufs', NOW, FSGATE_SESSION_UID='99999999999999'))
        text = self.ctl('log').stdout
        self.assertNotIn('\x1b', text)
        self.assertNotIn('\r', text)
        self.assertNotIn('\nFAKE LINE', text)
        self.assertIn('\\x1b', text)
        j = json.loads(self.ctl('--json', 'log').stdout)
        self.assertEqual(j[0]['label'], evil)
        self.assertEqual(j[1]['session_uid'], -1, 'a value out of range is none')

    def test_empty_and_refusals(self):
        self.write_journal(request(CHANGED, 'hfs', NOW))
        self.assertEqual(self.ctl('log').stdout, 'No blocked filesystem in the journal.\n')
        self.assertEqual(json.loads(self.ctl('--json', 'log').stdout), [])
        for args in (['--since=3 fortnights', 'log'], ['--since=-', 'log'], ['--since=1h 30', 'log'], ['--lines=0', 'log'],
                     ['--lines=10001', 'log'], ['--lines=x', 'log'], ['--since=1h', 'list'],
                     ['--root=/tmp', 'log'], ['log', 'hfs']):
            p = self.ctl(*args, want=2)
            self.assertTrue(p.stderr.strip(), args)
            self.assertEqual(p.stdout, '', args)


    @unittest.skipUnless(os.geteuid() == 0, 'needs root to run fsgatectl as another user')
    def test_unreadable_journal_says_who_may(self):
        # Issue 41: a journal this user may not open was "Failed to open the journal: Permission
        # denied", exit 1; the Cockpit page showed it as it was. Now AccessDenied (4) in words.
        self.write_journal(request(CHANGED, 'hfs', NOW))
        os.chmod(self.dir, 0o700)
        env = dict(os.environ, FSGATE_JOURNAL_DIR=self.dir, LC_ALL='C.UTF-8')
        p = subprocess.run(['runuser', '-u', 'nobody', '--', CONFIG.fsgatectl, '--json', 'log'], capture_output=True,
                           text=True, env=env, timeout=60, cwd='/')
        self.assertEqual(p.returncode, 4, p)
        err = json.loads(p.stderr)
        self.assertEqual(err['error'], 'org.freedesktop.DBus.Error.AccessDenied')
        self.assertIn('only root and the members of the groups systemd-journal and adm', err['message'])


if __name__ == '__main__':
    cli_main(need=[JOURNAL_REMOTE])   # package systemd-journal-remote

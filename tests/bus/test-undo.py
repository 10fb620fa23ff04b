#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""UndoProfile and `fsgatectl undo`: exactly the deny files a profile's apply wrote, as it
wrote them, are reset; one an admin edited or denied again by hand since is left alone and
named; a dry run writes nothing and asks nobody; a refused caller changes nothing (MOCK
polkit, org.fsgate.fsgate1.allow); names that are no profile; the CLI over the bus and
offline (--root)."""

import json
import os
import sys

sys.dont_write_bytecode = True      # keep the source tree clean
from fsgatetest import (ACTION_ALLOW, E_ACCESS_DENIED, E_INVALID_ARGS, ERR, HARD, NOBODY, SOFT,  # noqa: E402
                        BusTestCase, conf_name, snapshot)

DRY_RUN = 0x10
CIS = ['cramfs', 'freevxfs', 'hfs', 'hfsplus', 'jffs2', 'udf']


def path(m):
    return '/etc/modprobe.d/' + conf_name(m)


class UndoTest(BusTestCase):

    def call(self, method, name, flags=0, uid=None):
        r = self.stack.busctl(method, 'st', name, flags, uid=uid)
        self.assertReplyOk(r)
        return [tuple(c) for c in r.data[0]]

    def apply_cis_then_touch(self):
        """cis applied; then hfs denied again by hand (soft) and cramfs's file edited."""
        self.assertEqual(len(self.call('ApplyProfile', 'cis')), len(CIS))
        with open(self.etc(module='udf')) as f:
            self.assertIn('# fsgate-profile: cis sha256=', f.read().splitlines()[-1])
        self.assertReplyOk(self.stack.send('Deny', 'hfs', SOFT))
        with open(self.etc(module='cramfs'), 'a') as f:
            f.write('options cramfs foo=1\n')

    def test_undo_resets_only_untouched(self):
        st = self.stack
        self.apply_cis_then_touch()
        want = [(m, 'reset', path(m)) for m in CIS if m not in ('hfs', 'cramfs')] + \
               [('cramfs', 'kept-edited', path('cramfs')), ('hfs', 'kept-by-hand', path('hfs'))]
        before = snapshot(self.root)
        st.mock_polkit_clear()
        self.assertEqual(self.call('UndoProfile', 'cis', DRY_RUN), want)
        self.assertEqual(snapshot(self.root), before, 'a dry run wrote something')
        self.assertEqual(st.mock_polkit_calls(), [])
        self.assertEqual(self.call('UndoProfile', 'cis'), want)
        for m in ('freevxfs', 'hfsplus', 'jffs2', 'udf'):
            self.assertAbsent(self.etc(module=m))
        self.assertState('udf', 'allowed', 'default')
        self.assertDenyFile(self.etc(module='hfs'), 'hfs')
        self.assertIn('options cramfs foo=1', self.assertDenyFile(self.etc(module='cramfs'), 'cramfs'))
        self.assertState('hfs', 'denied', 'admin')
        self.assertRoutesCurrent()
        # Done: only the ones left alone are named again.
        self.assertEqual(self.call('UndoProfile', 'cis'), want[-2:])
        out = st.daemon_output()[self._log_mark:]
        self.assertIn(path('udf') + ' removed (reset, profile cis)', out)

    def test_hand_deny_before_apply_is_kept(self):
        # hfs denied hard by hand first: the apply wrote nothing for it, so undo leaves it.
        self.assertReplyOk(self.stack.send('Deny', 'hfs', HARD))
        self.assertNotIn('hfs', [c[0] for c in self.call('ApplyProfile', 'cis')])
        changes = self.call('UndoProfile', 'cis')
        self.assertIn(('hfs', 'kept-by-hand', path('hfs')), changes)
        self.assertEqual(len([c for c in changes if c[1] == 'reset']), len(CIS) - 1)
        self.assertState('hfs', 'denied', 'admin')
        # Another profile's denies are not cis's to undo.
        self.assertTrue(self.call('ApplyProfile', 'opensuse'))
        self.assertEqual([c for c in self.call('UndoProfile', 'cis') if c[1] == 'reset'], [])
        self.assertTrue(self.call('UndoProfile', 'opensuse'))

    def test_polkit_refusal_changes_nothing(self):
        st = self.stack
        self.call('ApplyProfile', 'cis')
        before = snapshot(self.root)
        st.mock_polkit_clear()
        self.assertError(st.send('UndoProfile', 'cis', 0, uid=NOBODY), E_ACCESS_DENIED)
        calls = st.mock_polkit_calls()
        self.assertEqual([c[0] for c in calls], [ACTION_ALLOW])
        self.assertEqual(calls[0][2].get('profile'), 'cis')
        self.assertEqual(snapshot(self.root), before)
        self.assertTrue(self.call('UndoProfile', 'cis', DRY_RUN, uid=NOBODY))
        st.mock_polkit_allow([ACTION_ALLOW])
        self.assertEqual(len(self.call('UndoProfile', 'cis', 0, uid=NOBODY)), len(CIS))
        self.assertAbsent(self.etc(module='hfs'))

    def test_bad_names_and_flags(self):
        st = self.stack
        before = snapshot(self.root)
        for name in ('../cis', 'cis/../cis', '/etc/passwd', '', 'a' * 40, 'Cis', 'nosuch', '.', 'cis\n'):
            self.assertError(st.send('UndoProfile', name, 0), ERR + 'NoSuchProfile')
        self.assertError(st.send('UndoProfile', 'cis', HARD), E_INVALID_ARGS)
        # a profile with nothing applied: nothing to do, no error
        self.assertEqual(self.call('UndoProfile', 'cis'), [])
        self.assertEqual(snapshot(self.root), before)

    def test_cli_bus_and_offline(self):
        st = self.stack
        self.apply_cis_then_touch()
        r = st.ctl('undo', '--dry-run', 'cis')
        self.assertEqual(r.rc, 0, r)
        self.assertIn('reset      udf', r.out)
        self.assertIn('would be reset (dry run', r.out)
        self.assertIn('edited since', r.out)
        self.assertIn('denied by hand', r.out)
        self.assertTrue(os.path.exists(self.etc(module='udf')))
        r = st.ctl('--root=' + self.root, '--json', 'undo', 'cis')
        self.assertEqual(r.rc, 0, r)
        doc = json.loads(r.out)
        self.assertEqual([c['module'] for c in doc['changes']], ['freevxfs', 'hfsplus', 'jffs2', 'udf'])
        self.assertEqual([(k['module'], k['change']) for k in doc['kept']],
                         [('cramfs', 'kept-edited'), ('hfs', 'kept-by-hand')])
        self.assertAbsent(self.etc(module='udf'))
        r = st.ctl('undo', 'cis')
        self.assertEqual(r.rc, 0, r)
        self.assertIn('nothing to undo', r.out)
        self.assertEqual(st.ctl('undo', '../x').rc, 3)


if __name__ == '__main__':
    from fsgatetest import main
    main()

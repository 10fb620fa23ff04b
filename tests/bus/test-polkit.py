#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Bus tests for authorization, against a MOCK polkit (python-dbusmock's polkitd template;
a real polkitd runs only in the VM suite). Callers are uid 65534 (setpriv), so fsgated
really asks the mock; root callers skip polkit."""

import gettext
import os
import pwd
import subprocess
import sys
import time

sys.dont_write_bytecode = True      # keep the source tree clean
import fsgatetest as fb  # noqa: E402
from fsgatetest import (ACTION_ALLOW, ACTION_DENY, ACTION_LOAD, E_ACCESS_DENIED, E_AUTH_CANCELLED,  # noqa: E402
                        E_INTERACTIVE, ERR, LOAD_NOW, NOBODY, RUNTIME, BusTestCase, SignalMonitor, conf_name, proc_modules_line,
                        snapshot, wait_until, write)


class MockPolkitTest(BusTestCase):

    def actions_asked(self):
        return [c[0] for c in self.stack.mock_polkit_calls()]

    def nobody(self, method, *args):
        return self.stack.send(method, *args, uid=NOBODY)

    def mount_jfs(self):
        write(self.root, 'proc/mounts', '/dev/vda / ext4 rw,relatime 0 0\n/dev/sdc1 /mnt/j jfs rw 0 0\n')
        self.addCleanup(write, self.root, 'proc/mounts', '/dev/vda / ext4 rw,relatime 0 0\n')

    def mount_hfs(self):
        write(self.root, 'proc/mounts', '/dev/vda / ext4 rw,relatime 0 0\n/dev/sdb1 /mnt/mac hfs ro 0 0\n')
        self.addCleanup(write, self.root, 'proc/mounts', '/dev/vda / ext4 rw,relatime 0 0\n')

    def test_mock_polkit_refusing_everything(self):
        st = self.stack
        self.vendor('hfs')
        write(self.root, 'proc/modules', proc_modules_line('jfs'))
        self.vendor('jfs')
        self.mount_jfs()            # so that ExemptLoaded has something to ask for
        self.assertReplyOk(st.send('Deny', 'udf', 0))            # something for Reset to remove
        mon = SignalMonitor(st)
        self.addCleanup(mon.stop)
        before = snapshot(self.root)
        calls = [
            (('Allow', 'hfs', 0), ACTION_ALLOW),
            (('Allow', 'hfs', RUNTIME), ACTION_ALLOW),
            (('Deny', 'minix', 0), ACTION_DENY),
            (('Deny', 'minix', RUNTIME), ACTION_DENY),
            (('Reset', 'udf', 0), ACTION_ALLOW),
            (('Load', 'minix'), ACTION_LOAD),
            (('ExemptLoaded',), ACTION_ALLOW),
        ]
        for call, action in calls:
            st.mock_polkit_clear()
            r = self.nobody(*call)
            self.assertError(r, E_ACCESS_DENIED)
            self.assertEqual(self.actions_asked(), [action], call)
        self.assertEqual(snapshot(self.root), before, 'a refused call changed something')
        self.assertEqual(mon.take(), [])
        out = st.daemon_output()[self._log_mark:]
        self.assertIn('Refused org.fsgate.fsgate1.deny on minix', out)
        self.assertIn('uid 65534', out)

    def test_reads_and_no_ops_need_no_authorization(self):
        st = self.stack
        self.vendor('hfs')
        self.assertTrue(st.list(uid=NOBODY))
        self.assertEqual(st.get('hfs', uid=NOBODY).state, 'denied')
        self.assertReplyOk(self.nobody('Deny', 'hfs', 0))        # denied already
        self.assertReplyOk(self.nobody('Allow', 'minix', 0))     # allowed already
        self.assertReplyOk(self.nobody('Reset', 'minix', 0))     # nothing to reset
        # Regression: ExemptLoaded with nothing mounted or loaded that a vendor file denies
        # asked polkit (a dialog for nothing); now it answers [] at once.
        r = self.nobody('ExemptLoaded')
        self.assertReplyOk(r)
        self.assertRegex(r.out, r'array \[\s*\]', r)
        self.assertEqual(self.actions_asked(), [])

    def test_mock_polkit_allowing_only_allow(self):
        st = self.stack
        self.vendor('hfs')
        st.mock_polkit_allow([ACTION_ALLOW])
        self.assertReplyOk(self.nobody('Allow', 'hfs', 0))
        self.assertMask(self.etc(module='hfs'))
        self.assertState('hfs', 'allowed', 'admin')
        self.assertEqual(self.actions_asked(), [ACTION_ALLOW])
        before = snapshot(self.root)
        st.mock_polkit_clear()
        self.assertError(self.nobody('Deny', 'minix', 0), E_ACCESS_DENIED)
        self.assertError(self.nobody('Deny', 'hfs', 0), E_ACCESS_DENIED)
        self.assertEqual(self.actions_asked(), [ACTION_DENY, ACTION_DENY])
        self.assertEqual(snapshot(self.root), before)
        out = st.daemon_output()[self._log_mark:]
        self.assertRegex(out, r'60-blacklist_fs-hfs\.conf masked.*uid 65534')

    def test_mock_polkit_allowing_only_deny(self):
        st = self.stack
        self.vendor('hfs')
        self.mount_hfs()            # so that ExemptLoaded has something to ask for
        st.mock_polkit_allow([ACTION_DENY])
        self.assertReplyOk(self.nobody('Deny', 'minix', RUNTIME))
        self.assertDenyFile(self.run_file('minix'), 'minix')
        self.assertReplyOk(self.nobody('Deny', 'minix', 0))
        self.assertDenyFile(self.etc(module='minix'), 'minix')
        before = snapshot(self.root)
        self.assertError(self.nobody('Allow', 'hfs', 0), E_ACCESS_DENIED)
        self.assertError(self.nobody('Allow', 'minix', 0), E_ACCESS_DENIED)
        self.assertError(self.nobody('ExemptLoaded'), E_ACCESS_DENIED)
        self.assertEqual(snapshot(self.root), before)

    def test_reset_asks_for_the_action_of_the_resulting_state(self):
        st = self.stack
        # hfs: vendor-denied, allowed by an admin mask. Reset makes it denied: needs deny.
        self.vendor('hfs')
        self.assertReplyOk(st.send('Allow', 'hfs', 0))
        # minix: no vendor file, denied by fsgate. Reset makes it allowed: needs allow.
        self.assertReplyOk(st.send('Deny', 'minix', 0))
        before = snapshot(self.root)

        st.mock_polkit_allow([ACTION_ALLOW])
        st.mock_polkit_clear()
        self.assertError(self.nobody('Reset', 'hfs', 0), E_ACCESS_DENIED)
        self.assertEqual(self.actions_asked(), [ACTION_DENY])
        st.mock_polkit_allow([ACTION_DENY])
        st.mock_polkit_clear()
        self.assertError(self.nobody('Reset', 'minix', 0), E_ACCESS_DENIED)
        self.assertEqual(self.actions_asked(), [ACTION_ALLOW])
        self.assertEqual(snapshot(self.root), before)

        st.mock_polkit_clear()
        self.assertReplyOk(self.nobody('Reset', 'hfs', 0))
        self.assertEqual(self.actions_asked(), [ACTION_DENY])
        self.assertAbsent(self.etc(module='hfs'))
        self.assertState('hfs', 'denied', 'vendor')
        st.mock_polkit_allow([ACTION_ALLOW])
        st.mock_polkit_clear()
        self.assertReplyOk(self.nobody('Reset', 'minix', 0))
        self.assertEqual(self.actions_asked(), [ACTION_ALLOW])
        self.assertAbsent(self.etc(module='minix'))
        self.assertState('minix', 'allowed', 'default')

    def test_allow_load_now_needs_allow_then_load(self):
        st = self.stack
        self.vendor('minix')
        before = snapshot(self.root)
        # minix is not loaded: allow first, then load; nothing written before both are granted.
        st.mock_polkit_allow([ACTION_ALLOW])
        self.assertError(self.nobody('Allow', 'minix', LOAD_NOW), E_ACCESS_DENIED)
        self.assertEqual(self.actions_asked(), [ACTION_ALLOW, ACTION_LOAD])
        st.mock_polkit_allow([ACTION_LOAD])
        st.mock_polkit_clear()
        self.assertError(self.nobody('Allow', 'minix', LOAD_NOW), E_ACCESS_DENIED)
        self.assertEqual(self.actions_asked(), [ACTION_ALLOW])
        self.assertEqual(snapshot(self.root), before, 'nothing is written before both are granted')
        if not os.path.exists('/proc/modules'):
            # Both granted: the allow is written, the load fails (this host cannot load
            # modules at all; never load one on a host that can).
            st.mock_polkit_allow([ACTION_ALLOW, ACTION_LOAD])
            st.mock_polkit_clear()
            self.assertError(self.nobody('Allow', 'minix', LOAD_NOW), ERR + 'LoadFailed')
            self.assertEqual(self.actions_asked(), [ACTION_ALLOW, ACTION_LOAD])
            self.assertMask(self.etc(module='minix'))
            # Allowed already: only load is asked.
            st.mock_polkit_clear()
            self.assertError(self.nobody('Allow', 'minix', LOAD_NOW), ERR + 'LoadFailed')
            self.assertEqual(self.actions_asked(), [ACTION_LOAD])

    def test_allow_load_now_of_a_loaded_module_asks_no_load(self):
        """Regression: LOAD_NOW on a module that is loaded already has nothing to load, so
        polkit is not asked for the load action (a caller allowed to allow, but not to load,
        succeeds)."""
        st = self.stack
        self.vendor('hfs')
        write(self.root, 'proc/modules', proc_modules_line('hfs'))
        st.mock_polkit_allow([ACTION_ALLOW])
        self.assertReplyOk(self.nobody('Allow', 'hfs', LOAD_NOW))
        self.assertEqual(self.actions_asked(), [ACTION_ALLOW])
        self.assertMask(self.etc(module='hfs'))
        # Allowed and loaded: nothing to do, nothing asked.
        st.mock_polkit_allow([])
        st.mock_polkit_clear()
        self.assertReplyOk(self.nobody('Allow', 'hfs', LOAD_NOW))
        self.assertReplyOk(self.nobody('Allow', 'hfs', LOAD_NOW | RUNTIME))
        self.assertEqual(self.actions_asked(), [])

    def test_mock_polkit_dismissed(self):
        """Regression: polkit's answer "not authorized" with the detail polkit.dismissed=true
        (the user closed the password dialog) is an error of its own,
        AuthenticationCancelled, whose message says so; fsgate-notify, fsgatectl and the
        Cockpit page tell it by that name, never by the message."""
        st = self.stack
        self.addCleanup(st.stop_mock_polkit)     # setUp starts a fresh one for the next test
        st.mock_polkit_answer("(False, False, {'polkit.dismissed': 'true'})")
        self.vendor('hfs')
        before = snapshot(self.root)
        r = st.gdbus('Allow', 'hfs', 0, uid=NOBODY, interactive=True)
        self.assertError(r, E_AUTH_CANCELLED, r'(?i)cancel')
        # Regression: the message named the polkit action id; it reaches people.
        self.assertNotIn(ACTION_ALLOW, r.message)
        r = self.nobody('Deny', 'minix', 0)
        self.assertError(r, E_AUTH_CANCELLED, r'(?i)cancel')
        # A plain "no" still says so, without "cancelled".
        st.mock_polkit_answer("(False, False, {'polkit.dismissed': 'false'})")
        r = self.nobody('Deny', 'minix', 0)
        self.assertError(r, E_ACCESS_DENIED)
        self.assertNotRegex(r.message, r'(?i)cancel|dismiss')
        self.assertEqual(r.message, 'Not authorized to deny filesystem modules; nothing was changed')
        self.assertEqual(snapshot(self.root), before)

    def test_load_and_exempt_need_their_actions(self):
        st = self.stack
        self.vendor('hfs')
        write(self.root, 'proc/modules', proc_modules_line('hfs'))
        self.vendor('exofs')
        st.mock_polkit_allow([ACTION_LOAD])
        # Named by a rule only: fails before anyone is asked.
        self.assertError(self.nobody('Load', 'exofs'), ERR + 'LoadFailed')
        self.assertEqual(self.actions_asked(), [])
        # Loaded already: nothing to do, nothing to ask.
        self.assertReplyOk(self.nobody('Load', 'hfs'))
        self.assertEqual(self.actions_asked(), [])
        if not os.path.exists('/proc/modules'):
            # This host cannot load modules at all (never load one on a host that can).
            self.assertError(self.nobody('Load', 'minix'), ERR + 'LoadFailed')
            self.assertEqual(self.actions_asked(), [ACTION_LOAD])
        # hfs mounted, so in use: ExemptLoaded has something to write.
        write(self.root, 'proc/mounts', '/dev/vda / ext4 rw,relatime 0 0\n/dev/sdb1 /mnt hfs ro 0 0\n')
        self.assertError(self.nobody('ExemptLoaded'), E_ACCESS_DENIED)
        self.assertState('hfs', 'denied', 'vendor')
        st.mock_polkit_allow([ACTION_ALLOW])
        r = st.busctl('ExemptLoaded', uid=NOBODY)
        self.assertReplyOk(r)
        self.assertEqual(r.data, [['hfs']])
        self.assertMask(self.etc(module='hfs'))

    def test_polkit_subject_and_details(self):
        st = self.stack
        st.mock_polkit_allow([ACTION_DENY])
        self.assertReplyOk(self.nobody('Deny', 'vxfs', 0))
        # ext4 in use but not what / is on, so FORCE (0x4) may deny it.
        write(self.root, 'proc/mounts', '/dev/vda / xfs rw 0 0\n/dev/vdb /srv ext4 rw 0 0\n')
        r = st.gdbus('Deny', 'ext2', 0x4, uid=NOBODY, interactive=True)
        self.assertReplyOk(r)
        calls = st.mock_polkit_calls()
        self.assertEqual(len(calls), 2, calls)
        daemon = st.name_owner(fb.BUS_NAME)
        for (action, subject, details, flags), module, want_flags in zip(calls, ('freevxfs', 'ext4'), (0, 1)):
            self.assertEqual(action, ACTION_DENY)
            self.assertEqual(subject[0], 'system-bus-name')
            self.assertRegex(subject[1].get('name', ''), r'^:\d+\.\d+$')
            self.assertNotEqual(subject[1]['name'], daemon, 'the subject is the caller, not fsgated')
            self.assertEqual(details.get('module'), module, 'the module, not the type the caller named')
            self.assertIn('polkit.message', details)
            self.assertTrue(details['polkit.message'])
            # polkitd translates the message in the agent's locale with this domain
            # (dgettext): the build's German catalog must hold it, $(module) kept for polkitd.
            self.assertEqual(details.get('polkit.gettext_domain'), 'fsgate')
            german = gettext.translation('fsgate', os.path.join(fb.CONFIG.build_root, 'po'), languages=['de'])
            shown = german.gettext(details['polkit.message'])
            self.assertNotEqual(shown, details['polkit.message'], 'no German text for the polkit message')
            self.assertIn('$(module)', shown)
            self.assertEqual(flags, want_flags, 'AllowUserInteraction follows the message flag')
        self.assertNotEqual(calls[0][1][1]['name'], calls[1][1][1]['name'])

    def test_root_skips_polkit(self):
        st = self.stack
        self.vendor('hfs')
        self.assertReplyOk(st.send('Allow', 'hfs', 0))
        self.assertReplyOk(st.send('Deny', 'minix', 0))
        self.assertReplyOk(st.send('Reset', 'hfs', 0))
        self.assertEqual(st.mock_polkit_calls(), [])

    def test_mock_polkit_challenge(self):
        # The mock answers "not authorized, but a password would do" (is_challenge).
        st = self.stack
        self.addCleanup(st.stop_mock_polkit)     # setUp starts a fresh one for the next test
        st.mock_polkit_answer('(False, True, {})')
        self.vendor('hfs')
        before = snapshot(self.root)
        # dbus-send never sets allow-interactive-authorization.
        r = self.nobody('Allow', 'hfs', 0)
        self.assertError(r, E_INTERACTIVE)
        # With the flag, the answer is a plain refusal (a password prompt was possible and failed).
        r = st.gdbus('Allow', 'hfs', 0, uid=NOBODY, interactive=True)
        self.assertError(r, E_ACCESS_DENIED)
        r = st.gdbus('Deny', 'minix', 0, uid=NOBODY, interactive=False)
        self.assertError(r, E_INTERACTIVE)
        self.assertEqual([c[3] for c in st.mock_polkit_calls()], [0, 1, 0])
        # fsgatectl maps both to exit status 4.
        self.assertEqual(st.ctl('--no-ask-password', 'allow', 'hfs', uid=NOBODY).rc, 4)
        self.assertEqual(st.ctl('allow', 'hfs', uid=NOBODY).rc, 4)
        self.assertEqual(snapshot(self.root), before)

    def test_polkit_absent_fails_closed(self):
        st = self.stack
        self.vendor('hfs')
        self.mount_hfs()            # so that ExemptLoaded has something to ask for
        st.stop_mock_polkit()
        before = snapshot(self.root)
        for call in (('Allow', 'hfs', 0), ('Deny', 'minix', 0), ('Deny', 'minix', RUNTIME), ('Load', 'minix'),
                     ('ExemptLoaded',)):
            r = self.nobody(*call)
            self.assertError(r, E_ACCESS_DENIED)
            self.assertRegex(r.message, r'(?i)polkit|policykit|authoriz')
        self.assertEqual(snapshot(self.root), before)
        r = st.ctl('deny', 'minix', uid=NOBODY)
        self.assertEqual(r.rc, 4, r)
        self.assertEqual(snapshot(self.root), before)
        # Root needs no polkit.
        self.assertReplyOk(st.send('Deny', 'minix', 0))
        self.assertDenyFile(self.etc(module='minix'), 'minix')

    def held_by_polkit(self, method, module, action):
        """method(module, 0) called by nobody with dbus-send, held by the MOCK polkit (which
        answers action only on ReleaseHangingCalls); returns the waiting dbus-send."""
        st = self.stack
        self.addCleanup(st.mock_polkit, 'ReleaseHangingCalls')
        self.addCleanup(st.mock_polkit, 'SimulateHangActions', 'as', [[]])
        st.mock_polkit('SimulateHangActions', 'as', [[action]])
        cmd = st.as_uid(['dbus-send', '--system', '--print-reply', '--reply-timeout=20000', '--dest=' + fb.BUS_NAME,
                         fb.OBJ_PATH, fb.IFACE + '.' + method, 'string:' + module, 'uint64:0'], NOBODY)
        waiting = subprocess.Popen(cmd, env=st.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(fb.stop_process, waiting)
        wait_until(lambda: st.mock_polkit('HaveHangingCalls'), what=f'the {method} to reach the mock polkit')
        return waiting

    def test_pending_authorization_blocks_nobody_and_rechecks(self):
        """A caller waiting for polkit blocks no one else; when the answer comes, the change is
        planned again, and a configuration that changed meanwhile gives ConcurrentChange."""
        st = self.stack
        self.assertReplyOk(st.send('Deny', 'minix', 0))     # Reset of minix would allow it
        st.mock_polkit_allow([ACTION_ALLOW, ACTION_DENY])
        waiting = self.held_by_polkit('Reset', 'minix', ACTION_ALLOW)
        # Meanwhile: reads and other callers are served.
        self.assertEqual(st.get('minix').state, 'denied')
        self.assertReplyOk(self.nobody('Deny', 'jfs', 0))
        self.assertDenyFile(self.etc(module='jfs'), 'jfs')
        # A package update ships openSUSE's vendor file for minix: a Reset now means "deny",
        # which is not what was authorized.
        self.vendor('minix')
        st.mock_polkit('ReleaseHangingCalls')
        out, err = waiting.communicate(timeout=fb.TIMEOUT)
        self.assertRegex(err, r'^Error ' + ERR.replace('.', r'\.') + r'ConcurrentChange: ')
        self.assertDenyFile(self.etc(module='minix'), 'minix')
        self.assertEqual(sorted(os.listdir(os.path.join(self.root, 'etc/modprobe.d'))),
                         [conf_name('jfs'), conf_name('minix')])

    def test_idle_exit_waits_for_pending_authorization(self):
        st = self.stack
        st.stop_daemon()          # setUp of the next test starts the usual one again
        st.start_daemon(self.root, self.kver, extra=['--idle-timeout=1'])
        st.mock_polkit_allow([ACTION_DENY])
        waiting = self.held_by_polkit('Deny', 'minix', ACTION_DENY)
        # Longer than the idle timeout, with a request pending: it must stay (a sleep, because
        # what is tested is that nothing happens).
        time.sleep(1.6)
        self.assertIsNone(st.daemon.poll(), 'fsgated exited while a request waited for polkit')
        self.assertTrue(st.has_owner(fb.BUS_NAME))
        st.mock_polkit('ReleaseHangingCalls')
        out, err = waiting.communicate(timeout=fb.TIMEOUT)
        self.assertFalse(err.startswith('Error org.freedesktop.DBus.Error.NoReply'), err)
        # Then idle: it leaves, releasing the name, with status 0.
        wait_until(lambda: st.daemon.poll() is not None, timeout=10 * fb.TIMEOUT_MULTIPLIER,
                   what='fsgated to exit when idle')
        self.assertEqual(st.daemon.returncode, 0, st.daemon_output())
        self.assertFalse(st.has_owner(fb.BUS_NAME))
        # The pending request was answered, and granted.
        self.assertEqual(waiting.returncode, 0, err)
        self.assertDenyFile(self.etc(module='minix'), 'minix')

    def test_waiting_authorizations_are_capped(self):
        """A user can keep checks waiting for polkit for minutes (an agent of their own that
        never answers), and each holds one of the replies the bus lets fsgated wait for (128
        a connection): one user must not be able to hold them all. Past 8 waiting for one
        user, or 64 in all, a call is refused at once with LimitsExceeded: polkit is not asked
        and nothing is written; other users are still asked, and once polkit has answered the
        user is served again. The refusals leave one journal line, not one each.
        8 and 64 are written here on purpose, not read from service/polkit-bridge.c: the README
        and the man page promise them, so this fails when the code changes them."""
        st = self.stack
        st.mock_polkit_allow([ACTION_DENY])
        self.addCleanup(st.mock_polkit, 'ReleaseHangingCalls')
        self.addCleanup(st.mock_polkit, 'SimulateHangActions', 'as', [[]])
        st.mock_polkit('SimulateHangActions', 'as', [[ACTION_DENY]])
        st.mock_polkit_clear()
        self.vendor('hfs')      # so that Allow of hfs has something to do, and asks
        before = snapshot(self.root)

        def held(module, uid):
            # Minutes, as a person at a dialog: under valgrind 64 calls take a while to be asked.
            cmd = st.as_uid(['dbus-send', '--system', '--print-reply', '--reply-timeout=600000',
                             '--dest=' + fb.BUS_NAME, fb.OBJ_PATH, fb.IFACE + '.Deny', 'string:' + module,
                             'uint64:0'], uid)
            p = subprocess.Popen(cmd, env=st.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.addCleanup(fb.stop_process, p)
            return p

        mine = [held(m, NOBODY) for m in ('minix', 'jfs', 'sysv', 'qnx4', 'qnx6', 'befs', 'efs', 'hpfs')]
        wait_until(lambda: len(self.actions_asked()) == 8, what="nobody's 8 checks waiting at the mock polkit")
        for method, module in (('Deny', 'romfs'), ('Allow', 'hfs')):
            r = self.nobody(method, module, 0)
            self.assertError(r, 'org.freedesktop.DBus.Error.LimitsExceeded')
            self.assertEqual(r.message, '8 requests of user 65534 are waiting for authorization already; '
                                        'nothing was changed')
        self.assertEqual(len(self.actions_asked()), 8, 'polkit was asked past the limit')
        self.assertEqual(snapshot(self.root), before)
        # Another user is still asked (and refused: the mock allows only deny).
        # dbus-daemon takes connections only from uids it can look up: system users.
        users = sorted({u.pw_uid for u in pwd.getpwall() if 0 < u.pw_uid < 1000})[:9]
        self.assertEqual(len(users), 9, 'this test needs 9 system users besides root and nobody')
        r = st.send('Allow', 'hfs', 0, uid=users[8])
        self.assertError(r, E_ACCESS_DENIED)
        self.assertEqual(self.actions_asked()[-1], ACTION_ALLOW)

        # 64 in all: seven more users with 8 each.
        others = [held('minix', uid) for uid in users[:7] for _ in range(8)]
        wait_until(lambda: len(self.actions_asked()) == 8 + 1 + 56, what='64 checks waiting at the mock polkit')
        r = st.send('Deny', 'romfs', 0, uid=users[7])
        self.assertError(r, 'org.freedesktop.DBus.Error.LimitsExceeded')
        self.assertEqual(r.message, '64 requests are waiting for authorization already; nothing was changed')
        self.assertEqual(len(self.actions_asked()), 65)
        self.assertEqual(snapshot(self.root), before)

        # polkit answers: every waiting call gets its reply, and nobody is served again.
        st.mock_polkit('SimulateHangActions', 'as', [[]])
        st.mock_polkit('ReleaseHangingCalls')
        for p in mine:
            out, err = p.communicate(timeout=fb.TIMEOUT)
            self.assertEqual(p.returncode, 0, err)
        for p in others:
            out, err = p.communicate(timeout=fb.TIMEOUT)
            # The first writes minix's file; the others find it written (planned again).
            self.assertTrue(p.returncode == 0 or err.startswith('Error ' + ERR), err)
        self.assertDenyFile(self.etc(module='hpfs'), 'hpfs')
        self.assertReplyOk(self.nobody('Deny', 'romfs', 0))
        lines = [line for line in st.daemon_output().splitlines() if 'too many wait for authorization' in line]
        self.assertEqual(len(lines), 1, lines)


if __name__ == '__main__':
    fb.main()

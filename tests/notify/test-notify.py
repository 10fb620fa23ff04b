#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""fsgate-notify end to end on the host.

Real: the private system bus (dbus-daemon, the project's bus policy), fsgated on a scratch
root, the fsgate-blocked hook reporting the blocks (run the way modprobe's install line and
the udev rule run it), a private session bus (dbus-daemon), and fsgate-notify itself, run as
uid 65534 so that fsgated really asks polkit.

MOCKS (python-dbusmock templates):
- the MOCK notification server, `notification_daemon`: no real server runs headless here
  reliably. It records every Notify call (GetMethodCalls) and the tests emit ActionInvoked
  and NotificationClosed from it, as a person clicking would make a real server do.
- the MOCK polkit, `polkitd`, as in every bus test (see tests/lib/fsgatetest). It records
  CheckAuthorization's flags: 1 means the caller allowed interactive authorization.

Runs as root (77 = skipped otherwise), with Debian's /usr/bin/python3.
"""

import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import shutil
import time
import unittest

sys.dont_write_bytecode = True      # keep the source tree clean
import fsgatetest as fb  # noqa: E402
from fsgatetest import (ACTION_ALLOW, ACTION_LOAD, MOCK_IFACE, NOBODY, PYTHON, TIMEOUT, BusTestCase,  # noqa: E402
                        PrivateBus, Stack, conf_name, die_with_parent, stop_process, wait_until)

NOTIFY_NAME = 'org.freedesktop.Notifications'
NOTIFY_PATH = '/org/freedesktop/Notifications'
NOTIFY_IFACE = 'org.freedesktop.Notifications'
INSTANCE_NAME = 'org.fsgate.fsgate1.Notify'

ACTIONS_BLOCKED = ['default', 'Details', 'allow', 'Allow', 'allow-once', 'Allow once']
ACTIONS_RETRY = ['allow', 'Allow', 'allow-once', 'Allow once']
CLOSED_BY_USER = 2

FSGATE_NOTIFY = None   # set by main() from --fsgate-notify


class SessionBus(PrivateBus):
    """A private session bus and, on it, the MOCK notification server."""

    def __init__(self, workdir):
        super().__init__(tempfile.mkdtemp(prefix='session-', dir=workdir), kind='session')
        os.chmod(self.dir, 0o755)
        self.mock = None
        self.mock_log = os.path.join(self.dir, 'mock-notification-server.log')

    def start(self, env):
        self.env = dict(env, DBUS_SESSION_BUS_ADDRESS=self.address)
        super().start(self.env)

    # -- the MOCK notification server ---------------------------------------------------------
    def start_mock_server(self):
        params = json.dumps({'capabilities': 'actions body body-markup icon-static'})
        with open(self.mock_log, 'a') as logf:
            self.mock = subprocess.Popen([PYTHON, '-m', 'dbusmock', '--session', '--template', 'notification_daemon',
                                          '--parameters', params], stdout=subprocess.DEVNULL, stderr=logf,
                                         env=self.env, preexec_fn=die_with_parent)

        def up():
            if self.mock.poll() is not None:
                raise RuntimeError('MOCK notification server exited: ' + Stack.read(self.mock_log))
            return self.has_owner(NOTIFY_NAME)
        wait_until(up, what='the MOCK notification server on the session bus')

    def stop_mock_server(self):
        stop_process(self.mock)
        self.mock = None
        wait_until(lambda: not self.has_owner(NOTIFY_NAME), what='the MOCK notification server to leave')

    def mock_call(self, method, sig='', args=()):
        return self.call(NOTIFY_NAME, NOTIFY_PATH, MOCK_IFACE, method, sig, args)

    def notifications(self):
        """Every Notify call the MOCK server got, oldest first, as dicts."""
        out, next_id = [], 1
        for _ts, args in self.mock_call('GetMethodCalls', 's', ['Notify']):
            app, replaces, icon, summary, body, actions, hints, timeout = args
            # The id the MOCK server answered: replaces_id, else the next of its counter.
            nid = int(replaces)
            if not nid:
                nid, next_id = next_id, next_id + 1
            out.append({'id': nid, 'app': str(app), 'replaces': int(replaces), 'icon': str(icon), 'summary': str(summary),
                        'body': str(body), 'actions': [str(a) for a in actions],
                        'hints': {str(k): v for k, v in hints.items()}, 'timeout': int(timeout)})
        return out

    def wait_notifications(self, n, what=None):
        return wait_until(lambda: (lambda c: c if len(c) >= n else None)(self.notifications()),
                          what=what or f'{n} Notify calls on the MOCK notification server')

    def click(self, nid, action, close=True):
        """What a real server does when the person clicks: ActionInvoked, then (the
        notification is not resident) NotificationClosed."""
        import dbus
        self.mock_call('EmitSignal', 'sssav', [NOTIFY_IFACE, 'ActionInvoked', 'us', [dbus.UInt32(nid), action]])
        if close:
            self.mock_call('EmitSignal', 'sssav', [NOTIFY_IFACE, 'NotificationClosed', 'uu',
                                                   [dbus.UInt32(nid), dbus.UInt32(CLOSED_BY_USER)]])

    def stop(self):
        stop_process(self.mock)
        self.mock = None
        super().stop()


class Notifier:
    """The built fsgate-notify as uid 65534, ready when it says READY=1 on $NOTIFY_SOCKET."""

    def __init__(self, workdir, env, system_address, session_address, uid=NOBODY, args=None):
        self.dir = tempfile.mkdtemp(prefix='notify-', dir=workdir)
        os.chmod(self.dir, 0o777)
        self.log_path = os.path.join(self.dir, 'fsgate-notify.log')
        sock_path = os.path.join(self.dir, 'notify.sock')
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(sock_path)
        os.chmod(sock_path, 0o777)
        env = dict(env, NOTIFY_SOCKET=sock_path)
        env.pop('JOURNAL_STREAM', None)
        cmd = [FSGATE_NOTIFY] + (args if args is not None else
                                 ['--system-bus-address=' + system_address, '--session-bus-address=' + session_address])
        wrapper = os.environ.get('FSGATE_NOTIFY_WRAPPER')
        if wrapper:
            cmd = wrapper.split() + cmd
        if uid:
            cmd = ['setpriv', f'--reuid={uid}', f'--regid={uid}', '--clear-groups', '--'] + cmd
        with open(self.log_path, 'w') as logf:
            self.proc = subprocess.Popen(cmd, stdout=logf, stderr=logf, env=env, cwd=self.dir,
                                         preexec_fn=die_with_parent)

    def wait_ready(self):
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f'fsgate-notify exited with {self.proc.returncode}: {self.log()}')
            r, _, _ = select.select([self.sock], [], [], 0.1)
            if r and b'READY=1' in self.sock.recv(4096):
                return
        raise AssertionError('fsgate-notify did not report READY=1: ' + self.log())

    def log(self):
        return Stack.read(self.log_path)

    def wait_log(self, text, count=1):
        return wait_until(lambda: self.log().count(text) >= count, what=f'fsgate-notify to log {text!r}')

    def wait_exit(self):
        try:
            return self.proc.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            raise AssertionError('fsgate-notify did not exit: ' + self.log())

    def stop(self):
        """SIGTERM: a clean exit with status 0 is part of the contract (Restart=on-failure)."""
        rc = self.proc.poll()
        if rc is None:
            self.proc.send_signal(signal.SIGTERM)
            rc = self.wait_exit()
        self.sock.close()
        return rc


class NotifyTest(BusTestCase):
    """fsgate-notify against the real fsgated, a MOCK notification server and a MOCK polkit."""

    def setUp(self):
        super().setUp()
        # Denied the way openSUSE's vendor files deny them (blacklist only: the hook is run
        # by the test, as modprobe would run it from an install line).
        self.vendor('hfs', 'blacklist hfs\n')
        self.vendor('hfsplus', 'blacklist hfsplus\n')
        self.session = SessionBus(self.workdir)
        self.addCleanup(self.session.stop)
        self.session.start(self.stack.env)
        self.session.start_mock_server()
        self.notifier = self.start_notifier()
        self.kmsg = os.path.join(self.workdir, 'kmsg')
        open(self.kmsg, 'w').close()

    def start_notifier(self, **kw):
        n = Notifier(self.workdir, self.session.env, self.stack.address, self.session.address, **kw)
        self.addCleanup(self.stop_notifier, n)
        n.wait_ready()
        return n

    def stop_notifier(self, n):
        rc = n.stop()
        out = n.log()
        if rc != 0 and not getattr(n, 'expect_failure', False):
            self.fail(f'fsgate-notify exited with {rc}, not 0, after SIGTERM:\n{out}')
        if any(m in out for m in ('AddressSanitizer', 'LeakSanitizer', 'runtime error:', 'Out of memory')):
            self.fail('fsgate-notify reported:\n' + out)

    # -- reports, the way the system makes them --------------------------------------------
    def run_hook(self, *args, **env_extra):
        env = dict(self.stack.env, FSGATE_KMSG=self.kmsg, **env_extra)
        p = subprocess.run([fb.CONFIG.hook, *args], env=env, capture_output=True, timeout=TIMEOUT)
        self.assertEqual(p.returncode, 0, p.stderr)

    def device_appears(self, devnode, fstype):
        """The udev rule: fsgate-blocked --device with udev's ID_FS_TYPE → ReportDevice."""
        self.run_hook('--device', devnode, ID_FS_TYPE=fstype, FSGATE_ROOT=self.root)

    def mount_blocked(self, fstype, module):
        """A deny file's install line: fsgate-blocked TYPE MODULE SOURCE → ReportBlocked."""
        self.run_hook(fstype, module, '/usr/lib/modprobe.d/' + conf_name(module))

    # -- checks ------------------------------------------------------------------------------
    def notifier_unique_name(self):
        """fsgate-notify's connection on the system bus: the subject polkit is asked about."""
        for name in self.stack.bus_call('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus',
                                        'ListNames'):
            if name.startswith(':'):
                try:
                    pid = self.stack.bus_call('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus',
                                              'GetConnectionUnixProcessID', 's', [name])
                except Exception:
                    continue
                if int(pid) == self.notifier.proc.pid:
                    return str(name)
        raise AssertionError('fsgate-notify has no connection on the system bus')

    def assertBlockedNotification(self, n, device=None):
        self.assertEqual(n['app'], 'fsgate')
        self.assertEqual(n['icon'], 'drive-removable-media')
        self.assertEqual(n['summary'], 'Filesystem blocked: hfs')
        self.assertEqual(n['replaces'], 0)
        self.assertEqual(n['timeout'], -1)
        if device:
            self.assertTrue(n['body'].startswith(device + ' holds a filesystem of type hfs'), n['body'])
        else:
            self.assertTrue(n['body'].startswith('A filesystem of type hfs could not be mounted'), n['body'])
        self.assertIn('module hfs', n['body'])
        self.assertIn('denied by /usr/lib/modprobe.d/60-blacklist_fs-hfs.conf (distribution default)', n['body'])
        self.assertIn('An administrator can allow it', n['body'])
        self.assertEqual(n['actions'], ACTIONS_BLOCKED)
        h = n['hints']
        self.assertEqual((int(h['urgency']), type(h['urgency']).__name__), (1, 'Byte'))
        self.assertEqual(str(h['desktop-entry']), 'fsgate-notify')
        self.assertEqual((bool(h['resident']), type(h['resident']).__name__), (False, 'Boolean'))

    def polkit_calls(self):
        return wait_until(self.stack.mock_polkit_calls, what='a CheckAuthorization call on the MOCK polkit')

    def assertInteractiveCheck(self, action):
        calls = self.polkit_calls()
        self.assertEqual(len(calls), 1, calls)
        action_id, subject, details, flags = calls[0]
        self.assertEqual(action_id, action)
        self.assertEqual(subject, ('system-bus-name', {'name': self.notifier_unique_name()}))
        self.assertEqual(details.get('module'), 'hfs')
        self.assertEqual(flags, 1, 'AllowUserInteraction: the call did not allow interactive authorization')

    # -- tests -------------------------------------------------------------------------------
    def test_one_notification_per_device_then_allow(self):
        s = self.session
        self.device_appears('/dev/sdz1', 'hfs')
        n = s.wait_notifications(1)
        self.assertBlockedNotification(n[0], '/dev/sdz1')
        nid = n[0]['id']

        # The same device with another denied type: fsgated signals (its key is device and
        # type), fsgate-notify does not notify again (its key is the device).
        self.device_appears('/dev/sdz1', 'hfsplus')
        self.notifier.wait_log('Already notified about /dev/sdz1')
        self.device_appears('/dev/sdy1', 'hfs')
        n = s.wait_notifications(2)
        self.assertEqual(len(n), 2, n)
        self.assertBlockedNotification(n[1], '/dev/sdy1')
        self.assertEqual(self.stack.mock_polkit_calls(), [], 'nothing may happen without a click')

        # "Allow": Allow(hfs, 0) with interactive authorization, and the follow-up.
        self.stack.mock_polkit_allow([ACTION_ALLOW])
        s.click(nid, 'allow')
        n = s.wait_notifications(3)
        self.assertEqual(n[2]['summary'], 'hfs allowed — mount the device again')
        self.assertIn('Mount /dev/sdz1 again.', n[2]['body'])
        self.assertEqual(n[2]['actions'], [])
        self.assertInteractiveCheck(ACTION_ALLOW)
        self.assertMask(self.etc(module='hfs'))
        out = self.stack.daemon_output()[self._log_mark:]
        self.assertIn('masked with /dev/null (allowed) (requested by uid 65534', out)

    def test_refused_and_allow_once(self):
        s = self.session
        # A mount of a denied type: no device known, the key is the type.
        self.mount_blocked('hfs', 'hfs')
        n = s.wait_notifications(1)
        self.assertBlockedNotification(n[0])
        with open(self.kmsg) as f:
            self.assertIn('fsgate: blocked autoload of filesystem hfs', f.read())
        self.mount_blocked('hfs', 'hfs')
        self.notifier.wait_log('Already notified about hfs')

        # The MOCK polkit refuses everything (BusTestCase.setUp).
        s.click(n[0]['id'], 'allow')
        n = s.wait_notifications(2)
        self.assertEqual(n[1]['summary'], 'hfs not allowed')
        self.assertEqual(n[1]['body'], 'Refused: Not authorized: polkit refused org.fsgate.fsgate1.allow')
        self.assertInteractiveCheck(ACTION_ALLOW)
        self.assertEqual(fb.modprobe_files(self.root), {})

        # "Allow once" on another device: Load(hfs), also interactive, also refused here
        # (never load a module into the host's kernel).
        self.stack.mock_polkit_clear()
        self.device_appears('/dev/sdx1', 'hfs')
        n = s.wait_notifications(3)
        self.assertBlockedNotification(n[2], '/dev/sdx1')
        s.click(n[2]['id'], 'allow-once')
        n = s.wait_notifications(4)
        self.assertEqual(n[3]['summary'], 'hfs not loaded')
        self.assertIn('polkit refused org.fsgate.fsgate1.load', n[3]['body'])
        self.assertInteractiveCheck(ACTION_LOAD)
        self.assertEqual(fb.modprobe_files(self.root), {})

    def test_details_and_clicks_that_are_not_ours(self):
        import dbus
        s = self.session
        self.device_appears('/dev/sdw1', 'hfs')
        nid = s.wait_notifications(1)[0]['id']

        # Clicks on other programs' notifications, and actions we never offered: ignored.
        s.click(nid + 76, 'allow')
        s.click(nid, 'frobnicate', close=False)
        # A Blocked signal from someone who is not fsgated: the bus does not even deliver it.
        msg = dbus.lowlevel.SignalMessage(fb.OBJ_PATH, fb.IFACE, 'Blocked')
        msg.append('hfs', 'hfs', '/dev/sdq1', dbus.Dictionary({'source': '/tmp/evil'}, signature='sv'),
                   signature='sssa{sv}')
        self.stack.conn().send_message(msg)
        self.stack.conn().flush()

        # The default action (a click on the notification): details, in place.
        s.click(nid, 'default')
        n = s.wait_notifications(2)
        d = n[1]
        self.assertEqual(d['summary'], 'Filesystem blocked: hfs (details)')
        self.assertEqual(d['replaces'], nid)
        self.assertTrue(d['body'].startswith('Device: /dev/sdw1\n'), d['body'])
        self.assertIn('Filesystem type: hfs\nKernel module: hfs\n', d['body'])
        self.assertIn('Why: denied by /usr/lib/modprobe.d/60-blacklist_fs-hfs.conf (distribution default)', d['body'])
        self.assertIn('fsgatectl allow hfs', d['body'])
        self.assertEqual(d['actions'], ACTIONS_RETRY)

        # A real Blocked after the spoofed one: it alone is shown.
        self.device_appears('/dev/sdv1', 'hfs')
        n = s.wait_notifications(3)
        self.assertEqual(len(n), 3, n)
        self.assertBlockedNotification(n[2], '/dev/sdv1')
        self.assertNotIn('/dev/sdq1', self.notifier.log())
        self.assertEqual(self.stack.mock_polkit_calls(), [])

    def test_notification_server_restarts(self):
        s = self.session
        self.device_appears('/dev/sdu1', 'hfs')
        self.device_appears('/dev/sdt1', 'hfs')
        old_ids = [x['id'] for x in s.wait_notifications(2)]

        s.stop_mock_server()
        # No server: the post fails and waits for the next event.
        self.device_appears('/dev/sds1', 'hfs')
        self.notifier.wait_log('Will post the blocked notification for /dev/sds1 again')

        s.start_mock_server()      # the server appearing is that event
        n = s.wait_notifications(1)
        self.assertBlockedNotification(n[0], '/dev/sds1')

        # Ids of the old server are forgotten: /dev/sdt1's means nothing now (the new server
        # gave /dev/sds1 the id /dev/sdu1 had).
        self.assertEqual(n[0]['id'], old_ids[0])
        s.click(old_ids[1], 'default')
        s.click(n[0]['id'], 'default')
        n = s.wait_notifications(2)
        self.assertEqual(len(n), 2, n)
        self.assertEqual(n[1]['summary'], 'Filesystem blocked: hfs (details)')
        self.assertTrue(n[1]['body'].startswith('Device: /dev/sds1\n'), n[1]['body'])

        # And later blocks are shown as usual.
        self.device_appears('/dev/sdr1', 'hfs')
        n = s.wait_notifications(3)
        self.assertBlockedNotification(n[2], '/dev/sdr1')
        self.assertIsNone(self.notifier.proc.poll())

    def test_fsgated_restarts(self):
        self.stack.kill_daemon()
        self.stack.start_daemon(self.root, self.kver)
        self.device_appears('/dev/sdp1', 'hfs')
        n = self.session.wait_notifications(1)
        self.assertBlockedNotification(n[0], '/dev/sdp1')

    def test_one_instance_per_session(self):
        second = Notifier(self.workdir, self.session.env, self.stack.address, self.session.address)
        self.assertEqual(second.wait_exit(), 0, second.log())
        self.assertIn('Already running in this session', second.log())
        second.sock.close()
        self.assertIsNone(self.notifier.proc.poll())

    def test_session_bus_lost(self):
        self.notifier.expect_failure = True
        self.session.stop()
        self.assertEqual(self.notifier.wait_exit(), 1)
        self.assertIn('Lost the connection to the session bus', self.notifier.log())


class NotifyLifecycleTest(unittest.TestCase):
    """Without fsgated: the command line, and losing the system bus."""

    def setUp(self):
        self.workdir = tempfile.mkdtemp(prefix='fsgate-notify-')
        self.addCleanup(shutil.rmtree, self.workdir, ignore_errors=True)

    def run_notify(self, *args):
        return subprocess.run([FSGATE_NOTIFY, *args], capture_output=True, text=True, timeout=TIMEOUT)

    def test_command_line(self):
        p = self.run_notify('--help')
        self.assertEqual(p.returncode, 0)
        self.assertIn('--system-bus-address', p.stdout)
        p = self.run_notify('--version')
        self.assertEqual(p.returncode, 0)
        self.assertRegex(p.stdout, r'^fsgate-notify \d')
        self.assertEqual(self.run_notify('--bogus').returncode, 2)
        self.assertEqual(self.run_notify('extra').returncode, 2)
        # No bus at all: a failure, so that the user unit tries again.
        p = self.run_notify('--system-bus-address=unix:path=/nonexistent/bus')
        self.assertEqual(p.returncode, 1)
        self.assertIn('Failed to connect to the system bus', p.stderr)

    def test_system_bus_lost(self):
        stack = Stack(self.workdir)
        self.addCleanup(stack.stop)
        stack.start_bus()
        session = SessionBus(self.workdir)
        self.addCleanup(session.stop)
        session.start(stack.env)
        # The addresses from the environment this time, as sd_bus_open_system/user read them.
        n = Notifier(self.workdir, dict(session.env, DBUS_SYSTEM_BUS_ADDRESS=stack.address), None, None, args=[])
        self.addCleanup(n.stop)
        n.wait_ready()
        stop_process(stack.bus)
        self.assertEqual(n.wait_exit(), 1)
        self.assertIn('Lost the connection to the system bus', n.log())


def main():
    global FSGATE_NOTIFY
    argv = list(sys.argv)
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.environ.get('FSGATE_NOTIFY')
    if '--fsgate-notify' in argv:
        i = argv.index('--fsgate-notify')
        path = argv[i + 1]
        del argv[i:i + 2]
    build_root = os.environ.get('FSGATE_BUILD_ROOT') or os.path.join(here, '..', '..', 'build')
    if '--build-root' in argv:
        build_root = argv[argv.index('--build-root') + 1]
    FSGATE_NOTIFY = os.path.abspath(path or os.path.join(build_root, 'clients', 'notify', 'fsgate-notify'))
    if not os.access(FSGATE_NOTIFY, os.X_OK):
        print(f'error: {FSGATE_NOTIFY} is not an executable (build first, or pass --fsgate-notify)', file=sys.stderr)
        sys.exit(1)
    # fsgatetest.main() checks root and the tools, sets up CONFIG (fsgated, the hook) and runs.
    sys.argv = argv
    fb.main()


if __name__ == '__main__':
    main()

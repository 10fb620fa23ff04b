#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""fsgate-notify under the real GNOME Shell 43: a stick of a type with a route is blocked,
the shell shows the notifier's banner, a pointer click on its first button (Open safely)
opens the stick's files read-only for the person, without the kernel's module.

Real: GNOME Shell 43 headless (Wayland, a virtual monitor 1280x800; the root from
tests/gnome/build-root, ../shared/facts/desktops.md), in a private mount namespace over
that root as the user tester (uid 1000) with a session bus of its own; fsgate-notify of
this build in that session; the private system bus (dbus-daemon, the project's policy) at
the root's /run/dbus, which the shell uses as its system bus too; fsgated of this build on
a scratch root on that bus; the fsgate-blocked hook reporting the stick (run as the udev
rule runs it); a loop device over a squashfs image and squashfuse, mounted by fsgated's
OpenSafely under the scratch root's run/fsgate-open; the pointer (mutter's RemoteDesktop)
and the screenshots (org.gnome.Shell.Screenshot) of tests/gnome/drive.py.

MOCKS: the MOCK polkit (python-dbusmock's polkitd template on the system bus, as in every
bus test) answers yes to open-system (a loop device is no removable medium). The probe
extension (tests/gnome/probe) only reads the banner's actors: what the shell draws.

With FSGATE_GNOME_SCREENSHOTS=DIR the screenshots are copied there as notify-gnome.png (the
question, expanded, the pointer over it) and notify-gnome-opened.png (the outcome);
tests/gnome/update-screenshots sets it to docs/. With FSGATE_GNOME_KEEP=1 the session's files
(shell.log, fsgate-notify.log, the screenshots) are kept in a directory the run names.
Time: 5-25 s once the root is built (a loaded 2-core machine); a first run builds it (about
1-4 minutes).

Runs as root (77 = skipped otherwise), with Debian's /usr/bin/python3.
"""

import json
import os
import shutil
import socket
import select
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True      # keep the source tree clean
import fsgatetest as fb  # noqa: E402
from fsgatetest import ACTION_OPEN_SYSTEM, TIMEOUT, BusTestCase, die_with_parent, stop_process, wait_until  # noqa: E402
from fsgatetest.notifier import notifier_from_argv  # noqa: E402
from fsgatetest.opened import drivers, mounts_under, squashfs_stick  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FSGATE_NOTIFY = None   # set by main() from --fsgate-notify
USER_UID = 1000        # tester, made by build-root
SHARE = '/run/fsgate-test'   # the suite's directory, as the session sees it
USER_ENV = {'HOME': '/home/tester', 'USER': 'tester', 'LOGNAME': 'tester', 'PATH': '/usr/bin:/bin',
            'XDG_RUNTIME_DIR': f'/run/user/{USER_UID}', 'LANG': 'C.UTF-8',
            'DBUS_SESSION_BUS_ADDRESS': f'unix:path=/run/user/{USER_UID}/bus'}
# What fsgate-notify sends for a stick of a type with a route (tests/notify/test-notify.py's
# ACTIONS_BLOCKED_SAFELY), "default" being a click on the banner, no button.
BUTTONS = ['Open safely', 'Open read-only', 'Other choices…']
ESCAPE = '0xff1b'


def gnome_root():
    """The cached GNOME root (tests/gnome/build-root builds it the first time, or waits for
    the build tools/test-all started). None and why when it is not cached and cannot be
    built for a reason outside fsgate: no mmdebstrap."""
    p = subprocess.run([os.path.join(HERE, 'build-root')], capture_output=True, text=True)
    if p.returncode == 0:
        return p.stdout.strip(), None
    if not shutil.which('mmdebstrap'):
        return None, 'mmdebstrap missing (tools/install-deps), and no GNOME root cached'
    raise AssertionError(f'tests/gnome/build-root failed ({p.returncode}):\n{p.stderr}')


class GnomeSession:
    """tester's GNOME session in a private mount namespace over the root (in-root.sh); the
    suite's processes in it are started by nsenter into that namespace and chroot."""

    def __init__(self, workdir, root, busdir):
        self.dir = tempfile.mkdtemp(prefix='gnome-', dir=workdir)
        os.chmod(self.dir, 0o777)
        self.mnt = tempfile.mkdtemp(prefix='mnt-', dir=workdir)
        for f in ('user-session.sh', 'session-bus.conf', 'drive.py'):
            shutil.copy(os.path.join(HERE, f), self.dir)
        shutil.copytree(os.path.join(HERE, 'probe'), os.path.join(self.dir, 'probe'))
        shutil.copy(FSGATE_NOTIFY, os.path.join(self.dir, 'fsgate-notify'))
        self.shell_log = os.path.join(self.dir, 'shell.log')
        self.procs = []
        t0 = time.monotonic()
        with open(os.path.join(self.dir, 'in-root.log'), 'w') as log:
            self.proc = subprocess.Popen(['unshare', '--mount', '--propagation', 'private', '--',
                                          os.path.join(HERE, 'in-root.sh'), root, self.mnt, self.dir, busdir],
                                         stdout=log, stderr=log, start_new_session=True, preexec_fn=die_with_parent)
        self.ns = None
        wait_until(lambda: self.started(), what='GNOME Shell to start (shell.log: "GNOME Shell started")')
        self.start_seconds = time.monotonic() - t0

    def started(self):
        if self.proc.poll() is not None:
            raise AssertionError(f'the session ended ({self.proc.returncode}):\n{self.log()}')
        if self.ns is None:
            try:
                # Once chrooted: in-root.sh's pid stays the session's (exec all the way).
                if os.readlink(f'/proc/{self.proc.pid}/root') != '/':
                    self.ns = os.readlink(f'/proc/{self.proc.pid}/ns/mnt')
            except OSError:
                pass
        return self.ns is not None and 'GNOME Shell started' in fb.Stack.read(self.shell_log)

    def log(self):
        return (fb.Stack.read(os.path.join(self.dir, 'in-root.log')) + '\n--- shell.log ---\n' +
                fb.Stack.read(self.shell_log)[-6000:])

    def command(self, argv, env=None):
        """argv as tester in the session (its root, its mount namespace)."""
        e = dict(USER_ENV, **(env or {}))
        return (['nsenter', f'--target={self.proc.pid}', '--mount', '--root', '--wd=/', '--',
                 'setpriv', f'--reuid={USER_UID}', f'--regid={USER_UID}', '--init-groups', 'env', '-i'] +
                [f'{k}={v}' for k, v in e.items()] + list(argv))

    def spawn(self, argv, log_name, env=None):
        with open(os.path.join(self.dir, log_name), 'w') as log:
            p = subprocess.Popen(self.command(argv, env), stdout=log, stderr=log, preexec_fn=die_with_parent)
        self.procs.append(p)
        return p

    def drive(self, *commands, timeout=90):
        """drive.py's commands in one process; its JSON lines."""
        p = subprocess.run(self.command(['python3', f'{SHARE}/drive.py', *commands]), capture_output=True, text=True,
                           timeout=timeout)
        if p.returncode != 0:
            raise AssertionError(f'drive.py {" ".join(commands)} failed ({p.returncode}):\n{p.stdout}{p.stderr}'
                                 f'\n--- shell.log ---\n{fb.Stack.read(self.shell_log)[-4000:]}')
        return [json.loads(line) for line in p.stdout.splitlines()]

    def stop(self):
        if os.environ.get('FSGATE_GNOME_KEEP'):
            keep = tempfile.mkdtemp(prefix='notify-gnome-')
            shutil.copytree(self.dir, keep, dirs_exist_ok=True, ignore=shutil.ignore_patterns('*.sock', 'fsgate-notify'))
            fb.log(f'  (kept the session\'s files in {keep})')
        for p in self.procs:
            stop_process(p)
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        # Whatever the session started (the bus's activated services) is in its namespace.
        if self.ns:
            for _ in range(50):
                left = [int(p) for p in os.listdir('/proc') if p.isdigit() and self._in_ns(p)]
                if not left:
                    break
                for pid in left:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                time.sleep(0.1)
            else:
                raise AssertionError(f'processes of the GNOME session outlived it: {left}')

    def _in_ns(self, pid):
        try:
            return os.readlink(f'/proc/{pid}/ns/mnt') == self.ns
        except OSError:
            return False


class NotifyGnomeTest(BusTestCase):

    def setUp(self):
        super().setUp()
        root, why = gnome_root()
        if root is None:
            self.skipTest(why)
        self.node, self.opendir = squashfs_stick(self)
        self.session = GnomeSession(self.workdir, root, self.stack.busdir)
        self.addCleanup(self.session.stop)
        fb.log(f'  GNOME Shell started after {self.session.start_seconds:.1f} s')
        self.notifier = self.start_notifier()
        self.kmsg = os.path.join(self.workdir, 'kmsg')
        open(self.kmsg, 'w').close()

    def start_notifier(self):
        """The build's fsgate-notify in the session, ready when it says READY=1."""
        sock_path = os.path.join(self.session.dir, 'notify.sock')
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(sock_path)
        os.chmod(sock_path, 0o777)
        self.addCleanup(sock.close)
        self.notifier_log = os.path.join(self.session.dir, 'fsgate-notify.log')
        p = self.session.spawn([f'{SHARE}/fsgate-notify'], 'fsgate-notify.log',
                               env={'NOTIFY_SOCKET': f'{SHARE}/notify.sock', 'FSGATE_NOTIFY_SEAT': 'seat0'})
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            if p.poll() is not None:
                self.fail(f'fsgate-notify exited with {p.returncode}: {self.notify_log()}')
            r, _, _ = select.select([sock], [], [], 0.1)
            if r and b'READY=1' in sock.recv(4096):
                return p
        self.fail('fsgate-notify did not report READY=1: ' + self.notify_log())

    def notify_log(self):
        return fb.Stack.read(self.notifier_log)

    def device_appears(self, devnode, fstype):
        """The udev rule: fsgate-blocked --device with udev's ID_FS_TYPE → ReportDevice."""
        env = dict(self.stack.env, FSGATE_KMSG=self.kmsg, ID_FS_TYPE=fstype, FSGATE_ROOT=self.root)
        p = subprocess.run([fb.CONFIG.hook, '--device', devnode], env=env, capture_output=True, timeout=TIMEOUT)
        self.assertEqual(p.returncode, 0, p.stderr)

    def assertBodyWhole(self, banner, what):
        """The expanded banner shows the whole body: not ellipsized, and its label no taller
        than the part of the banner that shows it (GNOME Shell shows 6 lines at most)."""
        body = banner['expandedBody']
        self.assertIsNotNone(body, f'{what}: no expanded body')
        self.assertEqual(body['text'], banner['body'], f'{what}: the body shown is not the body sent')
        self.assertFalse(body['ellipsized'], f'{what}: GNOME Shell ellipsizes the body: {banner}')
        self.assertLessEqual(body['naturalHeight'], banner['bodyStack'][3] + 1,
                             f'{what}: GNOME Shell cuts the body: {body["lines"]} lines, it shows '
                             f'{banner["expandLines"]}: {banner}')

    def save_screenshots(self, names):
        out = os.environ.get('FSGATE_GNOME_SCREENSHOTS')
        if not out:
            return
        for src, dst in names:
            shutil.copy(os.path.join(self.session.dir, src), os.path.join(out, dst))
            fb.log(f'  saved {os.path.join(out, dst)}')

    def test_open_safely_by_click(self):
        node = self.node
        self.stack.mock_polkit_allow([ACTION_OPEN_SYSTEM])
        self.device_appears(node, 'squashfs')
        # As a person: out of the overview (Escape), the pointer onto the banner, which
        # expands and shows its buttons; a screenshot; a click on the first button; the
        # pointer on the outcome once it is shown (before it goes, 4 s after it came: the
        # person was active), expanded for its screenshot.
        t0 = time.monotonic()
        waited, expanded, _shot, click, _waited, opened, _shot = self.session.drive(
            'wait-banner', f'The drive {node} was not mounted', 'key', ESCAPE, 'hover',
            'shot', f'{SHARE}/blocked.png', 'click', 'Open safely',
            'wait-banner', f'The drive {node} is open safely', 'hover', 'shot', f'{SHARE}/opened.png')
        fb.log(f'  the banner, the hover, the click, the outcome and the screenshots: {time.monotonic() - t0:.1f} s')
        self.assertEqual(waited['actions'], BUTTONS, 'what the shell was sent')
        self.assertFalse(expanded['overview'])
        self.assertTrue(expanded['expanded'])
        # What GNOME Shell draws: each of the notifier's buttons, in its order, side by side
        # in one row under the body, within the banner.
        buttons = expanded['buttons']
        self.assertEqual([b['label'] for b in buttons], BUTTONS, 'the buttons GNOME Shell shows')
        bx, by, bw, bh = expanded['box']
        for left, right in zip(buttons, buttons[1:]):
            self.assertLessEqual(left['box'][0] + left['box'][2], right['box'][0] + 1, (left, right))
            self.assertEqual(left['box'][1], right['box'][1], (left, right))
        for b in buttons:
            x, y, w, h = b['box']
            self.assertTrue(b['mapped'] and w > 0 and h > 0, b)
            self.assertTrue(bx <= x and x + w <= bx + bw and by <= y and y + h <= by + bh, (b, expanded['box']))
        self.assertGreaterEqual(buttons[0]['box'][1], expanded['bodyStack'][1] + expanded['bodyStack'][3])
        self.assertBodyWhole(expanded, 'the question')
        # The click: the shell's ActionInvoked (its copy of the signal) names Open safely.
        self.assertEqual(click['clicked'], 'Open safely')
        self.assertIn('open-safely', [a for _nid, a in click['invoked']], click)

        # The notifier's OpenSafely, asked for with interactive authorization, as tester.
        wait_until(lambda: f'OpenSafely(squashfs) for {node}: done' in self.notify_log(),
                   what='fsgate-notify to log OpenSafely done')
        # (The shell asks the MOCK polkit too, of its own actions: NetworkManager's, logind's.)
        [(action, subject, details, flags)] = [c for c in self.stack.mock_polkit_calls()
                                               if c[0].startswith('org.fsgate.')]
        self.assertEqual((action, details.get('device'), details.get('fstype'), flags),
                         (ACTION_OPEN_SYSTEM, node, 'squashfs', 1))
        [(_, _, dev, uid, _, _, _)] = self.stack.prop('OpenMedia')
        self.assertEqual((dev, uid), (node, USER_UID))

        # The outcome, as GNOME Shell shows it (expanded: the pointer over it).
        self.assertEqual(opened['buttons'], [])
        self.assertBodyWhole(opened, 'the outcome')
        lines = opened['body'].splitlines()
        self.assertEqual(lines[0], 'Read-only; squashfs stays turned off.')
        self.assertRegex(lines[1], f'^The drive {node} is open at {self.opendir}/\\S+\\. To close it:$')
        mp = lines[1].split(' is open at ')[1][:-len('. To close it:')]
        self.assertEqual([(m, t) for m, _, t, _ in mounts_under(self.opendir)], [(mp, 'fuse.squashfuse')])
        self.assertEqual(len(drivers(self.root)), 1, 'one squashfuse, started by this fsgated')
        # The files, as the person at the desktop.
        rc, out, err = self.stack.run(['cat', os.path.join(mp, 'hello.txt')], uid=USER_UID)
        self.assertEqual((rc, out), (0, 'Hello from the stick\n'), err)
        self.assertEqual(fb.modprobe_files(self.root), {}, 'Open safely writes no configuration')
        self.save_screenshots([('blocked.png', 'notify-gnome.png'), ('opened.png', 'notify-gnome-opened.png')])

        # Its close command, run as written by the person, ends it.
        self.assertEqual(lines[2:], [f'fsgatectl close {node}'])
        r = self.stack.run_hint(lines[2], uid=USER_UID)
        self.assertEqual(r.rc, 0, r)
        wait_until(lambda: not mounts_under(self.opendir) and not drivers(self.root),
                   what='the stick closed, its driver gone')


def main():
    global FSGATE_NOTIFY
    argv = list(sys.argv)
    FSGATE_NOTIFY, _ = notifier_from_argv(argv, HERE)
    sys.argv = argv
    fb.main()


if __name__ == '__main__':
    main()

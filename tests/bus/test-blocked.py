#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Blocked reports on the bus: the deny file's hook (the built fsgate-blocked, run the way
modprobe's install line runs it) and the udev path (ReportDevice), observed with a real
dbus-monitor. The kernel side (a real mount being blocked) is in the VM suite."""

import os
import shutil
import subprocess
import sys
import time
import unittest

sys.dont_write_bytecode = True
import fsgatetest as fb  # noqa: E402
from fsgatetest import CONFIG, E_ACCESS_DENIED, NOBODY, BlockedMonitor, BusTestCase, write  # noqa: E402


class BlockedTest(BusTestCase):

    def setUp(self):
        super().setUp()
        self.mon = BlockedMonitor(self.stack)
        self.addCleanup(self.mon.stop)
        self.hook = CONFIG.hook
        self.kmsg = os.path.join(self.workdir, 'kmsg')
        open(self.kmsg, 'w').close()

    def run_hook(self, *args, env_extra=None):
        env = dict(self.stack.env, FSGATE_KMSG=self.kmsg, **(env_extra or {}))
        t0 = time.monotonic()
        p = subprocess.run([self.hook, *args], env=env, capture_output=True, timeout=10)
        return p.returncode, time.monotonic() - t0

    def test_deny_file_routes_every_type_to_the_hook(self):
        write(self.root, 'proc/mounts', '/dev/vda / xfs rw 0 0\n')   # / on ext4 would refuse it
        self.assertReplyOk(self.stack.send('Deny', 'ext4', 4))
        with open(self.etc(module='ext4')) as f:
            text = f.read()
        self.assertIn('\nblacklist ext4\n', text)
        for t in ('ext2', 'ext3', 'ext4'):
            self.assertRegex(text, rf'\nalias fs-{t} fsgate_blocked_{t}\n')
            self.assertRegex(text, rf'\ninstall fsgate_blocked_{t} \S+/fsgate-blocked {t} ext4 '
                                   r'/etc/modprobe\.d/60-blacklist_fs-ext4\.conf\n')

    def test_hook_reports_a_blocked_autoload(self):
        self.assertReplyOk(self.stack.send('Deny', 'vxfs', 0))
        source = '/etc/modprobe.d/60-blacklist_fs-freevxfs.conf'
        rc, took = self.run_hook('vxfs', 'freevxfs', source)
        self.assertEqual(rc, 0)      # modprobe must see success: the block is the alias, not an error
        self.assertLess(took, 3)
        with open(self.kmsg) as f:
            self.assertEqual(f.read(), f'<4>fsgate: blocked autoload of filesystem vxfs (module freevxfs, denied by '
                                       f'{source}); see: fsgatectl why vxfs\n')
        # Its hint, run as written: why explains the block and offers the ways out.
        r = self.stack.run_hint('fsgatectl why vxfs')
        self.assertEqual(r.rc, 0, r)
        self.assertIn('freevxfs may NOT be loaded automatically', r.out)
        self.assertIn('What you can do:', r.out)
        sig = self.mon.wait(1)
        self.assertEqual(len(sig), 1, sig)
        self.assertEqual(sig[0][:3], ('vxfs', 'freevxfs', ''))
        self.assertEqual(sig[0][3].get('source'), source)
        self.assertEqual(sig[0][3].get('origin'), 'admin')

    # Regression: Blocked said nothing of where a block came from, so every
    # session's notifier offered "Allow hfs?" for the `unshare -Urm mount -t hfs` of any
    # local user. The attacker's path (the deny file's hook, run by request_module) is
    # "kernel", with no seat; a stick udev reports is "device", at its seat.
    def test_details_say_where_a_block_came_from(self):
        self.vendor('hfs')
        rc, _ = self.run_hook('hfs', 'hfs', '/usr/lib/modprobe.d/60-blacklist_fs-hfs.conf')
        self.assertEqual(rc, 0)
        self.assertReplyOk(self.stack.send('ReportDevice', '/dev/sdv7', 'hfs'))
        env = {'FSGATE_ROOT': self.root, 'ID_FS_TYPE': 'hfs'}
        self.assertEqual(self.run_hook('--device', '/dev/sdv8', env_extra=env)[0], 0)
        sig = self.mon.wait(3)
        by_device = {s[2]: s[3] for s in sig}
        self.assertEqual(sorted(by_device), ['', '/dev/sdv7', '/dev/sdv8'], sig)
        self.assertEqual(by_device[''].get('cause'), 'kernel')
        self.assertNotIn('seat', by_device[''])
        # No udev database for a scratch device: seat0, as logind counts a device without
        # ID_SEAT.
        for dev in ('/dev/sdv7', '/dev/sdv8'):
            self.assertEqual((by_device[dev].get('cause'), by_device[dev].get('seat')), ('device', 'seat0'), dev)
        # The old keys keep their meaning: origin is still the deciding file's class.
        self.assertEqual(by_device[''].get('origin'), 'vendor')

    def test_no_signal_for_an_allowed_type(self):
        # The hook may race an Allow: the service checks again and stays quiet.
        rc, _ = self.run_hook('udf', 'udf', '/etc/modprobe.d/60-blacklist_fs-udf.conf')
        self.assertEqual(rc, 0)
        self.assertEqual(self.mon.wait(1, timeout=1.5), [])

    def test_hook_does_not_wait_for_a_missing_bus(self):
        rc, took = self.run_hook('hfs', 'hfs', '/x', env_extra={'DBUS_SYSTEM_BUS_ADDRESS': 'unix:path=/nonexistent'})
        self.assertEqual(rc, 0)
        self.assertLess(took, 3)
        with open(self.kmsg) as f:
            self.assertIn('blocked autoload of filesystem hfs', f.read())

    def test_device_reports_once_per_device_and_type(self):
        self.vendor('hfs')
        for _ in range(3):
            self.assertReplyOk(self.stack.send('ReportDevice', '/dev/sdz1', 'hfs'))
        self.assertReplyOk(self.stack.send('ReportDevice', '/dev/sdz2', 'hfs'))
        sig = self.mon.wait(2)
        self.assertEqual([s[:3] for s in sig], [('hfs', 'hfs', '/dev/sdz1'), ('hfs', 'hfs', '/dev/sdz2')])
        self.assertEqual(sig[0][3].get('origin'), 'vendor')

    def test_device_reports_once_per_boot_across_restarts(self):
        # fsgated exits when idle and udev replays "add": what was reported is kept in
        # ROOT/run/fsgate for the boot, not in the process.
        self.vendor('hfs')
        self.assertReplyOk(self.stack.send('ReportDevice', '/dev/sdx1', 'hfs'))
        self.assertEqual(len(self.mon.wait(1)), 1)
        self.assertIn('sdx1!hfs!0', os.listdir(os.path.join(self.root, 'run/fsgate/reported')))
        self.stack.restart_daemon()
        self.assertReplyOk(self.stack.send('ReportDevice', '/dev/sdx1', 'hfs'))
        self.assertEqual(len(self.mon.wait(2, timeout=1.5)), 1)
        # A new boot (an empty /run) reports it again.
        shutil.rmtree(os.path.join(self.root, 'run/fsgate'))
        self.assertReplyOk(self.stack.send('ReportDevice', '/dev/sdx1', 'hfs'))
        self.assertEqual(len(self.mon.wait(2)), 2)

    def test_device_hook_reports_only_denied_types(self):
        self.vendor('minix')
        env = {'FSGATE_ROOT': self.root, 'ID_FS_TYPE': 'minix'}
        self.assertEqual(self.run_hook('--device', '/dev/sdy1', env_extra=env)[0], 0)
        env['ID_FS_TYPE'] = 'xfs'
        self.assertEqual(self.run_hook('--device', '/dev/sdy2', env_extra=env)[0], 0)
        sig = self.mon.wait(2, timeout=2)
        self.assertEqual([s[:3] for s in sig], [('minix', 'minix', '/dev/sdy1')])

    def test_device_hook_is_bounded_by_a_bus_that_does_not_answer(self):
        """At boot dbus.socket accepts connections before dbus-daemon answers them. udevd
        logs a RUN program killed by a signal as a failed event, and the old hook was killed
        by its own 3 s alarm there: its bus call got 2.5 s whatever the
        state build had already taken. Now the call gets what is left of 2.5 s, and the alarm
        ends the hook with status 0. Played here with a socket that accepts and never
        answers; the hook is also held (SIGSTOP) past its alarm, as a loaded boot does."""
        import signal
        import socket
        self.vendor('hfs')
        path = os.path.join(self.workdir, 'silent-bus')
        silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.addCleanup(silent.close)
        silent.bind(path)
        silent.listen(16)
        env = {'FSGATE_ROOT': self.root, 'ID_FS_TYPE': 'hfs', 'DBUS_SYSTEM_BUS_ADDRESS': f'unix:path={path}'}
        rc, took = self.run_hook('--device', '/dev/sdw1', env_extra=env)
        self.assertEqual(rc, 0)
        self.assertLess(took, 2.9)
        p = subprocess.Popen([self.hook, '--device', '/dev/sdw2'], env=dict(self.stack.env, FSGATE_KMSG=self.kmsg, **env))
        time.sleep(0.2)
        p.send_signal(signal.SIGSTOP)
        time.sleep(3.3)
        p.send_signal(signal.SIGCONT)
        self.assertEqual(p.wait(timeout=10), 0, 'the hook was killed by a signal (udevd logs a failed event)')

    @unittest.skipUnless(shutil.which('strace'), 'strace is missing')
    def test_device_hook_decides_from_the_type_first(self):
        """udev runs the device hook for every disk with a filesystem, the root's at every
        boot: for a type that autoloads it must not open the module tree's indexes (libkmod,
        the whole state), only the small files that say so. A denied type still does."""
        self.vendor('minix')
        write(self.root, 'etc/modprobe.d/50-local.conf', 'options jfs foo=1\n')   # names another module

        def opened(fs_type):
            # LeakSanitizer cannot run under ptrace: the ASan build would fail at exit.
            env = dict(self.stack.env, FSGATE_KMSG=self.kmsg, FSGATE_ROOT=self.root, ID_FS_TYPE=fs_type,
                       ASAN_OPTIONS='detect_leaks=0')
            p = subprocess.run(['strace', '-f', '-qq', '-e', 'trace=open,openat,openat2', '-o', '/dev/stderr',
                                self.hook, '--device', '/dev/sdy9'],
                               env=env, capture_output=True, text=True, timeout=20)
            self.assertEqual(p.returncode, 0, p.stderr)
            return p.stderr
        for allowed in ('xfs', 'vfat', 'swap', 'LVM2_member', 'hfsplus'):
            trace = opened(allowed)
            self.assertFalse('modules.dep' in trace or 'modules.alias.bin' in trace,
                             f'{allowed}: the module tree was read (libkmod, the whole state)')
        self.assertIn('modules.dep', opened('minix'))
        sig = self.mon.wait(1, timeout=2)
        self.assertEqual([s[:3] for s in sig], [('minix', 'minix', '/dev/sdy9')])

    def test_reports_are_root_only(self):
        # The project's bus policy (the test bus includes dbus/org.fsgate.fsgate1.conf)
        # refuses them to uid 65534: the error is dbus-daemon's, the call never reached
        # fsgated. (fsgated's own refusal, the second line: ReportsWithoutPolicyTest.)
        self.vendor('hfs')
        for method, args in (('ReportBlocked', ('hfs', 'hfs')), ('ReportDevice', ('/dev/sdz1', 'hfs'))):
            r = self.stack.send(method, *args, uid=NOBODY)
            self.assertError(r, E_ACCESS_DENIED)
            self.assertRegex(r.message, rf'^Rejected send message, [1-9][0-9]* matched rules; type="method_call".*'
                                        rf'member="{method}"', 'not refused by the bus policy')
        self.assertError(self.stack.send('ReportDevice', '/etc/passwd', 'hfs'), 'org.freedesktop.DBus.Error.InvalidArgs')
        self.assertError(self.stack.send('ReportBlocked', 'a/b', 'hfs'), fb.ERR + 'InvalidName')
        self.assertEqual(self.mon.wait(1, timeout=1), [])
        # Root's calls pass the policy and reach fsgated, which reports them.
        self.assertReplyOk(self.stack.send('ReportBlocked', 'hfs', 'hfs'))
        self.assertReplyOk(self.stack.send('ReportDevice', '/dev/sdw3', 'hfs'))   # a device no other test reports
        self.assertEqual([s[:3] for s in self.mon.wait(2)], [('hfs', 'hfs', ''), ('hfs', 'hfs', '/dev/sdw3')])

    def test_other_calls_pass_the_policy(self):
        # The policy refuses only the reports: uid 65534's reads reach fsgated, and its
        # changes reach fsgated's polkit check (which the MOCK polkit refuses here).
        self.assertReplyOk(self.stack.send('GetFilesystem', 'hfs', uid=NOBODY))
        r = self.stack.send('Deny', 'hfs', 0, uid=NOBODY)
        self.assertError(r, E_ACCESS_DENIED)
        self.assertNotIn('Rejected send message', r.message)
        self.assertEqual(len(self.stack.mock_polkit_calls()), 1)


class ReportsWithoutPolicyTest(BusTestCase):
    """A bus whose policy lets everyone call everything (the project's file missing or
    edited): fsgated itself still refuses the reports of anyone but root."""

    bus_policy = f'''<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <policy user="root"><allow own="{fb.BUS_NAME}"/></policy>
  <policy context="default"><allow send_destination="{fb.BUS_NAME}"/></policy>
</busconfig>
'''

    def test_fsgated_refuses_reports_of_others(self):
        mon = BlockedMonitor(self.stack)
        self.addCleanup(mon.stop)
        self.vendor('hfs')
        for method, args in (('ReportBlocked', ('hfs', 'hfs')), ('ReportDevice', ('/dev/sdz1', 'hfs'))):
            r = self.stack.send(method, *args, uid=NOBODY)
            self.assertError(r, E_ACCESS_DENIED)
            self.assertNotIn('Rejected send message', r.message, 'the bus refused: this bus should not')
        self.assertEqual(mon.wait(1, timeout=1), [])
        self.assertReplyOk(self.stack.send('ReportBlocked', 'hfs', 'hfs'))
        self.assertEqual(len(mon.wait(1)), 1)


if __name__ == '__main__':
    fb.main()

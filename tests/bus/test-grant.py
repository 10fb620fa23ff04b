#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Grant: a load that ends by itself. The host's kernel loads no module, so here a Grant of a
module that is not loaded ends in LoadFailed; what a grant does once made (its record, its
end, the unload that waits while the module is in use, Reset ending it, a restart arming it
again) is played from records as a restarted fsgated finds them, with the module "loaded"
in the scratch root's /proc/modules. The real load and unload are the VM's
(tests/vm/scenarios/polkit.sh: by time, with the clock set back, for a medium, with a
dependency; reboot.sh: a grant does not outlive a reboot)."""

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True      # keep the source tree clean
from fsgatetest import (ACTION_GRANT, CONFIG, E_ACCESS_DENIED, E_INVALID_ARGS, ERR, NOBODY, TIMEOUT,  # noqa: E402
                        BlockedMonitor, BusTestCase, proc_modules_line, snapshot, udev_record, write)
from fsgatetest.util import stop_process, wait_until  # noqa: E402

E_LIMITS = 'org.freedesktop.DBus.Error.LimitsExceeded'
GRANTS = 'run/fsgate/grants'


def boot_id():
    with open('/proc/sys/kernel/random/boot_id') as f:
        return f.read().strip().replace('-', '')


def scope(seconds):
    return "{'seconds': <uint64 %d>}" % seconds


class GrantMonitor:
    """GrantEnded signals as (grant, module, reason), read by a real dbus-monitor."""

    def __init__(self, stack):
        self.ended, self.cond = [], threading.Condition()
        rule = "type='signal',interface='org.fsgate.fsgate1.Manager',member='GrantEnded'"
        self.proc = subprocess.Popen(['stdbuf', '-oL', 'dbus-monitor', '--system', rule], stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=stack.env, text=True)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()
        time.sleep(0.5)   # dbus-monitor becomes a monitor

    def _read(self):
        cur = None
        for line in self.proc.stdout:
            if line.startswith('signal ') and 'member=GrantEnded' in line:
                cur = []
                continue
            m = re.match(r'^\s+string "(.*)"$', line.rstrip('\n'))
            if cur is not None and m:
                cur.append(m.group(1))
                if len(cur) == 3:
                    with self.cond:
                        self.ended.append(tuple(cur))
                        self.cond.notify_all()
                    cur = None

    def wait(self, n, timeout=TIMEOUT):
        with self.cond:
            if not self.cond.wait_for(lambda: len(self.ended) >= n, timeout):
                raise AssertionError(f'{n} GrantEnded signals expected, got {self.ended}')
            return list(self.ended)

    def stop(self):
        stop_process(self.proc)
        self.thread.join(TIMEOUT)


class GrantTest(BusTestCase):
    start_polkit = True

    def setUp(self):
        shutil.rmtree(os.path.join(self.root, 'run/fsgate'), ignore_errors=True)
        super().setUp()
        self.restart()   # no grant of the test before it in memory
        # hfs denied by a vendor file, as openSUSE ships it.
        self.vendor('hfs', 'blacklist hfs\n')

    def record(self, module, until_s, since_s=None, boot=None, uid=1000, rid=None, medium=None):
        now = time.time()
        rid = rid or os.urandom(16).hex()
        text = (f'module={module}\nuid={uid}\nsince={int((since_s or now - 1) * 1e6)}\n'
                f'until={int((now + until_s) * 1e6)}\nboot={boot or boot_id()}\n')
        if medium:
            node, seq = medium
            st = os.stat(node)
            text += f'device={node}\ndevnum={os.major(st.st_rdev)}:{os.minor(st.st_rdev)}\ndiskseq={seq}\n'
        write(self.root, f'{GRANTS}/{rid}', text)
        return rid

    def records(self):
        d = os.path.join(self.root, GRANTS)
        return sorted(os.listdir(d)) if os.path.isdir(d) else []

    def loaded(self, *modules, mounted=()):
        write(self.root, 'proc/modules', ''.join(proc_modules_line(m) for m in modules))
        mounts = '/dev/vda1 / ext4 rw,relatime 0 0\n' + ''.join(
            f'/dev/sdb1 /media/{m} {m} ro 0 0\n' for m in mounted)
        write(self.root, 'proc/mounts', mounts)

    def restart(self, idle=0):
        st = self.stack
        st.stop_daemon()
        self._log_mark = len(st.daemon_output())
        st.start_daemon(self.root, self.kver, extra=(f'--idle-timeout={idle}',) if idle else ())

    def granted(self, module, until_s=600):
        """module loaded under a grant (its record, ending in until_s) that fsgated finds when
        it starts: the grant's id."""
        self.loaded(module)
        rid = self.record(module, until_s)
        self.restart()
        return rid

    def grants(self):
        return self.stack.prop('Grants')

    def monitor(self):
        """GrantEnded, watched from now until the end of the test."""
        mon = GrantMonitor(self.stack)
        self.addCleanup(mon.stop)
        return mon

    # -- what a caller sends ------------------------------------------------------------------
    def test_bad_scope_flags_and_names_change_nothing(self):
        st = self.stack
        before = snapshot(self.root)
        for args, name, what in [((scope(0), 'uint64 0'), E_INVALID_ARGS, '1 to 604800'),
                                 ((scope(604801), 'uint64 0'), E_INVALID_ARGS, '1 to 604800'),
                                 (("{'read_only': <true>}", 'uint64 0'), E_INVALID_ARGS, 'Unknown scope.*read_only'),
                                 (("{'seconds': <'60'>}", 'uint64 0'), E_INVALID_ARGS, 'type t'),
                                 (('@a{sv} {}', 'uint64 0'), E_INVALID_ARGS, 'needs a scope'),
                                 ((scope(60), 'uint64 1'), E_INVALID_ARGS, 'Flags not valid for Grant')]:
            r = st.gdbus('Grant', 'hfs', *args)
            self.assertError(r, name, what)
        self.assertError(st.gdbus('Grant', '../../etc/shadow', scope(60), 'uint64 0'), ERR + 'InvalidName')
        self.assertError(st.gdbus('Grant', 'nosuchfs', scope(60), 'uint64 0'), ERR + 'NoSuchFilesystem')
        self.assertEqual(snapshot(self.root), before)
        self.assertEqual(self.records(), [])
        self.assertEqual(self.grants(), [])

    def test_nothing_to_grant(self):
        st = self.stack
        # Allowed (no file denies minix), loaded already without a grant: "" and no record.
        r = st.busctl('Grant', 'sa{sv}t', 'minix', 1, 'seconds', 't', 60, 0)
        self.assertEqual(r.data, [''], r)
        self.loaded('hfs')
        r = st.busctl('Grant', 'sa{sv}t', 'hfs', 1, 'seconds', 't', 60, 0)
        self.assertEqual(r.data, [''], r)
        r = st.ctl('allow', '--for=1min', 'hfs')
        self.assertEqual((r.rc, r.out), (0, 'hfs is loaded already: nothing to grant (a grant never unloads what '
                                             'was there before it).\n'), r)
        self.assertEqual(self.records(), [])

    def test_load_failure_leaves_no_grant(self):
        # The host kernel loads nothing: the grant made before the load is ended again.
        st = self.stack
        r = st.gdbus('Grant', 'hfs', scope(60), 'uint64 0')
        self.assertError(r, ERR + 'LoadFailed', 'hfs')
        self.assertEqual(self.records(), [])
        self.assertEqual(self.grants(), [])
        self.assertRegex(st.daemon_output()[self._log_mark:], r'Grant [0-9a-f]{32} of hfs .* ended: failed')

    def test_denied_dependency_is_refused_by_name(self):
        # virtiofs needs fuse: with fuse denied, a grant of virtiofs would load fuse too, and
        # leave it loaded while "status fuse" says denied. Refused, by name, before polkit.
        st = self.stack
        self.assertReplyOk(st.send('Deny', 'virtiofs', 0))
        self.assertReplyOk(st.send('Deny', 'fuse', 0))
        before = snapshot(self.root)
        st.mock_polkit_clear()
        r = st.gdbus('Grant', 'virtiofs', scope(60), 'uint64 0', uid=NOBODY)
        self.assertError(r, ERR + 'DependencyDenied', 'virtiofs needs fuse, which is denied')
        self.assertEqual(st.mock_polkit_calls(), [])
        r = st.ctl('allow', '--for=4s', 'virtiofs')
        self.assertEqual(r.rc, 5, r)
        self.assertIn('allow fuse first, or grant it too', r.err)
        self.assertEqual(snapshot(self.root), before)
        self.assertEqual(self.records(), [])
        # fuse allowed again: the grant goes on (and fails only at the load, on this image).
        self.assertReplyOk(st.send('Reset', 'fuse', 0))
        self.assertError(st.gdbus('Grant', 'virtiofs', scope(60), 'uint64 0'), ERR + 'LoadFailed', 'virtiofs')

    def test_for_takes_systemds_spans(self):
        # "--for=10 min" as systemd writes spans: understood (this image loads nothing: the
        # grant is refused only at the load), never "Invalid --for".
        st = self.stack
        for span in ('10 min', '1h 30min', '2 hours', '90'):
            r = st.ctl('allow', f'--for={span}', 'hfs')
            self.assertEqual(r.rc, 7, (span, r))
            self.assertNotIn('Invalid --for', r.err)
        for span in ('10 fortnights', '1h 30', 'min', '8d'):
            r = st.ctl('allow', f'--for={span}', 'hfs')
            self.assertEqual(r.rc, 2, (span, r))
            self.assertIn('Invalid --for', r.err)

    def test_caller_not_allowed(self):
        st = self.stack
        r = st.gdbus('Grant', 'hfs', scope(90), 'uint64 0', uid=NOBODY)
        self.assertError(r, E_ACCESS_DENIED)
        calls = st.mock_polkit_calls()
        self.assertEqual([(c[0], c[2].get('module'), c[2].get('seconds')) for c in calls],
                         [(ACTION_GRANT, 'hfs', '90')])
        self.assertEqual(self.records(), [])
        # A refusal before polkit: nothing asked for a grant that cannot be.
        st.mock_polkit_clear()
        self.assertError(st.gdbus('Grant', 'hfs', scope(0), 'uint64 0', uid=NOBODY), E_INVALID_ARGS)
        self.assertEqual(st.mock_polkit_calls(), [])

    def test_offline_refused(self):
        r = self.stack.ctl('--root=' + self.root, 'allow', '--for=10min', 'hfs')
        self.assertEqual(r.rc, 2, r)
        self.assertIn('need the running service', r.err)
        for bad in ('0', '8d', '10x', '-5', 'min', ''):
            r = self.stack.ctl('allow', f'--for={bad}', 'hfs')
            self.assertEqual(r.rc, 2, (bad, r))
            self.assertIn('Invalid --for', r.err)
        r = self.stack.ctl('allow', '--for=10min', '--runtime', 'hfs')
        self.assertEqual(r.rc, 2, r)

    # -- what a grant does once made ----------------------------------------------------------
    def test_restart_arms_again_ends_and_waits_for_unmount(self):
        """A grant recorded before a restart is armed again; a second one for the same module
        (loaded now, granted) is made; both end by time; the module is mounted, so it stays
        and fsgated with an idle timeout of 1 s stays up until it is free."""
        st = self.stack
        self.loaded('hfs', mounted=('hfs',))
        # Long enough to be armed again after a restart under valgrind.
        first = self.record('hfs', 15)
        self.restart(idle=1)
        mon = self.monitor()
        g = self.grants()
        self.assertEqual([(x[0], x[1], x[2]) for x in g], [(first, 'hfs', 1000)])
        r = st.ctl('allow', '--for=2s', 'hfs')
        self.assertEqual(r.rc, 0, r)
        m = re.fullmatch(r'hfs: loaded until (\S+), then unloaded once unused; to end it now: '
                         r'(fsgatectl deny hfs)\n', r.out)
        self.assertTrue(m, r.out)
        self.assertEqual(len(self.grants()), 2)
        self.assertEqual(len(self.records()), 2)
        status = st.ctl('status', 'hfs').out
        self.assertRegex(status, r'Granted: until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ, then unloaded once unused '
                                 r'\(fsgatectl deny hfs ends it now\)')
        ended = mon.wait(2, timeout=TIMEOUT + 20)
        self.assertEqual(sorted(e[2] for e in ended), ['expired', 'expired'])
        self.assertIn(first, [e[0] for e in ended])
        self.assertEqual(self.grants(), [])
        self.assertEqual(self.records(), [])
        wait_until(lambda: 'stays loaded while it is mounted' in st.daemon_output()[self._log_mark:],
                   what='the in-use line')
        time.sleep(3)   # the idle timeout passes three times: an unload waits, fsgated stays
        self.assertIsNone(st.daemon.poll(), 'fsgated exited while an unload waited')
        self.loaded('hfs')   # unmounted
        wait_until(lambda: 'hfs is not unloaded: ' in st.daemon_output()[self._log_mark:], timeout=TIMEOUT,
                   what='the unload')
        # Nothing left to wait for: the idle exit comes.
        wait_until(lambda: st.daemon.poll() is not None, timeout=TIMEOUT, what='the idle exit')
        self.assertEqual(st.daemon.returncode, 0)
        self.assertEqual(st.daemon_output()[self._log_mark:].count('stays loaded while'), 1,
                         'the in-use line comes once')

    def test_deny_ends_early_as_the_hint_says(self):
        st = self.stack
        rid = self.granted('hfs')
        mon = self.monitor()
        status = st.ctl('status', 'hfs').out
        hint = re.search(r'\((fsgatectl deny hfs) ends it now\)', status)
        self.assertTrue(hint, status)
        desc = st.busctl('Describe', 's', 'hfs').data[0]
        self.assertRegex(desc['granted_until']['data'], r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$')
        # list: the rows scripts read stay as they are; the grant is said on stderr, and
        # in --json.
        r = st.ctl('list')
        self.assertRegex(r.out, r'(?m)^hfs +hfs +denied +vendor +yes +no +/usr/lib/modprobe.d/60-blacklist_fs-hfs.conf$')
        self.assertRegex(r.err, r'(?m)^hfs is loaded for a while: until \S+Z \(fsgatectl deny hfs ends it now\)$')
        listed = {e['module']: e for e in json.loads(st.ctl('--json', 'list').out)}
        self.assertEqual(listed['hfs']['granted_until'], desc['granted_until']['data'])
        self.assertNotIn('granted_until', listed['minix'])
        # Someone polkit says no to: the grant stays.
        r = st.send('Deny', 'hfs', 0, uid=NOBODY)
        self.assertError(r, E_ACCESS_DENIED)
        self.assertEqual(self.records(), [rid])
        r = st.run_hint(hint.group(1))
        self.assertEqual(r.rc, 0, r)
        self.assertEqual(mon.wait(1), [(rid, 'hfs', 'denied')])
        self.assertEqual(self.records(), [])
        self.assertNotIn('granted_until', st.busctl('Describe', 's', 'hfs').data[0])
        self.assertState('hfs', 'denied', 'vendor')
        wait_until(lambda: 'hfs is not unloaded: ' in st.daemon_output()[self._log_mark:], what='the unload')

    def test_reset_and_a_permanent_allow_end_it_too(self):
        st = self.stack
        first = self.granted('hfs')
        mon = self.monitor()
        self.assertEqual(st.ctl('reset', 'hfs').rc, 0)
        self.assertEqual(mon.wait(1), [(first, 'hfs', 'reset')])
        second = self.record('hfs', 600)
        self.restart()
        mon.ended.clear()
        self.assertEqual(st.ctl('allow', 'hfs').rc, 0)
        self.assertEqual(mon.wait(1), [(second, 'hfs', 'allowed')])
        # Allowed for good now: it stays loaded.
        wait_until(lambda: 'hfs stays loaded after its grant' in st.daemon_output()[self._log_mark:],
                   what='the line that hfs stays')
        self.assertState('hfs', 'allowed', 'admin')

    def test_records_of_another_boot_garbage_and_past_ends(self):
        st = self.stack
        self.loaded('hfs')
        old = self.record('hfs', 600, boot='0' * 32)
        past = self.record('hfs', -5, since_s=time.time() - 60)
        write(self.root, f'{GRANTS}/' + 'a' * 32, 'module=hfs\nuid=0\n')
        write(self.root, f'{GRANTS}/not-an-id', 'junk\n')
        # Read before any fsgated ended them: a reader trusts only a grant in force.
        self.assertNotIn('Granted', st.ctl('--root=' + self.root, 'status', 'hfs').out)
        live = self.record('hfs', 600)
        self.assertIn('Granted: until', st.ctl('--root=' + self.root, 'status', 'hfs').out)
        os.unlink(os.path.join(self.root, GRANTS, live))
        self.restart()
        self.assertEqual(self.grants(), [])
        self.assertNotIn(old, self.records())
        self.assertNotIn(past, self.records())
        out = st.daemon_output()[self._log_mark:]
        self.assertRegex(out, rf'Grant {past} of hfs .* ended: expired')
        self.assertIn('2 files in', out)

    # -- a grant for one medium: a real loop device of the host's kernel ----------------------
    def loop_device(self, name='medium', fstype='hfs'):
        """A loop device over a small file (attached, never mounted): a medium with a diskseq
        that goes away for real with losetup -d; udev's record says it holds fstype."""
        if not os.path.exists('/dev/loop-control'):
            self.skipTest('no loop devices on this kernel')
        img = os.path.join(self.workdir, name + '.img')
        with open(img, 'wb') as f:
            f.truncate(1 << 20)
        node = subprocess.run(['losetup', '-f', '--show', img], capture_output=True, text=True, check=True).stdout.strip()
        self.addCleanup(subprocess.run, ['losetup', '-d', node], capture_output=True)
        udev_record(self.root, node, fstype)
        name = os.path.basename(node)
        with open(f'/sys/block/{name}/diskseq') as f:
            return node, int(f.read())

    def test_device_grant_is_for_what_the_medium_holds(self):
        """A grant for a medium loads the module for the filesystem on it: a medium whose
        type udev does not know, or whose type the module does not read (a typo, the system
        disk), is refused before polkit is asked, and nothing is recorded. polkit's rules get
        the type and whether the medium is removable; a /dev/disk/by-* style name is taken."""
        st = self.stack
        node, _ = self.loop_device(fstype=None)
        before = snapshot(self.root)
        st.mock_polkit_clear()
        self.assertError(st.gdbus('Grant', 'hfs', "{'device': <'%s'>}" % node, 'uint64 0', uid=NOBODY),
                         E_INVALID_ARGS, f'Cannot tell which filesystem {node} holds')
        udev_record(self.root, node, 'ext4')
        before = snapshot(self.root)
        self.assertError(st.gdbus('Grant', 'hfs', "{'device': <'%s'>}" % node, 'uint64 0', uid=NOBODY),
                         E_INVALID_ARGS, f'{node} holds a ext4 filesystem, which hfs does not read')
        self.assertEqual(st.mock_polkit_calls(), [])
        self.assertEqual(snapshot(self.root), before)
        self.assertEqual(self.records(), [])
        # What the medium holds, for the rules: refused by this mock, asked with the details.
        udev_record(self.root, node, 'hfs')
        self.assertError(st.gdbus('Grant', 'hfs', "{'device': <'%s'>}" % node, 'uint64 0', uid=NOBODY),
                         E_ACCESS_DENIED)
        calls = st.mock_polkit_calls()
        self.assertEqual([(c[0], c[2].get('device'), c[2].get('fstype'), c[2].get('removable')) for c in calls],
                         [(ACTION_GRANT, node, 'hfs', 'false')])
        # A name below /dev that links to the device, as udev's /dev/disk/by-label/STICK does
        # (made in /dev/shm, the one place below /dev a test may write). hfs "loaded" by a
        # grant before it, so that the host's kernel is asked to load nothing.
        self.granted('hfs')
        link = f'/dev/shm/fsgate-test-by-label-{os.getpid()}'
        os.symlink(node, link)
        self.addCleanup(os.unlink, link)
        r = st.ctl('allow', f'--device={link}', 'hfs')
        self.assertEqual(r.rc, 0, r)
        self.assertIn(f'or until {node} is removed', r.out)
        self.assertIn(node, [g[5] for g in self.grants()])

    def test_device_scope_refuses_what_is_no_medium(self):
        st = self.stack
        before = snapshot(self.root)
        for dev, what in [('/dev/null', 'not a block device'), ('/etc/passwd', 'Not a device below /dev'),
                          ('/dev/../etc/passwd', 'Not a device below /dev'), ('/dev/nosuchdevice', 'not a block device'),
                          ('/dev/', 'Not a device below /dev'), ('relative', 'Not a device below /dev'),
                          ('/dev/disk/by-id/x', 'Not a device below /dev'), ('/dev/..', 'Not a device below /dev')]:
            r = st.gdbus('Grant', 'hfs', "{'device': <'%s'>}" % dev, 'uint64 0')
            self.assertError(r, E_INVALID_ARGS, what)
        self.assertError(st.gdbus('Grant', 'hfs', "{'device': <uint64 7>}", 'uint64 0'), E_INVALID_ARGS, 'type s')
        self.assertEqual(snapshot(self.root), before)
        self.assertEqual(self.records(), [])

    def test_device_grant_ends_when_the_medium_goes(self):
        """A grant for a loop device (hfs "loaded" by a grant before it, so that the host's
        kernel is asked to load nothing) ends when the device is detached; the grant by time
        stays. A record whose medium is another one (diskseq) ends at start."""
        st = self.stack
        node, seq = self.loop_device()
        self.loaded('hfs')
        timed = self.record('hfs', 600)
        stale = self.record('hfs', 600, medium=(node, seq + 1000))
        self.restart()
        # fsgated armed the records and ended the stale one before it took its name: the
        # monitor, started now, sees only what comes after.
        self.assertEqual([g[0] for g in self.grants()], [timed])
        self.assertRegex(st.daemon_output()[self._log_mark:], rf'Grant {stale} of hfs .* ended: device removed')
        mon = self.monitor()
        r = st.ctl('allow', f'--device={node}', 'hfs')
        self.assertEqual(r.rc, 0, r)
        self.assertRegex(r.out, rf'^hfs: loaded until \S+ or until {node} is removed, then unloaded once unused; '
                                r'to end it now: fsgatectl deny hfs\n$')
        grants = {g[5]: g for g in self.grants()}
        self.assertEqual(sorted(grants), ['', node])
        device_grant = grants[node]
        # Without a time of its own: at most a day.
        self.assertAlmostEqual((device_grant[4] - device_grant[3]) / 1e6, 86400, delta=5)
        with open(os.path.join(self.root, GRANTS, device_grant[0])) as f:
            text = f.read()
        self.assertIn(f'device={node}\n', text)
        self.assertIn(f'diskseq={seq}\n', text)
        self.assertRegex(st.ctl('status', 'hfs').out, rf'Granted: until \S+ or until {node} is removed')
        mon_start = time.monotonic()
        subprocess.run(['losetup', '-d', node], check=True)
        self.assertEqual(mon.wait(1, timeout=TIMEOUT), [(device_grant[0], 'hfs', 'device removed')])
        print(f'grant ended {time.monotonic() - mon_start:.1f} s after losetup -d (looked for every 2 s)')
        self.assertEqual([g[0] for g in self.grants()], [timed])
        self.assertEqual(self.records(), [timed])

    def hook(self, *args, env=None):
        p = subprocess.run([CONFIG.hook, *args], capture_output=True, text=True, timeout=10,
                           env=dict(self.stack.env, FSGATE_ROOT=self.root, ID_FS_TYPE='hfs',
                                    FSGATE_KMSG=os.path.join(self.workdir, 'kmsg'), **(env or {})))
        self.assertEqual(p.returncode, 0, p)
        return p.stdout

    def test_second_medium_is_hidden_from_udisks_and_reported(self):
        """The udev rule's two programs for stick B while a grant for stick A has loaded hfs
        (two real loop devices; hfs "loaded" and registered in the scratch root): B is marked
        for udisks2 to ignore and reported as Blocked; A is not. A grant by time covers
        every medium: nothing is marked then."""
        st = self.stack
        a, seq_a = self.loop_device('a')
        b, _ = self.loop_device('b')
        self.loaded('hfs')
        write(self.root, 'proc/filesystems', 'nodev\tsysfs\n\text4\n\thfs\n')
        self.addCleanup(os.unlink, os.path.join(self.root, 'proc/filesystems'))
        self.assertEqual(self.hook('--udev-import', b), '', 'no grant: nothing marked')
        self.record('hfs', 600, medium=(a, seq_a))
        self.restart()
        mon = BlockedMonitor(st)
        try:
            self.assertEqual(self.hook('--udev-import', b), 'UDISKS_IGNORE=1\nFSGATE_GRANTED_ELSEWHERE=1\n')
            self.assertEqual(self.hook('--udev-import', a), '', 'the granted medium is not marked')
            # The type is registered (loaded): without the mark --device reports nothing ...
            self.hook('--device', a)
            # ... with it, B is reported, saying that hfs is loaded.
            self.hook('--device', b, env={'FSGATE_GRANTED_ELSEWHERE': '1'})
            sig = mon.wait(1)
            self.assertEqual([s[:3] for s in sig], [('hfs', 'hfs', b)], sig)
            self.assertEqual((sig[0][3].get('cause'), sig[0][3].get('loaded')), ('device', True), sig)
            # A grant by time is for every medium of hfs.
            self.record('hfs', 600)
            self.assertEqual(self.hook('--udev-import', b), '')
        finally:
            mon.stop()

    def test_at_most_16_of_one_user(self):
        st = self.stack
        self.loaded('hfs')
        for _ in range(16):
            self.record('hfs', 600, uid=0)
        self.record('hfs', 600, uid=1000)
        self.restart()
        r = st.gdbus('Grant', 'hfs', scope(60), 'uint64 0')
        self.assertError(r, E_LIMITS, 'uid 0 has 16 grants already')
        self.assertEqual(len(self.records()), 17)

    def test_at_most_64(self):
        st = self.stack
        self.loaded('hfs')
        for _ in range(64):
            self.record('hfs', 600)
        self.restart()
        self.assertEqual(len(self.grants()), 64)
        self.assertError(st.gdbus('Grant', 'hfs', scope(60), 'uint64 0'), E_LIMITS)
        self.assertEqual(len(self.records()), 64)


if __name__ == '__main__':
    from fsgatetest import main
    main()

#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Open safely: a squashfs image's files, read-only, for its caller, through squashfuse run
as nobody in a sandbox; no kernel module. Real FUSE mounts on the host (fuse is built into
its kernel), under the scratch root's run/fsgate-open; a cleanup unmounts whatever a failed
test left there. Prints the time from the call to the first listing and the driver's RSS."""

import json
import os
import shlex
import shutil
import subprocess
import sys
import time

sys.dont_write_bytecode = True      # keep the source tree clean
from fsgatetest import (ACTION_DENY, ACTION_OPEN, ACTION_OPEN_SYSTEM, BUS_NAME, E_INVALID_ARGS, IFACE, NOBODY, OBJ_PATH,  # noqa: E402
                        CONFIG, BusTestCase, log)
from fsgatetest.opened import (assert_inert_mount, assert_read_back, drivers, images_dir, mounts_under,  # noqa: E402
                               only_for, reachable_opendir, timed_open, truncated_copy, unmount_all,
                               wait_nothing_open)
from fsgatetest.util import wait_until  # noqa: E402

# OTHER has no passwd entry, so dbus-daemon refuses its connections: it only tries the mount.
USER, OTHER = 1000, 1001
NAMES = {'a file with spaces.txt': b'hello, world\n', 'größe ñ – 日本.bin': os.urandom(300000),
         'sub dir/deeper/ünïcode €.dat': bytes(range(256)) * 1000}


def children(ppid):
    """pids of ppid's children, zombies included (killed, not reaped yet)."""
    out = []
    for p in os.listdir('/proc'):
        try:
            if p.isdigit() and status(int(p)).get('PPid') == str(ppid):
                out.append(int(p))
        except OSError:
            pass
    return out


def status(pid):
    with open(f'/proc/{pid}/status') as f:
        return dict(line.rstrip('\n').split(':\t', 1) for line in f if ':\t' in line)


class OpenTest(BusTestCase):
    start_polkit = True

    @classmethod
    def prepare_root(cls, root):
        if not shutil.which('mksquashfs') or not os.path.exists('/usr/bin/squashfuse'):
            raise unittest_skip('mksquashfs or squashfuse missing (tools/install-deps)')
        cls.opendir = reachable_opendir(cls.workdir, root)
        src = os.path.join(cls.workdir, 'src')
        for name, data in NAMES.items():
            os.makedirs(os.path.dirname(os.path.join(src, name)), exist_ok=True)
            with open(os.path.join(src, name), 'wb') as f:
                f.write(data)
        # Files only root may read inside, and an image only USER may read: nobody (the
        # driver) reads it through the descriptor handed over, never by its path.
        os.chmod(os.path.join(src, 'a file with spaces.txt'), 0o600)
        cls.images = images_dir(cls.workdir)
        cls.image = os.path.join(cls.images, 'my image.sqfs')
        subprocess.run(['mksquashfs', src, cls.image, '-noappend', '-quiet', '-no-progress'], check=True,
                       stdout=subprocess.DEVNULL)
        only_for(cls.image, USER)
        cls.truncated = os.path.join(cls.images, 'truncated.sqfs')
        truncated_copy(cls.image, cls.truncated, os.path.getsize(cls.image) // 3)
        # ext4, for fuse2fs (libfuse2: the stand-in fusermount hands over the connection).
        cls.ext4 = os.path.join(cls.images, 'stick.ext4')
        subprocess.run(['mkfs.ext4', '-q', '-F', '-L', 'STICK', '-d', src, cls.ext4, '8M'], check=True,
                       stdout=subprocess.DEVNULL, env=dict(os.environ, E2FSPROGS_FAKE_TIME='1700000000'))
        only_for(cls.ext4, USER)
        cls.root_only = os.path.join(cls.images, 'root-only.sqfs')
        shutil.copy(cls.image, cls.root_only)
        os.chmod(cls.root_only, 0o600)

    def setUp(self):
        super().setUp()
        self.addCleanup(self.cleanup_mounts)

    def cleanup_mounts(self):
        unmount_all(self.opendir, self.root)

    def assertNothingOpen(self):
        wait_until(lambda: not drivers(), what='no driver left')
        # Nor a zombie: fsgated's loop reaps what it killed.
        if self.stack.daemon is not None and self.stack.daemon.poll() is None:
            wait_until(lambda: not children(self.stack.daemon.pid), what='fsgated to reap its children')
        wait_nothing_open(self.stack, self.opendir)

    def open_image(self, image, uid=USER):
        return timed_open(self.stack, image, uid=uid)

    def opened(self, image):
        """image opened by USER, which must succeed: (its mountpoint, the seconds it took)."""
        r, elapsed = self.open_image(image)
        self.assertEqual(r.rc, 0, r)
        return r.out.strip(), elapsed

    def assertRefusedBeforePolkit(self, r, rc, message):
        """fsgatectl open exited with rc and said message, polkit was never asked, nothing
        is open."""
        self.assertEqual(r.rc, rc, r)
        self.assertIn(message, r.err)
        self.assertEqual(self.stack.mock_polkit_calls(), [])
        self.assertNothingOpen()

    def test_open_read_close(self):
        st = self.stack
        st.mock_polkit_allow([ACTION_OPEN])
        r, elapsed = self.open_image(self.image)
        self.assertEqual(r.rc, 0, r)
        mp = r.out.strip()
        self.assertTrue(mp.startswith(self.opendir + '/'), mp)
        self.assertIn('fsgatectl close', r.err)
        t0 = time.monotonic()
        rc, out, err = st.run(['ls', '-1', mp], uid=USER)
        listing = time.monotonic() - t0
        self.assertEqual(rc, 0, err)
        self.assertEqual(sorted(out.splitlines()), sorted({n.split('/')[0] for n in NAMES}))
        log(f'  open to first listing: {elapsed + listing:.3f} s (open call {elapsed:.3f} s, ls {listing:.3f} s)')
        # Every byte back, names with spaces and beyond ASCII included, as USER.
        assert_read_back(self, mp, NAMES, USER)
        # Read-only, inert, USER's only.
        super_opts = assert_inert_mount(self, mp, 'fuse.squashfuse')
        self.assertIn(f'user_id={USER}', super_opts)
        rc, _, err = st.run(['touch', os.path.join(mp, 'new')], uid=USER)
        self.assertNotEqual(rc, 0)
        self.assertIn('Read-only', err)
        for uid in (OTHER, NOBODY):
            rc, _, err = st.run(['ls', mp], uid=uid)
            self.assertNotEqual(rc, 0, f'uid {uid} could list {mp}')
            self.assertIn('Permission denied', err)
        # The driver: nobody, no capabilities at all, no_new_privs, seccomp, its namespaces.
        [pid] = drivers(self.root)
        s = status(pid)
        self.assertEqual(s['Uid'].split(), [str(NOBODY)] * 4)
        self.assertEqual(s['Gid'].split(), [str(NOBODY)] * 4)
        self.assertEqual(s['Groups'].strip(), '')
        for cap in ('CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb'):
            self.assertEqual(int(s[cap], 16), 0, cap)
        self.assertEqual(s['NoNewPrivs'], '1')
        self.assertEqual(s['Seccomp'], '2')
        for ns in ('net', 'mnt', 'ipc', 'uts'):
            self.assertNotEqual(os.readlink(f'/proc/{pid}/ns/{ns}'), os.readlink(f'/proc/self/ns/{ns}'), ns)
        # 0-2 and the two handed over; any more is its own copy of the medium (open("/dev/fd/3")
        # made a dup by the preloaded shim), nothing else of fsgated's.
        fds = {int(fd): os.readlink(f'/proc/{pid}/fd/{fd}') for fd in os.listdir(f'/proc/{pid}/fd')}
        self.assertEqual(fds[4], '/dev/fuse')
        self.assertEqual(fds[3], self.image)
        self.assertEqual({fds[fd] for fd in fds if fd > 4}, {self.image})
        # Its view: people's directories empty, /tmp holding its shim only (the image's
        # directory is under /tmp on the host: hidden too).
        for d in ('home', 'root'):
            if os.path.isdir('/' + d):
                self.assertEqual(os.listdir(f'/proc/{pid}/root/{d}'), [], d)
        self.assertEqual(os.listdir(f'/proc/{pid}/root/tmp'), ['lib'])
        log(f'  squashfuse RSS: {s["VmRSS"].strip()}')
        # Listed with its owner.
        [(oid, omp, dev, uid, fstype, driver, since)] = st.prop('OpenMedia')
        self.assertEqual((omp, dev, uid, fstype, driver), (mp, '', USER, 'squashfs', 'squashfuse'))
        # Another user cannot close it; USER can, by mountpoint.
        r = st.ctl('close', mp, uid=NOBODY)
        self.assertEqual(r.rc, 4, r)
        r = st.ctl('close', mp, uid=USER)
        self.assertEqual(r.rc, 0, r)
        self.assertNothingOpen()
        # Killed, then reaped by fsgated's loop (not waited for in place): gone a moment later.
        wait_until(lambda: not os.path.exists(f'/proc/{pid}'), what='the driver to be reaped')
        r = st.ctl('close', oid, uid=USER)
        self.assertEqual(r.rc, 3, r)
        self.assertIn('Nothing is open', r.err)

    def test_ext4_fuse2fs(self):
        """fuse2fs is libfuse2: it asks fusermount for its connection, and the stand-in in its
        sandbox hands back the one fsgated mounted. Same checks as for squashfuse."""
        if not os.path.exists('/usr/bin/fuse2fs'):
            self.skipTest('fuse2fs missing (tools/install-deps)')
        st = self.stack
        st.mock_polkit_allow([ACTION_OPEN])
        mp, elapsed = self.opened(self.ext4)
        # fuse2fs checks the files' own permissions, as the kernel's ext4 would: the 0600 file
        # of root's is not USER's to read; squashfuse checks none.
        _, _, err = st.run(['sha256sum', '--', os.path.join(mp, 'a file with spaces.txt')], uid=USER)
        self.assertIn('Permission denied', err)
        assert_read_back(self, mp, {n: d for n, d in NAMES.items() if n != 'a file with spaces.txt'}, USER)
        [(_, opts, fstype, super_opts)] = mounts_under(mp)
        self.assertEqual(fstype, 'fuse.fuse2fs')
        self.assertIn('ro', opts.split(','))
        self.assertNotIn('allow_other', super_opts)
        rc, _, err = st.run(['mkdir', os.path.join(mp, 'new')], uid=USER)
        self.assertNotEqual(rc, 0)
        rc, _, err = st.run(['ls', mp], uid=OTHER)
        self.assertNotEqual(rc, 0)
        [pid] = drivers(self.root)
        s = status(pid)
        self.assertEqual(s['Uid'].split(), [str(NOBODY)] * 4)
        self.assertEqual(int(s['CapEff'], 16) | int(s['CapBnd'], 16), 0)
        self.assertEqual((s['NoNewPrivs'], s['Seccomp']), ('1', '2'))
        log(f'  fuse2fs: open {elapsed:.3f} s, RSS {s["VmRSS"].strip()}')
        self.assertEqual(st.ctl('close', mp, uid=USER).rc, 0)
        self.assertNothingOpen()
        # The stick's image unchanged by a read-only open (no journal replay, no mount count).
        rc = subprocess.run(['e2fsck', '-n', self.ext4], capture_output=True).returncode
        self.assertEqual(rc, 0)

    def test_ext4_truncated(self):
        if not os.path.exists('/usr/bin/fuse2fs'):
            self.skipTest('fuse2fs missing (tools/install-deps)')
        st = self.stack
        st.mock_polkit_allow([ACTION_OPEN])
        bad = os.path.join(self.images, 'bad.ext4')
        truncated_copy(self.ext4, bad, 64 * 1024)
        r, _ = self.open_image(bad)
        self.assertEqual(r.rc, 12, r)
        self.assertIn('fuse2fs could not read an image', r.err)
        self.assertNothingOpen()

    def loop_device(self, image):
        node = subprocess.run(['losetup', '-r', '-f', '--show', image], capture_output=True, text=True,
                              check=True).stdout.strip()
        self.addCleanup(subprocess.run, ['losetup', '-d', node], capture_output=True)
        return node

    def test_block_device(self):
        """A stick's node is root:disk 0660: fsgated opens it, read-only, and hands the open file
        to the driver (nobody could not open the node). Closed by device name."""
        st = self.stack
        node = self.loop_device(self.image)
        # A loop device is not removable: the stricter action, which the open one does not give.
        st.mock_polkit_allow([ACTION_OPEN])
        r = st.ctl('open', node, uid=USER)
        self.assertEqual(r.rc, 4, r)
        st.mock_polkit_clear()
        st.mock_polkit_allow([ACTION_OPEN_SYSTEM])
        r = st.ctl('open', node, uid=USER)
        self.assertEqual(r.rc, 0, r)
        mp = r.out.strip()
        [(action, _, details, _)] = st.mock_polkit_calls()
        self.assertEqual((action, details['device'], details['fstype'], details['removable']),
                         (ACTION_OPEN_SYSTEM, node, 'squashfs', 'false'))
        name = 'größe ñ – 日本.bin'
        assert_read_back(self, mp, {name: NAMES[name]}, USER)
        [(_, _, dev, uid, _, _, _)] = st.prop('OpenMedia')
        self.assertEqual((dev, uid), (node, USER))
        self.assertEqual(st.ctl('close', node, uid=USER).rc, 0)
        self.assertNothingOpen()

    def test_routes(self):
        st = self.stack
        r = st.ctl('routes', '--json')
        self.assertEqual(r.rc, 0, r)
        import json
        rows = {x['type']: x for x in json.loads(r.out)}
        self.assertEqual((rows['squashfs']['driver'], rows['squashfs']['installed'], rows['squashfs']['usable']),
                         ('squashfuse', '/usr/bin/squashfuse', True))
        self.assertEqual((rows['iso9660']['driver'], rows['iso9660']['usable'], rows['iso9660']['started']),
                         ('fuseiso', False, False))
        self.assertEqual((rows['ext4']['started'], rows['hfs']['started']), (True, False))
        self.assertEqual((rows['hfs']['driver'], rows['hfs']['package']), ('', ''))
        r = st.ctl('routes')
        self.assertEqual(r.rc, 0, r)
        self.assertRegex(r.out, r'(?m)^squashfs +squashfs +squashfuse +squashfuse +installed$')
        # The scratch root has no drivers: not installed there.
        r = st.ctl('--root=' + self.root, 'routes', '--json')
        self.assertEqual(r.rc, 0, r)
        self.assertEqual({x['type']: x['installed'] for x in json.loads(r.out)}['squashfs'], '')
        r = st.ctl('--root=' + self.root, 'open', self.image)
        self.assertEqual(r.rc, 2, r)

    def way_out(self, what, uid=None):
        """why WHAT's "What you can do" lines, each stripped of its indent."""
        r = self.stack.ctl('why', what, uid=uid)
        self.assertEqual(r.rc, 0, r)
        return [line.strip() for line in r.out.split('What you can do:\n', 1)[1].splitlines() if line.strip()]

    def test_why_offers_open_safely_first(self):
        """Issue 38 and 41 item 2: where a block is explained, Open safely comes first when the
        type's driver is installed and fsgated starts it, the permanent allow last. why IMAGE's
        first line, run as written by the image's owner, opens it: every file reads back, and
        squashfs stays denied and unloaded. --json says the same; the type alone gets the
        placeholder; status names the route."""
        st = self.stack
        st.mock_polkit_allow([ACTION_DENY, ACTION_OPEN])
        self.assertEqual(st.ctl('deny', 'squashfs').rc, 0)
        ways = self.way_out(self.image, uid=USER)
        command, text = ways[0].split('      ', 1)
        self.assertEqual(shlex.split(command), ['fsgatectl', 'open', self.image], ways)
        self.assertEqual(text, 'open safely: its files read-only through squashfuse, the module still off')
        self.assertEqual(ways[-1].split()[:3], ['fsgatectl', 'allow', 'squashfs'], ways)
        self.assertEqual(len([w for w in ways if w.startswith('fsgatectl open')]), 1, ways)
        r = st.run_hint(command, uid=USER)
        self.assertEqual(r.rc, 0, r)
        mp = r.out.strip()
        assert_read_back(self, mp, NAMES, USER)
        e = st.get('squashfs')
        self.assertEqual((e.state, e.loaded), ('denied', False))
        self.assertEqual(st.ctl('close', mp, uid=USER).rc, 0)
        self.assertNothingOpen()
        why = json.loads(st.ctl('--json', 'why', self.image, uid=USER).out)
        self.assertEqual(why['open_safely'], {'type': 'squashfs', 'driver': 'squashfuse', 'package': 'squashfuse',
                                              'installed': '/usr/bin/squashfuse', 'usable': True,
                                              'command': command})
        self.assertEqual(self.way_out('squashfs')[0].split('      ')[0], 'fsgatectl open DEVICE|IMAGE')
        self.assertEqual(json.loads(st.ctl('--json', 'why', 'squashfs').out)['open_safely']['command'],
                         'fsgatectl open DEVICE|IMAGE')
        r = st.ctl('status', 'squashfs')
        self.assertRegex(r.out, r'(?m)^ +Open safely: squashfs: /usr/bin/squashfuse reads it, the module still off: '
                                r'fsgatectl open DEVICE\|IMAGE$')
        # Allowed, there is no block to explain: nothing offered, in --json neither.
        st.mock_polkit_allow([ACTION_DENY, ACTION_OPEN, 'org.fsgate.fsgate1.allow'])
        self.assertEqual(st.ctl('reset', 'squashfs').rc, 0)
        self.assertEqual(json.loads(st.ctl('--json', 'why', 'squashfs').out)['open_safely']['command'], '')

    def test_why_open_safely_of_a_block_device(self):
        """why /dev/loopN: the first way out names the device; run as written (root here), it
        opens the device, whose files read back. Under --root nothing of the running system's
        is offered, and status says which package the image's system lacks."""
        st = self.stack
        st.mock_polkit_allow([ACTION_DENY, ACTION_OPEN_SYSTEM])
        node = self.loop_device(self.image)
        r = st.ctl('deny', '--hard', 'squashfs')     # a hard deny refuses loads, not Open safely
        self.assertEqual(r.rc, 0, r)
        ways = self.way_out(node)
        self.assertEqual(ways[0].split('      ')[0], f'fsgatectl open {node}', ways)
        r = st.run_hint(ways[0].split('      ')[0])
        self.assertEqual(r.rc, 0, r)
        name = 'sub dir/deeper/ünïcode €.dat'
        with open(os.path.join(r.out.strip(), name), 'rb') as f:
            self.assertEqual(f.read(), NAMES[name])
        self.assertEqual(st.ctl('close', node).rc, 0)
        self.assertNothingOpen()
        r = st.ctl('--root=' + self.root, 'why', 'squashfs')
        self.assertNotIn('open', r.out.split('What you can do:\n', 1)[1], r.out)
        r = st.ctl('--root=' + self.root, 'status', 'ext4')
        self.assertRegex(r.out, r'(?m)^ +Open safely: ext2: fuse2fs would read it, the module still off: install the '
                                r'package fuse2fs\n +ext3: .*\n +ext4: ')
        r = st.ctl('status', 'hfs')
        self.assertRegex(r.out, r'(?m)^ +Open safely: hfs: none \(no userspace driver is known for it\)$')
        r = st.ctl('status', 'exfat')
        self.assertRegex(r.out, r'(?m)^ +Open safely: exfat: exfat-fuse \(package exfat-fuse\) reads it, but fsgate does '
                                r'not start it yet$')

    def test_block_device_by_link(self):
        """A link to the node (as /dev/disk/by-label/... are) names the device it points to."""
        st = self.stack
        st.mock_polkit_allow([ACTION_OPEN_SYSTEM])
        node = self.loop_device(self.image)
        link = os.path.join(self.images, 'by-label STICK')
        os.symlink(node, link)
        r = st.ctl('open', '--json', link, uid=USER)
        self.assertEqual(r.rc, 0, r)
        import json
        mp = json.loads(r.out)['mountpoint']
        self.assertEqual(st.prop('OpenMedia')[0][2], node)
        self.assertEqual(st.ctl('close', mp, uid=USER).rc, 0)
        self.assertNothingOpen()

    def test_block_device_in_use(self):
        """A device something has mounted (here the host kernel's built-in squashfs) is refused
        before polkit: a second driver would read a filesystem under its owner's feet."""
        with open('/proc/filesystems') as f:
            if 'squashfs' not in f.read().split():
                self.skipTest('the host kernel has no squashfs built in')
        st = self.stack
        st.mock_polkit_allow([ACTION_OPEN, ACTION_OPEN_SYSTEM])
        node = self.loop_device(self.image)
        target = os.path.join(self.workdir, 'kernel-mount')
        os.makedirs(target, exist_ok=True)
        subprocess.run(['mount', '-t', 'squashfs', '-o', 'ro', node, target], check=True)
        self.addCleanup(subprocess.run, ['umount', '-l', target])
        r = st.ctl('open', node, uid=USER)
        self.assertRefusedBeforePolkit(r, 5, 'mounted or in use')

    def test_block_device_junk(self):
        st = self.stack
        st.mock_polkit_allow([ACTION_OPEN])
        junk = os.path.join(self.images, 'zeros.img')
        with open(junk, 'wb') as f:
            f.write(b'\0' * (1 << 20))
        node = self.loop_device(junk)
        r = st.ctl('open', node, uid=USER)
        self.assertEqual(r.rc, 3, r)
        self.assertEqual(st.mock_polkit_calls(), [])
        r = st.ctl('open', '/dev/loop-control', uid=USER)
        self.assertNotEqual(r.rc, 0, r)
        self.assertNothingOpen()

    def test_driver_crash_unmounts(self):
        st = self.stack
        st.mock_polkit_allow([ACTION_OPEN])
        self.opened(self.image)
        [pid] = drivers(self.root)
        os.kill(pid, 9)
        wait_until(lambda: not mounts_under(self.opendir), what='the mount to go')
        self.assertNothingOpen()
        self.assertIn('unmounted', st.daemon_output()[self._log_mark:])

    def test_stop_unmounts(self):
        """fsgated stopping (SIGTERM to its process group: the drivers are in sessions of their
        own) unmounts what it opened; one killed leaves a stale mount its next start removes."""
        st = self.stack
        st.mock_polkit_allow([ACTION_OPEN])
        self.opened(self.image)
        st.stop_daemon()
        self.assertEqual(mounts_under(self.opendir), [])
        wait_until(lambda: not drivers(), what='the driver to end')
        self.assertEqual(os.listdir(self.opendir), [])
        st.start_daemon(self.root, self.kver)
        st.mock_polkit_allow([ACTION_OPEN])
        self.opened(self.image)
        st.kill_daemon()
        wait_until(lambda: not drivers(), what='the driver to die with fsgated')
        self.assertEqual(len(mounts_under(self.opendir)), 1)
        st.start_daemon(self.root, self.kver)
        self.assertNothingOpen()

    def test_idle_exit_waits_for_close(self):
        """With an idle timeout of 1 s fsgated stays up while something is open (the mount and
        its driver are its to end), and leaves once it is closed."""
        st = self.stack
        st.stop_daemon()
        st.start_daemon(self.root, self.kver, extra=('--idle-timeout=1',))
        st.mock_polkit_allow([ACTION_OPEN])
        mp, _ = self.opened(self.image)
        time.sleep(2.5)
        self.assertIsNone(st.daemon.poll(), 'fsgated left with a medium open')
        self.assertEqual(len(mounts_under(self.opendir)), 1)
        # Closed through the running daemon (a call would also start one by activation).
        self.assertEqual(st.ctl('close', mp, uid=USER).rc, 0)
        wait_until(lambda: st.daemon.poll() is not None, timeout=10, what='the idle exit')
        self.assertEqual(st.daemon.returncode, 0)
        self.assertEqual(mounts_under(self.opendir), [])

    def test_second_fsgated_leaves_mounts_alone(self):
        """A second fsgated on the same root fails to get the name, and must not take what the
        first opened for a crashed one's leftovers."""
        st = self.stack
        st.mock_polkit_allow([ACTION_OPEN])
        mp, _ = self.opened(self.image)
        p = subprocess.run([CONFIG.fsgated, '--root=' + self.root, '--idle-timeout=0', '--kernel-release=' + self.kver],
                           env=st.env, capture_output=True, text=True, timeout=30)
        self.assertNotEqual(p.returncode, 0, p)
        self.assertEqual(len(mounts_under(self.opendir)), 1)
        rc, out, err = st.run(['ls', mp], uid=USER)
        self.assertEqual(rc, 0, err)
        self.assertEqual(st.ctl('close', mp, uid=USER).rc, 0)
        self.assertNothingOpen()

    def test_truncated_image(self):
        st = self.stack
        st.mock_polkit_allow([ACTION_OPEN])
        r, _ = self.open_image(self.truncated)
        self.assertEqual(r.rc, 12, r)
        self.assertIn('squashfuse could not read an image', r.err)
        self.assertIn('nothing was mounted', r.err)
        self.assertNothingOpen()

    def test_not_squashfs(self):
        st = self.stack
        st.mock_polkit_allow([ACTION_OPEN])
        junk = os.path.join(self.images, 'junk.img')
        with open(junk, 'wb') as f:
            f.write(b'\0' * 65536)
        os.chmod(junk, 0o644)
        r, _ = self.open_image(junk)
        self.assertRefusedBeforePolkit(r, 3, 'no filesystem fsgate can open')

    def test_unauthorized(self):
        st = self.stack
        r, _ = self.open_image(self.image)
        self.assertEqual(r.rc, 4, r)
        [(action, _, details, _)] = st.mock_polkit_calls()
        self.assertEqual((action, details.get('fstype'), details.get('route'), details.get('device')),
                         (ACTION_OPEN, 'squashfs', 'squashfuse', ''))
        self.assertIn('files of an image', details['polkit.message'])
        self.assertNothingOpen()

    def test_unreadable_image_never_reaches_fsgated(self):
        st = self.stack
        st.mock_polkit_allow([ACTION_OPEN])
        r, _ = self.open_image(self.root_only, uid=NOBODY)
        self.assertRefusedBeforePolkit(r, 2, f'Cannot open {self.root_only}: Permission denied')

    def test_limits(self):
        st = self.stack
        st.mock_polkit_allow([ACTION_OPEN])
        mps = []
        for _ in range(4):
            mps.append(self.opened(self.image)[0])
        r, _ = self.open_image(self.image)
        self.assertNotEqual(r.rc, 0)
        self.assertIn('At most 4', r.err)
        for mp in mps:
            self.assertEqual(st.ctl('close', mp, uid=USER).rc, 0)
        self.assertNothingOpen()

    def call_with_fd(self, fd, device='', route='', flags=0):
        """OpenSafely from the harness's own connection (root), with fd handed over: (error
        name, message), or None when it opened."""
        import dbus
        try:
            self.stack.bus_call(BUS_NAME, OBJ_PATH, IFACE, 'OpenSafely', 'shst',
                                [device, dbus.types.UnixFd(fd), route, dbus.UInt64(flags)])
            return None
        except dbus.exceptions.DBusException as ex:
            return ex.get_dbus_name(), ex.get_dbus_message()

    def test_hostile_descriptors(self):
        """What the caller hands over must be an open file to read: a pipe, a socket, a file
        open for writing only, an O_PATH descriptor or a directory is refused by name, before
        polkit and without reading anything."""
        st = self.stack
        st.mock_polkit_allow([ACTION_OPEN])
        r, w = os.pipe()
        self.addCleanup(os.close, r)
        self.addCleanup(os.close, w)
        self.assertIn('neither a regular file', self.call_with_fd(r)[1])
        import socket
        a, b = socket.socketpair()
        self.addCleanup(a.close)
        self.addCleanup(b.close)
        self.assertIn('neither a regular file', self.call_with_fd(a.fileno())[1])
        wo = os.open(self.image, os.O_WRONLY)
        self.addCleanup(os.close, wo)
        self.assertEqual(self.call_with_fd(wo), (E_INVALID_ARGS, 'The image was not opened for reading'))
        path = os.open(self.image, os.O_PATH)
        self.addCleanup(os.close, path)
        self.assertEqual(self.call_with_fd(path), (E_INVALID_ARGS, 'The image was not opened for reading'))
        d = os.open(self.images, os.O_RDONLY | os.O_DIRECTORY)
        self.addCleanup(os.close, d)
        self.assertIn('neither a regular file', self.call_with_fd(d)[1])
        # One opened read-write is opened for the driver read-only: it could not write through it.
        rw = os.open(self.image, os.O_RDWR)
        self.addCleanup(os.close, rw)
        self.assertIsNone(self.call_with_fd(rw))
        [pid] = drivers(self.root)
        with open(f'/proc/{pid}/fdinfo/3') as f:
            self.assertEqual(f.read().split('flags:')[1].split()[0][-1], '0')
        [(oid, *_)] = st.prop('OpenMedia')
        self.assertEqual(st.ctl('close', oid).rc, 0)
        self.assertEqual(st.mock_polkit_calls(), [])    # root: polkit is not asked
        self.assertNothingOpen()

    def test_bad_calls(self):
        st = self.stack
        r = st.send('OpenSafely', 'string:/dev/../etc/passwd', 'unix_fd:0', 'string:', 'uint64:0')
        self.assertEqual(r.error, 'org.freedesktop.DBus.Error.InvalidArgs', r)
        r = st.send('OpenSafely', 'string:', 'unix_fd:0', 'string:vm', 'uint64:0')
        self.assertEqual(r.error, 'org.freedesktop.DBus.Error.InvalidArgs', r)
        r = st.send('OpenSafely', 'string:', 'unix_fd:0', 'string:', 'uint64:1')
        self.assertEqual(r.error, 'org.freedesktop.DBus.Error.InvalidArgs', r)
        r = st.send('CloseSafely', 'string:nothing')
        self.assertEqual(r.error, 'org.fsgate.fsgate1.Error.NotOpen', r)
        self.assertNothingOpen()


def unittest_skip(why):
    import unittest
    return unittest.SkipTest(why)


if __name__ == '__main__':
    from fsgatetest import main
    main()

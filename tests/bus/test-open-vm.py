#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Open safely's VM route: an HFS image's files (no userspace driver reads HFS) read by the
Debian kernel's own hfs driver in a throwaway VM, guestmount under TCG as nobody in the
drivers' sandbox, the appliance built once by tests/kernel/build-vm-appliance.sh (the shipped
fsgate-vm-appliance over the kernel the suites fetch). Real FUSE mounts under the scratch
root's run/fsgate-open, as in test-open.py. Each open boots a VM: 15-40 s on a busy machine;
prints the time of each."""

import json
import os
import shutil
import subprocess
import sys
import time

sys.dont_write_bytecode = True      # keep the source tree clean
from fsgatetest import ACTION_OPEN, CONFIG, BusTestCase, log  # noqa: E402
from fsgatetest.opened import (assert_inert_mount, assert_read_back, drivers, images_dir, only_for,  # noqa: E402
                               reachable_opendir, timed_open, truncated_copy, unmount_all, vm_processes,
                               wait_nothing_open)
from fsgatetest.util import wait_until  # noqa: E402

USER = 1000
# HFS names are at most 31 bytes; hcopy and the kernel's hfs pass a name's bytes through.
TEXT_NAME, TEXT = 'a file ä.txt', 'grüße, world\n'.encode()
DATA_NAME, DATA = 'data €.bin', os.urandom(200000)
VM_LIMIT = 180      # seconds for one open: the route's own limit (120 s) and then some


def skip(why):
    import unittest
    return unittest.SkipTest(why)


class OpenVmTest(BusTestCase):
    start_polkit = True

    @classmethod
    def prepare_root(cls, root):
        for tool in ('hformat', 'hcopy', 'guestmount', 'supermin'):
            if not shutil.which(tool):
                raise skip(f'{tool} missing (tools/install-deps)')
        t0 = time.monotonic()
        p = subprocess.run([os.path.join(CONFIG.source_root, 'tests/kernel/build-vm-appliance.sh')],
                           capture_output=True, text=True)
        if p.returncode == 77:
            raise skip(p.stderr.strip())
        if p.returncode != 0:
            raise RuntimeError('the appliance build failed:\n' + p.stderr)
        log(f'  appliance ready in {time.monotonic() - t0:.1f} s')
        # fsgated's environment is taken from ours when the stack starts, after this.
        cls.vm_cache = p.stdout.strip().split('=', 1)[1]
        os.environ['FSGATE_CACHE'] = cls.vm_cache
        cls.opendir = reachable_opendir(cls.workdir, root)
        cls.images = images_dir(cls.workdir)
        src = os.path.join(cls.workdir, 'src')
        os.makedirs(src)
        cls.image = os.path.join(cls.images, 'old mac.hfs')
        with open(cls.image, 'wb') as f:
            f.truncate(8 << 20)
        subprocess.run(['hformat', '-l', 'Old Mac', cls.image], check=True, stdout=subprocess.DEVNULL)
        env = dict(os.environ, HOME=cls.workdir)    # hmount keeps its state in ~/.hcwd
        subprocess.run(['hmount', cls.image], check=True, stdout=subprocess.DEVNULL, env=env)
        for name, data in ((TEXT_NAME, TEXT), (DATA_NAME, DATA)):
            path = os.path.join(src, 'f')
            with open(path, 'wb') as f:
                f.write(data)
            subprocess.run(['hcopy', '-r', path, ':' + name], check=True, env=env)
        subprocess.run(['humount'], check=True, env=env)
        # Only USER may read it: nobody (QEMU) reads it through the descriptor handed over.
        only_for(cls.image, USER)
        # The volume's header (HFS's "BD" at 1 KiB) and little else: the probe says hfs, the
        # guest's hfs cannot mount it.
        cls.truncated = os.path.join(cls.images, 'truncated.hfs')
        truncated_copy(cls.image, cls.truncated, 3 * 1024)

    def setUp(self):
        super().setUp()
        self.addCleanup(unmount_all, self.opendir)

    def assertNothingLeft(self):
        wait_until(lambda: not drivers() and not vm_processes(), what='no guestmount, no QEMU left')
        wait_nothing_open(self.stack, self.opendir)

    def open_vm(self, image):
        return timed_open(self.stack, '--route=vm', image, uid=USER, timeout=VM_LIMIT)

    def restart_with(self, **env):
        st = self.stack
        saved = {k: st.env.get(k) for k in env}
        st.env.update(env)

        def restore():
            for k, v in saved.items():
                if v is None:
                    st.env.pop(k, None)
                else:
                    st.env[k] = v
            st.restart_daemon()
        self.addCleanup(restore)
        st.restart_daemon()

    def test_hfs_read_close(self):
        st = self.stack
        st.mock_polkit_allow([ACTION_OPEN])
        r, elapsed = self.open_vm(self.image)
        self.assertEqual(r.rc, 0, r)
        log(f'  VM route, open to mounted: {elapsed:.1f} s')
        mp = r.out.strip()
        self.assertTrue(mp.startswith(self.opendir + '/'), mp)
        rc, out, err = st.run(['ls', '-1', mp], uid=USER)
        self.assertEqual(rc, 0, err)
        self.assertEqual(sorted(out.splitlines()), sorted([TEXT_NAME, DATA_NAME]))
        assert_read_back(self, mp, {TEXT_NAME: TEXT, DATA_NAME: DATA}, USER)
        # Read-only, inert, USER's only: the FUSE mount fsgated made.
        assert_inert_mount(self, mp, 'fuse.guestmount')
        rc, _, err = st.run(['touch', os.path.join(mp, 'new')], uid=USER)
        self.assertNotEqual(rc, 0)
        # guestmount and QEMU: nobody, no capabilities, no_new_privs, seccomp, no network.
        # guestmount, its recovery process (a fork that kills QEMU if guestmount dies), QEMU.
        self.assertTrue(drivers())
        procs = vm_processes()
        self.assertTrue(any(open(f'/proc/{p}/comm').read().startswith('qemu-system') for p in procs), procs)
        for p in procs:
            with open(f'/proc/{p}/status') as f:
                s = dict(line.rstrip('\n').split(':\t', 1) for line in f if ':\t' in line)
            self.assertEqual(s['Uid'].split(), ['65534'] * 4)
            self.assertEqual(int(s['CapEff'], 16), 0)
            self.assertEqual(int(s['CapBnd'], 16), 0)
            self.assertEqual(s['NoNewPrivs'], '1')
            self.assertEqual(s['Seccomp'], '2')
            self.assertNotEqual(os.readlink(f'/proc/{p}/ns/net'), os.readlink('/proc/self/ns/net'))
            if s['Name'].startswith('qemu-system'):
                log(f'  QEMU RSS: {s["VmRSS"].strip()}')
        [(oid, omp, dev, uid, fstype, driver, since)] = st.prop('OpenMedia')
        self.assertEqual((omp, uid, fstype, driver), (mp, USER, 'hfs', 'guestmount'))
        r = st.ctl('close', mp, uid=USER)
        self.assertEqual(r.rc, 0, r)
        self.assertNothingLeft()

    def test_truncated_hfs(self):
        st = self.stack
        st.mock_polkit_allow([ACTION_OPEN])
        r, elapsed = self.open_vm(self.truncated)
        log(f'  VM route, a truncated image refused in {elapsed:.1f} s')
        self.assertEqual(r.rc, 12, r)
        self.assertIn('guestmount could not read an image (hfs filesystem)', r.err)
        self.assertIn('nothing was mounted', r.err)
        self.assertNothingLeft()

    def test_time_limit(self):
        """A VM that does not answer in time (here: a limit of 3 s, which no boot meets) is
        refused in words and killed whole, QEMU included."""
        self.restart_with(FSGATE_OPEN_VM_TIMEOUT='3')
        st = self.stack
        st.mock_polkit_allow([ACTION_OPEN])
        r, elapsed = self.open_vm(self.image)
        self.assertEqual(r.rc, 12, r)
        self.assertIn('did not answer within 3 s', r.err)
        self.assertLess(elapsed, 30)
        self.assertNothingLeft()

    def test_no_appliance(self):
        """Without an appliance the route says how to build one; fsgated never builds it."""
        empty = os.path.join(self.workdir, 'empty-cache')
        os.makedirs(empty, exist_ok=True)
        self.restart_with(FSGATE_CACHE=empty)
        st = self.stack
        st.mock_polkit_allow([ACTION_OPEN])
        r, _ = self.open_vm(self.image)
        self.assertEqual(r.rc, 3, r)
        self.assertIn('appliance is not built', r.err)
        self.assertIn('fsgate-vm-appliance', r.err)
        self.assertEqual(os.listdir(empty), [])
        self.assertNothingLeft()

    def test_route_choice(self):
        """An unknown route is refused by name, --route=fuse for HFS says there is no userspace
        driver; routes shows the VM for HFS."""
        st = self.stack
        st.mock_polkit_allow([ACTION_OPEN])
        r = st.ctl('open', '--route=warp', self.image, uid=USER)
        self.assertEqual(r.rc, 2, r)
        self.assertIn('known: fuse, vm', r.err)
        r = st.ctl('open', '--route=fuse', self.image, uid=USER)
        self.assertEqual(r.rc, 3, r)
        self.assertIn('No userspace driver', r.err)
        self.assertNothingLeft()
        # routes: the VM where no userspace driver reads the type, the FUSE driver elsewhere.
        r = st.ctl('routes', '--json')
        self.assertEqual(r.rc, 0, r)
        rows = {x['type']: x for x in json.loads(r.out)}
        self.assertEqual((rows['hfs']['driver'], rows['hfs']['vm_driver'], rows['hfs']['vm_package'],
                          rows['hfs']['vm_installed']), ('', 'guestmount', 'libguestfs-tools', '/usr/bin/guestmount'))
        self.assertEqual(rows['squashfs']['vm_driver'], '')
        r = st.ctl('routes')
        self.assertRegex(r.out, r'(?m)^hfs +hfs +guestmount +libguestfs-tools +in a VM \(--route=vm\), installed$')


if __name__ == '__main__':
    from fsgatetest import main
    main()

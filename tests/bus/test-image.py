#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""fsgatectl --root=DIR on an image whose owner attacks it: writes stay inside the image
while etc/modprobe.d is swapped for a symlink out of it, and hostile files (FIFOs, links to
devices, files of another user) are clear errors or warnings, never a hang."""

import os
import stat
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True      # keep the source tree clean
import fsgatetest as fb  # noqa: E402
from fsgatetest import (CONFIG, NOBODY, BusTestCase, conf_name, make_scratch_root, reset_root,  # noqa: E402
                        snapshot, write)

# The attacker: exchanges two names in a directory it owns, as fast as the kernel allows.
SWAPPER = r'''
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
a, b = sys.argv[1].encode(), sys.argv[2].encode()
print('ready', flush=True)
while True:
    libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
'''

SWAP_SECONDS = float(os.environ.get('FSGATE_SWAP_SECONDS', '20'))


class ImageAttackTest(BusTestCase):
    start_polkit = False
    start_daemon = False

    def setUp(self):
        super().setUp()
        # The attacker (nobody) must reach the image's etc/.
        os.chmod(self.workdir, 0o755)
        self.image = tempfile.mkdtemp(prefix='image-', dir=self.workdir)
        os.chmod(self.image, 0o755)
        make_scratch_root(self.image)
        reset_root(self.image)
        write(self.image, 'usr/lib/modprobe.d/' + conf_name('hfs'), fb.SUSE_VENDOR_FILE.format(m='hfs'))

    def offline(self, *args, uid=None, timeout=60):
        cmd = [CONFIG.fsgatectl, '--root=' + self.image] + list(args)
        if uid is not None:
            cmd = ['setpriv', f'--reuid={uid}', f'--regid={uid}', '--clear-groups'] + cmd
        return subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=timeout)

    def test_swapped_modprobe_d_never_leads_outside(self):
        """The reported attack: the image's etc/ belongs to another user, who exchanges
        etc/modprobe.d with a symlink to a directory outside the image in a loop, while root
        allows, denies and resets. No file outside may appear, change or go."""
        etc = os.path.join(self.image, 'etc')
        outside = os.path.join(self.workdir, 'outside')
        os.makedirs(outside)
        write(self.workdir, 'outside/' + conf_name('hfs'), "# someone else's\nblacklist hfs\n")
        write(self.workdir, 'outside/' + fb.TEMP_PREFIX + '0000', '# not fsgate\'s either\n')
        write(self.workdir, 'outside/' + conf_name('minix'), '# by hand\ninstall minix /bin/true\n')
        before = snapshot(outside)
        os.chown(etc, NOBODY, NOBODY)
        evil = os.path.join(etc, 'evil')
        os.symlink(outside, evil)
        os.lchown(evil, NOBODY, NOBODY)

        swapper = subprocess.Popen([fb.PYTHON, '-c', SWAPPER, os.path.join(etc, 'modprobe.d'), evil],
                                   user=NOBODY, group=NOBODY, extra_groups=[], stdout=subprocess.PIPE, text=True)
        try:
            self.assertEqual(swapper.stdout.readline().strip(), 'ready')
            steps = [('allow', 'hfs'), ('reset', 'hfs'), ('deny', 'minix'), ('reset', 'minix'),
                     ('--runtime', 'deny', 'minix'), ('--runtime', 'reset', 'minix')]
            results, samples = {}, {}
            end = time.monotonic() + SWAP_SECONDS
            i = 0
            while time.monotonic() < end:
                p = self.offline(*steps[i % len(steps)])
                self.assertGreaterEqual(p.returncode, 0, f'fsgatectl died: {p!r}')
                results[p.returncode] = results.get(p.returncode, 0) + 1
                samples.setdefault(p.returncode, p.stderr.strip())
                i += 1
        finally:
            swapper.kill()
            swapper.wait()
            swapper.stdout.close()
        fb.log(f'{i} changes while swapping, by exit status: {results}; a message for each: {samples}')
        self.assertGreater(results.get(0, 0), 0, 'no change went through: the test proved nothing')
        self.assertEqual(snapshot(outside), before, 'fsgatectl --root wrote outside the image')
        # Nothing else appeared beside the image either.
        self.assertEqual(sorted(n for n in os.listdir(self.workdir) if n.startswith(('60-', fb.TEMP_PREFIX))), [])

    def status_while_swapping(self, a, b, runs=200):
        """runs of `fsgatectl --root status hfs`, each with 10 s (or until FSGATE_SWAP_SECONDS
        have passed), while nobody exchanges a and b in the image: the outputs, by exit status."""
        swapper = subprocess.Popen([fb.PYTHON, '-c', SWAPPER, a, b], user=NOBODY, group=NOBODY, extra_groups=[],
                                   stdout=subprocess.PIPE, text=True)
        results, done = {}, 0
        try:
            self.assertEqual(swapper.stdout.readline().strip(), 'ready')
            end = time.monotonic() + SWAP_SECONDS
            while done < runs and time.monotonic() < end:
                try:
                    p = self.offline('status', 'hfs', timeout=10)
                except subprocess.TimeoutExpired:
                    self.fail(f'fsgatectl --root hung (run {done + 1}) while {a} and {b} were exchanged')
                self.assertNotIn('SECRET', p.stdout + p.stderr, f'run {done + 1}: a host file came out')
                results[p.returncode] = results.get(p.returncode, 0) + 1
                done += 1
        finally:
            swapper.kill()
            swapper.wait()
            swapper.stdout.close()
        fb.log(f'{done} runs while {os.path.basename(a)} and {os.path.basename(b)} were exchanged, by exit status: {results}')
        self.assertGreater(results.get(0, 0), 0, 'no run answered: the test proved nothing')

    def test_checked_files_swapped_for_kmod(self):
        """The reported attack on libkmod, which opened the files fsgate had checked again by
        name: the image's owner exchanges a checked config file, then the tree's modules.softdep
        (which libkmod reads as configuration), with a FIFO (fsgatectl hung, about one run in
        30) or with a symlink to a root-only host file in modprobe syntax (its lines came out as
        the install command)."""
        secret = write(self.workdir, 'secret/secret.conf', 'install hfs /bin/echo SECRET-LINE-FROM-HOST-FILE\n',
                       mode=0o600)
        os.chmod(os.path.dirname(secret), 0o700)
        kver = os.listdir(os.path.join(self.image, 'usr/lib/modules'))[0]
        for d in ('etc/modprobe.d', 'usr/lib/modules/' + kver):
            full = os.path.join(self.image, d)
            os.chown(full, NOBODY, NOBODY)
            fifo, evil = os.path.join(full, 'fifo'), os.path.join(full, 'evil')
            os.mkfifo(fifo)
            os.symlink(secret, evil)
            os.lchown(fifo, NOBODY, NOBODY)
            os.lchown(evil, NOBODY, NOBODY)
        conf = write(self.image, 'etc/modprobe.d/50-admin.conf', 'blacklist hfs\n')
        os.chown(conf, NOBODY, NOBODY)
        softdep = os.path.join(self.image, 'usr/lib/modules', kver, 'modules.softdep')
        for target in (conf, softdep):
            for other in ('fifo', 'evil'):
                self.status_while_swapping(target, os.path.join(os.path.dirname(target), other))
                # Each name as it was, for the next run (the swapper stopped anywhere).
                if not stat.S_ISREG(os.lstat(target).st_mode):
                    os.rename(target, target + '.tmp')
                    os.rename(os.path.join(os.path.dirname(target), other), target)
                    os.rename(target + '.tmp', os.path.join(os.path.dirname(target), other))

    def test_hostile_files_are_errors_not_hangs(self):
        """A FIFO or a link to a device where the image should have a file: an error naming
        the file, at once."""
        dev = os.path.join(self.image, 'dev')
        os.makedirs(dev, exist_ok=True)
        if not os.path.exists(os.path.join(dev, 'zero')):
            os.mknod(os.path.join(dev, 'zero'), 0o666 | stat.S_IFCHR, os.makedev(1, 5))
        for rel in ('proc/modules', 'proc/mounts', 'proc/cmdline'):
            full = os.path.join(self.image, rel)
            with open(full) as f:
                saved = f.read()
            for make in (lambda p: os.mkfifo(p), lambda p: os.symlink('/dev/zero', p)):
                os.unlink(full)
                make(full)
                p = self.offline('list', timeout=30)
                self.assertNotEqual(p.returncode, 0, p)
                self.assertIn(rel, p.stderr)
                self.assertIn('Not a regular file', p.stderr)
            os.unlink(full)
            write(self.image, rel, saved)
        self.assertEqual(self.offline('list').returncode, 0)

    def test_unreadable_config_is_a_warning(self):
        """A 0600 file of another user: skipped, and named in a warning."""
        full = write(self.image, 'etc/modprobe.d/50-secret.conf', 'blacklist jfs\n', mode=0o600)
        os.chmod(self.workdir, 0o755)
        for args in (('list',), ('status', 'jfs')):
            p = self.offline(*args, uid=NOBODY)
            self.assertEqual(p.returncode, 0, p)
            self.assertIn('Warning: the answer may be incomplete: cannot read /etc/modprobe.d/50-secret.conf',
                          p.stderr)
        os.unlink(full)


if __name__ == '__main__':
    fb.main()

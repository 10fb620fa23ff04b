#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""fsgatectl initramfs on a scratch root (--root) with the real Debian module tree: an
initramfs made here the way initramfs-tools makes one (a newc cpio, zstd, the regular files
of modprobe.d only, the modules it was asked for and their depmod output), unpacked by the
real unmkinitramfs. What a real update-initramfs gives: tests/system/scenarios/install.sh."""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.dont_write_bytecode = True      # keep the source tree clean
from fsgatetest import CONFIG, cli_main, make_scratch_root  # noqa: E402
from fsgatetest.initramfs import VENDOR, make_initramfs  # noqa: E402

UNMKINITRAMFS = '/usr/bin/unmkinitramfs'


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        f.write(text)


class InitramfsTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.base = tempfile.mkdtemp(prefix='fsgate-initramfs-test.')
        cls.template = os.path.join(cls.base, 'template')
        cls.kver = make_scratch_root(cls.template)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.base)

    def setUp(self):
        self.root = tempfile.mkdtemp(dir=self.base)
        shutil.rmtree(self.root)
        shutil.copytree(self.template, self.root, symlinks=True)
        # initramfs-tools is what the root has: its update-initramfs (never run) says so.
        write(self.root, 'usr/sbin/update-initramfs', '#!/bin/sh\nexit 1\n')
        write(self.root, f'{VENDOR}/60-blacklist_fs-hfs.conf', 'blacklist hfs\n')
        write(self.root, f'{VENDOR}/60-blacklist_fs-minix.conf', 'blacklist minix\n')

    def make_initramfs(self, modules):
        make_initramfs(self.root, self.kver, modules, self.base)

    def ctl(self, *args, want=0, env=None):
        p = subprocess.run([CONFIG.fsgatectl, f'--root={self.root}', *args], capture_output=True, text=True,
                           timeout=120, env=dict(env or os.environ, LC_ALL='C.UTF-8'))
        self.assertEqual(p.returncode, want, p)
        return p

    def temp_dirs_left(self):
        return [d for d in os.listdir('/tmp') if d.startswith('fsgate-initramfs.') and
                os.path.join('/tmp', d) != self.base]

    def test_agrees_then_a_mask_and_a_deny_disagree(self):
        before = self.temp_dirs_left()
        self.make_initramfs(['hfs', 'minix', 'ufs'])
        out = self.ctl('initramfs').stdout
        self.assertIn(f'Initramfs: {self.root}/boot/initrd.img-{self.kver} (initramfs-tools)', out)
        self.assertIn('It agrees', out)
        # Allowed by fsgate's mask: outside allowed, inside the vendor deny still stands, and
        # making the initramfs again (regular files only) does not carry the mask.
        # That difference is information, not a failure that stays for good: exit 0, and no
        # command that would not change it.
        self.ctl('allow', 'hfs')
        for regenerate in (False, True):
            if regenerate:
                self.make_initramfs(['hfs', 'minix', 'ufs'])
            out = self.ctl('initramfs').stdout
            self.assertIn('  hfs: allowed here (/etc/modprobe.d/60-blacklist_fs-hfs.conf), denied in the initramfs '
                          '(/usr/lib/modprobe.d/60-blacklist_fs-hfs.conf)', out)
            self.assertIn('An allow by a /dev/null mask never reaches it', out)
            self.assertNotIn('To make it again', out)
        j = json.loads(self.ctl('--json', 'initramfs').stdout)
        self.assertFalse(j['agrees'])
        self.assertFalse(j['regenerating_helps'])
        self.assertEqual(j['command'], '')
        # Denied here after the initramfs was made: shipped and allowed inside. Making it
        # again helps: a failure (9) with the command, for an image run inside it (the bare
        # command would make the host's initramfs).
        self.ctl('deny', 'ufs')
        out = self.ctl('initramfs', want=9).stdout
        self.assertIn(f'To make it again from the configuration as it is now: chroot {self.root} '
                      f'update-initramfs -u -k {self.kver}', out)
        j = json.loads(self.ctl('--json', 'initramfs', want=9).stdout)
        self.assertFalse(j['agrees'])
        self.assertTrue(j['regenerating_helps'])
        self.assertEqual(j['generator'], 'initramfs-tools')
        self.assertEqual(j['command'], f'chroot {self.root} update-initramfs -u -k {self.kver}')
        got = {d['module']: (d['state'], d['state_inside'], d['mask_not_copied']) for d in j['disagreements']}
        self.assertEqual(got, {'hfs': ('allowed', 'denied', True), 'ufs': ('denied', 'allowed', False)})
        # The printed command's effect (made the way it would make it): ufs agrees, hfs not,
        # which making it again cannot change: exit 0.
        self.make_initramfs(['hfs', 'minix', 'ufs'])
        j = json.loads(self.ctl('--json', 'initramfs').stdout)
        self.assertEqual([d['module'] for d in j['disagreements']], ['hfs'])
        # A module the initramfs does not hold cannot load from it: no disagreement.
        self.make_initramfs(['minix', 'ufs'])
        self.assertIn('It agrees', self.ctl('initramfs').stdout)
        self.assertEqual(self.temp_dirs_left(), before, 'the unpacked initramfs was left behind')

    def test_status_and_audit_say_it(self):
        build_root = os.path.dirname(os.path.dirname(CONFIG.fsgatectl))     # BUILD/clients/fsgatectl
        env = dict(os.environ, FSGATE_PROFILE_DIR=os.path.join(build_root, 'data', 'profiles'))
        self.make_initramfs(['hfs', 'minix'])
        image = f'{self.root}/boot/initrd.img-{self.kver}'
        self.assertIn(f'Initramfs: denied there too   ({image})', self.ctl('status', 'hfs').stdout)
        self.assertIn(f'Initramfs: does not hold it   ({image})', self.ctl('status', 'ufs').stdout)
        # A CIS audit asks for hfs denied hard: the initramfs made before that keeps the
        # vendor's soft deny, and before the deny of udf it held udf allowed.
        self.ctl('deny', '--hard', 'udf')
        self.ctl('deny', '--hard', 'hfs')
        p = self.ctl('audit', 'cis', want=9, env=env)      # cramfs & co. are not denied: not compliant
        self.assertNotIn('Warning', p.stdout)               # udf is not in it, hfs denied in both
        # Made with udf denied, then udf allowed here: a disagreement of a profile's module.
        self.make_initramfs(['hfs', 'minix', 'udf'])
        self.ctl('reset', 'udf')
        p = self.ctl('audit', 'cis', want=9, env=env)
        self.assertIn(f'Warning (not part of the verdict): the initramfs {image} disagrees on 1 module of the profile:\n'
                      '  udf: allowed here (default), denied in the initramfs (/etc/modprobe.d/60-blacklist_fs-udf.conf)\n'
                      f'To make it again from the configuration as it is now: chroot {self.root} update-initramfs -u -k '
                      f'{self.kver}\n',
                      p.stdout)
        j = json.loads(self.ctl('--json', 'audit', 'cis', want=9, env=env).stdout)
        self.assertEqual(j['initramfs']['checked'], True)
        self.assertEqual([(d['module'], d['state'], d['state_inside']) for d in j['initramfs']['disagreements']],
                         [('udf', 'allowed', 'denied')])
        out = self.ctl('status', 'udf').stdout
        self.assertIn(f'Initramfs: denied there (/etc/modprobe.d/60-blacklist_fs-udf.conf), unlike here   ({image})',
                      out)
        self.assertIn(f'To make the initramfs again from the configuration as it is now: chroot {self.root} '
                      'update-initramfs -u -k '
                      f'{self.kver}', out)
        # The other way, what an auditor fears: denied here, shipped allowed in the initramfs.
        self.make_initramfs(['hfs', 'minix', 'udf'])
        self.ctl('deny', '--hard', 'udf')
        self.assertIn('  udf: denied here (/etc/modprobe.d/60-blacklist_fs-udf.conf), allowed in the initramfs (default)\n',
                      self.ctl('audit', 'cis', want=9, env=env).stdout)
        # Allowed by a mask: making it again would not help, and status says so instead.
        self.ctl('allow', 'minix')
        out = self.ctl('status', 'minix').stdout
        self.assertIn('Initramfs: denied there (/usr/lib/modprobe.d/60-blacklist_fs-minix.conf), unlike here', out)
        self.assertIn('An allow by a /dev/null mask never reaches the initramfs', out)
        self.assertNotIn('To make the initramfs again', out)
        # An image it cannot read: said, never taken for agreement; the verdict is the same.
        os.chmod(image, 0)
        os.chown(image, 0, 0)
        for d in (self.base, self.root):
            os.chmod(d, 0o755)      # the rest of the root is readable to the user below
        p = subprocess.run(['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', CONFIG.fsgatectl,
                            f'--root={self.root}', 'audit', 'cis'], capture_output=True, text=True, env=env,
                           timeout=120)
        self.assertEqual(p.returncode, 9, p)
        self.assertIn(f'Warning (not part of the verdict): the initramfs was not checked: Cannot read the initramfs '
                      f'{image}', p.stdout)
        j = json.loads(self.ctl('--json', 'audit', 'cis', want=9, env=env).stdout)   # root reads it
        self.assertTrue(j['initramfs']['checked'])
        os.unlink(os.path.join(self.root, 'usr/sbin/update-initramfs'))
        j = json.loads(self.ctl('--json', 'audit', 'cis', want=9, env=env).stdout)
        self.assertEqual((j['initramfs']['checked'], j['initramfs']['reason']),
                         (False, 'no initramfs generator (initramfs-tools, dracut) is installed'))
        self.assertNotIn('Warning', self.ctl('audit', 'cis', want=9, env=env).stdout)
        self.assertNotIn('Initramfs', self.ctl('status', 'udf').stdout)

    def image_root(self, name):
        """A copy of the template at BASE/NAME, with initramfs-tools and hfs denied as setUp's."""
        root = os.path.join(self.base, name)
        shutil.copytree(self.template, root, symlinks=True)
        write(root, 'usr/sbin/update-initramfs', '#!/bin/sh\nexit 1\n')
        write(root, f'{VENDOR}/60-blacklist_fs-hfs.conf', 'blacklist hfs\n')
        return root

    def test_a_hostile_release_is_refused(self):
        """Issue 36 item 5: an image whose module tree is named like a command. fsgatectl
        refuses the release in words and prints no command with it (it printed `chroot IMG
        update-initramfs -u -k 9.9.9-amd64 ;touch PWNED;#`)."""
        hostile = '9.9.9-amd64 ;touch PWNED;#'
        modules = os.path.join(self.root, 'usr/lib/modules')
        os.rename(os.path.join(modules, self.kver), os.path.join(modules, hostile))
        make_initramfs(self.root, hostile, ['hfs', 'minix'], self.base)
        cwd = tempfile.mkdtemp(dir=self.base)
        for args in (['allow', 'hfs'], ['initramfs'], ['--json', 'initramfs'], ['status', 'hfs'], ['why', 'hfs'],
                     [f'--kernel-release={hostile}', 'initramfs']):
            p = subprocess.run([CONFIG.fsgatectl, f'--root={self.root}', *args], capture_output=True, text=True,
                               timeout=120, cwd=cwd, env=dict(os.environ, LC_ALL='C.UTF-8'))
            self.assertEqual(p.returncode, 2, p)
            self.assertIn('Invalid kernel release', p.stderr, p)
            self.assertIn('only letters, digits and . _ + - may name one', p.stderr, p)
            self.assertNotIn('update-initramfs', p.stdout + p.stderr, p)
        self.assertEqual(os.listdir(cwd), [])
        # Another release chosen by hand works as ever.
        os.makedirs(os.path.join(modules, self.kver))
        shutil.copytree(os.path.join(modules, hostile), os.path.join(modules, self.kver), dirs_exist_ok=True,
                        symlinks=True)
        self.ctl(f'--kernel-release={self.kver}', 'status', 'hfs')

    def test_a_root_with_a_space_and_a_quote_gets_a_quoted_command(self):
        """The printed command, run as written by sh (with a stand-in chroot on PATH that
        records its arguments), hands chroot the image's path as one word."""
        root = self.image_root("it's a root; touch PWNED")
        make_initramfs(root, self.kver, ['hfs', 'minix', 'ufs'], self.base)
        p = subprocess.run([CONFIG.fsgatectl, f'--root={root}', 'deny', 'ufs'], capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(p.returncode, 0, p)
        bindir = tempfile.mkdtemp(dir=self.base)
        record = os.path.join(bindir, 'argv')
        write(bindir, 'chroot', '#!/usr/bin/python3\nimport json, sys\n'
              f'open({record!r}, "a").write(json.dumps(sys.argv[1:]) + "\\n")\n')
        os.chmod(os.path.join(bindir, 'chroot'), 0o755)
        want = [root, 'update-initramfs', '-u', '-k', self.kver]
        p = subprocess.run([CONFIG.fsgatectl, f'--root={root}', 'initramfs'], capture_output=True, text=True,
                           timeout=120, env=dict(os.environ, LC_ALL='C.UTF-8'))
        self.assertEqual(p.returncode, 9, p)
        prefix = 'To make it again from the configuration as it is now: '
        text = [line[len(prefix):] for line in p.stdout.splitlines() if line.startswith(prefix)]
        j = json.loads(subprocess.run([CONFIG.fsgatectl, f'--root={root}', '--json', 'initramfs'],
                                      capture_output=True, text=True, timeout=120).stdout)
        p = subprocess.run([CONFIG.fsgatectl, f'--root={root}', 'status', 'ufs'], capture_output=True, text=True,
                           timeout=120, env=dict(os.environ, LC_ALL='C.UTF-8'))
        prefix = 'To make the initramfs again from the configuration as it is now: '
        status = [line.strip()[len(prefix):] for line in p.stdout.splitlines() if line.strip().startswith(prefix)]
        self.assertEqual(len(text), 1, p)
        self.assertEqual(status, text)
        self.assertEqual(j['command'], text[0])
        cwd = tempfile.mkdtemp(dir=self.base)
        for command in (text[0], j['command']):
            self.assertEqual(subprocess.run(['sh', '-n', '-c', command]).returncode, 0, command)
            subprocess.run(['sh', '-c', command], check=True, cwd=cwd,
                           env=dict(os.environ, PATH=f'{bindir}:{os.environ["PATH"]}'))
        with open(record) as f:
            self.assertEqual([json.loads(line) for line in f], [want, want])
        self.assertEqual(os.listdir(cwd), [], 'the command ran more than chroot')

    def test_no_generator_no_image_and_a_hostile_archive(self):
        before = self.temp_dirs_left()
        os.unlink(os.path.join(self.root, 'usr/sbin/update-initramfs'))
        self.assertIn('No initramfs generator', self.ctl('initramfs').stdout)
        self.assertEqual(json.loads(self.ctl('--json', 'initramfs').stdout),
                         {'generator': '', 'image': '', 'agrees': True, 'disagreements': [],
                          'regenerating_helps': False, 'command': ''})
        write(self.root, 'usr/sbin/update-initramfs', '')
        p = self.ctl('initramfs', want=1)
        self.assertIn(f'Cannot read the initramfs {self.root}/boot/initrd.img-{self.kver}', p.stderr)
        # An image's archive naming a path outside: unpacked inside the private directory or
        # not at all, never next to it.
        tree = tempfile.mkdtemp(dir=self.base)
        os.makedirs(os.path.join(tree, 'a'))
        write(tree, 'escaped-by-fsgate-test', 'x')
        image = os.path.join(self.root, 'boot', f'initrd.img-{self.kver}')
        os.makedirs(os.path.dirname(image), exist_ok=True)
        subprocess.run(f'cd {tree}/a && echo ../escaped-by-fsgate-test | cpio -o -H newc --quiet | zstd -q -o {image}',
                       shell=True, check=True)
        self.ctl('initramfs')   # holds no module: agrees
        self.assertFalse(os.path.exists('/tmp/escaped-by-fsgate-test'))
        self.assertEqual(self.temp_dirs_left(), before)
        # A compression bomb (256 MB of zeros, some 10 KB packed) over a cap of 16 MiB (the
        # built-in 1 GiB, lowered for the test): unpacking ends past it, with the tool's whole
        # process group, and nothing is left.
        shutil.rmtree(tree)
        tree = tempfile.mkdtemp(dir=self.base)
        subprocess.run(['truncate', '-s', '256M', os.path.join(tree, 'zeros')], check=True)
        subprocess.run(f'cd {tree} && echo zeros | cpio -o -H newc --quiet | zstd -q -1 -f -o {image}', shell=True,
                       check=True)
        shutil.rmtree(tree)
        self.assertLess(os.path.getsize(image), 1 << 20)
        capped = dict(os.environ, FSGATE_INITRAMFS_UNPACK_MAX=str(16 << 20))
        p = self.ctl('initramfs', want=1, env=capped)
        self.assertIn('could not unpack', p.stderr)
        self.assertIn('it unpacks to too much', p.stderr)
        self.assertEqual(self.temp_dirs_left(), before)
        self.assertEqual(subprocess.run(['pgrep', '-f', f'cpio.*{self.base}'], capture_output=True).returncode, 1,
                         'a process of the unpack is left')
        # Ended while it unpacks (Cockpit closing its channel sends SIGTERM): the tree goes,
        # then the signal ends fsgatectl as it would have.
        p = subprocess.Popen([CONFIG.fsgatectl, f'--root={self.root}', 'initramfs'], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, env=capped)
        for _ in range(100):
            if self.temp_dirs_left() != before:
                break
            time.sleep(0.05)
        self.assertNotEqual(self.temp_dirs_left(), before, 'the unpack did not start')
        p.terminate()
        self.assertEqual(p.wait(timeout=30), -signal.SIGTERM)
        self.assertEqual(self.temp_dirs_left(), before)


if __name__ == '__main__':
    # packages initramfs-tools-core, zstd, cpio; root: the scratch root holds root-owned files
    cli_main(need=[UNMKINITRAMFS, 'zstd', 'cpio'], root=True)

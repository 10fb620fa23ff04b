#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Bus tests of the hard deny (Deny flag 0x8 HARD), the HardDenied error, and Describe /
DescribeAll: hard or soft judged by what kmod would run for `modprobe MODULE`, whoever wrote
the install line, and the deciding file named the same by status and by Allow. Root callers
(polkit is skipped for uid 0), except where a test says otherwise."""

import os
import subprocess
import sys

sys.dont_write_bytecode = True      # keep the source tree clean
import fsgatetest as fb  # noqa: E402
from fsgatetest import (ACTION_ALLOW, ACTION_LOAD, CONFIG, E_INVALID_ARGS, ERR, FORCE, HARD, LOAD_NOW, NOBODY, RUNTIME, SOFT,  # noqa: E402
                        BusTestCase, SignalMonitor, conf_name, proc_modules_line, snapshot, unpack, write)

E_HARD = ERR + 'HardDenied'
E_FOREIGN = ERR + 'ForeignConfig'
E_INVALID_NAME = ERR + 'InvalidName'
E_NO_SUCH = ERR + 'NoSuchFilesystem'

# What hardening tools write, each an install command that loads nothing.
FOREIGN_HARD = {
    'cis': 'install {m} /bin/true\n',
    'admin': 'install {m} /bin/false\n',
    'kicksecure': 'install {m} /usr/bin/disabled-filesys-by-security-misc\n',
}
# Install commands that do load the module: not a hard deny.
LOADING = [
    'install {m} /usr/lib/module-init-tools/unblacklist {m}; /sbin/modprobe --ignore-install {m}\n',
    'install {m} /sbin/modprobe --ignore-install {m} $CMDLINE_OPTS\n',
    'install {m} echo loading >/dev/kmsg; /sbin/modprobe -i $MODPROBE_MODULE\n',
    'install {m} /sbin/insmod /lib/modules/x/{m}.ko\n',
]


class HardDenyTest(BusTestCase):

    def describe(self, name, uid=None):
        r = self.stack.busctl('Describe', 's', name, uid=uid)
        self.assertTrue(r.ok, r)
        return unpack(r.data[0])

    def describe_all(self, uid=None):
        r = self.stack.busctl('DescribeAll', uid=uid)
        self.assertTrue(r.ok, r)
        return {m: unpack(d) for m, d in r.data[0].items()}

    # -- the flag -----------------------------------------------------------------------------
    def test_hard_deny_writes_the_line_openscap_accepts(self):
        mon = SignalMonitor(self.stack)
        self.addCleanup(mon.stop)
        self.assertReplyOk(self.stack.send('Deny', 'hfs', HARD))
        text = self.assertDenyFile(self.etc(module='hfs'), 'hfs')
        lines = text.splitlines()
        # Exactly what SSG's kernel_module_hfs_disabled pattern matches:
        # ^\s*install\s+hfs\s+(/bin/false|/bin/true)$
        self.assertIn('install hfs /bin/false', lines)
        # The route to the hook stays, so blocked mounts are still reported.
        self.assertIn('alias fs-hfs fsgate_blocked_hfs', lines)
        self.assertTrue(any(line.startswith('install fsgate_blocked_hfs ') for line in lines), text)
        d = self.describe('hfs')
        self.assertEqual((d['state'], d['hard'], d['explicit_load_possible'], d['blocks_reported']),
                         ('denied', True, False, True), d)
        self.assertEqual((d['install_command'], d['install_file'], d['deciding_file']),
                         ('/bin/false', '/etc/modprobe.d/' + conf_name('hfs'), '/etc/modprobe.d/' + conf_name('hfs')))
        self.assertIn(['/etc/modprobe.d/' + conf_name('hfs'), 'install hfs /bin/false'], d['files'])
        self.assertEqual([s[:2] for s in mon.take()], [('hfs', 'denied')])
        # The entry stays as it was: (sassssbbbb), same values.
        e = self.stack.get('hfs')
        self.assertEqual((e.state, e.origin, e.source), ('denied', 'admin', '/etc/modprobe.d/' + conf_name('hfs')))

    def test_soft_and_hard_switch_both_ways(self):
        path = self.etc(module='minix')
        self.assertReplyOk(self.stack.send('Deny', 'minix', 0))
        self.assertNotIn('install minix /bin/false', self.assertDenyFile(path, 'minix').splitlines())
        self.assertFalse(self.describe('minix')['hard'])
        self.assertTrue(self.describe('minix')['explicit_load_possible'])
        self.assertReplyOk(self.stack.send('Deny', 'minix', HARD))
        self.assertIn('install minix /bin/false', self.assertDenyFile(path, 'minix').splitlines())
        self.assertTrue(self.describe('minix')['hard'])
        # Again: nothing to change, nothing written.
        before = snapshot(self.root)
        self.assertReplyOk(self.stack.send('Deny', 'minix', HARD))
        self.assertEqual(snapshot(self.root), before)
        # Regression: Deny without HARD made it soft again, a side effect of a plain deny (a
        # soft profile, a button, Ansible's "denied"). Now it keeps the hard deny...
        self.assertReplyOk(self.stack.send('Deny', 'minix', 0))
        self.assertEqual(snapshot(self.root), before)
        self.assertTrue(self.describe('minix')['hard'])
        # ... and only SOFT weakens it.
        self.assertReplyOk(self.stack.send('Deny', 'minix', SOFT))
        self.assertNotIn('install minix /bin/false', self.assertDenyFile(path, 'minix').splitlines())
        self.assertFalse(self.describe('minix')['hard'])
        self.assertState('minix', 'denied', 'admin')
        # HARD and SOFT together: a named error, nothing written.
        before = snapshot(self.root)
        self.assertError(self.stack.send('Deny', 'minix', HARD | SOFT), 'org.freedesktop.DBus.Error.InvalidArgs')
        self.assertEqual(snapshot(self.root), before)

    def test_hard_deny_that_kmod_would_ignore_is_refused(self):
        """Regression: Deny HARD of ext4 (softdep ext4 pre: crc32c in the tree) wrote an install
        line kmod ignores and answered success while Describe said hard: false."""
        write(self.root, 'proc/mounts', '/dev/vda / xfs rw 0 0\n')   # on ext4: NeededForBoot
        before = snapshot(self.root)
        r = self.stack.send('Deny', 'ext4', HARD | FORCE)
        self.assertError(r, ERR + 'HardDenyIgnored')
        self.assertIn('soft dependencies', r.message)
        self.assertEqual(snapshot(self.root), before)
        self.assertFalse(self.describe('ext4')['hard'])

    def test_hard_deny_of_cifs_takes_effect(self):
        """The README's word: Debian 12's cifs has softdep lines without pre: or post:, which kmod
        reads as none, so its install command runs and a hard deny of cifs is done, not refused."""
        r = self.stack.ctl('deny', '--hard', 'cifs')
        self.assertEqual(r.rc, 0, r)
        self.assertTrue(self.describe('cifs')['hard'])
        with open(os.path.join(CONFIG.source_root, 'README.md')) as f:
            self.assertIn('`fsgatectl deny --hard cifs` works', ' '.join(f.read().split()))
        self.assertEqual(self.stack.ctl('reset', 'cifs').rc, 0)

    def test_hard_deny_of_a_vendor_denied_module_writes_etc(self):
        self.vendor('hfs')
        # A soft deny of what the vendor already denies writes nothing; a hard one does.
        before = snapshot(self.root)
        self.assertReplyOk(self.stack.send('Deny', 'hfs', 0))
        self.assertEqual(snapshot(self.root), before)
        self.assertReplyOk(self.stack.send('Deny', 'hfs', HARD))
        self.assertIn('install hfs /bin/false', self.assertDenyFile(self.etc(module='hfs'), 'hfs').splitlines())
        self.assertTrue(self.describe('hfs')['hard'])

    def test_runtime_hard_deny(self):
        self.assertReplyOk(self.stack.send('Deny', 'ufs', RUNTIME | HARD))
        self.assertIn('install ufs /bin/false', self.assertDenyFile(self.run_file('ufs'), 'ufs').splitlines())
        d = self.describe('ufs')
        self.assertEqual((d['hard'], d['origin'], d['install_file']),
                         (True, 'runtime', '/run/modprobe.d/' + conf_name('ufs')))

    def test_hard_deny_in_use_needs_force(self):
        write(self.root, 'proc/modules', proc_modules_line('hfs'))
        before = snapshot(self.root)
        self.assertError(self.stack.send('Deny', 'hfs', HARD), ERR + 'InUse')
        self.assertEqual(snapshot(self.root), before)
        self.assertReplyOk(self.stack.send('Deny', 'hfs', HARD | FORCE))
        self.assertTrue(self.describe('hfs')['hard'])

    def test_allow_lifts_fsgate_hard_deny_and_reset(self):
        self.assertReplyOk(self.stack.send('Deny', 'hfs', HARD))
        self.assertReplyOk(self.stack.send('Allow', 'hfs', 0))
        self.assertMask(self.etc(module='hfs'))
        d = self.describe('hfs')
        self.assertEqual((d['state'], d['hard'], d['install_command']), ('allowed', False, ''))
        self.assertReplyOk(self.stack.send('Deny', 'hfs', HARD))
        self.assertReplyOk(self.stack.send('Reset', 'hfs', 0))
        self.assertAbsent(self.etc(module='hfs'))
        self.assertEqual(self.describe('hfs')['hard'], False)

    # -- HardDenied -------------------------------------------------------------------------
    def test_load_of_hard_denied_module_is_refused_before_polkit(self):
        self.assertReplyOk(self.stack.send('Deny', 'hfs', HARD))
        before = snapshot(self.root)
        r = self.stack.send('Load', 'hfs')
        self.assertError(r, E_HARD, r'hfs.*/bin/false.*' + conf_name('hfs'))
        # An unprivileged caller gets the same answer, without polkit being asked.
        self.stack.mock_polkit_allow([ACTION_LOAD])
        r = self.stack.send('Load', 'hfs', uid=NOBODY)
        self.assertError(r, E_HARD)
        self.assertEqual(self.stack.mock_polkit_calls(), [])
        self.assertEqual(snapshot(self.root), before)

    def test_allow_load_now_of_a_module_that_stays_hard(self):
        # A foreign hard deny that Allow cannot lift, with the module not denied for
        # autoload by fsgate: Allow itself would write nothing, and the load is refused.
        write(self.root, 'etc/modprobe.d/cis.conf', 'install minix /bin/true\n')
        before = snapshot(self.root)
        r = self.stack.send('Allow', 'minix', LOAD_NOW)
        self.assertFalse(r.ok, r)
        self.assertIn(r.error, (E_HARD, E_FOREIGN), r)
        self.assertIn('/etc/modprobe.d/cis.conf', r.message)
        self.assertEqual(snapshot(self.root), before)
        # fsgate's hard deny in /run plus a foreign one in /etc: the allow would lift fsgate's
        # but the load still fails: HardDenied, nothing written.
        os.unlink(os.path.join(self.root, 'etc/modprobe.d/cis.conf'))
        self.assertReplyOk(self.stack.send('Deny', 'ufs', RUNTIME | HARD))
        write(self.root, 'etc/modprobe.d/zz-admin.conf', 'install ufs /bin/false\n')
        before = snapshot(self.root)
        r = self.stack.send('Allow', 'ufs', LOAD_NOW | RUNTIME)
        self.assertFalse(r.ok, r)
        self.assertEqual(snapshot(self.root), before)

    def test_allow_load_now_when_allowed_but_hard(self):
        # Autoload allowed (fs-TYPE routed to a module that loads it), explicit load refused.
        write(self.root, 'etc/modprobe.d/odd.conf', 'install hfsplus /bin/false\nsoftdep hfsplus pre: nls_utf8\n')
        d = self.describe('hfsplus')
        # kmod 30 ignores the install command of a module with soft dependencies: not hard.
        self.assertEqual((d['hard'], d['install_command']), (False, ''), d)
        write(self.root, 'etc/modprobe.d/odd.conf', 'install hfsplus /bin/false\n')
        self.assertTrue(self.describe('hfsplus')['hard'])
        before = snapshot(self.root)
        self.assertFalse(self.stack.send('Allow', 'hfsplus', LOAD_NOW).ok)
        self.assertEqual(snapshot(self.root), before)

    # -- a hard deny on a dependency ------------------------------------------------------------
    def assertLoadRefusedAt(self, name, dep, path):
        """Load of name refused (HardDenied naming dep and its file) for root and, before
        polkit is asked, for a user polkit would let load; Allow with LOAD_NOW likewise;
        nothing written. The refusal precedes any insert: this runs on the host."""
        before = snapshot(self.root)
        pattern = f'{dep}.*{path}'
        self.assertError(self.stack.send('Load', name), E_HARD, pattern)
        self.stack.mock_polkit_allow([ACTION_LOAD, ACTION_ALLOW])
        self.stack.mock_polkit_clear()
        self.assertError(self.stack.send('Load', name, uid=NOBODY), E_HARD, pattern)
        self.assertError(self.stack.send('Allow', name, LOAD_NOW, uid=NOBODY), E_HARD, pattern)
        self.assertEqual(self.stack.mock_polkit_calls(), [])
        self.stack.mock_polkit_allow([])
        self.assertEqual(snapshot(self.root), before)

    def test_load_is_refused_at_a_hard_denied_dependency(self):
        """Regression: after `deny --hard fuse`, root's `modprobe virtiofs` fails
        (kmod loads fuse by name and runs its install command), but Load of virtiofs inserted
        fuse.ko past the deny: hardness was judged on the named module only."""
        fuse = '/etc/modprobe.d/' + conf_name('fuse')
        self.assertReplyOk(self.stack.send('Deny', 'fuse', HARD))
        d = self.describe('virtiofs')
        self.assertEqual((d['hard'], d['explicit_load_possible'], d['hard_denied_dependency'],
                          d['hard_denied_dependency_command'], d['hard_denied_dependency_file']),
                         (False, False, 'fuse', '/bin/false', fuse), d)
        self.assertLoadRefusedAt('virtiofs', 'fuse', fuse)
        st = self.stack.ctl('status', 'virtiofs')
        self.assertTrue(st.ok, st)
        self.assertIn(f'Load refused: its dependency fuse is denied hard by {fuse} (/bin/false)', st.out)
        self.assertIn('an explicit load is refused', st.out)
        js = self.stack.ctl('--json', 'status', 'virtiofs')
        self.assertIn(f'"hard_denied_dependency":"fuse","hard_denied_dependency_command":"/bin/false",'
                      f'"hard_denied_dependency_file":"{fuse}"', js.out)
        # Denied too: Allow with LOAD_NOW would write the mask, then fail to load: nothing
        # is written.
        self.assertReplyOk(self.stack.send('Deny', 'virtiofs', 0))
        self.assertLoadRefusedAt('virtiofs', 'fuse', fuse)
        self.assertIn('fsgatectl load cannot load it while fuse is denied hard',
                      self.stack.ctl('status', 'virtiofs').out)

    def test_a_loaded_dependency_does_not_block(self):
        fuse = '/etc/modprobe.d/' + conf_name('fuse')
        self.assertReplyOk(self.stack.send('Deny', 'fuse', HARD))
        self.assertEqual(self.describe('virtiofs')['hard_denied_dependency'], 'fuse')
        # kmod leaves a live module alone: nothing past its deny would be inserted. (Load
        # itself is not called: it would insert virtiofs into the host's kernel.)
        write(self.root, 'proc/modules', proc_modules_line('fuse'))
        d = self.describe('virtiofs')
        self.assertEqual((d['hard_denied_dependency'], d['explicit_load_possible']), ('', True), d)
        self.assertNotIn('Load refused', self.stack.ctl('status', 'virtiofs').out)
        # Half unloaded, kmod would insert it again.
        write(self.root, 'proc/modules', 'fuse 16384 0 - Unloading 0x0000000000000000\n')
        self.assertEqual(self.describe('virtiofs')['hard_denied_dependency'], 'fuse')
        write(self.root, 'proc/modules', '')
        self.assertLoadRefusedAt('virtiofs', 'fuse', fuse)

    def test_a_soft_deny_of_a_dependency_does_not_block(self):
        self.assertReplyOk(self.stack.send('Deny', 'fuse', 0))
        d = self.describe('virtiofs')
        self.assertEqual((d['hard_denied_dependency'], d['explicit_load_possible']), ('', True), d)
        self.assertNotIn('Load refused', self.stack.ctl('status', 'virtiofs').out)

    def test_other_chains_of_the_debian_tree(self):
        configfs = '/etc/modprobe.d/' + conf_name('configfs')
        self.assertReplyOk(self.stack.send('Deny', 'configfs', HARD))
        for module in ('gfs2', 'ocfs2', 'ocfs2_dlmfs'):
            with self.subTest(module=module):
                self.assertEqual(self.describe(module)['hard_denied_dependency'], 'configfs')
                self.assertLoadRefusedAt(module, 'configfs', configfs)
        # sunrpc is no filesystem: an admin's CIS-style line denies it hard.
        write(self.root, 'etc/modprobe.d/cis.conf', 'install sunrpc /bin/true\n')
        every = self.describe_all()
        for module in ('nfs', 'nfsd'):
            self.assertEqual((every[module]['hard_denied_dependency'], every[module]['hard_denied_dependency_file']),
                             ('sunrpc', '/etc/modprobe.d/cis.conf'))
            self.assertLoadRefusedAt(module, 'sunrpc', '/etc/modprobe.d/cis.conf')
        self.assertEqual(every['ext4']['hard_denied_dependency'], '')

    # -- state truth --------------------------------------------------------------------------
    def test_foreign_install_commands_are_hard_whoever_wrote_them(self):
        for who, line in FOREIGN_HARD.items():
            with self.subTest(who=who):
                write(self.root, f'etc/modprobe.d/{who}.conf', line.format(m='hfs'))
                d = self.describe('hfs')
                self.assertEqual((d['state'], d['hard'], d['explicit_load_possible']), ('denied', True, False), d)
                self.assertEqual((d['deciding_file'], d['install_file']),
                                 (f'/etc/modprobe.d/{who}.conf', f'/etc/modprobe.d/{who}.conf'))
                self.assertEqual(d['install_command'], line.format(m='hfs').split(' ', 2)[2].strip())
                self.assertFalse(d['blocks_reported'])
                r = self.stack.send('Load', 'hfs')
                self.assertError(r, E_HARD, f'/etc/modprobe.d/{who}.conf')
                os.unlink(os.path.join(self.root, f'etc/modprobe.d/{who}.conf'))

    def test_install_commands_that_load_are_not_hard(self):
        for line in LOADING:
            with self.subTest(line=line):
                write(self.root, 'etc/modprobe.d/loads.conf', line.format(m='minix'))
                d = self.describe('minix')
                self.assertFalse(d['hard'], d)
                self.assertTrue(d['explicit_load_possible'], d)
                self.assertEqual(d['install_command'], line.format(m='minix').split(' ', 2)[2].strip())
        os.unlink(os.path.join(self.root, 'etc/modprobe.d/loads.conf'))

    def test_status_and_allow_name_the_same_deciding_file(self):
        """Regression: with the vendor blacklist and an admin's `install hfs /bin/false`,
        status named the vendor file while Allow's ForeignConfig named the admin's."""
        self.vendor('hfs')
        write(self.root, 'etc/modprobe.d/hardening.conf', 'install hfs /bin/false\n')
        e = self.stack.get('hfs')
        self.assertEqual((e.state, e.origin, e.source), ('denied', 'admin', '/etc/modprobe.d/hardening.conf'))
        before = snapshot(self.root)
        r = self.stack.send('Allow', 'hfs', 0)
        self.assertError(r, E_FOREIGN, '/etc/modprobe.d/hardening.conf')
        self.assertEqual(snapshot(self.root), before)
        st = self.stack.ctl('status', 'hfs')
        self.assertIn('Decided by: admin /etc/modprobe.d/hardening.conf', st.out)
        d = self.describe('hfs')
        self.assertEqual(d['deciding_file'], '/etc/modprobe.d/hardening.conf')
        files = [tuple(f) for f in d['files']]
        self.assertIn(('/usr/lib/modprobe.d/' + conf_name('hfs'), 'blacklist hfs'), files)
        self.assertIn(('/etc/modprobe.d/hardening.conf', 'install hfs /bin/false'), files)
        # Not hard yet: kmod runs the first install line it reads, the vendor file's, which
        # loads the module. A hard deny is written; the admin's file still decides.
        self.assertFalse(d['hard'])
        self.assertTrue(d['explicit_load_possible'])
        self.assertReplyOk(self.stack.send('Deny', 'hfs', HARD))
        d = self.describe('hfs')
        self.assertEqual((d['hard'], d['install_file'], d['deciding_file']),
                         (True, '/etc/modprobe.d/' + conf_name('hfs'), '/etc/modprobe.d/hardening.conf'))
        self.assertError(self.stack.send('Allow', 'hfs', 0), E_FOREIGN, '/etc/modprobe.d/hardening.conf')
        # Without the vendor file's install line the admin's is the one kmod runs: hard, and a
        # hard deny asked for is there already: nothing written.
        self.assertReplyOk(self.stack.send('Reset', 'hfs', 0))
        self.vendor('hfs', 'blacklist hfs\n')
        before = snapshot(self.root)
        self.assertReplyOk(self.stack.send('Deny', 'hfs', HARD))
        self.assertEqual(snapshot(self.root), before)
        self.assertEqual(self.stack.get('hfs').source, '/etc/modprobe.d/hardening.conf')

    # -- Describe, DescribeAll ---------------------------------------------------------------
    def test_describe_carries_the_entry(self):
        self.vendor('hfs')
        write(self.root, 'etc/modprobe.d/cis.conf', 'install udf /bin/true\n')
        every = self.describe_all(uid=NOBODY)
        entries = self.stack.list()
        self.assertEqual(sorted(every), [e.module for e in entries])
        for e in entries:
            d = every[e.module]
            self.assertEqual((d['module'], d['types'], d['state'], d['origin'], d['deciding_file'], d['available'],
                              d['builtin'], d['loaded'], d['mounted']), e.as_tuple(), d)
            for key in ('hard', 'explicit_load_possible', 'blocks_reported', 'install_command', 'install_file',
                        'files'):
                self.assertIn(key, d)
        # Both say whether an Allow would be done: DescribeAll for every module, so that a
        # client can disable what would only fail (udf: a foreign install line).
        one = self.describe('vxfs', uid=NOBODY)
        self.assertEqual(one['allow_refused'], '')
        self.assertEqual(one, every['freevxfs'])
        for m in ('udf', 'hfs', 'ext4'):
            self.assertEqual(self.describe(m, uid=NOBODY)['allow_refused'], every[m]['allow_refused'], m)
        self.assertIn('/etc/modprobe.d/cis.conf', every['udf']['allow_refused'])
        self.assertEqual((every['hfs']['allow_refused'], every['ext4']['allow_refused']), ('', ''))
        self.assertTrue(every['udf']['hard'])
        self.assertFalse(every['hfs']['hard'])
        # openSUSE's vendor file: its install line loads the module, not hard; blocks are
        # not reported (a plain blacklist).
        self.assertEqual((every['hfs']['state'], every['hfs']['blocks_reported']), ('denied', False))
        self.assertTrue(every['hfs']['explicit_load_possible'])
        self.assertEqual(every['ext4']['files'], [])
        self.assertEqual(self.stack.mock_polkit_calls(), [])
        # A Reset: refused on a file of fsgate's name it did not write; "" where nothing of
        # fsgate's decides (a Reset leaves cis.conf), and where it would be done.
        write(self.root, 'etc/modprobe.d/60-blacklist_fs-minix.conf', 'install minix /bin/true\n')
        self.assertReplyOk(self.stack.send('Deny', 'jfs', 1))       # RUNTIME
        after = self.describe_all(uid=NOBODY)
        self.assertIn('was not written by fsgate', after['minix']['reset_refused'])
        self.assertEqual(self.describe('minix', uid=NOBODY)['reset_refused'], after['minix']['reset_refused'])
        self.assertEqual((after['udf']['reset_refused'], after['jfs']['reset_refused'], after['hfs']['reset_refused']),
                         ('', '', ''))
        self.assertEqual(self.describe('jfs')['origin'], 'runtime')

    def test_describe_survives_bytes_that_are_not_utf8(self):
        """Regression: one Latin-1 byte in any modprobe.d file, in an install line
        or an alias line (both quoted in "files") or in a file's name, and sd-bus refused the
        reply of Describe and DescribeAll for everyone (InvalidArgs: a D-Bus string must be
        UTF-8); `fsgatectl status` exited 2. Each such byte is "\\xNN" now, as in error
        messages, and every other string is as it was."""
        conf = os.path.join(self.root, 'etc/modprobe.d')
        with open(os.path.join(conf, 'caf\udce9.conf'), 'wb') as f:
            f.write(b'install udf /bin/echo caf\xe9\nalias fs-hfsplus hfsplus\xe9\n')
        with open(os.path.join(conf, 'plain.conf'), 'wb') as f:
            f.write(b'# caf\xe9\nblacklist minix\n')
        name = '/etc/modprobe.d/caf\\xe9.conf'
        for method in ('Describe', 'DescribeAll'):
            r = self.stack.send(method, *(('udf',) if method == 'Describe' else ()))
            self.assertIsNone(r.error, r)
        d = self.describe('udf')
        self.assertEqual((d['install_command'], d['install_file'], d['deciding_file']),
                         ('/bin/echo caf\\xe9', name, name), d)
        self.assertIn([name, 'install udf /bin/echo caf\\xe9'], d['files'])
        every = self.describe_all(uid=NOBODY)
        self.assertIn('caf\\xe9.conf', d['allow_refused'])    # the refusal names the file, escaped too
        self.assertEqual(every['udf'], d)
        self.assertIn([name, 'alias fs-hfsplus hfsplus\\xe9'], every['hfsplus']['files'])
        self.assertEqual(every['minix']['files'], [['/etc/modprobe.d/plain.conf', 'blacklist minix']])
        self.assertEqual(self.stack.get('udf').source, name)
        for args in (('status', 'udf'), ('status', 'hfsplus'), ('--json', 'status', 'udf'), ('list',)):
            r = self.stack.ctl(*args, uid=NOBODY)
            self.assertEqual(r.rc, 0, r)
        self.assertIn('/bin/echo caf\\xe9', self.stack.ctl('status', 'udf').out)

    def test_bad_input_changes_nothing(self):
        before = snapshot(self.root)
        for name in ('', '../etc', 'hfs;id', 'x' * 300):
            self.assertError(self.stack.send('Describe', name), E_INVALID_NAME)
            self.assertError(self.stack.send('Deny', name, HARD), E_INVALID_NAME)
        self.assertError(self.stack.send('Describe', 'nosuchfs'), E_NO_SUCH)
        for method, flags in (('Allow', HARD), ('Reset', HARD), ('Deny', HARD | LOAD_NOW), ('Deny', 0x40)):
            self.assertError(self.stack.send(method, 'hfs', flags), E_INVALID_ARGS)
        self.assertError(self.stack.send('Deny', 'fsgtestfs', HARD), ERR + 'Builtin')
        self.assertEqual(snapshot(self.root), before)

    @classmethod
    def prepare_root(cls, root):
        fb.add_builtin(root, cls.kver, 'kernel/fs/fsgtestfs/fsgtestfs.ko', b'fsgtestfs.alias=fs-fsgtestfs\0')


if __name__ == '__main__':
    fb.main()

#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Bus tests: every method, every error name, the files each change writes, the signal,
properties, introspection, openSUSE interop. Root callers (polkit is skipped for uid 0);
polkit-path calls are in test-polkit.py. Polkit here is python-dbusmock's MOCK polkitd."""

import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True      # keep the source tree clean
import fsgatetest as fb  # noqa: E402
from fsgatetest import (CONFIG, ERR, E_INVALID_ARGS, FORCE, HARD, LOAD_NOW, NOBODY, RUNTIME,  # noqa: E402
                        BusTestCase, SignalMonitor, add_builtin, conf_name, proc_modules_line, snapshot, write,
                        symlink)

# Not plausible module or filesystem type names. Each must give InvalidName from every
# method and change nothing.
BAD_NAMES = [
    '', '.', '..', '../..', '../../etc/shadow', 'a/b', '/etc/passwd', 'hfs/', 'hfs\n', '\nhfs', 'hfs\r',
    'h\tfs', ' hfs', 'hfs ', 'hfs.conf', 'x' * 300,
    '$(reboot)', '`reboot`', ';rm -rf /', 'hfs;id', 'hfs|cat', 'hfs&&true', 'hfs>x', "hfs'", 'hfs"', 'hfs*', '?',
    'hfs\\', '${IFS}', '~root',
    'hfsé', 'ｈｆｓ', 'hfs\u200b', '\u202ehfs', 'hfs\x7f', '\x1b[31mhfs',
]

METHODS_WITH_NAME = [('GetFilesystem', ()), ('Describe', ()), ('Allow', (0,)), ('Deny', (0,)), ('Reset', (0,)),
                     ('Load', ())]


class ManagerTest(BusTestCase):

    # -- properties, list, get ----------------------------------------------------------------
    def test_properties(self):
        with open(os.path.join(CONFIG.source_root, 'meson.build')) as f:
            version = re.search(r"version\s*:\s*'([^']+)'", f.read()).group(1)
        out = subprocess.run([CONFIG.fsgated, '--version'], capture_output=True, text=True).stdout.split()
        self.assertEqual(out, ['fsgated', version])
        self.assertEqual(self.stack.prop('Version'), version)
        self.assertEqual(self.stack.prop('KernelRelease'), self.kver)

    def test_kernel_release_defaults_to_newest_tree(self):
        # No --kernel-release: the host kernel has no tree under ROOT, so the newest one.
        st = self.stack
        st.stop_daemon()
        try:
            st.start_daemon(self.root, None)
            self.assertEqual(st.prop('KernelRelease'), self.kver)
            self.assertTrue(st.get('hfs').available)
        finally:
            st.stop_daemon()
            st.start_daemon(self.root, self.kver)

    def test_list_matches_module_tree(self):
        entries = self.stack.list()
        names = [e.module for e in entries]
        self.assertEqual(names, sorted(set(names)), 'modules are listed once each, sorted')
        # Every module an fs-* alias of this kernel resolves to, and nothing else.
        want = {}
        with open(os.path.join(self.root, 'usr/lib/modules', self.kver, 'modules.alias')) as f:
            for line in f:
                w = line.split()
                if len(w) == 3 and w[0] == 'alias' and w[1].startswith('fs-'):
                    want.setdefault(w[2].replace('-', '_'), set()).add(w[1][3:])
        builtin = builtin_fs_aliases(self.root, self.kver)
        self.assertFalse(set(builtin) & set(want))
        want.update(builtin)
        self.assertEqual(set(names), set(want))
        for e in entries:
            self.assertEqual(set(e.types), want[e.module], e)
            self.assertEqual(e.types, sorted(e.types))
            self.assertEqual((e.state, e.origin, e.source), ('allowed', 'default', ''), e)
            self.assertEqual((e.available, e.builtin, e.loaded),
                             (e.module not in builtin, e.module in builtin, False), e)
            self.assertEqual(e.mounted, e.module == 'ext4', e)   # ROOT/proc/mounts: / is ext4
        by = {e.module: e for e in entries}
        self.assertEqual(by['freevxfs'].types, ['vxfs'])
        self.assertEqual(by['ext4'].types, ['ext2', 'ext3', 'ext4'])

    def test_list_includes_modules_named_by_rules_only(self):
        # exofs is in openSUSE's list but not in this kernel: listed, not available.
        self.vendor('exofs')
        by = {e.module: e for e in self.stack.list()}
        self.assertEqual(by['exofs'], fb.Entry(['exofs', [], 'denied', 'vendor',
                                                '/usr/lib/modprobe.d/' + conf_name('exofs'),
                                                False, False, False, False]))
        self.assertEqual(self.stack.get('exofs'), by['exofs'])
        # Filesystem modules without an fs- alias are listed when a rule names them: orangefs
        # (its type pvfs2 has none in 6.1) and, when built in, pstore.
        self.assertNotIn('orangefs', [e.module for e in self.stack.list()])
        self.vendor('orangefs')
        by = {e.module: e for e in self.stack.list()}
        self.assertEqual(by['orangefs'], fb.Entry(['orangefs', [], 'denied', 'vendor',
                                                   '/usr/lib/modprobe.d/' + conf_name('orangefs'),
                                                   True, False, False, False]))
        # A module that is not a filesystem stays out even when a rule names it.
        write(self.root, 'usr/lib/modprobe.d/' + conf_name('usb_storage'), 'blacklist usb_storage\n')
        self.assertNotIn('usb_storage', [e.module for e in self.stack.list()])

    def test_get_by_type_and_module_name(self):
        st = self.stack
        self.assertEqual(st.get('vxfs'), st.get('freevxfs'))
        self.assertEqual(st.get('vxfs').module, 'freevxfs')
        for t in ('ext2', 'ext3', 'ext4'):
            self.assertEqual(st.get(t).module, 'ext4')
        self.assertEqual(st.get('iso9660').module, 'isofs')
        self.assertEqual(st.get('v7').module, 'sysv')
        self.assertEqual(st.get('smb3').module, 'cifs')
        # '-' and '_' are the same in module names.
        self.assertEqual(st.get('ocfs2-dlmfs').module, 'ocfs2_dlmfs')
        self.assertEqual(st.get('usb-f-fs').module, 'usb_f_fs')
        # Everyone may read: no polkit involved.
        self.assertEqual(st.get('vxfs', uid=NOBODY), st.get('vxfs'))
        self.assertEqual(st.list(uid=NOBODY), st.list())
        self.assertEqual(st.mock_polkit_calls(), [])

    def test_no_such_filesystem_and_not_a_filesystem(self):
        before = snapshot(self.root)
        for name in ('nosuchfs', 'exofs', 'ext5'):
            for method, extra in METHODS_WITH_NAME:
                self.assertError(self.stack.send(method, name, *extra), ERR + 'NoSuchFilesystem', re.escape(name))
        for name in ('usb_storage', 'usb-storage', 'e1000'):
            for method, extra in METHODS_WITH_NAME:
                self.assertError(self.stack.send(method, name, *extra), ERR + 'NotAFilesystem')
        self.assertEqual(snapshot(self.root), before)

    # -- bad input ------------------------------------------------------------------------------
    def test_invalid_names_change_nothing(self):
        self.vendor('hfs')
        write(self.root, 'etc/modprobe.d/' + conf_name('minix'), 'blacklist minix\n')
        mon = SignalMonitor(self.stack)
        self.addCleanup(mon.stop)
        self.stack.mock_polkit_allow([fb.ACTION_ALLOW, fb.ACTION_DENY, fb.ACTION_LOAD])
        before = snapshot(self.root)
        for name in BAD_NAMES:
            for method, extra in METHODS_WITH_NAME:
                for uid in (None, NOBODY):
                    flags = extra
                    if method == 'Deny':
                        flags = (FORCE,)
                    r = self.stack.send(method, name, *flags, uid=uid)
                    self.assertError(r, ERR + 'InvalidName')
                    self.assertTrue(r.message, 'the error says what a valid name is')
        self.assertEqual(snapshot(self.root), before, 'a bad name changed something on disk')
        self.assertEqual(mon.take(), [])
        self.assertEqual(self.stack.mock_polkit_calls(), [], 'polkit was asked about an invalid name')
        self.assertNotIn('written', self.stack.daemon_output()[self._log_mark:])

    def test_unknown_flags(self):
        self.vendor('hfs')
        mon = SignalMonitor(self.stack)
        self.addCleanup(mon.stop)
        before = snapshot(self.root)
        bad = {
            'Allow': [FORCE, 0x8, RUNTIME | 0x8, LOAD_NOW | FORCE, 1 << 63, 0xffffffffffffffff],
            # 0x8 is HARD, 0x10 DRY_RUN (a question, valid for every change), 0x20 SOFT.
            'Deny': [LOAD_NOW, 0x40, RUNTIME | 0x40, FORCE | LOAD_NOW, HARD | LOAD_NOW, 1 << 63],
            'Reset': [LOAD_NOW, FORCE, 0x8, RUNTIME | FORCE, 1 << 63],
        }
        for method, flag_list in bad.items():
            for name in ('hfs', 'minix'):
                for flags in flag_list:
                    self.assertError(self.stack.send(method, name, flags), E_INVALID_ARGS)
        self.assertEqual(snapshot(self.root), before)
        self.assertEqual(mon.take(), [])

    def test_wrong_signature_is_rejected(self):
        r = self.stack.send('Allow', 'hfs', fb.Typed('uint32:0'))
        self.assertEqual(r.error, E_INVALID_ARGS, r)
        r = self.stack.send('GetFilesystem')
        self.assertEqual(r.error, E_INVALID_ARGS, r)

    # -- Deny / Allow / Reset: files and states ---------------------------------------------------
    def test_deny_allow_reset_without_vendor_file(self):
        st = self.stack
        path = self.etc(module='minix')
        self.assertReplyOk(st.send('Deny', 'minix', 0))
        text = self.assertDenyFile(path, 'minix')
        self.assertEqual(os.stat(path).st_mode & 0o7777, 0o644)
        self.assertIn('fsgatectl reset minix', text, 'the header says how to undo it')
        self.assertState('minix', 'denied', 'admin', '/etc/modprobe.d/' + conf_name('minix'))
        self.assertEqual(sorted(os.listdir(os.path.join(self.root, 'etc/modprobe.d'))), [conf_name('minix')])

        self.assertReplyOk(st.send('Deny', 'minix', 0))          # again: nothing changes
        self.assertEqual(self.assertDenyFile(path, 'minix'), text)

        self.assertReplyOk(st.send('Allow', 'minix', 0))
        self.assertMask(path)
        self.assertState('minix', 'allowed', 'admin', '/etc/modprobe.d/' + conf_name('minix'))

        self.assertReplyOk(st.send('Reset', 'minix', 0))
        self.assertAbsent(path)
        self.assertState('minix', 'allowed', 'default', '')
        self.assertReplyOk(st.send('Reset', 'minix', 0))          # nothing to reset
        self.assertEqual(os.listdir(os.path.join(self.root, 'etc/modprobe.d')), [])
        self.assertEqual(os.listdir(os.path.join(self.root, 'run/modprobe.d')), [])
        self.assertNoTempFiles()

    def test_missing_directories_are_created(self):
        st = self.stack
        for d in ('etc/modprobe.d', 'run/modprobe.d'):
            os.rmdir(os.path.join(self.root, d))
        self.assertReplyOk(st.send('Deny', 'minix', 0))
        self.assertReplyOk(st.send('Deny', 'jfs', RUNTIME))
        for d, m in (('etc/modprobe.d', 'minix'), ('run/modprobe.d', 'jfs')):
            full = os.path.join(self.root, d)
            self.assertEqual(os.stat(full).st_mode & 0o7777, 0o755)
            self.assertEqual(os.listdir(full), [conf_name(m)])

    def test_writes_stay_below_root(self):
        # ROOT/etc/modprobe.d is an absolute symlink, as an image may have: it names a path of
        # that image, so under --root=ROOT it must not reach the same path outside ROOT.
        st = self.stack
        outside = os.path.join(self.workdir, 'outside-the-root')
        os.makedirs(outside, exist_ok=True)
        self.addCleanup(shutil.rmtree, outside, ignore_errors=True)
        etc = os.path.join(self.root, 'etc/modprobe.d')
        os.rmdir(etc)
        os.symlink(outside, etc)
        st.send('Deny', 'minix', 0)
        self.assertEqual(os.listdir(outside), [], 'fsgated wrote outside its --root')

    def test_file_names_that_are_not_utf8(self):
        # kmod reads every *.conf, whatever bytes its name has; D-Bus strings must be UTF-8.
        # One such file must not break reading the state.
        st = self.stack
        bad = os.path.join(os.fsencode(self.root), b'etc/modprobe.d/50-\xff\xfe.conf')
        with open(bad, 'w') as f:
            f.write('blacklist jfs\n')
        r = st.send('GetFilesystem', 'jfs')
        self.assertReplyOk(r)
        e = st.get('jfs')
        self.assertEqual((e.state, e.origin), ('denied', 'admin'))
        self.assertTrue(e.source.startswith('/etc/modprobe.d/50-'), e)
        self.assertIn('jfs', [x.module for x in st.list()])
        r = st.send('Allow', 'jfs', 0)
        self.assertError(r, ERR + 'ForeignConfig')

    def test_runtime_changes_go_to_run(self):
        st = self.stack
        self.vendor('hfs')
        run = self.run_file('minix')
        self.assertReplyOk(st.send('Deny', 'minix', RUNTIME))
        self.assertDenyFile(run, 'minix')
        self.assertAbsent(self.etc(module='minix'))
        self.assertState('minix', 'denied', 'runtime', '/run/modprobe.d/' + conf_name('minix'))
        # A reset without RUNTIME leaves /run alone.
        before = snapshot(self.root)
        self.assertReplyOk(st.send('Reset', 'minix', 0))
        self.assertEqual(snapshot(self.root), before)
        # A deny for good on top of a runtime one goes to /etc.
        self.assertReplyOk(st.send('Deny', 'minix', 0))
        self.assertDenyFile(self.etc(module='minix'), 'minix')
        self.assertState('minix', 'denied', 'admin')
        self.assertReplyOk(st.send('Reset', 'minix', 0))
        self.assertAbsent(self.etc(module='minix'))
        self.assertReplyOk(st.send('Reset', 'minix', RUNTIME))
        self.assertAbsent(run)
        self.assertState('minix', 'allowed', 'default')

        # Allow over a vendor file, until reboot: a mask in /run.
        self.assertReplyOk(st.send('Allow', 'hfs', RUNTIME))
        self.assertMask(self.run_file('hfs'))
        self.assertAbsent(self.etc(module='hfs'))
        self.assertState('hfs', 'allowed', 'runtime', '/run/modprobe.d/' + conf_name('hfs'))
        self.assertReplyOk(st.send('Reset', 'hfs', RUNTIME))
        self.assertAbsent(self.run_file('hfs'))
        self.assertState('hfs', 'denied', 'vendor')
        self.assertNoTempFiles()

    def test_type_names_write_the_module_file(self):
        st = self.stack
        self.assertReplyOk(st.send('Deny', 'vxfs', 0))
        self.assertDenyFile(self.etc(module='freevxfs'), 'freevxfs')
        self.assertEqual(os.listdir(os.path.join(self.root, 'etc/modprobe.d')), [conf_name('freevxfs')])
        self.assertState('vxfs', 'denied', 'admin')
        self.assertState('freevxfs', 'denied', 'admin')
        self.assertReplyOk(st.send('Reset', 'vxfs', 0))
        self.assertAbsent(self.etc(module='freevxfs'))
        # ext2 is served by ext4, which / is on in this root: never denied, not with FORCE,
        # and nothing is written.
        before = snapshot(self.root)
        for flags in (0, FORCE, FORCE | RUNTIME):
            r = st.send('Deny', 'ext2', flags)
            self.assertError(r, ERR + 'NeededForBoot', r'ext4 cannot be denied: / is on ext4 \(by /proc/mounts\)')
        # A hard deny kmod would ignore is refused first, as before.
        self.assertError(st.send('Deny', 'ext2', FORCE | HARD), ERR + 'HardDenyIgnored')
        self.assertEqual(snapshot(self.root), before)
        # Mounted elsewhere: only in use, InUse names ext4's state, and FORCE denies it.
        write(self.root, 'proc/mounts', '/dev/vda / xfs rw 0 0\n/dev/vdb /srv ext4 rw 0 0\n')
        r = st.send('Deny', 'ext2', 0)
        self.assertError(r, ERR + 'InUse', 'ext4')
        self.assertReplyOk(st.send('Deny', 'ext2', FORCE))
        self.assertDenyFile(self.etc(module='ext4'), 'ext4')
        for t in ('ext2', 'ext3', 'ext4'):
            self.assertState(t, 'denied', 'admin')
        self.assertReplyOk(st.send('Reset', 'ext3', 0))
        self.assertAbsent(self.etc(module='ext4'))
        # Names with '-' for '_'.
        self.assertReplyOk(st.send('Deny', 'ocfs2-dlmfs', 0))
        self.assertDenyFile(self.etc(module='ocfs2_dlmfs'), 'ocfs2_dlmfs')
        self.assertEqual(sorted(os.listdir(os.path.join(self.root, 'etc/modprobe.d'))), [conf_name('ocfs2_dlmfs')])

    def test_in_use_and_force(self):
        st = self.stack
        write(self.root, 'proc/modules', proc_modules_line('hfs') + proc_modules_line('usb_storage'))
        write(self.root, 'proc/mounts', '/dev/vda / ext4 rw 0 0\n/dev/sdb1 /mnt vxfs ro 0 0\n')
        self.assertTrue(st.get('hfs').loaded)
        self.assertTrue(st.get('vxfs').mounted)
        self.assertFalse(st.get('vxfs').loaded)
        before = snapshot(self.root)
        for name, flags in (('hfs', 0), ('hfs', RUNTIME), ('freevxfs', 0), ('vxfs', RUNTIME)):
            r = st.send('Deny', name, flags)
            self.assertError(r, ERR + 'InUse')
            self.assertIn('loaded' if name == 'hfs' else 'mounted', r.message)
        self.assertEqual(snapshot(self.root), before)
        self.assertReplyOk(st.send('Deny', 'hfs', FORCE))
        self.assertDenyFile(self.etc(module='hfs'), 'hfs')
        self.assertReplyOk(st.send('Deny', 'vxfs', FORCE | RUNTIME))
        self.assertDenyFile(self.run_file('freevxfs'), 'freevxfs')
        self.assertState('hfs', 'denied', 'admin')
        self.assertState('vxfs', 'denied', 'runtime')
        # Allow and Reset need no FORCE.
        self.assertReplyOk(st.send('Allow', 'hfs', 0))
        self.assertReplyOk(st.send('Reset', 'vxfs', RUNTIME))
        self.assertState('vxfs', 'allowed', 'default')

    def test_overridden(self):
        st = self.stack
        # /etc decides; a runtime change would be hidden by the same-named /etc file.
        self.assertReplyOk(st.send('Deny', 'minix', 0))
        self.vendor('hfs')
        self.assertReplyOk(st.send('Allow', 'hfs', 0))
        before = snapshot(self.root)
        r = st.send('Allow', 'minix', RUNTIME)
        self.assertError(r, ERR + 'Overridden', re.escape('/etc/modprobe.d/' + conf_name('minix')))
        self.assertError(st.send('Deny', 'hfs', RUNTIME), ERR + 'Overridden')
        self.assertError(st.send('Deny', 'hfs', RUNTIME | FORCE), ERR + 'Overridden')
        self.assertEqual(snapshot(self.root), before)
        # openSUSE's "never" file in /etc overrides too.
        write(self.root, 'etc/modprobe.d/' + conf_name('jfs'), 'blacklist jfs\n')
        before = snapshot(self.root)
        self.assertError(st.send('Allow', 'jfs', RUNTIME), ERR + 'Overridden')
        self.assertEqual(snapshot(self.root), before)

    def test_builtin_is_reported_by_the_builtin_class(self):
        # Debian builds debugfs and tracefs in; their fs- aliases are only in
        # modules.builtin.modinfo. (A built-in module named by a rule: see BuiltinTest.)
        want = builtin_fs_aliases(self.root, self.kver)
        self.assertTrue(want)
        self.assertEqual({e.module for e in self.stack.list() if e.builtin}, set(want))

    # -- openSUSE interop --------------------------------------------------------------------------
    def test_opensuse_vendor_file(self):
        st = self.stack
        vendor = self.vendor('hfs')
        with open(vendor) as f:
            vendor_text = f.read()
        self.assertState('hfs', 'denied', 'vendor', '/usr/lib/modprobe.d/' + conf_name('hfs'))
        self.assertReplyOk(st.send('Allow', 'hfs', 0))
        self.assertMask(self.etc(module='hfs'))
        self.assertState('hfs', 'allowed', 'admin', '/etc/modprobe.d/' + conf_name('hfs'))
        self.assertReplyOk(st.send('Reset', 'hfs', 0))
        self.assertAbsent(self.etc(module='hfs'))
        self.assertState('hfs', 'denied', 'vendor', '/usr/lib/modprobe.d/' + conf_name('hfs'))
        # Deny over the vendor default: already denied, nothing to write.
        self.assertReplyOk(st.send('Deny', 'hfs', 0))
        self.assertAbsent(self.etc(module='hfs'))
        with open(vendor) as f:
            self.assertEqual(f.read(), vendor_text, 'the vendor file was touched')
        self.assertEqual(os.listdir(os.path.join(self.root, 'etc/modprobe.d')), [])

    def test_opensuse_unblacklist_yes_mask(self):
        # What openSUSE's unblacklist helper writes for "yes": fsgate understands it.
        st = self.stack
        self.vendor('hfs')
        symlink(self.root, 'etc/modprobe.d/' + conf_name('hfs'), '/dev/null')
        self.assertState('hfs', 'allowed', 'admin', '/etc/modprobe.d/' + conf_name('hfs'))
        self.assertReplyOk(st.send('Deny', 'hfs', 0))
        self.assertDenyFile(self.etc(module='hfs'), 'hfs')
        self.assertState('hfs', 'denied', 'admin')
        symlink_path = self.etc(module='hfs')
        os.unlink(symlink_path)
        os.symlink('/dev/null', symlink_path)
        self.assertReplyOk(st.send('Reset', 'hfs', 0))
        self.assertAbsent(symlink_path)
        self.assertState('hfs', 'denied', 'vendor')

    def test_opensuse_never_file(self):
        # What openSUSE's unblacklist helper writes for "never": exactly "blacklist hfs".
        st = self.stack
        self.vendor('hfs')
        never = write(self.root, 'etc/modprobe.d/' + conf_name('hfs'), 'blacklist hfs\n')
        self.assertState('hfs', 'denied', 'admin', '/etc/modprobe.d/' + conf_name('hfs'))
        self.assertReplyOk(st.send('Allow', 'hfs', 0))
        self.assertMask(never)
        self.assertState('hfs', 'allowed', 'admin')
        # Reset removes a "never" file like its own.
        os.unlink(never)
        write(self.root, 'etc/modprobe.d/' + conf_name('minix'), 'blacklist minix\n')
        self.assertState('minix', 'denied', 'admin')
        self.assertReplyOk(st.send('Reset', 'minix', 0))
        self.assertAbsent(self.etc(module='minix'))
        self.assertState('minix', 'allowed', 'default')
        # Deny leaves a valid deny in place (the "never" file or fsgate's own).
        write(self.root, 'etc/modprobe.d/' + conf_name('minix'), 'blacklist minix\n')
        self.assertReplyOk(st.send('Deny', 'minix', 0))
        with open(self.etc(module='minix')) as f:
            text = f.read()
        self.assertTrue(text == 'blacklist minix\n' or text.startswith('# Written by fsgate'), text)
        self.assertState('minix', 'denied', 'admin')

    def test_foreign_file_at_our_path(self):
        st = self.stack
        self.vendor('hfs')
        cis = '# Managed by a CIS hardening role\ninstall jfs /bin/true\nblacklist jfs\n'
        write(self.root, 'etc/modprobe.d/' + conf_name('jfs'), cis)
        write(self.root, 'etc/modprobe.d/' + conf_name('hfs'), '# local\nblacklist hfs\noptions hfs uid=0\n')
        # A symlink that is not a /dev/null mask (to a file that denies minix).
        write(self.root, 'etc/modprobe.d/minix-by-hand.txt', 'blacklist minix\n')
        symlink(self.root, 'etc/modprobe.d/' + conf_name('minix'), 'minix-by-hand.txt')
        write(self.root, 'run/modprobe.d/' + conf_name('udf'), '# by hand, until reboot\nblacklist udf\n')
        mon = SignalMonitor(self.stack)
        self.addCleanup(mon.stop)
        before = snapshot(self.root)
        for name, flags in (('jfs', 0), ('hfs', 0), ('minix', 0), ('udf', RUNTIME)):
            where = ('/run' if flags else '/etc') + '/modprobe.d/' + conf_name(name)
            for method in ('Allow', 'Deny', 'Reset'):
                f = flags | (FORCE if method == 'Deny' else 0)
                r = st.send(method, name, f)
                self.assertError(r, ERR + 'ForeignConfig', re.escape(where))
        self.assertEqual(snapshot(self.root), before)
        self.assertEqual(mon.take(), [])

    def test_changes_behind_the_services_back_show_in_the_next_reply(self):
        # fsgated keeps its answer and its view of ROOT/proc between calls; whatever changes
        # without it (an admin's file, a module loaded, a mount) must be in the very next reply,
        # of List and of Get, however the file is changed.
        st = self.stack

        def check(name, **want):
            by = {e.module: e for e in st.list()}
            for e in (by[name], st.get(name)):
                self.assertEqual({k: getattr(e, k) for k in want}, want, e)

        def replace(rel, content):
            # As an editor or a package manager does it: a new file renamed over the old one.
            tmp = write(self.root, rel + '.new', content)
            os.replace(tmp, os.path.join(self.root, rel))

        check('hfs', state='allowed', loaded=False, mounted=False)
        for round in range(3):
            write(self.root, 'etc/modprobe.d/50-admin.conf', 'blacklist hfs\n')
            check('hfs', state='denied', origin='admin', source='/etc/modprobe.d/50-admin.conf')
            os.unlink(os.path.join(self.root, 'etc/modprobe.d/50-admin.conf'))
            check('hfs', state='allowed', origin='default')
            write(self.root, 'proc/modules', proc_modules_line('xfs') + proc_modules_line('hfs'))
            check('hfs', loaded=True)
            check('xfs', loaded=True)
            write(self.root, 'proc/modules', proc_modules_line('xfs'))
            check('hfs', loaded=False)
            replace('proc/modules', proc_modules_line('hfs'))
            check('hfs', loaded=True)
            check('xfs', loaded=False)
            write(self.root, 'proc/mounts', '/dev/vda / ext4 rw 0 0\n/dev/sdb1 /mnt hfs ro 0 0\n')
            check('hfs', mounted=True)
            check('ext4', mounted=True)
            replace('proc/mounts', '/dev/vda / xfs rw 0 0\n')
            check('hfs', mounted=False)
            check('ext4', mounted=False)
            check('xfs', mounted=True)
            # A half-loaded module counts as loaded; it is read again until it is live.
            write(self.root, 'proc/modules', 'hfs 16384 0 - Loading 0x0000000000000000\n')
            check('hfs', loaded=True)
            write(self.root, 'proc/modules', '')
            check('hfs', loaded=False)
            # The whole directory replaced, then put back.
            os.rename(os.path.join(self.root, 'proc'), os.path.join(self.root, 'proc.old'))
            try:
                write(self.root, 'proc/modules', proc_modules_line('minix'))
                write(self.root, 'proc/mounts', '/dev/vda / minix rw 0 0\n')
                check('minix', loaded=True, mounted=True)
                write(self.root, 'proc/modules', '')
                check('minix', loaded=False, mounted=True)
            finally:
                shutil.rmtree(os.path.join(self.root, 'proc'))
                os.rename(os.path.join(self.root, 'proc.old'), os.path.join(self.root, 'proc'))
            check('minix', loaded=False, mounted=False)
            write(self.root, 'proc/mounts', fb.DEFAULT_PROC['proc/mounts'])
            write(self.root, 'proc/modules', '')
            check('hfs', loaded=False, mounted=False)

    def test_foreign_file_elsewhere_keeps_module_denied(self):
        st = self.stack
        write(self.root, 'etc/modprobe.d/50-cis.conf', '# CIS 1.1.1.x\nblacklist jfs\n')
        write(self.root, 'usr/local/lib/modprobe.d/10-local.conf', 'install udf /bin/false\n')
        write(self.root, 'usr/lib/modprobe.d/20-vendor.conf', 'alias fs-minix off\n')
        # openSUSE's 2019 single-file list: a mask of our file name cannot hide it.
        write(self.root, 'usr/lib/modprobe.d/60-filesystem-blacklist.conf',
              ''.join(f'blacklist {m}\n' for m in ('adfs', 'affs', 'bfs', 'befs', 'hfs', 'hpfs')))
        self.assertState('jfs', 'denied', 'admin', '/etc/modprobe.d/50-cis.conf')
        self.assertState('udf', 'denied', 'local', '/usr/local/lib/modprobe.d/10-local.conf')
        self.assertState('minix', 'denied', 'vendor', '/usr/lib/modprobe.d/20-vendor.conf')
        before = snapshot(self.root)
        r = st.send('Allow', 'jfs', 0)
        self.assertError(r, ERR + 'ForeignConfig', re.escape('/etc/modprobe.d/50-cis.conf'))
        self.assertError(st.send('Allow', 'jfs', RUNTIME), ERR + 'ForeignConfig', '50-cis.conf')
        self.assertEqual(snapshot(self.root), before)
        # Denying what is denied already needs no file of ours.
        self.assertReplyOk(st.send('Deny', 'jfs', 0))
        self.assertEqual(snapshot(self.root), before)
        # A vendor (or local) file is lifted for one module by an override of it in /etc,
        # never by a mask: the other modules of openSUSE's list stay denied.
        self.assertState('hfs', 'denied', 'vendor', '/usr/lib/modprobe.d/60-filesystem-blacklist.conf')
        for module, name in (('udf', '10-local.conf'), ('minix', '20-vendor.conf'),
                             ('hfs', '60-filesystem-blacklist.conf')):
            self.assertReplyOk(st.send('Allow', module, 0))
            self.assertState(module, 'allowed', 'admin', '/etc/modprobe.d/' + name)
            self.assertFalse(os.path.islink(self.etc(name)))
        self.assertState('adfs', 'denied', 'admin', '/etc/modprobe.d/60-filesystem-blacklist.conf')

    def test_kernel_command_line_denial(self):
        st = self.stack
        write(self.root, 'proc/cmdline', 'BOOT_IMAGE=/vmlinuz root=/dev/vda modprobe.blacklist=jfs,hfs quiet\n')
        self.assertState('jfs', 'denied', 'cmdline', '')
        before = snapshot(self.root)
        self.assertError(st.send('Allow', 'jfs', 0), ERR + 'ForeignConfig', 'command line')
        self.assertEqual(snapshot(self.root), before)

    # -- Load ----------------------------------------------------------------------------------------
    def test_load(self):
        st = self.stack
        self.vendor('exofs')
        write(self.root, 'proc/modules', proc_modules_line('hfs'))
        before = snapshot(self.root)
        # Loaded already: nothing to do.
        self.assertReplyOk(st.send('Load', 'hfs'))
        # Named by a rule, but no module file in this kernel.
        self.assertError(st.send('Load', 'exofs'), ERR + 'LoadFailed', 'exofs')
        self.assertError(st.send('Load', 'usb_storage'), ERR + 'NotAFilesystem')
        self.assertError(st.send('Load', 'nosuchfs'), ERR + 'NoSuchFilesystem')
        self.assertEqual(snapshot(self.root), before, 'Load changes no configuration')

    def test_load_on_an_image_never_reaches_the_running_kernel(self):
        # fsgated --root works on an image: the image's module file must never go into the
        # kernel fsgated runs on (on a host with modules, try-it's fsgated loaded the scratch
        # root's minix.ko). Refused in words before kmod is asked, whatever the host can do.
        never = 'never loads a module into the running kernel from an image'
        before = snapshot(self.root)
        r = self.stack.send('Load', 'minix')
        self.assertError(r, ERR + 'LoadFailed', never)
        self.assertIn(self.root, r.message)
        self.assertEqual(snapshot(self.root), before)
        # A grant: its record is ended at once, nothing loaded.
        self.vendor('hfs')
        r = self.stack.ctl('allow', '--for=1h', 'hfs')
        self.assertEqual(r.rc, 7, r)
        self.assertIn(never, r.err)
        grants = os.path.join(self.root, 'run/fsgate/grants')
        self.assertEqual(os.listdir(grants) if os.path.isdir(grants) else [], [], 'a grant record stayed')
        self.assertEqual(self.stack.get('hfs').state, 'denied')
        # Allow with LOAD_NOW: the allow is made (and announced), then the load is refused.
        mon = SignalMonitor(self.stack)
        self.addCleanup(mon.stop)
        self.assertError(self.stack.send('Allow', 'hfs', LOAD_NOW), ERR + 'LoadFailed', never)
        self.assertMask(self.etc(module='hfs'))
        self.assertEqual(mon.take(), [('hfs', 'allowed', 'admin')])

    def test_allow_load_now_of_a_loaded_module(self):
        # LOAD_NOW on a module that is loaded already: the allow is written, nothing loads.
        st = self.stack
        self.vendor('hfs')
        write(self.root, 'proc/modules', proc_modules_line('hfs'))
        self.assertReplyOk(st.send('Allow', 'hfs', LOAD_NOW))
        self.assertMask(self.etc(module='hfs'))
        self.assertReplyOk(st.send('Reset', 'hfs', 0))
        self.assertReplyOk(st.send('Allow', 'hfs', LOAD_NOW | RUNTIME))
        self.assertMask(self.run_file('hfs'))
        self.assertAbsent(self.etc(module='hfs'))

    # -- ExemptLoaded ------------------------------------------------------------------------------
    def test_exempt_loaded(self):
        st = self.stack
        for m in ('hfs', 'minix', 'jfs', 'freevxfs', 'udf'):
            self.vendor(m)
        write(self.root, 'etc/modprobe.d/50-cis.conf', 'blacklist squashfs\n')
        # An administrator's deny of a filesystem in use (Deny with FORCE), persistent and
        # until reboot: meant, so not exempted.
        self.assertReplyOk(st.send('Deny', 'xfs', FORCE))
        self.assertReplyOk(st.send('Deny', 'isofs', RUNTIME | FORCE))
        write(self.root, 'proc/modules', ''.join(proc_modules_line(m) for m in ('hfs', 'squashfs', 'xfs', 'isofs')))
        write(self.root, 'proc/mounts', '/dev/vda / ext4 rw 0 0\n/dev/sdb /mnt/a jfs rw 0 0\n'
                                        '/dev/sdc /mnt/b vxfs ro 0 0\n')
        mon = SignalMonitor(self.stack)
        self.addCleanup(mon.stop)
        r = st.busctl('ExemptLoaded')
        self.assertReplyOk(r)
        self.assertEqual(sorted(r.data[0]), ['freevxfs', 'jfs'])
        for m in ('freevxfs', 'jfs'):
            self.assertMask(self.etc(module=m))
            self.assertState(m, 'allowed', 'admin', '/etc/modprobe.d/' + conf_name(m))
        # Not in use: unchanged; loaded but not mounted (hfs) is not in use either
        # (test_exempt_loaded_is_not_mounted). Denied by an administrator (a foreign file,
        # fsgate's own deny in /etc or /run): left alone.
        self.assertState('hfs', 'denied', 'vendor')
        self.assertState('minix', 'denied', 'vendor')
        self.assertState('squashfs', 'denied', 'admin', '/etc/modprobe.d/50-cis.conf')
        self.assertState('xfs', 'denied', 'admin', '/etc/modprobe.d/' + conf_name('xfs'))
        self.assertState('udf', 'denied', 'vendor')
        self.assertState('isofs', 'denied', 'runtime', '/run/modprobe.d/' + conf_name('isofs'))
        self.assertEqual(sorted(os.listdir(os.path.join(self.root, 'etc/modprobe.d'))),
                         sorted(['50-cis.conf'] + [conf_name(m) for m in ('freevxfs', 'jfs', 'xfs')]))
        self.assertEqual(sorted(mon.take()), [('freevxfs', 'allowed', 'admin'), ('jfs', 'allowed', 'admin')])
        # Again: nothing left to exempt.
        before = snapshot(self.root)
        r = st.busctl('ExemptLoaded')
        self.assertReplyOk(r)
        self.assertEqual(r.data[0], [])
        self.assertEqual(snapshot(self.root), before)
        self.assertEqual(mon.take(), [])

    def test_exempt_loaded_is_not_mounted(self):
        """The attacker: any user who may create a user namespace makes the kernel load hfs
        while nothing denies it yet (`unshare -Urm mount -t hfs ...` asks for fs-hfs before
        the permission check) and mounts nothing in the system's namespace. The vendor list's
        install then calls ExemptLoaded: hfs must stay denied, and be reported. Regression:
        loaded counted as in use, so the attacker picked a permanent allow. Mounted, it is in
        use and exempted."""
        st = self.stack
        self.vendor('hfs')
        write(self.root, 'proc/modules', proc_modules_line('hfs'))
        mon = SignalMonitor(self.stack)
        self.addCleanup(mon.stop)
        before = snapshot(self.root)
        r = st.send('ExemptLoaded')
        self.assertReplyOk(r)
        self.assertRegex(r.out, r'array \[\s*\]', r)              # nothing exempted
        self.assertEqual(snapshot(self.root), before)
        self.assertAbsent(self.etc(module='hfs'))
        self.assertState('hfs', 'denied', 'vendor')
        self.assertEqual(mon.take(), [])
        # Told (journal, and stderr here), with the way out.
        self.assertIn('hfs is loaded but nothing is mounted with it: not exempted; if this system needs it, '
                      'fsgatectl allow hfs', st.daemon_output()[self._log_mark:])

        # A filesystem of its type mounted in the system's own /proc/mounts: in use.
        write(self.root, 'proc/mounts', '/dev/vda / ext4 rw,relatime 0 0\n/dev/sdb1 /mnt/mac hfs ro 0 0\n')
        r = st.send('ExemptLoaded')
        self.assertReplyOk(r)
        self.assertRegex(r.out, r'array \[\s*string "hfs"\s*\]', r)
        self.assertMask(self.etc(module='hfs'))
        self.assertState('hfs', 'allowed', 'admin', '/etc/modprobe.d/' + conf_name('hfs'))
        self.assertEqual(mon.take(), [('hfs', 'allowed', 'admin')])

    # -- the signal -----------------------------------------------------------------------------------
    def test_filesystem_changed_signal(self):
        st = self.stack
        self.vendor('hfs')
        write(self.root, 'proc/modules', proc_modules_line('jfs'))
        mon = SignalMonitor(self.stack)
        self.addCleanup(mon.stop)
        steps = [
            (('Deny', 'minix', 0), [('minix', 'denied', 'admin')]),
            (('Deny', 'minix', 0), []),                                   # no change
            (('Allow', 'minix', 0), [('minix', 'allowed', 'admin')]),
            (('Reset', 'minix', 0), [('minix', 'allowed', 'default')]),
            (('Reset', 'minix', 0), []),
            (('Allow', 'hfs', 0), [('hfs', 'allowed', 'admin')]),
            (('Reset', 'hfs', 0), [('hfs', 'denied', 'vendor')]),
            (('Allow', 'hfs', RUNTIME), [('hfs', 'allowed', 'runtime')]),
            (('Reset', 'hfs', RUNTIME), [('hfs', 'denied', 'vendor')]),
            (('Deny', 'vxfs', RUNTIME), [('freevxfs', 'denied', 'runtime')]),  # the module, not the type
            (('Deny', 'jfs', 0), []),                                     # InUse: nothing changed
            (('Deny', 'a/b', 0), []),
            (('Allow', 'vxfs', 0x80), []),
        ]
        for call, want in steps:
            st.send(*call)
            self.assertEqual(mon.take(), want, f'signals after {call}')

    # -- introspection ------------------------------------------------------------------------------
    def test_introspection_matches_xml(self):
        rc, live_xml, err = self.stack.run(['busctl', '--system', 'introspect', '--xml-interface',
                                            fb.BUS_NAME, fb.OBJ_PATH])
        self.assertEqual(rc, 0, err)
        with open(os.path.join(CONFIG.source_root, 'dbus', 'org.fsgate.fsgate1.Manager.xml')) as f:
            file_xml = f.read()

        def describe(xml_text):
            node = ET.fromstring(xml_text)
            ifaces = {i.get('name'): i for i in node.findall('interface')}
            self.assertIn(fb.IFACE, ifaces)
            i = ifaces[fb.IFACE]

            def ann(el):
                return sorted((a.get('name'), a.get('value')) for a in el.findall('annotation'))
            out = {'interface-annotations': ann(i)}
            for m in i.findall('method'):
                out['method ' + m.get('name')] = (
                    [(a.get('name'), a.get('type'), a.get('direction') or 'in') for a in m.findall('arg')], ann(m))
            for s in i.findall('signal'):
                out['signal ' + s.get('name')] = (
                    [(a.get('name'), a.get('type'), a.get('direction') or 'out') for a in s.findall('arg')], ann(s))
            for p in i.findall('property'):
                out['property ' + p.get('name')] = (p.get('type'), p.get('access'), ann(p))
            return out, sorted(ifaces)

        live, live_ifaces = describe(live_xml)
        want, _ = describe(file_xml)
        self.assertEqual(live, want)
        for std in ('org.freedesktop.DBus.Introspectable', 'org.freedesktop.DBus.Properties',
                    'org.freedesktop.DBus.Peer'):
            self.assertIn(std, live_ifaces)
        # The contract's names (README.md, the man page), so the XML itself cannot drift either.
        self.assertEqual(sorted(k for k in want if k.startswith('method ')),
                         sorted('method ' + m for m in ('ListFilesystems', 'GetFilesystem', 'Describe', 'DescribeAll',
                                                        'Allow', 'Deny', 'Reset', 'Load', 'Grant', 'OpenSafely',
                                                        'CloseSafely', 'ExemptLoaded',
                                                        'ApplyProfile', 'AuditProfile', 'StopObserving', 'GetObservation',
                                                        'UndoProfile',
                                                        'ReportBlocked', 'ReportDevice')))
        self.assertEqual([a[1] for a in want['method GetObservation'][0]], ['s', 't', 'as'])
        self.assertEqual([a[1] for a in want['method Grant'][0]], ['s', 'a{sv}', 't', 's'])
        self.assertEqual([a[1] for a in want['signal GrantEnded'][0]], ['s', 's', 's'])
        self.assertEqual(want['property Grants'][:2], ('a(ssutts)', 'read'))
        self.assertEqual([a[1] for a in want['method OpenSafely'][0]], ['s', 'h', 's', 't', 's', 's'])
        self.assertEqual(want['property OpenMedia'][:2], ('a(sssusst)', 'read'))
        self.assertEqual([a[1] for a in want['signal Blocked'][0]], ['s', 's', 's', 'a{sv}'])
        self.assertEqual(want['method GetFilesystem'][0][1][1], '(sassssbbbb)')
        self.assertEqual(want['method ListFilesystems'][0][0][1], 'a(sassssbbbb)')
        self.assertEqual(want['method Describe'][0][1][1], 'a{sv}')
        self.assertEqual(want['method DescribeAll'][0][0][1], 'a{sa{sv}}')
        self.assertEqual([a[1] for a in want['signal FilesystemChanged'][0]], ['s', 's', 's'])
        self.assertEqual(want['property Version'][:2], ('s', 'read'))
        self.assertEqual(want['property KernelRelease'][:2], ('s', 'read'))

    # -- bus policy ---------------------------------------------------------------------------------
    def test_bus_policy_only_root_owns_the_name(self):
        # The project's policy file, as included by the test bus: uid 65534 cannot take the name.
        rc, out, err = self.stack.run([fb.PYTHON, '-c', (
            'import dbus,os; b=dbus.bus.BusConnection(os.environ["DBUS_SYSTEM_BUS_ADDRESS"]);\n'
            'try:\n b.request_name("org.fsgate.fsgate1.Test")\nexcept dbus.DBusException as e:\n'
            ' print(e.get_dbus_name())\n'
            'try:\n b.request_name("org.fsgate.fsgate1", 4)\nexcept dbus.DBusException as e:\n'
            ' print(e.get_dbus_name())\n')], uid=NOBODY)
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.split(), ['org.freedesktop.DBus.Error.AccessDenied'] * 2)


def builtin_fs_aliases(root, kver):
    """{module: {type}} for the fs- aliases of built-in code (modules.builtin.modinfo)."""
    want = {}
    with open(os.path.join(root, 'usr/lib/modules', kver, 'modules.builtin.modinfo'), 'rb') as f:
        for rec in f.read().decode().split('\0'):
            mod, _, alias = rec.partition('.alias=fs-')
            if alias and '/' not in mod:
                want.setdefault(mod, set()).add(alias)
    return want


class BuiltinTest(BusTestCase):
    """A module tree with a built-in filesystem (like ext4 on many kernels): Builtin."""

    @classmethod
    def prepare_root(cls, root):
        # Two fs- aliases (depmod keeps them in modules.builtin.modinfo and its .bin index).
        add_builtin(root, cls.kver, 'kernel/fs/fsgtestfs/fsgtestfs.ko',
                    b'fsgtestfs.alias=fs-fsgtestfs\0fsgtestfs.alias=fs-fsgtest2\0fsgtestfs.license=GPL\0')

    def test_builtin_named_by_a_rule(self):
        # pstore is built in on Debian (kernel/fs/pstore in modules.builtin) without an fs-
        # alias; openSUSE's list names it.
        st = self.stack
        self.assertNotIn('pstore', [e.module for e in st.list()])
        write(self.root, 'usr/lib/modprobe.d/' + conf_name('pstore'), 'blacklist pstore\n')
        self.assertEqual(st.get('pstore'), fb.Entry(['pstore', [], 'allowed', 'default', '',
                                                     False, True, False, False]))

    def test_builtin(self):
        st = self.stack
        e = st.get('fsgtest2')
        self.assertEqual((e.module, e.types, e.state, e.origin, e.source, e.builtin, e.loaded, e.mounted),
                         ('fsgtestfs', ['fsgtest2', 'fsgtestfs'], 'allowed', 'default', '', True, False, False))
        before = snapshot(self.root)
        for flags in (0, FORCE, RUNTIME):
            r = st.send('Deny', 'fsgtestfs', flags)
            self.assertError(r, ERR + 'Builtin', 'fsgtestfs')
        # Allow, Reset and Load have nothing to do.
        self.assertReplyOk(st.send('Allow', 'fsgtestfs', 0))
        self.assertReplyOk(st.send('Reset', 'fsgtestfs', 0))
        self.assertReplyOk(st.send('Load', 'fsgtestfs'))
        self.assertEqual(snapshot(self.root), before)
        # A blacklist cannot deny what is built in.
        write(self.root, 'etc/modprobe.d/50-x.conf', 'blacklist fsgtestfs\n')
        self.assertEqual(st.get('fsgtestfs').state, 'allowed')
        self.assertIn('fsgtestfs', [x.module for x in st.list() if x.builtin])


class ReadOnlyTest(BusTestCase):
    """fsgated in a private mount namespace where ROOT/etc/modprobe.d is a read-only bind
    mount (the host's mounts are not touched): ReadOnly."""

    start_daemon = False

    def setUp(self):
        super().setUp()
        self.vendor('hfs')
        # A deny file of ours that Reset would remove.
        rc = subprocess.run([CONFIG.fsgatectl, '--root=' + self.root, 'deny', 'minix'],
                            capture_output=True).returncode
        self.assertEqual(rc, 0)
        etc = os.path.join(self.root, 'etc/modprobe.d')
        wrapper = ['unshare', '--mount', '--propagation', 'private', '--', 'sh', '-c',
                   'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"',
                   'sh', etc]
        self.stack.start_daemon(self.root, self.kver, wrapper=wrapper)
        self.addCleanup(self.stack.stop_daemon)

    def test_read_only_etc(self):
        st = self.stack
        before = snapshot(self.root)
        for call in (('Deny', 'jfs', 0), ('Allow', 'hfs', 0), ('Reset', 'minix', 0), ('Allow', 'minix', 0)):
            r = st.send(*call)
            self.assertError(r, ERR + 'ReadOnly')
            self.assertIn('/etc/modprobe.d', r.message)
        self.assertEqual(snapshot(self.root), before)
        self.assertEqual(st.ctl('deny', 'jfs').rc, 6)
        self.assertEqual(st.ctl('--json', 'allow', 'hfs').rc, 6)
        self.assertEqual(snapshot(self.root), before)
        # /run is still writable: runtime changes work.
        self.assertReplyOk(st.send('Deny', 'jfs', RUNTIME))
        self.assertDenyFile(self.run_file('jfs'), 'jfs')
        self.assertReplyOk(st.send('Allow', 'hfs', RUNTIME))
        self.assertMask(self.run_file('hfs'))
        self.assertNoTempFiles()


if __name__ == '__main__':
    fb.main()

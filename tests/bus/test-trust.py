#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Answers an admin can trust (fsgatectl offline, --root): an audit never passes on nothing,
input is checked before anything is judged, misused options are named, and what fsgate wrote
on an image without a kernel it can undo there. Each case failed on fc6c6b5."""

import hashlib
import json
import os
import re
import shutil
import sys
import tarfile
import tempfile
import unittest

sys.dont_write_bytecode = True      # keep the source tree clean
import fsgatetest as fb  # noqa: E402
from fsgatetest import BusTestCase, conf_name, snapshot, write  # noqa: E402

EXIT_USAGE, EXIT_CONFLICT, EXIT_NOT_COMPLIANT, EXIT_NO_KERNEL = 2, 5, 9, 10
CIS = ['cramfs', 'freevxfs', 'hfs', 'hfsplus', 'jffs2', 'udf']


class TrustTest(BusTestCase):
    start_polkit = False
    start_daemon = False

    def setUp(self):
        super().setUp()
        self.scratch = tempfile.mkdtemp(prefix='trust-', dir=self.workdir)
        self.addCleanup(shutil.rmtree, self.scratch, ignore_errors=True)

    def dir(self, name, *subdirs):
        d = os.path.join(self.scratch, name)
        for s in subdirs or ('',):
            os.makedirs(os.path.join(d, s), exist_ok=True)
        return d

    def ctl(self, *args, want=None):
        r = self.stack.ctl(*args)
        if want is not None:
            self.assertEqual(r.rc, want, r)
            if want not in (0, EXIT_NOT_COMPLIANT) and '--json' not in args:
                self.assertTrue(r.err.strip(), f'no message: {r!r}')
                self.assertNotIn('org.fsgate', r.err + r.out, 'a bus name in text for people')
                # The scratch paths are random ("trust-qg0x3k_7" once matched): out of the check.
                self.assertNotRegex(r.err.replace(self.scratch, 'SCRATCH'), r'0x[0-9a-f]',
                                    'flag bits in text for people')
        return r

    # -- 1: an audit never passes on nothing ----------------------------------------------------
    def test_audit_of_a_root_without_kernel_cannot_judge(self):
        """Regression: `audit cis` of an empty directory, of an image without a module tree,
        and of a tree without modules.dep said "6 of 6 modules compliant", exit 0."""
        for root, what in ((self.dir('etc-only', 'etc'), 'no kernel module tree'),
                           (self.dir('no-release', 'etc', 'usr/lib/modules'), 'no kernel module tree'),
                           (self.dir('no-index', 'etc', f'usr/lib/modules/{self.kver}/kernel'), 'modules.dep'),
                           # libkmod reads the binary index only: a text modules.dep finds nothing.
                           (self.text_index_only(), 'modules.dep.bin')):
            r = self.ctl('--root=' + root, 'audit', 'cis', want=EXIT_NO_KERNEL)
            self.assertIn(what, r.err)
            self.assertNotIn('compliant', r.out)
            r = self.ctl('--json', '--root=' + root, 'audit', 'cis', want=EXIT_NO_KERNEL)
            self.assertIn('"org.fsgate.fsgate1.Error.NoKernel"', r.err)
        # A module absent from a present tree stays "not available" and compliant (CIS).
        r = self.ctl('--root=' + self.root, 'audit', 'cis', want=EXIT_NOT_COMPLIANT)
        self.assertRegex(r.out, r'(?m)^  cramfs +compliant +not in kernel \S+ and named by no file: nothing to load$')

    def text_index_only(self):
        d = self.dir('text-index', 'etc', f'usr/lib/modules/{self.kver}')
        for name in ('modules.dep', 'modules.alias'):
            shutil.copy(os.path.join(self.root, f'usr/lib/modules/{self.kver}', name),
                        os.path.join(d, f'usr/lib/modules/{self.kver}'))
        return d

    def test_a_vendor_deny_before_the_kernel(self):
        """Regression: with no kernel and a vendor file naming the module, the plan read a
        state it had freed (the state is built again for the name). Under ASan: a report."""
        img = self.dir('pre-kernel-vendor', 'etc')
        write(img, 'usr/lib/modprobe.d/50-hardening.conf', 'blacklist hfs\nblacklist squashfs\n')
        r = self.ctl('--root=' + img, 'status', 'hfs', want=0)
        self.ctl('--root=' + img, 'allow', 'hfs', want=0)
        r = self.ctl('--root=' + img, '--json', 'status', 'squashfs', want=0)
        self.assertIn('"state":"denied"', r.out.replace(' ', ''))

    def test_soft_says_where_the_hard_deny_is(self):
        """Regression: deny --soft named fsgate's own hard deny in the other directory a
        file "fsgate did not write"; and an allow over fsgate's deny plus a vendor file blamed
        fsgate's own file."""
        img = os.path.join(self.scratch, 'soft')
        shutil.copytree(self.root, img, symlinks=True)
        self.ctl('--root=' + img, 'deny', '--hard', 'minix', want=0)
        r = self.ctl('--root=' + img, 'deny', '--runtime', '--soft', 'minix', want=EXIT_CONFLICT)
        self.assertIn('without the runtime flag', r.err)
        self.assertNotIn('did not write', r.err)
        self.ctl('--root=' + img, 'deny', '--soft', 'minix', want=0)
        write(img, 'usr/lib/modprobe.d/50-hardening.conf', 'blacklist minix\nblacklist squashfs\n')
        r = self.ctl('--root=' + img, 'allow', 'minix', want=EXIT_CONFLICT)
        self.assertIn('reset it first', r.err)
        self.assertNotIn('did not write', r.err)
        self.ctl('--root=' + img, 'reset', 'minix', want=0)
        self.ctl('--root=' + img, 'allow', 'minix', want=0)
        r = self.ctl('--root=' + img, '--json', 'status', 'squashfs', want=0)
        self.assertIn('"state":"denied"', r.out.replace(' ', ''))

    def test_a_kernel_release_without_tree_is_an_error(self):
        """Regression: --kernel-release=9.9.9 listed every module "(not in this kernel)", exit 0."""
        for verb in (['list'], ['status', 'hfs'], ['audit', 'cis'], ['deny', 'hfs']):
            before = snapshot(self.root)
            r = self.ctl('--root=' + self.root, '--kernel-release=9.9.9', *verb, want=EXIT_NO_KERNEL)
            self.assertIn('9.9.9', r.err)
            self.assertEqual(snapshot(self.root), before)

    # -- 5: checked input -------------------------------------------------------------------------
    def test_roots_that_are_not_images(self):
        """Regression: --root= (an unset $TARGET) meant the host; a regular file "does not
        exist"; an empty directory listed nothing with exit 0."""
        r = self.ctl('--root=', 'list', want=EXIT_USAGE)
        self.assertIn('--root=', r.err)
        f = os.path.join(self.scratch, 'a-file')
        write(self.scratch, 'a-file', 'x\n')
        r = self.ctl('--root=' + f, 'list', want=EXIT_USAGE)
        self.assertIn('not a directory', r.err)
        empty = self.dir('empty')
        for verb in (['list'], ['audit', 'cis'], ['apply', 'cis']):
            r = self.ctl('--root=' + empty, *verb, want=EXIT_USAGE)
            self.assertIn('not a system image', r.err)
        self.assertEqual(os.listdir(empty), [], 'something was written into the empty directory')

    def test_a_relative_root_is_taken_from_the_working_directory(self):
        # fsgatectl runs in the stack's bus directory.
        rel = os.path.relpath(self.root, self.stack.busdir)
        self.assertFalse(rel.startswith('/'))
        r = self.ctl('--root=' + rel, '--json', 'status', 'hfs', want=0)
        self.assertIn('"module":"hfs"', r.out.replace(' ', ''))

    # -- 7: options checked per verb ---------------------------------------------------------------
    def test_misused_options_are_named(self):
        """Regression: allow --hard said "Unknown flags 0x8", reset --force "0x4", apply
        --runtime "0x1"; list --force was ignored."""
        before = snapshot(self.root)
        for args, option, verb in ((['allow', '--hard', 'hfs'], '--hard', 'allow'),
                                   (['reset', '--force', 'hfs'], '--force', 'reset'),
                                   (['apply', '--runtime', 'cis'], '--runtime', 'apply'),
                                   (['list', '--force'], '--force', 'list'),
                                   (['status', '--dry-run', 'hfs'], '--dry-run', 'status'),
                                   (['audit', '--soft', 'cis'], '--soft', 'audit'),
                                   (['deny', '--hard', '--soft', 'hfs'], '--hard and --soft', '')):
            r = self.ctl('--root=' + self.root, *args, want=EXIT_USAGE)
            self.assertIn(option, r.err, args)
            self.assertIn(verb, r.err, args)
        self.assertEqual(snapshot(self.root), before)

    # -- 6: what fsgate wrote, fsgate can undo, before the kernel -----------------------------------
    def test_an_image_before_its_kernel(self):
        """Regression: `apply cis` on an image with /etc but no kernel wrote six files whose
        header says "undo with: fsgatectl reset hfs"; reset and deny then refused (no such
        filesystem for kernel (none)), and a reset that did remove its file exited 3."""
        img = self.dir('pre-kernel', 'etc')
        r = self.ctl('--root=' + img, 'apply', 'cis', want=0)
        path = os.path.join(img, 'etc/modprobe.d', conf_name('hfs'))
        with open(path) as f:
            undo = [line.split('undo with: ', 1)[1].strip() for line in f if 'undo with: ' in line]
        self.assertEqual(undo, ['fsgatectl reset hfs'])
        # The header's command, with the image's root, as an image builder runs it.
        words = undo[0].split()
        self.ctl('--root=' + img, *words[1:], want=0)
        self.assertFalse(os.path.exists(path))
        r = self.ctl('--root=' + img, '--json', 'status', 'hfs', want=0)
        self.assertIn('"state":"allowed"', r.out.replace(' ', ''))
        # It says that it judges without a kernel.
        r = self.ctl('--root=' + img, 'status', 'hfs', want=0)
        self.assertRegex(r.out, r'(?m)^ +Available: kernel not known yet')
        self.assertIn('no kernel module tree yet', r.err)
        r = self.ctl('--root=' + img, 'list', want=0)
        self.assertIn('(kernel not known yet)', r.out)
        self.ctl('--root=' + img, 'deny', '--hard', 'hfs', want=0)
        with open(path) as f:
            self.assertIn('install hfs /bin/false', f.read().splitlines())
        self.ctl('--root=' + img, 'deny', '--soft', 'hfs', want=0)
        self.ctl('--root=' + img, 'allow', 'udf', want=0)
        self.assertEqual(os.readlink(os.path.join(img, 'etc/modprobe.d', conf_name('udf'))), '/dev/null')
        self.ctl('--root=' + img, 'reset', 'udf', want=0)
        self.ctl('--root=' + img, 'reset', 'hfs', want=0)
        self.assertEqual(sorted(os.listdir(os.path.join(img, 'etc/modprobe.d'))),
                         sorted(conf_name(m) for m in CIS if m not in ('hfs', 'udf')))
        # Still no kernel to audit against: it says so, it does not pass.
        self.ctl('--root=' + img, 'audit', 'cis', want=EXIT_NO_KERNEL)

    # -- 2, 3: a hard deny is never weakened by a side effect, nor written when it cannot work -------
    def test_soft_profile_after_a_hard_one_keeps_it_hard(self):
        img = self.dir('image', 'etc')
        shutil.rmtree(img)
        shutil.copytree(self.root, img, symlinks=True)
        self.ctl('--root=' + img, 'apply', 'cis', want=0)
        self.ctl('--root=' + img, 'apply', 'opensuse', want=0)
        self.ctl('--root=' + img, 'deny', 'hfs', want=0)
        r = self.ctl('--root=' + img, 'audit', 'cis', want=0)
        self.assertIn('6 of 6 modules compliant', r.out)
        write(img, 'proc/mounts', '/dev/vda / xfs rw 0 0\n')   # on ext4: refused as needed to boot
        before = snapshot(img)
        r = self.ctl('--root=' + img, 'deny', '--hard', '--force', 'ext4', want=EXIT_CONFLICT)
        self.assertIn('soft dependencies', r.err)
        self.assertEqual(snapshot(img), before)
        r = self.ctl('--root=' + img, '--json', 'status', 'ext4', want=0)
        self.assertIn('"hard":false', r.out.replace(' ', ''))

    # -- hints run as written, offline too -----------------------------------------------------------
    def test_offline_hints_carry_the_root(self):
        """A hint printed with --root must act on that image when run as written (a plain
        "fsgatectl deny --soft hfs" would act on the host), whatever the path holds."""
        img = os.path.join(self.dir('with space'), "it's")
        shutil.copytree(self.root, img, symlinks=True)
        self.ctl('--root=' + img, 'deny', '--hard', 'minix', want=0)
        r = self.ctl('--root=' + img, 'deny', 'minix', want=0)
        hint = re.search(r'(?m)^The hard deny stays; to make it soft: (fsgatectl .*)$', r.out)
        self.assertTrue(hint, r.out)
        self.assertEqual(self.stack.run_hint(hint.group(1)).rc, 0)
        with open(os.path.join(img, 'etc/modprobe.d', conf_name('minix'))) as f:
            self.assertNotIn('install minix /bin/false', f.read().splitlines())

    # -- 9: no suggestion that cannot work ----------------------------------------------------------
    def test_why_suggests_only_what_works(self):
        """Regression: `why cramfs` (no module file in Debian's tree) suggested `fsgatectl load
        cramfs`; `why` of a device that does not exist talked about udev and blkid."""
        img = self.dir('image')
        shutil.rmtree(img)
        shutil.copytree(self.root, img, symlinks=True)
        # The kernel has no cramfs.ko; a vendor file names it.
        write(img, 'usr/lib/modprobe.d/' + conf_name('cramfs'), 'blacklist cramfs\n')
        r = self.ctl('--root=' + img, 'why', 'cramfs', want=0)
        self.assertNotIn('load cramfs', r.out)
        self.assertNotIn('modprobe cramfs', r.out)
        self.assertIn('no module file in this kernel', r.out)
        r = self.ctl('--root=' + img, 'why', '/dev/fsgate-no-such-device', want=EXIT_USAGE)
        self.assertIn('No such file or directory', r.err)
        self.assertNotIn('udev', r.err)
        r = self.ctl('--root=' + img, 'why', '/dev', want=EXIT_USAGE)
        self.assertIn('neither a block device nor an image file', r.err)


VENDOR = 'usr/lib/modprobe.d/hardening.conf'
VENDOR_LINES = '# vendor hardening\nblacklist udf\nblacklist squashfs\nblacklist usb_storage\n'
ACTIONS = [fb.ACTION_ALLOW, fb.ACTION_DENY]


class ForeignFileTest(BusTestCase):
    """One module of a vendor file that denies several, through the real daemon.
    On the old code allow udf was refused with the advice to mask the whole file (lifting
    squashfs and usb_storage too), and status still said "To allow it: fsgatectl allow udf"."""

    def ctl(self, *args):
        return self.stack.ctl(*args)

    def state(self, module):
        r = self.ctl('--json', 'status', module)
        self.assertEqual(r.rc, 0, r)
        return json.loads(r.out)

    def hints(self, out, prefix):
        """The commands status printed after "prefix: "."""
        return [m.group(1).split('   (')[0].strip() for m in re.finditer(r'(?m)^' + re.escape(prefix) + r': (.*)$', out)]

    def run_hints(self, module, prefix='To allow it'):
        r = self.ctl('status', module)
        self.assertEqual(r.rc, 0, r)
        lines = self.hints(r.out, prefix)
        for line in lines:
            h = self.stack.run_hint(line)
            self.assertEqual(h.rc, 0, f'{line!r} as printed failed: {h!r}')
        return lines

    def override(self):
        with open(self.etc('hardening.conf')) as f:
            return f.read()

    def test_allow_one_module_of_a_vendor_file(self):
        st = self.stack
        st.mock_polkit_allow(ACTIONS)
        write(self.root, VENDOR, VENDOR_LINES)
        self.assertState('udf', 'denied', 'vendor', '/' + VENDOR)
        # The advice status prints works as written, and lifts udf alone.
        self.assertEqual(self.run_hints('udf'), ['fsgatectl allow udf'])
        self.assertState('udf', 'allowed', 'admin', '/etc/modprobe.d/hardening.conf')
        self.assertState('squashfs', 'denied', 'admin', '/etc/modprobe.d/hardening.conf')
        text = self.override()
        self.assertIn('blacklist squashfs\nblacklist usb_storage\n', text)
        self.assertNotIn('blacklist udf', text)
        self.assertIn('# fsgate-vendor-sha256: ' + hashlib.sha256(VENDOR_LINES.encode()).hexdigest() + '\n', text)
        with open(os.path.join(self.root, VENDOR)) as f:
            self.assertEqual(f.read(), VENDOR_LINES)
        d = self.state('udf')
        self.assertEqual(d['state'], 'allowed')
        r = st.busctl('Describe', 's', 'udf')
        self.assertEqual(r.data[0]['override_of'], {'type': 's', 'data': '/' + VENDOR})
        self.assertEqual(r.data[0]['override_stale'], {'type': 'b', 'data': False})
        # A second module updates the same override.
        r = st.send('Allow', 'squashfs', 0)
        self.assertReplyOk(r)
        self.assertState('squashfs', 'allowed', 'admin', '/etc/modprobe.d/hardening.conf')
        text = self.override()
        self.assertNotIn('blacklist squashfs', text)
        self.assertIn('# fsgate-allows: udf squashfs\n', text)
        self.assertEqual(sorted(os.listdir(os.path.join(self.root, 'etc/modprobe.d'))), ['hardening.conf'])
        # Reset udf puts its line back, with the deny authorization.
        st.mock_polkit_allow([fb.ACTION_DENY])
        self.assertReplyOk(st.send('Reset', 'udf', 0, uid=fb.NOBODY))
        st.mock_polkit_allow(ACTIONS)
        self.assertState('udf', 'denied', 'admin', '/etc/modprobe.d/hardening.conf')
        self.assertState('squashfs', 'allowed', 'admin', '/etc/modprobe.d/hardening.conf')
        self.assertIn('blacklist udf\n', self.override())
        # The last module: the override goes, the vendor file decides again.
        self.assertReplyOk(st.send('Reset', 'squashfs', 0))
        self.assertAbsent(self.etc('hardening.conf'))
        self.assertState('squashfs', 'denied', 'vendor', '/' + VENDOR)

    def test_stale_override(self):
        st = self.stack
        st.mock_polkit_allow(ACTIONS)
        write(self.root, VENDOR, VENDOR_LINES)
        self.assertReplyOk(st.send('Allow', 'udf', 0))
        write(self.root, VENDOR, VENDOR_LINES + 'blacklist minix\n')
        r = st.busctl('Describe', 's', 'udf')
        self.assertEqual(r.data[0]['override_stale'], {'type': 'b', 'data': True})
        r = self.ctl('status', 'udf')
        self.assertIn('stale', r.out)
        self.assertState('minix', 'allowed', 'default')
        # The way out status prints, run as written.
        self.assertEqual(self.run_hints('udf', 'To make the override again from the vendor file as it is now'),
                         ['fsgatectl allow udf'])
        self.assertFalse(st.busctl('Describe', 's', 'udf').data[0]['override_stale']['data'])
        self.assertState('minix', 'denied', 'admin', '/etc/modprobe.d/hardening.conf')
        self.assertState('udf', 'allowed', 'admin', '/etc/modprobe.d/hardening.conf')

    def test_admin_file_is_named_never_rewritten(self):
        st = self.stack
        st.mock_polkit_allow(ACTIONS)
        admin = '# local policy\nblacklist udf\nblacklist squashfs\n'
        write(self.root, 'etc/modprobe.d/local.conf', admin)
        write(self.root, VENDOR, VENDOR_LINES)
        before = snapshot(self.root)
        r = st.send('Allow', 'udf', 0)
        self.assertError(r, fb.ERR + 'ForeignConfig', re.escape('/etc/modprobe.d/local.conf'))
        self.assertIn('line 2: blacklist udf', r.message)
        self.assertNotIn('ln -s', r.message)
        self.assertNotIn('/dev/null', r.message)
        self.assertEqual(snapshot(self.root), before)
        # status prints no "To allow it" line that would fail; why no mask advice.
        r = self.ctl('status', 'udf')
        self.assertEqual(self.hints(r.out, 'To allow it'), [])
        self.assertIn('line 2: blacklist udf', r.out)
        r = self.ctl('why', 'udf')
        self.assertNotIn('ln -s', r.out)
        # No allow that would be refused; a grant (a load by name for a while) still works.
        self.assertNotIn('fsgatectl allow udf', r.out)
        self.assertIn('fsgatectl allow --for=1h udf', r.out)
        self.assertEqual(snapshot(self.root), before)

    def test_offline_hints_carry_root(self):
        write(self.root, VENDOR, VENDOR_LINES)
        r = self.ctl('--root=' + self.root, 'status', 'squashfs')
        lines = self.hints(r.out, 'To allow it')
        self.assertEqual(lines, [f'fsgatectl --root={self.root} allow squashfs'])
        h = self.stack.run_hint(lines[0])
        self.assertEqual(h.rc, 0, h)
        self.assertIn('blacklist udf\n', self.override())
        self.assertNotIn('blacklist squashfs', self.override())


# suse-module-tools 16.1.6 (GPL-2.0-or-later), next to the repository: read, never shipped.
SUSE_TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'shared', 'third_party',
                          'suse-module-tools', 'suse-module-tools-aa56d018d9bc.tar.gz')


def suse_never_file(module):
    """What openSUSE's unblacklist writes when root answers "never", from its own script: the
    here-document of its "never" branch, with its $0 and $MODULE."""
    with tarfile.open(SUSE_TOOLS) as t:
        script = t.extractfile('suse-module-tools-aa56d018d9bc/unblacklist').read().decode()
    body = script.split('cat >$CONF <<EOF\n', 1)[1].split('\nEOF\n', 1)[0] + '\n'
    return body.replace('$0', '/usr/lib/module-init-tools/unblacklist').replace('$MODULE', module)


@unittest.skipUnless(os.path.exists(SUSE_TOOLS), 'no suse-module-tools sources next to the repository')
class SuseNeverTest(BusTestCase):
    start_polkit = False
    start_daemon = False

    def test_openSUSE_never_file_is_replaced_by_allow(self):
        """Regression: after "never" at openSUSE's unblacklist prompt, allow refused with
        ForeignConfig ("edit it by hand"): the distribution's own file for that decision was
        taken for a stranger's. Now an Allow replaces it, and status offers that Allow."""
        image = os.path.join(self.workdir, 'suse-image')
        shutil.copytree(self.root, image, symlinks=True)
        text = suse_never_file('hfs')
        self.assertIn('user wants to never unblacklist this module', text)
        write(image, 'etc/modprobe.d/' + conf_name('hfs'), text)
        r = self.stack.ctl('--root=' + image, 'status', 'hfs')
        self.assertEqual(r.rc, 0, r)
        hint = re.search(r'(?m)^To allow it: (fsgatectl .*)$', r.out)
        self.assertTrue(hint, r.out)
        r = self.stack.run_hint(hint.group(1))
        self.assertEqual(r.rc, 0, r)
        self.assertEqual(os.readlink(os.path.join(image, 'etc/modprobe.d', conf_name('hfs'))), '/dev/null')
        # The same file with another line is someone's own: left alone.
        os.unlink(os.path.join(image, 'etc/modprobe.d', conf_name('hfs')))
        write(image, 'etc/modprobe.d/' + conf_name('hfs'), text + 'options hfs part=1\n')
        r = self.stack.ctl('--root=' + image, 'allow', 'hfs')
        self.assertEqual(r.rc, 5, r)


if __name__ == '__main__':
    fb.main()

#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""ApplyProfile and `fsgatectl apply|audit`: every shipped profile applied, a dry run that
writes nothing, all or nothing (a ForeignConfig and an InUse module: both named, nothing
written), one polkit check (MOCK polkit), unknown profiles, and the CLI over the bus and
offline (--root)."""

import gettext
import json
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True      # keep the source tree clean
from fsgatetest import (ACTION_DENY, CONFIG, E_ACCESS_DENIED, E_INVALID_ARGS, ERR, FORCE, NOBODY,  # noqa: E402
                        BusTestCase, SignalMonitor, conf_name, proc_modules_line, snapshot, write)

HARD, DRY_RUN, INCLUDE_ON_DEMAND = 0x8, 0x10, 0x40
CIS = ['cramfs', 'freevxfs', 'hfs', 'hfsplus', 'jffs2', 'udf']
# What people need on demand (core/on-demand.c): unused keeps them unless asked.
ON_DEMAND = {'autofs4', 'cifs', 'exfat', 'fuse', 'isofs', 'nfs', 'overlay', 'udf', 'vfat'}


def vendor_list():
    out = []
    with open(os.path.join(CONFIG.source_root, 'data', 'vendor-blacklist.txt')) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith('#'):
                out.append(line.split()[0].replace('-', '_'))
    return sorted(out)


class ProfileTest(BusTestCase):

    def apply(self, name, flags=0, uid=None):
        r = self.stack.busctl('ApplyProfile', 'st', name, flags, uid=uid)
        self.assertReplyOk(r)
        return [tuple(c) for c in r.data[0]]

    def read(self, module):
        with open(self.etc(module=module)) as f:
            return f.read()

    def test_apply_cis_hard(self):
        st = self.stack
        mon = SignalMonitor(st)
        self.addCleanup(mon.stop)
        changes = self.apply('cis')
        self.assertEqual([c[0] for c in changes], CIS)
        for m, change, path in changes:
            self.assertEqual(change, 'deny-hard')
            self.assertEqual(path, '/etc/modprobe.d/' + conf_name(m))
            text = self.assertDenyFile(self.etc(module=m), m)
            self.assertIn(f'install {m} /bin/false', text.splitlines())
        self.assertEqual(self.apply('cis'), [], 'a second apply changed something')
        self.assertState('hfs', 'denied', 'admin')
        self.assertEqual(sorted({s[0] for s in mon.take()}), CIS)
        # Regression: a soft profile applied after it turned the CIS hard denies soft ("5 files
        # written"), and `audit cis` failed. Now they stay hard; the others are written.
        changes = self.apply('opensuse')
        self.assertFalse({c[0] for c in changes} & set(CIS), changes)
        for m in CIS:
            if m != 'cramfs':       # no module file in Debian's tree: nothing to load anyway
                self.assertTrue(json.loads(st.ctl('--json', 'status', m).out)['hard'], m)
            self.assertIn(f'install {m} /bin/false', self.read(m).splitlines())
        # Asked of the service (AuditProfile). Regression: `audit` read the host's files, which
        # here have no module tree at all, and answered for the host.
        r = st.ctl('audit', 'cis', uid=NOBODY)
        self.assertEqual(r.rc, 0, r)
        self.assertIn('6 of 6 modules compliant', r.out)
        r = st.busctl('AuditProfile', 'st', 'cis', 0, uid=NOBODY)
        self.assertReplyOk(r)
        self.assertEqual(r.data[:3], ['cis', True, True])
        self.assertEqual([m[0] for m in r.data[3]], CIS)
        self.assertError(st.send('AuditProfile', 'cis', 0x1), E_INVALID_ARGS)
        self.assertError(st.send('AuditProfile', 'nonesuch', 0), ERR + 'NoSuchProfile')

    def test_apply_opensuse_soft(self):
        with open(os.path.join(self.root, 'usr/lib/modules', self.kver, 'modules.builtin')) as f:
            builtin = {os.path.basename(line.strip())[:-3].replace('-', '_') for line in f}
        expected = [m for m in vendor_list() if m not in builtin]      # pstore on Debian
        changes = self.apply('opensuse')
        self.assertEqual(sorted(c[0] for c in changes), expected)
        for m, change, path in changes:
            self.assertEqual(change, 'deny')
            self.assertNotIn('install ' + m + ' /bin/false', self.read(m))
        # HARD: f2fs has soft dependencies in Debian's tree, so kmod would ignore its install
        # line. Regression: written all the same and reported done. Now: refused, all or nothing.
        before = snapshot(self.root)
        r = self.stack.send('ApplyProfile', 'opensuse', HARD)
        self.assertError(r, ERR + 'ProfileConflict')
        self.assertIn('f2fs (a hard deny cannot take effect)', r.message)
        self.assertEqual(snapshot(self.root), before)

    def test_apply_unused(self):
        write(self.root, 'etc/fstab', '# <file system> <mount point> <type> <options> <dump> <pass>\n'
                                      '# UUID=old /old minix defaults 0 0\n'
                                      'UUID=AB12 /boot/efi vfat umask=0077 0 1\n'
                                      'server:/x /net nfs4 defaults 0 0\n')
        write(self.root, 'etc/systemd/system/srv-data.mount', '[Unit]\nDescription=data\n[Mount]\n'
                                                              'What=/dev/sdb1\nWhere=/srv/data\nType=xfs\n')
        write(self.root, 'usr/lib/systemd/system/srv-b.mount.d/type.conf', '[Mount]\nType=btrfs\n')
        write(self.root, 'run/udev/data/b8:17', 'S:disk/by-label/MAC\nE:ID_FS_TYPE=hfsplus\nE:ID_FS_USAGE=filesystem\n')
        write(self.root, 'run/udev/data/b8:18', 'E:ID_FS_TYPE=crypto_LUKS\n')
        write(self.root, 'proc/modules', proc_modules_line('jfs'))
        self.addCleanup(lambda: [os.path.exists(p) and os.unlink(p) for p in [
            os.path.join(self.root, r) for r in ('etc/fstab', 'etc/systemd/system/srv-data.mount',
                                                 'usr/lib/systemd/system/srv-b.mount.d/type.conf',
                                                 'run/udev/data/b8:17', 'run/udev/data/b8:18')]])
        before = snapshot(self.root)
        planned = self.apply('unused', DRY_RUN)
        self.assertEqual(snapshot(self.root), before, 'a dry run wrote something')
        denied = {c[0] for c in planned}
        kept = {'ext4', 'vfat', 'nfs', 'xfs', 'btrfs', 'hfsplus', 'jfs'}      # nfs4 is served by nfs
        self.assertEqual(denied & kept, set(), 'unused denies a filesystem in use')
        self.assertIn('sunrpc', {e.module for e in self.stack.list()})
        self.assertNotIn('sunrpc', denied, 'a dependency of nfs (kept) was denied')
        for m in ('hfs', 'ufs', 'qnx4', 'minix'):     # minix: only in a comment
            self.assertIn(m, denied)
        self.assertEqual(denied & ON_DEMAND, set(), 'unused denies what people need on demand')
        self.assertTrue(all(c[1] == 'deny' for c in planned))
        entries = {e.module: e for e in self.stack.list()}
        self.assertTrue(all(entries[m].available and not entries[m].builtin for m in denied))
        print(f'  unused: {len(denied)} of {len(entries)} filesystem modules denied', file=sys.stderr)
        self.assertEqual(self.apply('unused'), planned, 'the dry run did not list what apply wrote')
        for m in denied:
            self.assertDenyFile(self.etc(module=m), m)
        for m in kept:
            self.assertFalse(os.path.lexists(self.etc(module=m)), m)

    def test_dry_run_writes_nothing(self):
        before = snapshot(self.root)
        for name in ('cis', 'opensuse', 'unused'):
            self.assertTrue(self.apply(name, DRY_RUN), name)
        self.assertTrue(self.apply('cis', DRY_RUN | HARD))
        self.assertError(self.stack.send('ApplyProfile', 'opensuse', DRY_RUN | HARD), ERR + 'ProfileConflict')
        self.assertEqual(snapshot(self.root), before)
        self.assertEqual(self.stack.mock_polkit_calls(), [])

    def test_all_or_nothing(self):
        st = self.stack
        write(self.root, 'etc/modprobe.d/' + conf_name('hfs'), '# my hardening role\nblacklist hfs\n'
                                                               'options hfs part=1\n')
        write(self.root, 'proc/modules', proc_modules_line('udf'))
        before = snapshot(self.root)
        for flags in (0, DRY_RUN):
            r = st.send('ApplyProfile', 'cis', flags)
            self.assertError(r, ERR + 'ProfileConflict')
            # In words (regression: error names, "hfs (ForeignConfig)", in text for people).
            self.assertIn('hfs (decided by a file fsgate did not write)', r.message)
            self.assertIn('udf (in use)', r.message)
            self.assertNotIn('ForeignConfig', r.message)
            self.assertIn('Nothing was changed', r.message)
        self.assertEqual(snapshot(self.root), before, 'a refused profile wrote something')
        # FORCE takes care of the module in use, not of the foreign file.
        r = st.send('ApplyProfile', 'cis', FORCE)
        self.assertError(r, ERR + 'ProfileConflict')
        self.assertNotIn('udf', r.message)
        self.assertEqual(snapshot(self.root), before)
        os.unlink(self.etc(module='hfs'))
        changes = self.apply('cis', FORCE)
        self.assertIn(('udf', 'deny-hard', '/etc/modprobe.d/' + conf_name('udf')), changes)

    def test_polkit_one_check(self):
        st = self.stack
        before = snapshot(self.root)
        r = st.send('ApplyProfile', 'cis', 0, uid=NOBODY)
        self.assertError(r, E_ACCESS_DENIED)
        self.assertEqual([c[0] for c in st.mock_polkit_calls()], [ACTION_DENY])
        self.assertEqual(snapshot(self.root), before)
        st.mock_polkit_clear()
        self.assertTrue(self.apply('cis', DRY_RUN, uid=NOBODY))     # a dry run asks nobody
        self.assertEqual(st.mock_polkit_calls(), [])
        st.mock_polkit_allow([ACTION_DENY])
        self.assertEqual(len(self.apply('cis', 0, uid=NOBODY)), len(CIS))
        self.assertEqual([c[0] for c in st.mock_polkit_calls()], [ACTION_DENY])
        st.mock_polkit_clear()
        self.assertEqual(self.apply('cis', 0, uid=NOBODY), [])       # nothing to do: no question
        self.assertEqual(st.mock_polkit_calls(), [])
        out = st.daemon_output()[self._log_mark:]
        self.assertIn('Refused org.fsgate.fsgate1.deny for ApplyProfile cis', out)

    def test_polkit_details_name_the_profile(self):
        # A rule must be able to scope a grant to a profile, and the dialog must say which:
        # the details name the profile and the modules it would deny, never an empty module.
        st = self.stack
        self.assertReplyOk(st.send('Deny', 'hfs', HARD))     # denied as cis would: not in the list
        st.mock_polkit_clear()
        self.assertError(st.send('ApplyProfile', 'cis', 0, uid=NOBODY), E_ACCESS_DENIED)
        calls = st.mock_polkit_calls()
        self.assertEqual(len(calls), 1, calls)
        action, _subject, details, _flags = calls[0]
        self.assertEqual(action, ACTION_DENY)
        self.assertEqual(details.get('profile'), 'cis')
        self.assertEqual(details.get('modules'), ' '.join(m for m in CIS if m != 'hfs'))
        self.assertNotIn('module', details, 'not about one module: no "module" for rules to mistake')
        self.assertIn('$(profile)', details.get('polkit.message', ''))
        german = gettext.translation('fsgate', os.path.join(CONFIG.build_root, 'po'), languages=['de'])
        self.assertIn('$(profile)', german.gettext(details['polkit.message']))

    def test_bad_requests(self):
        st = self.stack
        before = snapshot(self.root)
        for name in ('nosuch', '../../etc/passwd', '', 'x' * 300, 'CIS'):
            r = st.send('ApplyProfile', name, 0)
            self.assertError(r, ERR + 'NoSuchProfile')
        self.assertIn('cis', st.send('ApplyProfile', 'nosuch', 0).message)
        self.assertError(st.send('ApplyProfile', 'cis', 0x1), E_INVALID_ARGS)
        self.assertError(st.send('ApplyProfile', 'cis', 0x2), E_INVALID_ARGS)
        self.assertEqual(snapshot(self.root), before)

    def test_unused_on_demand(self):
        """Issue 41: unused keeps sticks, DVDs, containers, shares and automounts unless asked
        (INCLUDE_ON_DEMAND), and its dry run names each with who would be refused."""
        st = self.stack
        write(self.root, 'proc/modules', '')
        planned = {c[0] for c in self.apply('unused', DRY_RUN)}
        included = {c[0] for c in self.apply('unused', DRY_RUN | INCLUDE_ON_DEMAND)}
        self.assertEqual(planned & ON_DEMAND, set())
        self.assertLessEqual(ON_DEMAND | {'sunrpc'}, included)      # sunrpc: what nfs needs
        self.assertEqual(included - planned, ON_DEMAND | {'sunrpc'})
        self.assertError(st.send('ApplyProfile', 'unused', 0x100), E_INVALID_ARGS)
        for root in ([], ['--root=' + self.root]):
            r = st.ctl(*root, 'apply', '--dry-run', 'unused')
            self.assertEqual(r.rc, 0, r)
            lines = r.out.splitlines()
            self.assertFalse([x for x in lines if x.startswith('deny') and x.split()[1] in ON_DEMAND], r.out)
            i = lines.index(f'Kept, as people need them on demand ({"fsgatectl " + root[0] if root else "fsgatectl"} '
                            'apply --include-on-demand unused denies them too):')
            kept = lines[i + 1:]
            self.assertIn('  udf: DVDs and Blu-ray discs would not mount', kept)
            self.assertIn('  isofs (iso9660): CDs, DVDs and ISO images would not mount', kept)
            self.assertEqual(sorted(x.split()[0].rstrip(':') for x in kept), sorted(ON_DEMAND | {'sunrpc'}))
            r = st.ctl(*root, '--json', 'apply', '--dry-run', 'unused')
            doc = json.loads(r.out)
            self.assertFalse(doc['include_on_demand'])
            self.assertEqual({k['module'] for k in doc['kept_on_demand']}, ON_DEMAND | {'sunrpc'})
            self.assertIn({'module': 'isofs', 'type': 'iso9660', 'refused': 'CDs, DVDs and ISO images would not mount'},
                          doc['kept_on_demand'])
            self.assertEqual(doc['kept_on_demand_error'], '')
            r = st.ctl(*root, '--json', 'apply', '--dry-run', '--include-on-demand', 'unused')
            doc = json.loads(r.out)
            self.assertTrue(doc['include_on_demand'])
            self.assertEqual({c['module'] for c in doc['changes']}, included)
            self.assertEqual(doc['kept_on_demand'], [])
            # a listed profile has nothing on demand to keep
            r = st.ctl(*root, 'apply', '--dry-run', 'cis')
            self.assertNotIn('on demand', r.out)
        de = dict(st.env, LANGUAGE='de', LC_ALL='C.UTF-8', FSGATE_LOCALEDIR=os.path.join(CONFIG.build_root, 'po'))
        p = subprocess.run([CONFIG.fsgatectl, 'apply', '--dry-run', 'unused'], env=de, capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, cwd=st.busdir)
        self.assertIn('\n  udf: DVDs und Blu-ray-Discs würden nicht eingehängt\n', p.stdout)
        r = st.ctl('apply', '--include-on-demand', 'unused')
        self.assertEqual(r.rc, 0, r)
        self.assertState('udf', 'denied', 'admin')

    # -- fsgatectl -------------------------------------------------------------------------
    def test_cli_apply_and_audit(self):
        st = self.stack
        r = st.ctl('apply', 'cis', '--dry-run')
        self.assertEqual(r.rc, 0, r)
        self.assertIn('deny-hard  hfs', r.out)
        self.assertIn('would be written (dry run', r.out)
        self.assertFalse(os.path.lexists(self.etc(module='hfs')))
        r = st.ctl('--json', 'apply', 'cis')
        self.assertEqual(r.rc, 0, r)
        doc = json.loads(r.out)
        self.assertEqual([c['module'] for c in doc['changes']], CIS)
        self.assertFalse(doc['dry_run'])
        r = st.ctl('apply', 'nosuch')
        self.assertEqual(r.rc, 3, r)
        # audit reads the files itself (no call): offline on the same root.
        r = st.ctl('--root=' + self.root, 'audit', 'cis')
        self.assertEqual(r.rc, 0, r)
        self.assertIn('6 of 6 modules compliant', r.out)

    def site_profile(self, name, text, mode=0o644):
        site = self.stack.env['FSGATE_SITE_PROFILE_DIR']
        if not os.path.isdir(site):
            os.makedirs(site)
            self.addCleanup(shutil.rmtree, site)
        p = os.path.join(site, name + '.profile')
        with open(p, 'w') as f:
            f.write(text)
        os.chmod(p, mode)

    def test_site_profiles(self):
        # /etc/fsgate/profiles wins over the shipped ones; Include= adds to them.
        st = self.stack
        self.site_profile('cis', 'Include=cis\nModules=jfs\n')
        self.site_profile('mine', 'Include=cis\nModules=nilfs2\n')   # the site's cis: with jfs
        self.site_profile('open', 'Modules=hfs\n', 0o666)
        self.assertEqual([c[0] for c in self.apply('cis', DRY_RUN)], sorted(CIS + ['jfs']))
        mine = self.apply('mine', DRY_RUN)
        self.assertTrue({'jfs', 'nilfs2', 'hfs'} <= {c[0] for c in mine}, mine)
        self.assertEqual({c[1] for c in mine}, {'deny-hard'})      # cis is hard: so is mine
        r = st.ctl('list-profiles')
        self.assertEqual(r.out.split(), ['cis', 'mine', 'opensuse', 'unused'])
        r = st.send('ApplyProfile', 'open', DRY_RUN)
        self.assertError(r, 'org.freedesktop.DBus.Error.Failed')
        self.assertIn('is ignored', r.message)
        for name in ('../site-profiles/cis', 'site-profiles/mine', '/etc/passwd', 'mine.profile', 'x' * 33):
            self.assertError(st.send('ApplyProfile', name, DRY_RUN), ERR + 'NoSuchProfile')
        r = st.ctl('--root=' + self.root, 'apply', 'mine')
        self.assertEqual(r.rc, 0, r)
        self.assertEqual(st.ctl('--root=' + self.root, 'audit', 'mine').rc, 0)

    def test_cli_offline_apply_audit(self):
        st = self.stack
        root = '--root=' + self.root
        r = st.ctl(root, 'audit', 'opensuse')
        self.assertEqual(r.rc, 9, r)
        r = st.ctl(root, 'apply', 'opensuse')
        self.assertEqual(r.rc, 0, r)
        r = st.ctl(root, '--json', 'audit', 'opensuse')
        self.assertEqual(r.rc, 0, r)
        self.assertTrue(json.loads(r.out)['compliant'])
        # cis wants hard denies: the soft ones of opensuse are not enough.
        r = st.ctl(root, '--json', 'audit', 'cis')
        self.assertEqual(r.rc, 9, r)
        doc = json.loads(r.out)
        self.assertTrue(doc['hard_required'])
        hfs = [m for m in doc['modules'] if m['module'] == 'hfs'][0]
        self.assertEqual((hfs['compliant'], hfs['denied'], hfs['hard']), (False, True, False))
        self.assertIn('soft deny only', hfs['why'])
        # the same soft denies pass with the opensuse profile, fail it with --hard
        self.assertEqual(st.ctl(root, 'audit', 'opensuse', '--hard').rc, 9)
        r = st.ctl(root, 'apply', 'cis', '--dry-run')
        self.assertEqual(r.rc, 0, r)
        self.assertEqual(len([line for line in r.out.splitlines() if line.startswith('deny-hard')]), 6)
        r = st.ctl(root, 'apply', 'cis')
        self.assertEqual(r.rc, 0, r)
        self.assertEqual(st.ctl(root, 'audit', 'cis').rc, 0)
        self.assertEqual(st.ctl(root, 'audit').rc, 2)


if __name__ == '__main__':
    from fsgatetest import main
    main()

#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""fsgatectl against the running service on the private bus (polkit: python-dbusmock's MOCK
polkitd), its exit codes, and fsgatectl --root=DIR offline."""

import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading

sys.dont_write_bytecode = True      # keep the source tree clean
import fsgatetest as fb  # noqa: E402
from fsgatetest.names import DRY_RUN  # noqa: E402
from fsgatetest import (ACTION_ALLOW, ACTION_DENY, CONFIG, NOBODY, BusTestCase, add_builtin, conf_name,  # noqa: E402
                        make_scratch_root, proc_modules_line, reset_root, snapshot, write)


# fsgatectl --json names an entry's fields as Describe does: the deciding file, which the
# harness calls by the entry's documented member name, is "deciding_file".
JSON_KEYS = {k: 'deciding_file' if k == 'source' else k for k in fb.Entry.FIELDS}


def as_dict(e):
    return {JSON_KEYS[k]: getattr(e, k) for k in fb.Entry.FIELDS}


def entry_part(d):
    return {k: d[k] for k in JSON_KEYS.values()}


# A foreign deny file whose name needs escaping in JSON: a double quote and a backslash.
AWKWARD_CONF = 'etc/modprobe.d/50-say "no" to \\jfs.conf'


def assert_json_names_awkward_file(test, ctl):
    """why, status and list --json parse and name AWKWARD_CONF exactly; ctl(*args) runs
    fsgatectl and returns (exit status, stdout)."""
    source = '/' + AWKWARD_CONF
    rc, out = ctl('--json', 'why', 'jfs')
    test.assertEqual(rc, 0, out)
    why = json.loads(out)
    test.assertEqual((why.pop('device'), why.pop('type')), ('', 'jfs'))
    # Open safely's route last (none for jfs); the rest is the entry.
    test.assertEqual(list(why)[-1], 'open_safely')
    test.assertEqual(why.pop('open_safely'), {'type': '', 'driver': '', 'package': '', 'installed': '',
                                              'usable': False, 'command': ''})
    test.assertEqual({k: why[k] for k in ('module', 'state', 'origin', 'deciding_file', 'loaded', 'hard',
                                          'explicit_load_possible', 'install_command', 'install_file')},
                     {'module': 'jfs', 'state': 'denied', 'origin': 'admin', 'deciding_file': source, 'loaded': False,
                      'hard': False, 'explicit_load_possible': True, 'install_command': '', 'install_file': ''})
    rc, out = ctl('--json', 'status', 'jfs')
    test.assertEqual(rc, 0, out)
    status = json.loads(out)
    # The rest of why's object is the entry, as status writes it.
    test.assertEqual(why, status)
    rc, out = ctl('--json', 'list')
    test.assertEqual(rc, 0, out)
    test.assertEqual({e['module']: e['deciding_file'] for e in json.loads(out)}['jfs'], source)


def assert_why_hard(test, ctl, deny, root, offline=False):
    """why on a hard-denied module (text and --json) says explicit loads are refused, names
    the install command and its file, and suggests allow (ours) or editing the file (foreign),
    never load or modprobe. ctl(*args) runs fsgatectl and returns (exit status, stdout);
    deny(module) hard-denies it the way the backend does; root is the root ctl reads (offline:
    with --root=root, which every printed command carries, and no load: it needs the running
    system)."""
    command = ['fsgatectl', '--root=' + root] if offline else ['fsgatectl']
    ours = '/etc/modprobe.d/' + conf_name('minix')
    deny('minix')
    rc, out = ctl('why', 'minix')
    test.assertEqual(rc, 0, out)
    test.assertIn('minix may NOT be loaded automatically', out)
    test.assertIn('Hard deny: explicit loads (modprobe, fsgatectl load) are refused too', out)
    test.assertIn('/bin/false', out)
    test.assertIn('(from ' + ours + ')', out)
    advice = out.split('What you can do:\n', 1)[1]
    test.assertEqual(advice.split(), command + ['allow', 'minix', 'allow', 'it', 'from', 'now', 'on'], out)
    rc, out = ctl('--json', 'why', 'minix')
    test.assertEqual(rc, 0, out)
    why = json.loads(out)
    test.assertEqual({k: why[k] for k in ('state', 'origin', 'deciding_file', 'hard', 'explicit_load_possible',
                                          'install_command', 'install_file')},
                     {'state': 'denied', 'origin': 'admin', 'deciding_file': ours, 'hard': True,
                      'explicit_load_possible': False, 'install_command': '/bin/false', 'install_file': ours})
    # A foreign hard deny (CIS): edit that file; allow would fail, load and modprobe too.
    write(root, 'etc/modprobe.d/cis.conf', 'install udf /bin/true\n')
    rc, out = ctl('why', 'udf')
    test.assertEqual(rc, 0, out)
    test.assertIn('Hard deny: explicit loads', out)
    test.assertIn('/bin/true', out)
    advice = out.split('What you can do:\n', 1)[1]
    test.assertIn('edit /etc/modprobe.d/cis.conf by hand', advice)
    for s in ('fsgatectl allow', 'fsgatectl load', 'modprobe udf'):
        test.assertNotIn(s, advice)
    rc, out = ctl('--json', 'why', 'udf')
    why = json.loads(out)
    test.assertEqual((why['hard'], why['install_command'], why['install_file']),
                     (True, '/bin/true', '/etc/modprobe.d/cis.conf'))
    # A soft deny is unchanged: load and modprobe are still the way out for this boot.
    rc, out = ctl('why', 'hfs')
    test.assertEqual(rc, 0, out)
    test.assertNotIn('Hard deny', out)
    if not offline:
        test.assertIn('fsgatectl load hfs', out)
        test.assertIn('modprobe hfs', out)
    test.assertFalse(json.loads(ctl('--json', 'why', 'hfs')[1])['hard'])


class CliBusTest(BusTestCase):

    @classmethod
    def prepare_root(cls, root):
        # A built-in filesystem, for exit status 5 (Builtin).
        add_builtin(root, cls.kver, 'kernel/fs/fsgtestfs/fsgtestfs.ko', b'fsgtestfs.alias=fs-fsgtestfs\0')

    def ctl_json(self, *args, uid=None):
        r = self.stack.ctl('--json', *args, uid=uid)
        self.assertEqual(r.rc, 0, r)
        return json.loads(r.out)

    def assertExit(self, want, *args, uid=None):
        r = self.stack.ctl(*args, uid=uid)
        self.assertEqual(r.rc, want, r)
        if want != 0:
            self.assertTrue(r.err.strip(), f'no message on stderr: {r!r}')
            self.assertEqual(r.out, '', 'errors go to stderr only')
        return r

    def test_list_and_status_json_match_the_bus(self):
        st = self.stack
        self.vendor('hfs')
        want = [as_dict(e) for e in st.list()]
        # The entry's fields as the bus sends them (the risk facts beside them: test-risk).
        self.assertEqual([entry_part(d) for d in self.ctl_json('list')], want)
        self.assertEqual([entry_part(d) for d in self.ctl_json('list', uid=NOBODY)], want)
        # status adds the description (Describe) to the entry's fields.
        self.assertEqual(entry_part(self.ctl_json('status', 'vxfs')), as_dict(st.get('freevxfs')))
        self.assertEqual(entry_part(self.ctl_json('status', 'hfs', uid=NOBODY)), as_dict(st.get('hfs')))
        r = st.ctl('list')
        self.assertEqual(r.rc, 0, r)
        self.assertRegex(r.out, r'(?m)^hfs\s+hfs\s+denied\s+vendor\b')
        r = st.ctl('status', 'vxfs')
        self.assertEqual(r.rc, 0, r)
        self.assertIn('freevxfs', r.out)

    def test_changes_json(self):
        self.vendor('hfs')
        e = self.ctl_json('deny', 'minix')
        self.assertEqual((e['module'], e['state'], e['origin']), ('minix', 'denied', 'admin'))
        self.assertDenyFile(self.etc(module='minix'), 'minix')
        e = self.ctl_json('allow', 'hfs')
        self.assertEqual((e['module'], e['state'], e['origin'], e['deciding_file']),
                         ('hfs', 'allowed', 'admin', '/etc/modprobe.d/' + conf_name('hfs')))
        self.assertMask(self.etc(module='hfs'))
        e = self.ctl_json('reset', 'hfs')
        self.assertEqual((e['state'], e['origin']), ('denied', 'vendor'))
        self.assertAbsent(self.etc(module='hfs'))
        e = self.ctl_json('--runtime', 'deny', 'vxfs')
        self.assertEqual((e['module'], e['state'], e['origin']), ('freevxfs', 'denied', 'runtime'))
        self.assertDenyFile(self.run_file('freevxfs'), 'freevxfs')
        e = self.ctl_json('reset', '--runtime', 'vxfs')
        self.assertEqual((e['state'], e['origin']), ('allowed', 'default'))
        # A change that changes nothing succeeds and says where things stand.
        e = self.ctl_json('reset', 'jfs')
        self.assertEqual((e['state'], e['origin']), ('allowed', 'default'))
        # exempt-loaded: an array of module names (hfs mounted: in use).
        write(self.root, 'proc/modules', proc_modules_line('hfs'))
        write(self.root, 'proc/mounts', '/dev/vda / ext4 rw,relatime 0 0\n/dev/sdb1 /mnt hfs ro 0 0\n')
        self.assertEqual(self.ctl_json('exempt-loaded'), ['hfs'])
        self.assertEqual(self.ctl_json('exempt-loaded'), [])
        self.assertMask(self.etc(module='hfs'))
        # load of a built-in: nothing to do.
        self.assertExit(0, 'load', 'fsgtestfs')

    def test_several_names_all_or_nothing(self):
        st = self.stack
        self.vendor('hfs')
        write(self.root, 'etc/modprobe.d/' + conf_name('ufs'), '# by hand\nblacklist ufs\n')
        before = snapshot(self.root)
        # One name would fail: its error, and not one name changed (asked as dry runs first).
        for args, rc, culprit in ((('deny', 'minix', 'nosuchfs', 'jfs'), 3, 'nosuchfs'),
                                  (('allow', 'hfs', 'ufs'), 5, 'ufs'),
                                  (('deny', 'minix', 'ext2'), 5, 'ext2'),      # ext4 is mounted as /
                                  (('deny', 'minix', 'vxfs'), 4, 'minix')):    # the MOCK polkit refuses
            r = self.assertExit(rc, *args, uid=NOBODY if rc == 4 else None)
            self.assertEqual(snapshot(self.root), before, args)
            if rc != 4:
                self.assertIn(f'Nothing was changed ({culprit} would fail).', r.err)
        # A dry run asks polkit nothing and changes nothing, whoever asks.
        st.mock_polkit_clear()
        self.assertReplyOk(st.send('Deny', 'minix', DRY_RUN, uid=NOBODY))
        self.assertEqual(st.mock_polkit_calls(), [])
        self.assertEqual(snapshot(self.root), before)
        r = st.send('Allow', 'ufs', DRY_RUN, uid=NOBODY)
        self.assertError(r, fb.ERR + 'ForeignConfig', re.escape('/etc/modprobe.d/' + conf_name('ufs')))
        # All of them: each changed, one JSON object a name, in the order given.
        got = self.ctl_json('deny', 'minix', 'vxfs', 'jfs')
        self.assertEqual([(e['module'], e['state']) for e in got],
                         [('minix', 'denied'), ('freevxfs', 'denied'), ('jfs', 'denied')])
        for m in ('minix', 'freevxfs', 'jfs'):
            self.assertDenyFile(self.etc(module=m), m)
        r = self.assertExit(0, 'reset', 'minix', 'vxfs', 'jfs', 'hfs')
        self.assertEqual(len(r.out.splitlines()), 4, r.out)
        self.assertEqual(snapshot(self.root), before)
        self.assertExit(2, 'deny', *(['minix'] * 65))
        # What a dry run cannot foresee: polkit, asked name by name. Reset of hfs (allowed over
        # its vendor file) ends denied and needs the deny action, which the MOCK polkit grants;
        # Reset of minix ends allowed and needs allow, which it refuses: hfs is reset, and
        # the error says so.
        self.assertReplyOk(st.send('Allow', 'hfs', 0))
        self.assertReplyOk(st.send('Deny', 'minix', 0))
        st.mock_polkit_allow([ACTION_DENY])
        r = self.assertExit(4, 'reset', 'hfs', 'minix', uid=NOBODY)
        self.assertIn('Changed before this failure: hfs', r.err)
        self.assertAbsent(self.etc(module='hfs'))
        self.assertDenyFile(self.etc(module='minix'), 'minix')
        r = self.assertExit(4, '--json', 'reset', 'minix', 'hfs', uid=NOBODY)
        self.assertEqual(json.loads(r.err)['error'], 'org.freedesktop.DBus.Error.AccessDenied', r)
        self.assertNotIn('Changed before', r.err)

    def test_exit_codes(self):
        st = self.stack
        self.vendor('hfs')
        self.vendor('exofs')
        write(self.root, 'etc/modprobe.d/50-cis.conf', 'blacklist jfs\n')
        write(self.root, 'etc/modprobe.d/' + conf_name('udf'), '# by hand\nblacklist udf\n')
        self.assertReplyOk(st.send('Deny', 'minix', 0))
        before = snapshot(self.root)
        # 2: usage, invalid names
        for verb in ('status', 'allow', 'deny', 'reset', 'load'):
            for name in ('a/b', '..', '$(reboot)', 'x' * 300, 'hfs\n'):
                self.assertExit(2, verb, name)
        self.assertExit(2, 'frobnicate', 'hfs')
        self.assertExit(2, 'deny')
        self.assertExit(2, 'load', 'hfs', 'extra')
        # 3: no such filesystem, not a filesystem
        for verb in ('status', 'allow', 'deny', 'reset', 'load'):
            self.assertExit(3, verb, 'nosuchfs')
            self.assertExit(3, verb, 'usb_storage')
        # 4: refused by the MOCK polkit
        self.assertExit(4, 'deny', 'vxfs', uid=NOBODY)
        self.assertExit(4, '--no-ask-password', 'allow', 'hfs', uid=NOBODY)
        # exempt-loaded with nothing to exempt asks nobody (a no-op): 0.
        self.assertEqual(self.ctl_json('exempt-loaded', uid=NOBODY), [])
        # 5: in use, foreign configuration, built in, overridden
        self.assertExit(5, 'deny', 'ext2')                 # ext4 is mounted as /
        self.assertExit(5, 'allow', 'jfs')                 # 50-cis.conf
        r = self.assertExit(5, 'reset', 'udf')             # a file at our path
        self.assertIn('/etc/modprobe.d/' + conf_name('udf'), r.err)
        self.assertExit(5, 'deny', 'fsgtestfs')
        self.assertExit(5, '--runtime', 'allow', 'minix')
        # 7: load failed (no module file for exofs in this kernel)
        self.assertExit(7, 'load', 'exofs')
        self.assertEqual(snapshot(self.root), before)
        # 5 even with --force: / is on ext4 (the message says why).
        r = self.assertExit(5, '--force', 'deny', 'ext2')
        self.assertIn('/ is on ext4', r.err)
        self.assertEqual(snapshot(self.root), before)
        self.assertEqual(self.ctl_json('status', 'ext2')['state'], 'allowed')
        # 0 with --force where ext4 is only in use
        write(self.root, 'proc/mounts', '/dev/vda / xfs rw 0 0\n/dev/vdb /srv ext4 rw 0 0\n')
        self.assertExit(0, '--force', 'deny', 'ext2')
        self.assertDenyFile(self.etc(module='ext4'), 'ext4')

    def test_hard_deny(self):
        """deny --hard over the bus: the file, status (text and --json), load refused (5)."""
        st = self.stack
        e = self.ctl_json('deny', '--hard', 'minix')
        self.assertEqual((e['state'], e['hard'], e['explicit_load_possible'], e['install_command']),
                         ('denied', True, False, '/bin/false'))
        with open(self.etc(module='minix')) as f:
            self.assertIn('install minix /bin/false', f.read().splitlines())
        e = self.ctl_json('status', 'minix', uid=NOBODY)
        self.assertEqual((e['hard'], e['blocks_reported'], e['install_file']),
                         (True, True, '/etc/modprobe.d/' + conf_name('minix')))
        self.assertIn({'file': '/etc/modprobe.d/' + conf_name('minix'), 'line': 'install minix /bin/false'}, e['files'])
        r = st.ctl('status', 'minix')
        self.assertEqual(r.rc, 0, r)
        self.assertRegex(r.out, r'(?m)^ +Hard deny: yes')
        self.assertRegex(r.out, r'(?m)^ +Install: /bin/false +\(/etc/modprobe.d/' + conf_name('minix') + r'\)$')
        self.assertRegex(r.out, r'(?m)^ +Files: /etc/modprobe.d/' + conf_name('minix') + ': blacklist minix$')
        before = snapshot(self.root)
        r = self.assertExit(5, 'load', 'minix')
        self.assertIn('/bin/false', r.err)
        self.assertEqual(snapshot(self.root), before)
        # Regression: deny without --hard made it soft again. It stays hard, and the hint it
        # prints, run as written, makes it soft.
        r = st.ctl('deny', 'minix')
        self.assertEqual(r.rc, 0, r)
        hint = re.search(r'(?m)^The hard deny stays; to make it soft: (fsgatectl .*)$', r.out)
        self.assertTrue(hint, r.out)
        self.assertTrue(self.ctl_json('status', 'minix')['hard'])
        self.assertEqual(st.run_hint(hint.group(1)).rc, 0)
        e = self.ctl_json('status', 'minix')
        self.assertEqual((e['state'], e['hard']), ('denied', False))
        self.assertExit(2, '--hard', '--soft', 'deny', 'minix')
        self.assertEqual(self.ctl_json('deny', '--hard', 'minix')['hard'], True)
        e = self.ctl_json('allow', 'minix')
        self.assertEqual((e['state'], e['hard']), ('allowed', False))
        self.assertExit(2, '--hard', 'allow', 'minix')
        self.ctl_json('reset', 'minix')

    def test_why_hard_deny(self):
        """why over the bus, hard deny: no load/modprobe advice (they fail with HardDenied)."""
        self.vendor('hfs')

        def ctl(*args):
            r = self.stack.ctl(*args)
            return r.rc, r.out

        assert_why_hard(self, ctl, lambda m: self.ctl_json('deny', '--hard', m), self.root)

    def test_exit_codes_when_allowed_by_mock_polkit(self):
        st = self.stack
        st.mock_polkit_allow([ACTION_ALLOW, ACTION_DENY])
        self.assertExit(0, '--no-ask-password', 'deny', 'minix', uid=NOBODY)
        self.assertDenyFile(self.etc(module='minix'), 'minix')
        self.assertExit(4, '--no-ask-password', 'load', 'minix', uid=NOBODY)

    def test_service_unreachable(self):
        """No service, no bus: exit 8 and one sentence with the next step, not sd-bus's errno."""
        st = self.stack
        hint = ('fsgate\'s service cannot be reached: is fsgate installed and D-Bus running? '
                'For an image use --root=DIR.\n')
        st.stop_daemon()
        try:
            self.assertEqual(self.assertExit(8, 'status', 'hfs').err, hint)
            self.assertEqual(self.assertExit(8, 'deny', 'hfs').err, hint)
            env = dict(st.env, DBUS_SYSTEM_BUS_ADDRESS='unix:path=' + os.path.join(self.workdir, 'nobus'))
            p = subprocess.run([CONFIG.fsgatectl, 'list'], env=env, capture_output=True, text=True)
            self.assertEqual((p.returncode, p.stderr), (8, hint), p)
        finally:
            st.start_daemon(self.root, self.kver)

    def test_allow_load_that_fails_after_the_allow(self):
        """allow --load whose allow is written and whose load fails (fsgated over an image never
        loads) says both and exits 11, not LoadFailed's 7, which means nothing was done."""
        self.vendor('hfs')
        r = self.assertExit(11, 'allow', '--load', 'hfs')
        self.assertTrue(r.err.startswith('hfs is allowed (/etc/modprobe.d/' + conf_name('hfs') + '); loading it '
                                         'failed: hfs was not loaded: '), r)
        self.assertIn('never loads a module into the running kernel from an image', r.err)
        self.assertEqual(self.ctl_json('status', 'hfs')['state'], 'allowed')
        # Allowed already: the failed load is all there is, 7.
        before = snapshot(self.root)
        r = self.assertExit(7, 'allow', '--load', 'hfs')
        self.assertNotIn('is allowed', r.err)
        self.assertEqual(snapshot(self.root), before)
        # Several names: the error names the allow that was written.
        self.vendor('minix')
        r = self.assertExit(11, 'allow', '--load', 'minix', 'hfs')
        self.assertIn('minix is allowed', r.err)
        self.assertTrue(r.err.rstrip().endswith('Changed before this failure: minix'), r)
        self.ctl_json('reset', 'hfs', 'minix')

    def test_deny_force_of_a_mounted_module_says_it_stays(self):
        write(self.root, 'proc/mounts', '/dev/vda / ext4 rw 0 0\n/dev/vdb /srv minix rw 0 0\n')
        r = self.stack.ctl('deny', '--force', '--hard', 'minix')
        self.assertEqual(r.rc, 0, r)
        self.assertIn('minix is denied, but stays loaded until it is unmounted: an audit fails until then.', r.out)
        self.ctl_json('reset', 'minix')

    def test_exempt_loaded_with_nothing_to_do_says_so(self):
        r = self.stack.ctl('exempt-loaded')
        self.assertEqual((r.rc, r.out), (0, 'Nothing to exempt: no filesystem a vendor file denies is mounted now.\n'),
                         r)

    def test_why_offers_the_narrow_ways_first(self):
        """Issue 41 item 2: the ways that keep the module denied for everything else come
        first (a while, this boot), the permanent allow last; the first is run as written: the
        service takes it and only the host's kernel refuses the load (it loads nothing)."""
        st = self.stack
        self.assertReplyOk(st.send('Deny', 'hfs', 0))
        r = st.ctl('why', 'hfs')
        self.assertEqual(r.rc, 0, r)
        advice = [line.split('  ')[1].strip() if line.startswith('  ') else line
                  for line in r.out.split('What you can do:\n', 1)[1].splitlines() if line.strip()]
        commands = [a.split('      ')[0].split('     ')[0].strip() for a in advice]
        self.assertEqual(commands, ['fsgatectl allow --for=1h hfs', 'fsgatectl load hfs', 'modprobe hfs',
                                    'fsgatectl allow hfs'], r.out)
        words = commands[0].split()
        self.assertEqual(words[0], 'fsgatectl')
        r = st.ctl(*words[1:])
        self.assertEqual(r.rc, 7, r)        # LoadFailed: taken, granted, and the host kernel loads nothing
        self.assertIn('hfs', r.err)

    def test_why_of_an_unreadable_device(self):
        """why DEVICE by a user who cannot read it: "run as root", not blkid's error and "no
        filesystem found"."""
        d = tempfile.mkdtemp(prefix='fsgate-why-')       # the workdir is root's alone
        self.addCleanup(shutil.rmtree, d, ignore_errors=True)
        os.chmod(d, 0o755)
        image = write(d, 'stick.img', '\0' * 4096, mode=0o600)
        r = self.assertExit(4, 'why', image, uid=NOBODY)
        self.assertEqual(r.err, f'cannot read {image}: run as root\n')
        # Where the user cannot even look: the same.
        os.chmod(d, 0o700)
        r = self.assertExit(4, 'why', image, uid=NOBODY)
        self.assertEqual(r.err, f'cannot read {image}: run as root\n')


    def test_json_escapes_file_names(self):
        """Regression: why --json printed the deciding file's name as it is, so a quote in
        it made invalid JSON. Over the bus as offline, every --json output names it."""
        write(self.root, AWKWARD_CONF, 'blacklist jfs\n')

        def ctl(*args):
            r = self.stack.ctl(*args)
            return r.rc, r.out

        assert_json_names_awkward_file(self, ctl)

    def test_json_errors(self):
        """Regression: with --json an error is one JSON object on stderr,
        {"error": D-Bus name, "message": text}, stdout stays empty, the exit status is the
        same as without --json."""
        st = self.stack
        write(self.root, 'etc/modprobe.d/50-cis.conf', 'blacklist jfs\n')
        cases = [
            (2, 'org.fsgate.fsgate1.Error.InvalidName', ('status', 'a/b'), None),
            (3, 'org.fsgate.fsgate1.Error.NoSuchFilesystem', ('deny', 'nosuchfs'), None),
            (3, 'org.fsgate.fsgate1.Error.NotAFilesystem', ('status', 'usb_storage'), None),
            (4, 'org.freedesktop.DBus.Error.AccessDenied', ('--no-ask-password', 'deny', 'minix'), NOBODY),
            (5, 'org.fsgate.fsgate1.Error.ForeignConfig', ('allow', 'jfs'), None),
            (5, 'org.fsgate.fsgate1.Error.Builtin', ('deny', 'fsgtestfs'), None),
            (2, 'org.freedesktop.DBus.Error.InvalidArgs', ('frobnicate', 'hfs'), None),
            (2, 'org.freedesktop.DBus.Error.InvalidArgs', ('deny',), None),
            (2, 'org.fsgate.fsgate1.Error.InvalidName', ('why', 'a/b'), None),
            (3, 'org.fsgate.fsgate1.Error.NoSuchFilesystem', ('why', 'nosuchfs'), None),
        ]
        for rc, name, args, uid in cases:
            plain = st.ctl(*args, uid=uid)
            r = st.ctl('--json', *args, uid=uid)
            self.assertEqual((plain.rc, r.rc), (rc, rc), r)
            self.assertEqual(r.out, '', r)
            lines = r.err.strip().splitlines()
            self.assertEqual(len(lines), 1, r)
            err = json.loads(lines[0])
            self.assertEqual(err, {'error': name, 'message': plain.err.strip()}, r)
        st.stop_daemon()
        try:
            r = st.ctl('--json', 'list')
            self.assertEqual(r.rc, 8, r)
            self.assertEqual(json.loads(r.err)['error'], 'org.freedesktop.DBus.Error.ServiceUnknown')
        finally:
            st.start_daemon(self.root, self.kver)


class CliOfflineTest(BusTestCase):
    """fsgatectl --root=DIR: changes only DIR, needs no bus (the service's root is watched too)."""

    def setUp(self):
        super().setUp()
        self.image = tempfile.mkdtemp(prefix='image-', dir=self.workdir)
        make_scratch_root(self.image)
        reset_root(self.image)
        write(self.image, 'usr/lib/modprobe.d/' + conf_name('hfs'), fb.SUSE_VENDOR_FILE.format(m='hfs'))
        # No bus at all for the offline CLI.
        self.env = dict(self.stack.env, DBUS_SYSTEM_BUS_ADDRESS='unix:path=' + os.path.join(self.workdir, 'nobus'))

    def offline(self, *args):
        p = subprocess.run([CONFIG.fsgatectl, '--root=' + self.image] + list(args), env=self.env,
                           capture_output=True, text=True, stdin=subprocess.DEVNULL)
        return p

    def test_offline_changes_only_that_root(self):
        daemon_root = snapshot(self.root)
        img = snapshot(self.image)
        p = self.offline('--json', 'deny', 'minix')
        self.assertEqual(p.returncode, 0, p)
        self.assertEqual(json.loads(p.stdout)['state'], 'denied')
        p = self.offline('--json', 'allow', 'hfs')
        self.assertEqual(p.returncode, 0, p)
        self.assertEqual(json.loads(p.stdout)['origin'], 'admin')
        p = self.offline('--runtime', 'deny', 'vxfs')
        self.assertEqual(p.returncode, 0, p)
        after = snapshot(self.image)
        changed = {k for k in set(img) | set(after) if img.get(k) != after.get(k)}
        self.assertEqual(changed, {'etc/modprobe.d/' + conf_name('minix'), 'etc/modprobe.d/' + conf_name('hfs'),
                                   'run/modprobe.d/' + conf_name('freevxfs')})
        self.assertEqual(after['etc/modprobe.d/' + conf_name('hfs')], ('link', '/dev/null'))
        self.assertTrue(after['etc/modprobe.d/' + conf_name('minix')][2].startswith(b'# Written by fsgate'))
        self.assertEqual(snapshot(self.root), daemon_root, 'the offline CLI touched the service\'s root')
        # The service sees none of it; the offline list does.
        self.assertEqual(self.stack.get('minix').state, 'allowed')
        p = self.offline('--json', 'list')
        self.assertEqual(p.returncode, 0, p)
        by = {e['module']: e for e in json.loads(p.stdout)}
        self.assertEqual((by['minix']['state'], by['hfs']['state'], by['freevxfs']['origin']),
                         ('denied', 'allowed', 'runtime'))
        # Reset, and the image is as it was.
        for args in (('reset', 'minix'), ('reset', 'hfs'), ('--runtime', 'reset', 'freevxfs')):
            self.assertEqual(self.offline(*args).returncode, 0)
        self.assertEqual(snapshot(self.image), img)

    def test_offline_exempt_loaded_is_not_mounted(self):
        """What the vendor list's postinst runs (fsgatectl --root=/ exempt-loaded) after a
        user's `unshare -Urm mount -t hfs ...` loaded hfs: nothing is exempted, and stderr
        (the package manager's log) names it and the way out. Mounted, it is exempted."""
        write(self.image, 'proc/modules', proc_modules_line('hfs'))
        img = snapshot(self.image)
        p = self.offline('exempt-loaded')
        self.assertEqual((p.returncode, p.stdout),
                         (0, 'Nothing to exempt: no filesystem a vendor file denies is mounted now.\n'), p)
        # On an image the way out names the image (on the system, --root=/, it is plain
        # `fsgatectl allow hfs`: tests/system/scenarios/install.sh).
        self.assertEqual(p.stderr, 'hfs is loaded but nothing is mounted with it: not exempted; '
                                   f'if this system needs it, fsgatectl --root={self.image} allow hfs\n')
        self.assertEqual(snapshot(self.image), img)
        # The way out, run as written, allows hfs on that image; then back as it was.
        r = self.stack.run_hint(p.stderr.rsplit('needs it, ', 1)[1].strip())
        self.assertEqual(r.rc, 0, r)
        self.assertEqual(os.readlink(os.path.join(self.image, 'etc/modprobe.d', conf_name('hfs'))), '/dev/null')
        self.assertEqual(self.offline('reset', 'hfs').returncode, 0)
        self.assertEqual(snapshot(self.image), img)
        p = self.offline('--json', 'exempt-loaded')
        self.assertEqual((p.returncode, json.loads(p.stdout)), (0, []), p)
        self.assertEqual(snapshot(self.image), img)

        write(self.image, 'proc/mounts', '/dev/vda / ext4 rw,relatime 0 0\n/dev/sdb1 /mnt hfs ro 0 0\n')
        p = self.offline('exempt-loaded')
        self.assertEqual((p.returncode, p.stdout, p.stderr),
                         (0, 'Exempted hfs: it is in use, so it stays allowed.\n', ''), p)
        self.assertEqual(snapshot(self.image)['etc/modprobe.d/' + conf_name('hfs')], ('link', '/dev/null'))

    def test_offline_hard_deny(self):
        p = self.offline('--json', 'deny', '--hard', 'minix')
        self.assertEqual(p.returncode, 0, p)
        e = json.loads(p.stdout)
        self.assertEqual((e['state'], e['hard'], e['install_file']),
                         ('denied', True, '/etc/modprobe.d/' + conf_name('minix')))
        with open(os.path.join(self.image, 'etc/modprobe.d', conf_name('minix'))) as f:
            self.assertIn('install minix /bin/false', f.read().splitlines())
        # A foreign hard deny, and openSUSE's vendor line that loads: status says which is hard.
        write(self.image, 'etc/modprobe.d/cis.conf', 'install udf /bin/true\n')
        p = self.offline('status', 'udf')
        self.assertEqual(p.returncode, 0, p)
        self.assertIn('Decided by: admin /etc/modprobe.d/cis.conf', p.stdout)
        self.assertRegex(p.stdout, r'(?m)^ +Hard deny: yes')
        p = self.offline('--json', 'status', 'hfs')
        e = json.loads(p.stdout)
        self.assertEqual((e['state'], e['hard'], e['explicit_load_possible']), ('denied', False, True))
        p = self.offline('--json', 'allow', 'udf')
        self.assertEqual(p.returncode, 5, p)
        self.assertIn('/etc/modprobe.d/cis.conf', json.loads(p.stderr)['message'])

    def test_why(self):
        """fsgatectl why TYPE: what decides, whether blocks are reported, and the way out."""
        # openSUSE's plain vendor file: denied, but a blocked mount is not reported.
        p = self.offline('--json', 'why', 'hfs')
        self.assertEqual(p.returncode, 0, p)
        vendor = '/usr/lib/modprobe.d/' + conf_name('hfs')
        why = json.loads(p.stdout)
        self.assertEqual({k: why[k] for k in ('device', 'type', 'module', 'state', 'origin', 'deciding_file', 'loaded',
                                              'blocks_reported', 'hard', 'explicit_load_possible', 'install_command',
                                              'install_file')},
                         {'device': '', 'type': 'hfs', 'module': 'hfs', 'state': 'denied', 'origin': 'vendor',
                          'deciding_file': vendor, 'loaded': False, 'blocks_reported': False, 'hard': False,
                          'explicit_load_possible': True,
                          'install_command': '/usr/lib/module-init-tools/unblacklist hfs; '
                                             '/sbin/modprobe --ignore-install hfs',
                          'install_file': vendor})
        # fsgate's deny routes the type to the hook: reported.
        self.assertEqual(self.offline('deny', 'vxfs').returncode, 0)
        p = self.offline('why', 'vxfs')
        self.assertEqual(p.returncode, 0, p)
        self.assertIn('freevxfs may NOT be loaded automatically', p.stdout)
        self.assertIn('Blocked attempts are reported', p.stdout)
        # Offline, the hint carries --root: as printed it works (and no load, which needs the
        # running system).
        self.assertIn(f'fsgatectl --root={self.image} allow freevxfs', p.stdout)
        self.assertNotIn('fsgatectl load', p.stdout)
        # A foreign file decides: the advice is to edit it, not a command that would fail.
        write(self.image, 'etc/modprobe.d/50-cis.conf', 'blacklist jfs\n')
        p = self.offline('why', 'jfs')
        self.assertIn('edit /etc/modprobe.d/50-cis.conf by hand', p.stdout)
        self.assertNotIn('fsgatectl allow jfs', p.stdout)
        p = self.offline('why', 'xfs')
        self.assertIn('mounting xfs filesystems works', p.stdout)
        self.assertEqual(self.offline('why', 'nosuchfs').returncode, 3)
        self.assertEqual(self.offline('why', 'a/b').returncode, 2)

    def test_why_hard_deny(self):
        """why --root=DIR, hard deny: no load/modprobe advice."""
        def ctl(*args):
            p = self.offline(*args)
            return p.returncode, p.stdout

        def deny(m):
            self.assertEqual(self.offline('deny', '--hard', m).returncode, 0)

        assert_why_hard(self, ctl, deny, self.image, offline=True)

    def test_json_escapes_file_names(self):
        """Regression: `fsgatectl --root=DIR why --json` printed the deciding file's name as
        it is, so a quote or a backslash in it made invalid JSON; and an argument that is not
        UTF-8 went into the error object as raw bytes."""
        write(self.image, AWKWARD_CONF, 'blacklist jfs\n')

        def ctl(*args):
            p = self.offline(*args)
            return p.returncode, p.stdout

        assert_json_names_awkward_file(self, ctl)
        # The error names the device it was given: a byte that is not UTF-8 becomes U+FFFD,
        # a quote and a control character are escaped, and the line still parses.
        p = subprocess.run([CONFIG.fsgatectl, '--root=' + self.image, '--json', 'why', b'/dev/x\xff"\x01'],
                           env=self.env, capture_output=True, stdin=subprocess.DEVNULL)
        # (No such device: said as such, a usage error, not "no filesystem found".)
        self.assertEqual(p.returncode, 2, p)
        self.assertEqual(p.stdout, b'', p)
        err = json.loads(p.stderr)
        self.assertEqual(err['error'], 'org.freedesktop.DBus.Error.InvalidArgs', p)
        self.assertTrue(err['message'].startswith('/dev/x\ufffd"\x01: No such file or directory'), p)

    def test_text_escapes_control_characters(self):
        """Regression: the text output printed names and lines from an image as
        they are, so a file named with ESC[2K and a CR, holding an install line with them,
        rewrote lines of `status`, `list`, `why`, `audit` and error messages on screen. Now
        no ESC, CR or C1 control reaches stdout or stderr: each is escaped (\\x1b, \\r) as
        systemd's tools do; --json keeps its own escaping and gives back the exact bytes."""
        name = '50-\x1b[2Kok\r.conf'
        line = '/bin/true \x1b[2K\rall is well\x1b]0;title\x07 \u009b2J'
        write(self.image, 'etc/modprobe.d/' + name, f'install udf {line}\nblacklist udf\n')
        shown = '/etc/modprobe.d/50-\\x1b[2Kok\\r.conf'
        shown_line = '/bin/true \\x1b[2K\\rall is well\\x1b]0;title\\a \\u009b2J'
        runs = {}
        for args in (('status', 'udf'), ('list',), ('why', 'udf'), ('audit', 'cis'), ('allow', 'udf'),
                     ('--json', 'status', 'udf'), ('--json', 'why', 'udf'), ('--json', 'allow', 'udf')):
            p = subprocess.run([CONFIG.fsgatectl, '--root=' + self.image] + list(args), env=self.env,
                               capture_output=True, stdin=subprocess.DEVNULL)
            for out in (p.stdout, p.stderr):
                for raw in (b'\x1b', b'\r', b'\x07', '\u009b'.encode()):
                    self.assertNotIn(raw, out, (args, p))
            runs[args] = (p.returncode, p.stdout.decode(), p.stderr.decode())
        rc, out, _ = runs[('status', 'udf')]
        self.assertEqual(rc, 0, out)
        self.assertIn(f'{shown_line}   ({shown})', out)
        self.assertIn(f'{shown}: install udf {shown_line}', out)
        rc, out, _ = runs[('list',)]
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, r'(?m)^udf\s+udf\s+denied\s+admin\s+no\s+no\s+' + re.escape(shown) + '$')
        rc, out, _ = runs[('why', 'udf')]
        self.assertEqual(rc, 0, out)
        self.assertIn(f'Decided by: {shown} (admin)', out)
        self.assertIn(f'  {shown_line}\n  (from {shown})', out)
        rc, out, _ = runs[('audit', 'cis')]
        self.assertIn(rc, (0, 9), out)
        self.assertIn(f'denied by {shown}; explicit loads run `{shown_line}`', out)
        rc, _, err = runs[('allow', 'udf')]
        self.assertEqual(rc, 5, err)
        self.assertIn(shown, err)
        rc, out, _ = runs[('--json', 'status', 'udf')]
        self.assertEqual((rc, json.loads(out)['install_command']), (0, line))
        self.assertEqual(json.loads(runs[('--json', 'why', 'udf')][1])['deciding_file'], '/etc/modprobe.d/' + name)
        self.assertIn('/etc/modprobe.d/' + name, json.loads(runs[('--json', 'allow', 'udf')][2])['message'])

    def test_german(self):
        """LANGUAGE=de with the build's catalogs: headers, labels, explanations and error
        messages are German and the columns still line up; --json (error objects too), the
        rows of list (maintainer scripts read them) and the exit statuses are the same as in
        English."""
        en = {k: v for k, v in self.env.items() if k not in ('LANGUAGE', 'LANG') and not k.startswith('LC_')}
        en['LC_ALL'] = 'C'
        de = dict(en, LANGUAGE='de', LC_ALL='C.UTF-8', FSGATE_LOCALEDIR=os.path.join(CONFIG.build_root, 'po'))

        def run(env, *args):
            p = subprocess.run([CONFIG.fsgatectl, '--root=' + self.image] + list(args), env=env,
                               capture_output=True, stdin=subprocess.DEVNULL)
            return p.returncode, p.stdout.decode(), p.stderr.decode()

        rc, out, _ = run(de, 'list')
        self.assertEqual(rc, 0, out)
        head = out.splitlines()[0]
        self.assertEqual(head.split(), ['MODUL', 'TYPEN', 'ZUSTAND', 'HERKUNFT', 'GELADEN', 'EINGEHÄNGT', 'QUELLE'])
        row = re.search(r'(?m)^hfs .*$', out).group(0)
        self.assertEqual(row.split()[2:6], ['denied', 'vendor', 'no', 'no'])
        for col, word in (('ZUSTAND', 'denied'), ('HERKUNFT', 'vendor'), ('QUELLE', '/usr/lib/modprobe.d/')):
            self.assertEqual(row.index(word), head.index(col), f'{col} not over {word}:\n{head}\n{row}')
        self.assertIn('Dateisystemmodule aufgeführt.', out)
        rc, out, _ = run(de, 'status', 'hfs')
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, r'(?m)^ +Entschieden durch: vendor /usr/lib/modprobe.d/' + conf_name('hfs') + '$')
        labels = [line for line in out.splitlines() if re.match(r' +[^ /][^:]*: ', line)]    # not Files' other lines
        self.assertEqual({line.index(': ') for line in labels}, {len('  Entschieden durch')}, out)
        rc, out, _ = run(de, 'why', 'hfs')
        self.assertEqual(rc, 0, out)
        self.assertIn('hfs darf NICHT automatisch geladen werden', out)
        self.assertIn(f'  fsgatectl --root={self.image} allow hfs     ab jetzt erlauben', out)
        rc, _, err = run(de, 'why', 'nosuchfs')
        self.assertEqual(rc, 3, err)
        self.assertIn('Dieser Kernel hat kein Modul für den Dateisystemtyp nosuchfs', err)
        for args in (('list',), ('status', 'hfs'), ('why', 'hfs'), ('why', 'nosuchfs'), ('audit', 'opensuse'),
                     ('frobnicate',), ('deny',), ('load', 'hfs')):
            english = run(en, '--json', *args)
            self.assertEqual(run(de, '--json', *args), english, args)
            self.assertTrue(english[1] or english[2], args)

    def test_offline_exit_codes(self):
        write(self.image, 'etc/modprobe.d/50-cis.conf', 'blacklist jfs\n')
        img = snapshot(self.image)
        self.assertEqual(self.offline('deny', 'a/b').returncode, 2)
        self.assertEqual(self.offline('status', 'nosuchfs').returncode, 3)
        self.assertEqual(self.offline('allow', 'jfs').returncode, 5)
        self.assertEqual(self.offline('deny', 'ext4').returncode, 5)        # mounted in the image
        self.assertEqual(self.offline('load', 'hfs').returncode, 2)         # needs the running system
        self.assertEqual(self.offline('--load', 'allow', 'hfs').returncode, 2)
        # Several names offline: the dry runs stop it before minix is written.
        self.assertEqual(self.offline('deny', 'minix', 'ext4').returncode, 5)
        self.assertEqual(snapshot(self.image), img)
        # 6: the image's /etc/modprobe.d is read-only (a bind mount in a private namespace).
        etc = os.path.join(self.image, 'etc/modprobe.d')
        p = subprocess.run(['unshare', '--mount', '--propagation', 'private', '--', 'sh', '-c',
                            'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"',
                            'sh', etc, CONFIG.fsgatectl, '--root=' + self.image, 'deny', 'minix'],
                           env=self.env, capture_output=True, text=True)
        self.assertEqual(p.returncode, 6, p)
        self.assertEqual(snapshot(self.image), img)
        # exempt-loaded with something to exempt (hfs mounted, vendor-denied): 6 too, not 0.
        write(self.image, 'proc/modules', proc_modules_line('hfs'))
        write(self.image, 'proc/mounts', '/dev/vda / ext4 rw,relatime 0 0\n/dev/sdb1 /mnt hfs ro 0 0\n')
        img = snapshot(self.image)
        p = subprocess.run(['unshare', '--mount', '--propagation', 'private', '--', 'sh', '-c',
                            'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"',
                            'sh', etc, CONFIG.fsgatectl, '--root=' + self.image, '--json', 'exempt-loaded'],
                           env=self.env, capture_output=True, text=True)
        self.assertEqual(p.returncode, 6, p)
        self.assertEqual(p.stdout, '', p)
        self.assertEqual(json.loads(p.stderr)['error'], 'org.fsgate.fsgate1.Error.ReadOnly', p)
        self.assertEqual(snapshot(self.image), img)

    def test_offline_and_service_on_one_root_serialize(self):
        """The CLI offline and the service write the same directory at once: every file stays
        valid and the service's answers agree with the files."""
        st = self.stack
        self.vendor('hfs')
        modules = ['hfs', 'minix']
        problems = []

        def worker(i):
            r = random.Random(i)
            for _ in range(12):
                verb = r.choice(['allow', 'deny', 'reset'])
                m = r.choice(modules)
                if i % 2:
                    p = subprocess.run([CONFIG.fsgatectl, '--root=' + self.root, '--force', verb, m]
                                       if verb == 'deny' else [CONFIG.fsgatectl, '--root=' + self.root, verb, m],
                                       env=self.env, capture_output=True, text=True)
                    rc, err = p.returncode, p.stderr
                else:
                    res = st.send(verb.capitalize(), m, 4 if verb == 'deny' else 0)
                    rc, err = (0 if res.ok else 1), res.message
                if rc != 0:
                    problems.append((i, verb, m, rc, err))

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        self.assertEqual(problems, [])
        self.assertNoTempFiles()
        for m in modules:
            p = os.path.join(self.root, 'etc/modprobe.d', conf_name(m))
            if os.path.islink(p):
                want = ('allowed', 'admin')
                self.assertMask(p)
            elif os.path.exists(p):
                want = ('denied', 'admin')
                self.assertDenyFile(p, m)
            else:
                want = ('denied', 'vendor') if m == 'hfs' else ('allowed', 'default')
            e = st.get(m)
            self.assertEqual((e.state, e.origin), want)
        self.assertEqual(sorted(n for n in os.listdir(os.path.join(self.root, 'etc/modprobe.d'))
                                if n not in (conf_name('hfs'), conf_name('minix'))), [])


if __name__ == '__main__':
    fb.main()

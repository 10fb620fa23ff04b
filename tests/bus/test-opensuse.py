#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""fsgate beside openSUSE's own tools: suse-module-tools' vendor files made as its spec makes
them (instead of fsgate's vendor package), and its real `unblacklist` helper answered on a
terminal — what root meets after `modprobe hfs` — over the scratch root (a private mount
namespace puts the root's modprobe.d directories where the helper looks). Root callers.
Not run here: zypper, an openSUSE kernel, and the module load that follows the prompt (the
host loads no module; the VM suite's interop scenario does the kernel's part)."""

import os
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True      # keep the source tree clean
import fsgatetest as fb  # noqa: E402
from fsgatetest import CONFIG, HARD, BlockedMonitor, BusTestCase, conf_name, proc_modules_line, snapshot, write  # noqa: E402
from fsgatetest import suse  # noqa: E402
from fsgatetest.hookrun import HookRun  # noqa: E402

MARKER = '# __THIS FILE MAY BE MODIFIED__'


@unittest.skipUnless(suse.available(), f'no suse-module-tools sources at {suse.TOOLS_TARBALL}')
class OpenSuseTest(BusTestCase):
    def setUp(self):
        super().setUp()
        suse.install_layout(self.root)

    def etc_file(self, module):
        return os.path.join(self.root, 'etc/modprobe.d', conf_name(module))

    def describe(self, name):
        r = self.stack.busctl('Describe', 's', name)
        self.assertTrue(r.ok, r)
        return {k: v['data'] for k, v in r.data[0].items()}

    def modprobe_dry_run(self, module):
        """kmod's own `modprobe -n -v MODULE` over the root's configuration and module tree:
        the command it would run, which shows whether root would meet the prompt."""
        return suse.run_with_root_config(self.root, ['modprobe', '-n', '-v', '-d', self.root, '-S', self.kver, module])

    def test_a_stick_of_a_type_openSUSE_denies_is_reported(self):
        """The udev path judges by the state, whoever wrote the deny: a new hfs medium is
        reported (Blocked, cause "device") with only openSUSE's vendor file denying hfs; an
        ext4 one is not. (The kernel's path, `mount -t hfs` of an image, runs a hook only
        where a routing alias sends it there: not with openSUSE's files alone, see README.)"""
        mon = BlockedMonitor(self.stack)
        self.addCleanup(mon.stop)
        env = dict(self.stack.env, FSGATE_ROOT=self.root, FSGATE_KMSG=os.path.join(self.workdir, 'kmsg'))
        for dev, fstype in (('/dev/sdu1', 'hfs'), ('/dev/sdu2', 'ext4')):
            p = subprocess.run([CONFIG.hook, '--device', dev], env=dict(env, ID_FS_TYPE=fstype),
                               capture_output=True, timeout=30)
            self.assertEqual(p.returncode, 0, p)
        sig = mon.wait(1, timeout=5)
        self.assertEqual([s[:3] for s in sig], [('hfs', 'hfs', '/dev/sdu1')], sig)
        self.assertEqual((sig[0][3].get('cause'), sig[0][3].get('origin'), sig[0][3].get('source')),
                         ('device', 'vendor', '/usr/lib/modprobe.d/' + conf_name('hfs')))

    def test_the_harness_vendor_file_is_the_specs(self):
        self.assertEqual(fb.SUSE_VENDOR_FILE.format(m='hfs'), suse.vendor_file('hfs'))

    def test_fsgate_reads_the_default_list_as_openSUSE_ships_it(self):
        modules = suse.default_list()
        self.assertEqual(len(modules), 29, modules)
        entries = {e.module: e for e in self.stack.list()}
        seen = 0
        for m in modules:
            d = self.describe(m) if m in entries else None
            if d is None:
                continue    # not built for this kernel (exofs, ...): nothing to load
            seen += 1
            if entries[m].builtin:
                # Built into this kernel (pstore in Debian's): no deny can help, fsgate says so.
                self.assertEqual(entries[m].state, 'allowed', m)
                continue
            self.assertEqual((entries[m].state, entries[m].origin, entries[m].source),
                             ('denied', 'vendor', '/usr/lib/modprobe.d/' + conf_name(m)), m)
            # The vendor install line loads the module (after the prompt): not a hard deny.
            self.assertFalse(d['hard'], (m, d))
        self.assertGreater(seen, 20, 'too few of openSUSE\'s list in this kernel')
        rc, out = self.modprobe_dry_run('hfs')
        self.assertEqual(rc, 0, out)
        self.assertIn(suse.UNBLACKLIST + ' hfs', out)

    def test_yes_at_the_prompt_lifts_a_soft_deny_as_fsgate_says_it_may(self):
        # "yes" once: allowed; then an admin's fsgate deny replaces openSUSE's allow.
        rc, out = suse.unblacklist(self.root, 'hfs', 'y')
        self.assertEqual(rc, 0, out)
        self.assertState('hfs', 'allowed', 'admin', '/etc/modprobe.d/' + conf_name('hfs'))
        self.assertReplyOk(self.stack.send('Deny', 'hfs', 0))
        self.assertState('hfs', 'denied', 'admin', '/etc/modprobe.d/' + conf_name('hfs'))
        with open(self.etc_file('hfs')) as f:
            text = f.read()
        self.assertIn(MARKER + '\n', text)
        self.assertIn('unblacklist helper, answered "yes" on a terminal, may replace this file', text)
        rc, out = suse.unblacklist(self.root, 'hfs', 'y')
        self.assertEqual(rc, 0, out)
        self.assertEqual(os.readlink(self.etc_file('hfs')), '/dev/null')
        self.assertState('hfs', 'allowed', 'admin', '/etc/modprobe.d/' + conf_name('hfs'))

    def test_a_hard_deny_is_never_lifted_by_the_prompt(self):
        """Regression: the hard deny file carried openSUSE's marker, so the helper's "yes"
        replaced it with an allow."""
        self.assertReplyOk(self.stack.send('Deny', 'hfs', HARD))
        with open(self.etc_file('hfs')) as f:
            self.assertNotIn(MARKER, f.read())
        # kmod runs fsgate's install line, not the vendor file's: root meets no prompt.
        rc, out = self.modprobe_dry_run('hfs')
        self.assertIn('install /bin/false', out)
        self.assertNotIn('unblacklist', out)
        # And the helper, run by hand, refuses the file.
        before = snapshot(self.root)
        rc, out = suse.unblacklist(self.root, 'hfs', 'y')
        self.assertEqual(rc, 1, out)
        self.assertIn('cannot modify it', out)
        self.assertEqual(snapshot(self.root), before)
        self.assertTrue(self.describe('hfs')['hard'])

    def test_no_at_the_prompt_leaves_the_deny(self):
        rc, out = suse.unblacklist(self.root, 'hfs', 'n')
        self.assertEqual(rc, 0, out)
        self.assertFalse(os.path.lexists(self.etc_file('hfs')))
        # The install line's `modprobe --ignore-install hfs` then loads the module for this
        # boot (the kernel's part, played by /proc/modules here): loaded, still denied.
        write(self.root, 'proc/modules', proc_modules_line('hfs'))
        e = self.stack.get('hfs')
        self.assertEqual((e.state, e.origin, e.loaded), ('denied', 'vendor', True), e)

    def test_never_at_the_prompt_then_an_allow_replaces_openSUSEs_file(self):
        rc, out = suse.unblacklist(self.root, 'hfs', 'e')
        self.assertEqual(rc, 0, out)
        with open(self.etc_file('hfs')) as f:
            self.assertIn('unblacklist (user wants to never unblacklist this module)', f.read())
        self.assertState('hfs', 'denied', 'admin', '/etc/modprobe.d/' + conf_name('hfs'))
        hint = [ln for ln in self.stack.ctl('status', 'hfs').out.splitlines() if ln.startswith('To allow it: ')]
        self.assertEqual(len(hint), 1, hint)
        # "fsgatectl allow hfs (once, this boot only: fsgatectl load hfs)": the first command
        # (the second loads a module, which the host never does).
        r = self.stack.run_hint(hint[0][len('To allow it: '):].split(' (once, ')[0])
        self.assertEqual(r.rc, 0, r)
        self.assertEqual(os.readlink(self.etc_file('hfs')), '/dev/null')
        # A later prompt finds the allow and asks nothing.
        rc, out = suse.unblacklist(self.root, 'hfs', 'e')
        self.assertEqual((rc, os.readlink(self.etc_file('hfs'))), (0, '/dev/null'), out)
        self.assertNotIn('Do you want', out)


@unittest.skipUnless(suse.available(), f'no suse-module-tools sources at {suse.TOOLS_TARBALL}')
class RoutesTest(BusTestCase):
    """Finding 3 of issue 28: with openSUSE's files alone, the kernel's fs-hfs request met a
    plain blacklist and the mount failed without a word. fsgate's routes file sends such a
    request to its hook; kmod's own dry run shows it, and the hook reports the block (kernel
    log line, Blocked) while it still loads nothing a deny refuses."""

    ROUTES = fb.ROUTES

    def setUp(self):
        super().setUp()
        suse.install_layout(self.root)
        # Per test: the class shares its workdir, and each route request counts against its
        # type's burst (service/hook/hook-ratelimit.h); the class's tests route hfs several times.
        self.run = HookRun(self.workdir)
        self.kmsg, self.modprobe_log = self.run.kmsg, self.run.modprobe_log

    def hook(self, *args):
        p = subprocess.run([CONFIG.hook, *args], env=self.run.env(self.stack.env, self.root), capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p)
        return p.stdout

    def routes(self):
        try:
            with open(os.path.join(self.root, self.ROUTES)) as f:
                return f.read()
        except FileNotFoundError:
            return None

    def read_log(self, path):
        try:
            with open(path) as f:
                return f.read()
        except FileNotFoundError:
            return ''

    def dry_run(self, name):
        rc, out = suse.run_with_root_config(self.root, ['modprobe', '-n', '-v', '-d', self.root, '-S', self.kver, name])
        return out

    def reported(self, name):
        r = self.stack.busctl('Describe', 's', name)
        self.assertTrue(r.ok, r)
        return r.data[0]['blocks_reported']['data']

    def test_a_silent_block_is_routed_reported_and_still_loads_nothing(self):
        self.assertFalse(self.reported('hfs'))
        before = self.dry_run('fs-hfs')
        self.assertNotIn('fsgate-blocked', before)
        self.assertIn('/run/modprobe.d/fsgate-routes.conf rebuilt', self.hook('--refresh-routes'))
        text = self.routes()
        self.assertIn('alias fs-hfs fsgate_routed_hfs\n', text)
        self.assertIn(' --route hfs hfs\n', text)
        # Only denied, loadable modules: not ext4 (allowed), not pstore (built in).
        self.assertNotIn('fs-ext4 ', text)
        self.assertNotIn('fs-pstore ', text)
        # The state is the vendor file's, as before; the block is now reported.
        self.assertState('hfs', 'denied', 'vendor', '/usr/lib/modprobe.d/' + conf_name('hfs'))
        self.assertTrue(self.reported('hfs'))
        # kmod itself agrees: the request runs the hook, "modprobe hfs" by name still the prompt.
        self.assertIn('--route hfs hfs', self.dry_run('fs-hfs'))
        self.assertIn(suse.UNBLACKLIST + ' hfs', self.dry_run('hfs'))
        # Refreshing again changes nothing (and so does not wake the path unit again).
        self.assertIn('unchanged', self.hook('--refresh-routes'))

        mon = BlockedMonitor(self.stack)
        self.addCleanup(mon.stop)
        self.hook('--route', 'hfs', 'hfs')
        self.assertIn('blocked autoload of filesystem hfs (module hfs, denied by /usr/lib/modprobe.d/'
                      + conf_name('hfs') + ')', self.read_log(self.kmsg))
        sig = mon.wait(1, timeout=10)
        self.assertEqual([s[:2] for s in sig], [('hfs', 'hfs')], sig)
        self.assertEqual(self.read_log(self.modprobe_log), '')
        # The line's "see: ..." run as written: why, whose last way out (the permanent allow),
        # run as written too, masks openSUSE's deny: hfs allowed.
        hint = self.read_log(self.kmsg).rstrip('\n').split('; see: ')[1]
        self.assertEqual(hint, 'fsgatectl why hfs')
        r = self.stack.run_hint(hint)
        self.assertEqual(r.rc, 0, r)
        last = r.out.split('What you can do:\n', 1)[1].strip().splitlines()[-1].strip()
        self.assertEqual(last.split('     ')[0], 'fsgatectl allow hfs', r.out)
        r = self.stack.run_hint(last.split('     ')[0])
        self.assertEqual(r.rc, 0, r)
        self.assertState('hfs', 'allowed', 'admin', '/etc/modprobe.d/' + conf_name('hfs'))
        self.assertNotIn('fs-hfs ', self.routes())     # the service's allow ended the route

    def test_a_route_older_than_an_allow_loads_the_module(self):
        """"yes" at openSUSE's prompt allows hfs; until the path unit rebuilds the routes the
        route is stale, and the hook loads hfs by name as the request would have."""
        self.hook('--refresh-routes')
        rc, out = suse.unblacklist(self.root, 'hfs', 'y')
        self.assertEqual(rc, 0, out)
        self.hook('--route', 'hfs', 'hfs')
        self.assertEqual(self.read_log(self.modprobe_log), '-q -- hfs\n')
        self.assertNotIn('hfs', self.read_log(self.kmsg))
        self.hook('--refresh-routes')
        self.assertNotIn('fs-hfs ', self.routes())
        self.assertIn('--route minix minix', self.dry_run('fs-minix'))
        self.assertNotIn('fsgate-blocked', self.dry_run('fs-hfs'))

    def test_fsgates_own_deny_and_reset_keep_one_route_per_type(self):
        """The service updates the routes with each change of its own: after its deny the type
        has exactly one alias (two would run the hook twice), after a reset the vendor file's
        deny is routed again."""
        self.hook('--refresh-routes')
        self.assertReplyOk(self.stack.send('Allow', 'hfs', 0))
        self.assertReplyOk(self.stack.send('Deny', 'hfs', 0))
        self.assertNotIn('fs-hfs ', self.routes())
        self.assertEqual(self.dry_run('fs-hfs').count('install '), 1, self.dry_run('fs-hfs'))
        self.assertTrue(self.reported('hfs'))
        self.assertReplyOk(self.stack.send('Reset', 'hfs', 0))
        self.assertIn('alias fs-hfs fsgate_routed_hfs\n', self.routes())
        self.assertState('hfs', 'denied', 'vendor', '/usr/lib/modprobe.d/' + conf_name('hfs'))
        self.assertTrue(self.reported('hfs'))

    def test_a_route_kept_after_fsgates_deny_reports_nothing_twice(self):
        """A deny written offline (no service to update the routes; --hard, as a plain deny
        of what the vendor file denies writes nothing): until the routes are rebuilt the type
        has two aliases, and the route's run of the hook says nothing."""
        self.hook('--refresh-routes')
        r = self.stack.ctl('--root', self.root, 'deny', '--hard', 'hfs')
        self.assertEqual(r.rc, 0, r)
        self.assertState('hfs', 'denied', 'admin', '/etc/modprobe.d/' + conf_name('hfs'))
        self.assertIn('alias fs-hfs fsgate_routed_hfs\n', self.routes())
        # kmod runs both aliases' lines: the deny's own hook (which reports) and the route's.
        out = self.dry_run('fs-hfs')
        self.assertIn('--route hfs hfs', out)
        self.assertIn('fsgate-blocked hfs hfs /etc/modprobe.d/' + conf_name('hfs'), out)
        self.hook('--route', 'hfs', 'hfs')
        self.assertEqual(self.read_log(self.kmsg), '')
        self.assertEqual(self.read_log(self.modprobe_log), '')

    def test_a_route_older_than_another_alias_loads_nothing(self):
        """Review finding: a hardening file adds "alias fs-hfs off" after the route was
        written; hfs is still denied (now by that alias too), and the route's run of the hook
        must not load it by name (which would pass the blacklist)."""
        self.hook('--refresh-routes')
        write(self.root, 'etc/modprobe.d/zz-harden.conf', 'alias fs-hfs off\n')
        self.assertState('hfs', 'denied', 'vendor', '/usr/lib/modprobe.d/' + conf_name('hfs'))
        self.hook('--route', 'hfs', 'hfs')
        self.assertEqual(self.read_log(self.modprobe_log), '')
        # Rebuilt, the routes leave the type to that alias: two would run both.
        self.hook('--refresh-routes')
        self.assertNotIn('fs-hfs ', self.routes())

    def test_the_files_own_hint_turns_the_routes_off(self):
        """"To keep none: ln -s /dev/null /etc/modprobe.d/fsgate-routes.conf", run as
        written (inside the root): kmod then skips the routes in /run, and fsgate knows."""
        self.hook('--refresh-routes')
        hint = [ln for ln in self.routes().splitlines() if ln.startswith('# To keep none: ')]
        self.assertEqual(hint, ['# To keep none: ln -s /dev/null /etc/modprobe.d/fsgate-routes.conf'])
        argv = hint[0][len('# To keep none: '):].split()
        argv[-1] = os.path.join(self.root, argv[-1].lstrip('/'))
        subprocess.run(argv, check=True)
        self.assertFalse(self.reported('hfs'))
        self.assertNotIn('fsgate-blocked', self.dry_run('fs-hfs'))
        # Still written (the writer does not care), never read.
        self.assertIn('unchanged', self.hook('--refresh-routes'))
        os.unlink(argv[-1])
        self.assertTrue(self.reported('hfs'))
        self.assertIn('--route hfs hfs', self.dry_run('fs-hfs'))

    def test_the_routes_file_hides_its_name_further_down_as_for_kmod(self):
        """A vendor file that happens to have the routes' name is read only while /run has
        none (kmod's precedence); fsgate's model, which skips the routes, agrees."""
        write(self.root, 'usr/lib/modprobe.d/fsgate-routes.conf', 'blacklist ext4\n')
        self.assertEqual(self.stack.get('ext4').state, 'denied')
        self.hook('--refresh-routes')
        self.assertIsNotNone(self.routes())
        self.assertEqual(self.stack.get('ext4').state, 'allowed')
        self.assertIn('ext4.ko', self.dry_run('fs-ext4'))

    def test_a_file_fsgate_did_not_write_under_the_routes_name_is_left_alone(self):
        path = os.path.join(self.root, self.ROUTES)
        write(self.root, self.ROUTES, 'alias fs-hfs hfs\n')
        env = dict(self.stack.env, FSGATE_ROOT=self.root)
        p = subprocess.run([CONFIG.hook, '--refresh-routes'], env=env, capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 1, p)
        self.assertIn('was not written by fsgate', p.stderr)
        with open(path) as f:
            self.assertEqual(f.read(), 'alias fs-hfs hfs\n')


if __name__ == '__main__':
    fb.main()

#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The risk facts over the bus and in fsgatectl: Describe and DescribeAll send them, list --risk,
status and --json show them, for every module, compared with data/risk's two files as this
test reads them itself (not through the C table the build generates from them)."""

import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True      # keep the source tree clean
from fsgatetest import CONFIG, RISK_KEYS as KEYS, BusTestCase, expected_facts, expected_phrase, unpack, write  # noqa: E402

class RiskTest(BusTestCase):

    def setUp(self):
        super().setUp()
        self.facts = expected_facts()
        self.assertGreater(len(self.facts), 40)

    def ctl(self, *args, want=0):
        r = self.stack.ctl(*args)
        self.assertEqual(r.rc, want, r)
        return r

    def test_describe_all_sends_every_fact_as_the_data_says(self):
        r = self.stack.busctl('DescribeAll')
        self.assertTrue(r.ok, r)
        described = {m: unpack(d) for m, d in r.data[0].items()}
        seen = 0
        for module, d in described.items():
            want = self.facts.get(module)
            if want is None:
                # Not in the kernel source the facts were read from (sunrpc's rpc_pipefs, ...).
                self.assertEqual([d[k] for k in KEYS], ['', '', '', False, '', '', '', ''], module)
                self.assertEqual(d['risk_summary'], '', module)
                continue
            seen += 1
            self.assertEqual({k: d[k] for k in KEYS}, want, module)
            # The summary says each notable fact, and nothing for a maintained module.
            self.assertEqual(d['risk_summary'], expected_phrase(want), module)
        self.assertGreater(seen, 40)
        hfs = unpack(self.stack.busctl('Describe', 's', 'hfs').data[0])
        self.assertEqual((hfs['risk_maintainers'], hfs['risk_maintainers_section']), ('Orphan', 'HFS FILESYSTEM'))
        self.assertTrue(hfs['risk_summary'].startswith('orphaned upstream'), hfs)
        self.assertTrue(unpack(self.stack.busctl('Describe', 's', 'fuse').data[0])['risk_userns_mount'])

    def test_list_risk_rows_follow_the_data(self):
        out = self.ctl('list', '--risk').out.splitlines()
        self.assertEqual(out[0].split(), ['MODULE', 'STATE', 'MAINTAINERS', 'USERNS', 'NOTABLE'])
        rows = {}
        for line in out[1:]:
            if not line.strip():
                break
            w = line.split(None, 4)
            rows[w[0]] = w
        listed = {e['module'] for e in json.loads(self.ctl('--json', 'list').out)}
        self.assertEqual(set(rows), listed)
        for module, w in rows.items():
            want = self.facts.get(module)
            if want is None:
                self.assertEqual(w[2:4], ['?', '?'], w)
                continue
            self.assertEqual(w[2], (want['risk_maintainers'] or '-').replace(' ', '_'), w)
            self.assertEqual(w[3], 'yes' if want['risk_userns_mount'] else 'no', w)
        self.assertIn('removed in Linux 6.13', rows['reiserfs'][4])
        self.assertEqual(rows['ext4'][4], '-')
        # The source on the line after the table (a second one says what shows ?).
        self.assertIn(self.facts['hfs']['risk_facts_source'], out[-2])
        # The facts in list --json too, the same as Describe's.
        for e in json.loads(self.ctl('--json', 'list').out):
            if e['module'] in self.facts:
                self.assertEqual({k: e[k] for k in KEYS}, self.facts[e['module']], e['module'])

    def test_modules_without_facts_say_what_was_not_read(self):
        """Issue 41 item 7: debugfs, tracefs (built in) and sunrpc (net/sunrpc) are in the
        kernel source; the facts cover its loadable modules under fs/ only. list --risk and
        status say that, naming the source, and never that the source lacks them; a built-in
        module is "built in", never "Loaded: no"."""
        source = self.facts['hfs']['risk_facts_source']
        for root in ([], [f'--root={self.root}']):
            out = self.ctl(*root, 'list', '--risk').out
            self.assertNotIn('not in the kernel source', out)
            rows = {line.split()[0]: line for line in out.split('\n\n')[0].splitlines()[1:]}
            for m in ('debugfs', 'tracefs'):
                self.assertRegex(rows[m], r'^\S+ +builtin +\? +\? +\(built in: not read; fsgate reads the loadable '
                                          r'modules under fs/ only\)$')
            self.assertRegex(rows['sunrpc'], r' \(not read: fsgate reads the loadable modules under fs/ only\)$')
            unread = sum(1 for m in rows if m not in self.facts)
            self.assertIn(f'\n{unread} modules show ?: their code is not among what fsgate read of that source '
                          f'(the loadable modules under fs/).\n', out)
            self.assertIn(f'Facts from Linux {source}.', out)
            out = self.ctl(*root, 'status', 'debugfs', 'tracefs').out
            self.assertEqual(out.count('\n           Loaded: built in\n'), 2, out)
            self.assertNotIn('Loaded: no', out)
            self.assertIn(f'\n       Facts from: none for built-in code: of Linux {source}, fsgate read the loadable '
                          f'modules under fs/ only\n', out)
            out = self.ctl(*root, 'status', 'sunrpc').out
            self.assertIn(f'\n       Facts from: none: of Linux {source}, fsgate read the loadable modules under fs/ '
                          f"only, not this one's code\n", out)
            self.assertIn('\n           Loaded: no\n', out)

    def test_status_shows_the_card_with_its_sources(self):
        out = self.ctl('status', 'hfs').out
        self.assertRegex(out, r'\n +Kernel calls it: Apple Macintosh file system support\n')
        self.assertRegex(out, r'\n +Kernel code: Orphan \(MAINTAINERS: HFS FILESYSTEM\)\n')
        self.assertIn(self.facts['hfs']['risk_upstream_source'], out)
        self.assertRegex(out, r'\n +Facts from: Linux 6\.1\.\d+ \(Debian linux-source-6\.1 ')
        self.assertRegex(self.ctl('status', 'overlay').out, r'\n +User namespaces: yes')
        self.assertRegex(self.ctl('status', 'reiserfs').out, r'\n +Deprecated: ')
        self.assertNotIn('Kernel code', self.ctl('status', 'sunrpc').out)
        # why, before an allow: the notable facts in a line, for a denied module.
        self.vendor('hfs')
        out = self.ctl('why', 'hfs').out
        self.assertIn('\nThe kernel source on it: Apple Macintosh file system support; orphaned upstream; ', out)
        self.assertIn(self.facts['hfs']['risk_facts_source'], out)
        self.assertNotIn('kernel source on it', self.ctl('why', 'ext4').out)
        # --risk is list's only: refused elsewhere, with the reason.
        r = self.ctl('status', '--risk', 'hfs', want=2)
        self.assertIn('--risk does not apply to status', r.err)

    def test_status_says_whether_udisks2_would_mount_it(self):
        """The "Desktop mount" row: the running system's (fsgatectl through the service, as on
        a desktop), from udisks2's daemon, the real blkid's list of types and the allow_active
        of udisks2's filesystem-mount in its policy file (as Debian ships it, then changed).
        The host's files are not touched: fsgatectl runs in a mount namespace of its own
        where a scratch /usr/libexec and /usr/share/polkit-1/actions are bind-mounted."""
        fake = os.path.join(self.root, 'desktop')
        libexec, actions = os.path.join(fake, 'libexec'), os.path.join(fake, 'actions')
        os.makedirs(libexec)
        os.makedirs(actions)
        self.assertTrue(os.path.isdir('/usr/share/polkit-1/actions'))

        def status(name):
            script = (f'mount --bind {libexec} /usr/libexec && mount --bind {actions} /usr/share/polkit-1/actions && '
                      f'exec {CONFIG.fsgatectl} status {name}')
            r = self.stack.run(['unshare', '-m', '--propagation', 'private', 'sh', '-c', script])
            self.assertEqual(r[0], 0, r)
            return r[1]

        self.assertNotIn('Desktop mount', status('hfs'))     # no udisks2
        write(libexec, 'udisks2/udisksd', '')
        policy = ('<policyconfig>\n <action id="org.freedesktop.udisks2.filesystem-mount-system">\n'
                  '  <defaults><allow_active>auth_admin_keep</allow_active></defaults>\n </action>\n'
                  ' <action id="org.freedesktop.udisks2.filesystem-mount">\n  <description>Mount a filesystem'
                  '</description>\n  <defaults>\n   <allow_any>auth_admin</allow_any>\n'
                  '   <allow_inactive>auth_admin</allow_inactive>\n   <allow_active>{}</allow_active>\n'
                  '  </defaults>\n </action>\n</policyconfig>\n')
        write(actions, 'org.freedesktop.UDisks2.policy', policy.format('yes'))
        known = subprocess.run(['/sbin/blkid', '-k'], capture_output=True, text=True, check=True).stdout.split()
        self.assertIn('hfs', known)
        self.assertNotIn('9p', known)
        self.assertRegex(status('hfs'),
                         r'\n +Desktop mount: yes: udisks2 mounts a hfs medium for the active local user without a '
                         r'password \(org\.freedesktop\.udisks2\.filesystem-mount: allow_active yes; ')
        self.assertRegex(status('vxfs'), r'Desktop mount: yes: udisks2 mounts a vxfs medium')
        self.assertRegex(status('9p'), r'\n +Desktop mount: no: blkid does not recognize it, so udisks2 offers no mount\n')
        write(actions, 'org.freedesktop.UDisks2.policy', policy.format(' auth_admin\n   '))      # blanks around it
        self.assertRegex(status('hfs'),
                         r'Desktop mount: only as polkit decides: udisks2 can mount a hfs medium; '
                         r'org\.freedesktop\.udisks2\.filesystem-mount is allow_active auth_admin\n')
        os.unlink(os.path.join(actions, 'org.freedesktop.UDisks2.policy'))
        self.assertRegex(status('hfs'),
                         r"Desktop mount: blkid recognizes hfs; udisks2's policy names no "
                         r'org\.freedesktop\.udisks2\.filesystem-mount action\n')
        # An image's udisks2 runs nowhere: offline, no row.
        write(self.root, 'usr/libexec/udisks2/udisksd', '')
        self.assertNotIn('Desktop mount', self.ctl(f'--root={self.root}', 'status', 'hfs').out)

if __name__ == '__main__':
    from fsgatetest import main
    main()

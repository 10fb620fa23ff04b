#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Find and filter (issue 41 item 4): `fsgatectl list [--state=] [--origin=] [PATTERN...]`
and `fsgatectl status NAME...`, through the service and offline (--root), each command run
as a person types it. Patterns are shell globs on module names first, then on types, and a
row found by a type says so: "hfs" is hfs and never ib_qib, whose type ipathfs merely
contains it (the GUIs' old substring filter showed both)."""

import json
import sys

sys.dont_write_bytecode = True      # keep the source tree clean
from fsgatetest import BusTestCase  # noqa: E402

ORIGINS = ['default', 'vendor', 'local', 'runtime', 'admin', 'cmdline']


def table_rows(out):
    """The list table's rows: module → its line."""
    lines = out.splitlines()
    assert lines[0].split()[0] == 'MODULE', out
    rows = {}
    for line in lines[1:]:
        if not line.strip():
            break
        rows[line.split()[0]] = line
    return rows


class FindTest(BusTestCase):

    def run_line(self, line, want=0):
        """line as typed ("fsgatectl list hfs"), the built fsgatectl for its first word; with
        offline, --root= of the scratch root before the verb."""
        r = self.stack.run_hint(line.replace('fsgatectl', f'fsgatectl --root={self.root}', 1) if self.offline else line)
        self.assertEqual(r.rc, want, r)
        return r

    offline = False

    def both(self, check):
        for self.offline in (False, True):
            with self.subTest(offline=self.offline):
                check()
        self.offline = False

    def test_pattern_matches_names_then_types(self):
        def check():
            rows = table_rows(self.run_line('fsgatectl list hfs').out)
            self.assertEqual(list(rows), ['hfs'])
            self.assertNotIn('matched', rows['hfs'])
            self.assertIn('\n1 filesystem module listed.\n', self.run_line('fsgatectl list hfs').out)
            rows = table_rows(self.run_line("fsgatectl list 'hfs*' ipathfs vxfs").out)
            self.assertEqual(list(rows), ['freevxfs', 'hfs', 'hfsplus', 'ib_qib'])
            self.assertTrue(rows['ib_qib'].endswith(' (matched by type ipathfs)'), rows)
            self.assertTrue(rows['freevxfs'].endswith(' (matched by type vxfs)'), rows)
            self.assertNotIn('matched', rows['hfsplus'])
            # Either spelling of a module name, as the kernel takes it.
            self.assertEqual(list(table_rows(self.run_line('fsgatectl list ib-qib').out)), ['ib_qib'])
            # Nothing matches: an empty list, not an error (as systemctl list-units).
            self.assertIn('\n0 filesystem modules listed.\n', self.run_line('fsgatectl list nosuchfs').out)
            got = json.loads(self.run_line("fsgatectl --json list 'hfs*' ipathfs").out)
            self.assertEqual({e['module']: e['matched'] for e in got},
                             {'hfs': 'module hfs', 'hfsplus': 'module hfsplus', 'ib_qib': 'type ipathfs'})
            # Without a pattern, no "matched": the list as it always was.
            self.assertTrue(all('matched' not in e for e in json.loads(self.run_line('fsgatectl --json list').out)))
            rows = table_rows(self.run_line('fsgatectl list --risk ipathfs').out)
            self.assertEqual(list(rows), ['ib_qib'])
            self.assertTrue(rows['ib_qib'].endswith(' (matched by type ipathfs)'), rows)
        self.both(check)

    def test_state_and_origin(self):
        self.vendor('hfs')
        self.vendor('minix')
        self.run_line('fsgatectl deny udf')

        def check():
            rows = table_rows(self.run_line('fsgatectl list --state=denied').out)
            self.assertEqual(list(rows), ['hfs', 'minix', 'udf'])
            self.assertEqual(list(table_rows(self.run_line('fsgatectl list --state=denied --origin=vendor').out)),
                             ['hfs', 'minix'])
            self.assertEqual(list(table_rows(self.run_line('fsgatectl list --origin=admin,vendor h* u*').out)),
                             ['hfs', 'udf'])
            # The STATE column's words: a built-in module is "builtin", neither of the others.
            builtin = table_rows(self.run_line('fsgatectl list --state=builtin').out)
            self.assertIn('debugfs', builtin)
            self.assertNotIn('debugfs', table_rows(self.run_line('fsgatectl list --state=allowed,denied').out))
            every = json.loads(self.run_line('fsgatectl --json list').out)
            got = json.loads(self.run_line('fsgatectl --json list --state=allowed --origin=default').out)
            self.assertEqual([e['module'] for e in got],
                             [e['module'] for e in every
                              if e['state'] == 'allowed' and not e['builtin'] and e['origin'] == 'default'])
            # The words, for people and the completions, as systemctl --state=help.
            self.assertEqual(self.run_line('fsgatectl --state=help').out.split(), ['allowed', 'denied', 'builtin'])
            self.assertEqual(self.run_line('fsgatectl --origin=help').out.split(), ORIGINS)
        self.both(check)

    def test_unknown_words_are_usage_errors(self):
        def check():
            r = self.run_line('fsgatectl list --state=loaded', want=2)
            self.assertIn('Invalid --state=loaded: one of allowed, denied, builtin', r.err)
            r = self.run_line('fsgatectl list --origin=vendor,etc', want=2)
            self.assertIn('Invalid --origin=etc: one of ' + ', '.join(ORIGINS), r.err)
            r = self.run_line('fsgatectl --json list --origin=nope', want=2)
            self.assertEqual(json.loads(r.err)['error'], 'org.freedesktop.DBus.Error.InvalidArgs')
            r = self.run_line('fsgatectl status --state=denied hfs', want=2)
            self.assertIn('--state/--origin does not apply to status', r.err)
        self.both(check)

    def test_status_of_several_names(self):
        self.vendor('hfs')

        def check():
            out = self.run_line('fsgatectl status hfs vxfs').out
            self.assertRegex(out, r'(?s)^ +Module: hfs\n.*\n\n +Module: freevxfs\n')
            self.assertIn('State: denied', out)
            # One that fails: said on stderr, the others still shown, and the exit status
            # that one alone gets (3, no such filesystem), as for one name.
            r = self.run_line('fsgatectl status hfs nosuchfs vxfs', want=3)
            self.assertIn('nosuchfs', r.err)
            self.assertEqual(r.out.count('Module: '), 2, r.out)
            self.run_line('fsgatectl status nosuchfs', want=3)
            # The worst of them: an invalid name (2) beside a missing one (3) is 3.
            self.run_line("fsgatectl status 'bad/name' nosuchfs", want=3)
            self.run_line("fsgatectl status 'bad/name' hfs", want=2)
            got = json.loads(self.run_line('fsgatectl --json status hfs vxfs').out)
            self.assertEqual([(e['module'], e['state']) for e in got], [('hfs', 'denied'), ('freevxfs', 'allowed')])
            # One name: one object, as before.
            self.assertEqual(json.loads(self.run_line('fsgatectl --json status vxfs').out)['module'], 'freevxfs')
            r = self.run_line('fsgatectl --json status hfs nosuchfs', want=3)
            self.assertEqual([e['module'] for e in json.loads(r.out)], ['hfs'])
        self.both(check)


if __name__ == '__main__':
    from fsgatetest import main
    main()

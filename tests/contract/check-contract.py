#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The public contract is spelled in a few places that must agree; this names the place a
change forgot (HACKING.md's checklist):
- every method, signal and property of dbus/org.fsgate.fsgate1.Manager.xml is documented in
  man/org.fsgate.fsgate1.5.scd (the XML itself is checked against the live vtable by
  tests/bus/test-methods.py);
- every org.fsgate.fsgate1.Error.* name of core/fsg-error.c is in the man page and in the
  README's error table;
- every polkit action id of core/fsgate-api.h is defined in polkit/org.fsgate.fsgate1.policy
  and named in the man page, and the policy defines no other;
- every fsgatectl verb (fsgatectl --list-verbs) is in man/fsgatectl.1.scd, and in its SYNOPSIS;
- every field of a module (core/entry-fields.c: Describe's keys, which --json uses too) is
  in both man pages;
- every key of the Blocked signal's details (core/block-fields.c) is in the man page, and
  every key the Cockpit page reads of them (detailValue(..., "KEY") in cockpit/fsgate.js) is
  one of them.
Usage: check-contract.py SOURCE_ROOT FSGATECTL
"""

import re
import subprocess
import sys
import xml.etree.ElementTree as ET

src, fsgatectl = sys.argv[1], sys.argv[2]


def read(rel):
    with open(f'{src}/{rel}') as f:
        return f.read()


problems = []
man = read('man/org.fsgate.fsgate1.5.scd')
readme = read('README.md')

iface = ET.fromstring(read('dbus/org.fsgate.fsgate1.Manager.xml')).find('interface')
for kind in ('method', 'signal', 'property'):
    for el in iface.findall(kind):
        if not re.search(r'\*' + el.get('name') + r'[*(]', man):
            problems.append(f'{kind} {el.get("name")}: not documented in man/org.fsgate.fsgate1.5.scd')

errors = sorted(set(re.findall(r'"org\.fsgate\.fsgate1\.Error\.(\w+)"', read('core/fsg-error.c'))))
if not errors:
    problems.append('no error names found in core/fsg-error.c')
for name in errors:
    if not re.search(r'\*' + name + r'\*', man):
        problems.append(f'error {name}: not in man/org.fsgate.fsgate1.5.scd')
    if f'`org.fsgate.fsgate1.Error.{name}`' not in readme:
        problems.append(f'error {name}: not in the README\'s error table')

actions = set(re.findall(r'#define FSGATE_ACTION_\w+\s+"([\w.-]+)"', read('core/fsgate-api.h')))
policy = set(a.get('id') for a in ET.fromstring(read('polkit/org.fsgate.fsgate1.policy')).findall('action'))
if not actions:
    problems.append('no action ids found in core/fsgate-api.h')
for a in sorted(actions - policy):
    problems.append(f'polkit action {a}: not defined in polkit/org.fsgate.fsgate1.policy')
for a in sorted(policy - actions):
    problems.append(f'polkit action {a}: defined in the policy but not in core/fsgate-api.h')
for a in sorted(actions):
    if a not in man:
        problems.append(f'polkit action {a}: not named in man/org.fsgate.fsgate1.5.scd')

ctl_man = read('man/fsgatectl.1.scd')
out = subprocess.run([fsgatectl, '--list-verbs'], capture_output=True, text=True, check=True).stdout
verbs = [line.split()[0] for line in out.splitlines() if line.strip()]
if not verbs:
    problems.append('fsgatectl --list-verbs printed nothing')
# The SYNOPSIS is what a person reads first: every verb there, not only further down.
m = re.search(r'^# SYNOPSIS\n(.*?)^# ', ctl_man, re.M | re.S)
synopsis = m.group(1) if m else ''
if not synopsis:
    problems.append('man/fsgatectl.1.scd: no SYNOPSIS section')
for v in verbs:
    if not re.search(r'\*' + re.escape(v) + r'\*', ctl_man):
        problems.append(f'fsgatectl verb {v}: not in man/fsgatectl.1.scd')
    elif not re.search(r'\*' + re.escape(v) + r'\*', synopsis):
        problems.append(f'fsgatectl verb {v}: not in the SYNOPSIS of man/fsgatectl.1.scd')

# A row: STORED("key", ...), COMPUTED_STRING("key", ...), HARD_DEP("key", ...) or { .key = "key", ... }.
fields = re.findall(r'^\s*(?:[A-Z_]+\(|\{ \.key = )"(\w+)"', read('core/entry-fields.c'), re.M)
if not fields:
    problems.append('no fields found in core/entry-fields.c')
for key in fields:
    spelled = r'\*' + key.replace('_', r'\\_') + r'\*'
    for rel, text in (('man/org.fsgate.fsgate1.5.scd', man), ('man/fsgatectl.1.scd', ctl_man)):
        if not re.search(spelled, text):
            problems.append(f'field {key}: not in {rel}')

# A row: ROW("key", "JOURNAL_FIELD", 't', member), or ROW(NULL, ...) for the journal's only.
block_rows = re.findall(r'^\s*ROW\((NULL|"\w+"),\s*(NULL|"\w+"),', read('core/block-fields.c'), re.M)
block_keys = [k.strip('"') for k, _j in block_rows if k != 'NULL']
if not block_keys:
    problems.append('no details keys found in core/block-fields.c')
for key in block_keys:
    if not re.search(r'\*' + key + r'\*', man):
        problems.append(f'Blocked detail {key}: not in man/org.fsgate.fsgate1.5.scd')
page_keys = set(re.findall(r'detailValue\([^,()]+,\s*"(\w+)"\)', read('cockpit/fsgate.js')))
if not page_keys:
    problems.append('cockpit/fsgate.js: no detailValue(..., "KEY") found')
for key in sorted(page_keys - set(block_keys)):
    problems.append(f'cockpit/fsgate.js reads Blocked detail {key}, which core/block-fields.c does not send')

for p in problems:
    print('FAIL:', p)
print(f'{len(errors)} errors, {len(actions)} actions, {len(verbs)} verbs, {len(fields)} fields, {len(block_keys)} details, '
      f'{sum(len(iface.findall(k)) for k in ("method", "signal", "property"))} members checked; '
      f'{len(problems)} problems')
sys.exit(1 if problems else 0)

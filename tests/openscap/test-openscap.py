#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""OpenSCAP as the outside judge of `fsgatectl audit cis`.

For each CIS filesystem module, SCAP Security Guide's OVAL definition
oval:ssg-kernel_module_M_disabled:def:1 (ssg-debderived, Ubuntu 22.04 content; Debian's
package ships no Debian 12 content) is evaluated by `oscap oval eval` over a scratch root
(OSCAP_PROBE_ROOT: the textfilecontent54 probe reads below it; checked here with a root
that must give false while another gives true), after each step a person would take:
soft deny, hard deny, reset, `apply cis`. `fsgatectl --root audit cis --json` must agree
case by case, except where kmod and OpenSCAP's text match differ: those cases are set up
on purpose, must disagree exactly as README.md's table says, and fsgate's answer is checked
against the file semantics kmod has (tests/diff checks fsgate's state against modprobe).

Runs as root (fsgatectl takes the writers' lock in /run/fsgate); 77 without oscap or the
SSG content. Usage: test-openscap.py --fsgatectl PATH --build-root DIR
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
from fsgatetest import conf_name, make_scratch_root, reset_root, symlink, write  # noqa: E402
from fsgatetest.util import CONFIG  # noqa: E402

CIS = ['cramfs', 'freevxfs', 'hfs', 'hfsplus', 'jffs2', 'udf']
OVAL = '/usr/share/xml/scap/ssg/content/ssg-ubuntu2204-oval.xml'

failures = []


def oscap(root, module):
    env = dict(os.environ, OSCAP_PROBE_ROOT=root)
    p = subprocess.run(['oscap', 'oval', 'eval', '--id', f'oval:ssg-kernel_module_{module}_disabled:def:1', OVAL],
                       capture_output=True, text=True, env=env, timeout=120)
    for line in p.stdout.splitlines():
        if line.startswith('Definition ') and module in line:
            return line.rsplit(':', 1)[1].strip() == 'true'
    raise RuntimeError(f'oscap printed no result for {module} ({p.returncode}):\n{p.stdout}\n{p.stderr}')


def ctl(root, *args, ok=(0,)):
    p = subprocess.run([CONFIG.fsgatectl, '--root=' + root] + list(args), capture_output=True, text=True,
                       timeout=120, env=dict(os.environ, FSGATE_PROFILE_DIR=CONFIG.profiles))
    if p.returncode not in ok:
        raise RuntimeError(f'fsgatectl {" ".join(args)}: {p.returncode}\n{p.stdout}\n{p.stderr}')
    return p.stdout


def audit(root):
    doc = json.loads(ctl(root, '--json', 'audit', 'cis', ok=(0, 9)))
    return {m['module']: m for m in doc['modules']}


rows = []


def judge(root, step, expect_fsgate, expect_oscap=None, modules=CIS):
    """Both judges on every module; expect_oscap defaults to agreeing with fsgate."""
    a = audit(root)
    for m in modules:
        want_f = expect_fsgate(m) if callable(expect_fsgate) else expect_fsgate
        want_o = want_f if expect_oscap is None else (expect_oscap(m) if callable(expect_oscap) else expect_oscap)
        got_o, got_f = oscap(root, m), a[m]['compliant']
        rows.append((step, m, got_o, got_f, a[m]['why']))
        if got_o != want_o or got_f != want_f:
            failures.append(f'{step} {m}: OpenSCAP {got_o} (expected {want_o}), fsgate audit {got_f} '
                            f'(expected {want_f}): {a[m]["why"]}')


def clean(root):
    reset_root(root)
    for d in ('etc/modules-load.d',):
        shutil.rmtree(os.path.join(root, d), ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--fsgatectl', required=True)
    ap.add_argument('--build-root', required=True)
    ap.add_argument('--source-root', default=os.path.join(os.path.dirname(__file__), '..', '..'))
    opts = ap.parse_args()
    CONFIG.fsgatectl = os.path.abspath(opts.fsgatectl)
    CONFIG.source_root = os.path.abspath(opts.source_root)
    CONFIG.profiles = os.path.join(os.path.abspath(opts.build_root), 'data', 'profiles')
    if os.geteuid() != 0:
        print('SKIP: must run as root (the writers\' lock in /run/fsgate)', file=sys.stderr)
        sys.exit(77)
    if not shutil.which('oscap') or not os.path.exists(OVAL):
        print('SKIP: oscap (openscap-scanner) or the SSG content (ssg-debderived) is missing', file=sys.stderr)
        sys.exit(77)

    work = tempfile.mkdtemp(prefix='fsgate-oscap-')
    try:
        root = os.path.join(work, 'root')
        make_scratch_root(root)
        clean(root)
        has = {m: os.path.exists(os.path.join(root, 'usr/lib/modules')) and
               subprocess.run(['find', os.path.join(root, 'usr/lib/modules'), '-name', m + '.ko*'],
                              capture_output=True, text=True).stdout.strip() != '' for m in CIS}
        absent = [m for m in CIS if not has[m]]
        print(f'CIS modules without a module file in this kernel: {absent or "none"}')

        # The probe root is honoured: the same evaluation, two roots, two answers.
        empty = os.path.join(work, 'empty')
        os.makedirs(os.path.join(empty, 'etc/modprobe.d'))
        write(empty, 'etc/modprobe.d/x.conf', 'install hfs /bin/false\n')
        if not oscap(empty, 'hfs') or oscap(root, 'hfs'):
            failures.append('OSCAP_PROBE_ROOT is not honoured by the textfilecontent54 probe')

        # A module with no module file is compliant for fsgate (kmod has nothing to load);
        # OpenSCAP reads only the configuration: the first documented difference.
        def nothing(m):
            return m in absent

        # `fsgatectl deny` names only modules the kernel has (or a file names): the absent ones
        # get their deny file from `apply cis`.
        present = [m for m in CIS if m not in absent]
        judge(root, 'nothing', nothing, False)
        for m in present:
            ctl(root, 'deny', m)
        judge(root, 'soft deny', nothing, False)
        for m in present:
            ctl(root, 'deny', '--hard', m)
        judge(root, 'hard deny', True, lambda m: m in present)
        for m in present:
            ctl(root, 'reset', m)
        judge(root, 'reset', nothing, False)
        out = ctl(root, 'apply', 'cis')
        if out.count('deny-hard') != len(CIS):
            failures.append(f'apply cis did not write {len(CIS)} hard denies:\n{out}')
        judge(root, 'apply cis', True)
        judge(root, 'apply cis, audit again', True, modules=CIS[:1])

        # The documented differences, each on a clean root.
        clean(root)
        write(root, 'usr/lib/modprobe.d/' + conf_name('hfs'), 'blacklist hfs\ninstall hfs /bin/false\n')
        symlink(root, 'etc/modprobe.d/' + conf_name('hfs'), '/dev/null')
        judge(root, 'install line in a file masked by /dev/null', False, True, modules=['hfs'])

        clean(root)
        write(root, 'etc/modprobe.d/hardening.conf', 'blacklist hfsplus\ninstall hfsplus /usr/bin/false\n')
        judge(root, 'install /usr/bin/false', True, False, modules=['hfsplus'])

        clean(root)
        write(root, 'etc/modules-load.d/cis.conf', 'install udf /bin/true\n')
        judge(root, 'install line in modules-load.d', False, True, modules=['udf'])

        clean(root)
        write(root, 'etc/modprobe.d/10-site.conf', 'install jffs2 /sbin/modprobe --ignore-install jffs2\n')
        write(root, 'etc/modprobe.d/90-cis.conf', 'blacklist jffs2\ninstall jffs2 /bin/true\n')
        judge(root, 'an earlier install line wins', False, True, modules=['jffs2'])

        clean(root)
        write(root, 'usr/local/lib/modprobe.d/cis.conf', 'blacklist freevxfs\ninstall freevxfs /bin/false\n')
        judge(root, 'hard deny in /usr/local/lib/modprobe.d', True, False, modules=['freevxfs'])
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(f'\n{"step":<44} {"module":<9} {"OpenSCAP":<9} {"fsgate audit":<13} why (fsgate)')
    for step, m, o, f, why in rows:
        print(f'{step:<44} {m:<9} {"true" if o else "false":<9} {"compliant" if f else "not":<13} {why}')
    if failures:
        print('\nFAILED:\n' + '\n'.join(failures))
        sys.exit(1)
    print(f'\nOK: {len(rows)} evaluations, fsgate and OpenSCAP as expected')


if __name__ == '__main__':
    main()

#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Docs that run: the README's busctl and fsgatectl examples, in the order written, as
written, on a private bus with fsgated over a scratch root set up as tools/try-it sets it up
(which prints the same blocks). Regression: the busctl lines failed at the fourth (a RUNTIME
Deny after an Allow in /etc), and audit/apply found no profile."""

import glob
import os
import re
import shlex
import shutil
import sys

sys.dont_write_bytecode = True      # keep the source tree clean
import fsgatetest as fb  # noqa: E402
from fsgatetest import CONFIG, BusTestCase  # noqa: E402
from fsgatetest.journal import Journald  # noqa: E402

# These load a module into the kernel: never on the host (the VM suite loads modules).
KERNEL_VERBS = {'Load', 'load'}


def readme_block(heading):
    """The first ```sh block after the heading, a command a line (comments kept)."""
    with open(os.path.join(CONFIG.source_root, 'README.md')) as f:
        lines = f.read().splitlines()
    start = lines.index(heading)
    begin = lines.index('```sh', start) + 1
    end = lines.index('```', begin)
    return [line for line in lines[begin:end] if line.strip()]


class ReadmeTest(BusTestCase):

    @classmethod
    def prepare_root(cls, root):
        # What try-it (and `meson install`) puts into /usr/lib/modprobe.d: the default list.
        for f in glob.glob(os.path.join(CONFIG.build_root, 'data', 'modprobe.d', '*.conf')):
            shutil.copy(f, os.path.join(root, 'usr/lib/modprobe.d'))

    def run_block(self, heading, prepare):
        lines = readme_block(heading)
        self.assertGreater(len(lines), 3, heading)
        ran = []
        self.block_outputs = []
        for line in lines:
            words = shlex.split(line, comments=True)
            if KERNEL_VERBS & set(words):
                fb.log(f'not on the host (loads a module): {line}')
                continue
            r = self.stack.run(prepare(words))
            self.assertEqual(r[0], 0, f'README line failed: {line}\nstdout: {r[1]}\nstderr: {r[2]}')
            ran.append(words)
            self.block_outputs.append(r[1])
        return ran

    def test_the_examples_run_in_order(self):
        def busctl(words):
            self.assertEqual(words[:2], ['busctl', 'call'])
            return ['busctl', '--system'] + words[1:]
        ran = self.run_block('## Calling the service', busctl)
        methods = {w[5] for w in ran}
        self.assertTrue({'ListFilesystems', 'Allow', 'Deny', 'Reset', 'AuditProfile'} <= methods, methods)

        image = os.path.join(self.workdir, 'image')
        shutil.copytree(self.root, image, symlinks=True)

        def fsgatectl(words):
            self.assertEqual(words[0], 'fsgatectl')
            return [CONFIG.fsgatectl] + [w.replace('/mnt/image', image) for w in words[1:]]
        ran = self.run_block('## fsgatectl', fsgatectl)
        # Every verb fsgatectl offers people appears (load: in the block, run in the VM).
        verbs = {w[1] if not w[1].startswith('--root') else w[2] for w in ran} | {'load'}
        # ... or in the Open safely and Rolling out blocks (their own tests run them).
        verbs |= {v for heading in ('## Open safely', '### Rolling out a profile', '### Undo and site profiles')
                  for line in readme_block(heading)
                  for v in re.findall(r'\bfsgatectl (?:--json )?(\w[\w-]*)', line.split('#')[0])}
        r = self.stack.ctl('--list-verbs')
        self.assertEqual(r.rc, 0, r)
        offered = {line.split('\t')[0] for line in r.out.splitlines()}
        self.assertEqual(offered - verbs, set(), 'verbs the README does not show')
        # What the block did, as its comments say: cis applied and compliant, udf reset.
        self.assertState('hfs', 'denied', 'admin')
        self.assertState('udf', 'denied', 'admin')

    def test_rolling_out_a_profile(self):
        """The observe, evidence, enforce walk, as written, in order: each line's exit status
        the one its comment gives ("exit N"), else 0. Between the first two lines udf is
        mounted as the kernel would ask for it: the hook's observation line runs (with a
        stand-in modprobe: the host loads nothing) and records to the real systemd-journald."""
        lines = readme_block('### Rolling out a profile')
        scratch = os.path.join(self.workdir, 'rollout')
        os.makedirs(scratch)
        journal = Journald(scratch)
        self.addCleanup(journal.stop)
        modprobe = os.path.join(scratch, 'modprobe')
        with open(modprobe, 'w') as f:
            f.write('#!/bin/sh\nexit 0\n')
        os.chmod(modprobe, 0o755)
        env = dict(self.stack.env, FSGATE_JOURNAL_DIR=journal.dir)
        outputs = []
        for i, line in enumerate(lines):
            words = shlex.split(line, comments=True)
            self.assertEqual(words[0], 'fsgatectl', line)
            m = re.search(r'\(exit (\d+)', line)
            r = self.stack.run([CONFIG.fsgatectl] + words[1:], env=env)
            self.assertEqual(r[0], int(m.group(1)) if m else 0,
                             f'README line: {line}\nstdout: {r[1]}\nstderr: {r[2]}')
            outputs.append(r[1])
            if i == 0:
                p = journal.run([CONFIG.hook, '--observe', 'udf', 'udf', 'cis'],
                                env=dict(self.stack.env, FSGATE_ROOT=self.root, FSGATE_MODPROBE=modprobe,
                                         FSGATE_KMSG=os.path.join(scratch, 'kmsg'),
                                         FSGATE_RUNTIME_DIR=os.path.join(scratch, 'run')))
                self.assertEqual(p.returncode, 0, p)
                journal.sync()
        # What the comments promise.
        self.assertIn('Observed: profile cis would deny it', outputs[1])
        self.assertIn('udf: 1 autoload observed', outputs[2])
        self.assertIn('WOULD be blocked by profile cis', outputs[3])
        self.assertIn('udf: 1 autoload observed', outputs[5])
        self.assertState('udf', 'denied', 'admin')
        self.assertIn('nothing to stop', outputs[7])

    def test_undo_and_site_profiles(self):
        """The site profile as the README shows it, in the site's directory, then the walk as
        written: undo leaves the hand-made deny alone, the site profile adds to cis."""
        with open(os.path.join(CONFIG.source_root, 'README.md')) as f:
            lines = f.read().splitlines()
        begin = lines.index('```ini', lines.index('### Undo and site profiles')) + 1
        site = self.stack.env['FSGATE_SITE_PROFILE_DIR']
        os.makedirs(site, exist_ok=True)
        self.addCleanup(shutil.rmtree, site)
        with open(os.path.join(site, 'site.profile'), 'w') as f:
            f.write('\n'.join(lines[begin:lines.index('```', begin)]) + '\n')
        self.run_block('### Undo and site profiles', lambda words: [CONFIG.fsgatectl] + words[1:])
        outputs = self.block_outputs
        self.assertIn('reset      udf', outputs[2])
        self.assertIn('denied by hand', outputs[2])
        self.assertIn('5 denies reset', outputs[3])
        with open(self.etc(module='udf')) as f:       # denied again, by the site profile
            self.assertTrue(f.read().splitlines()[-1].startswith('# fsgate-profile: site sha256='))
        self.assertState('hfs', 'denied', 'admin')
        self.assertIn('8 of 8 modules compliant', outputs[5])

    def test_open_safely(self):
        """The Open safely block, as one shell script, as root, with this build's fsgatectl
        first on PATH, in a directory with a "photos" directory to make the image of."""
        if not shutil.which('mksquashfs') or not os.path.exists('/usr/bin/squashfuse'):
            self.skipTest('mksquashfs or squashfuse missing (tools/install-deps)')
        lines = readme_block('## Open safely')
        work = os.path.join(self.workdir, 'open-safely')
        bindir = os.path.join(work, 'bin')
        os.makedirs(os.path.join(work, 'photos'))
        os.makedirs(bindir)
        os.symlink(CONFIG.fsgatectl, os.path.join(bindir, 'fsgatectl'))
        with open(os.path.join(work, 'photos', 'beach.jpg'), 'wb') as f:
            f.write(b'\xff\xd8' + os.urandom(1000))
        script = 'set -eu\ncd ' + shlex.quote(work) + '\n' + '\n'.join(lines) + '\n'
        env = dict(self.stack.env, PATH=bindir + ':' + self.stack.env.get('PATH', os.environ['PATH']))
        r = self.stack.run(['sh', '-c', script], env=env)
        self.assertEqual(r[0], 0, f'the Open safely block failed:\nstdout: {r[1]}\nstderr: {r[2]}')
        self.assertIn('beach.jpg', r[1])
        self.assertEqual(self.stack.prop('OpenMedia'), [])


if __name__ == '__main__':
    fb.main()

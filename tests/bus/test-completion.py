#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""fsgatectl's shell completions, run for real: bash's completion function with COMP_WORDS
as bash fills them (bash-completion loaded), zsh's through a pseudo-terminal (zpty).

The completions name no verb or option of their own: they ask the fsgatectl they complete
(hidden --list-verbs and --list-options, printed from its verb and option tables) and, for
module and type names, its hidden verb list-names (the service over the private bus, or the
image given with --root, offline); for apply and audit, its hidden verb list-profiles (the
profile directory). So these tests hold the completions to what --help, list --json and the
profile directory say, not to a list written here."""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True      # keep the source tree clean
import fsgatetest as fb  # noqa: E402
from fsgatetest import (CONFIG, NOBODY, TIMEOUT, BusTestCase, conf_name, make_scratch_root,  # noqa: E402
                        reset_root, write)

BASH_COMPLETION = '/usr/share/bash-completion/bash_completion'
# list --origin='s words, as the list prints them (fsgatectl(1), ORIGINS).
ORIGINS = ['default', 'vendor', 'local', 'runtime', 'admin', 'cmdline']

# Loads bash-completion and ours, fills COMP_* from the arguments and prints COMPREPLY.
BASH_DRIVER = r'''
source "$1" || exit 90
source "$2" || exit 91
complete -p fsgatectl >/dev/null || exit 92
COMP_LINE=$3
COMP_POINT=${#COMP_LINE}
shift 3
COMP_WORDS=("$@")
COMP_CWORD=$(($# - 1))
_fsgatectl
printf '%s\n' "${COMPREPLY[@]}"
'''

# zsh -f in a pseudo-terminal with compinit and our directory first in $fpath: types the
# line and TAB, and prints every match zsh would offer (a compadd wrapper records them).
ZSH_DRIVER = r'''
zmodload zsh/zpty || exit 90
hits=$(mktemp)
zpty z zsh -f -i
zpty -w z "PS1='> '; bindkey -e; fpath=(${(q)1} \$fpath); autoload -U compinit; compinit -u -D"
zpty -w z 'compadd() { if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi; local -a __h; builtin compadd -A __h "$@"; print -rl -- $__h >>'${(q)hits}'; builtin compadd "$@" }'
zpty -n -w z "$2"$'\t'
# Then clear the line and print a marker whose echo differs from its output.
zpty -w z $'\C-a\C-k''print "<$((6*7))>"'
while zpty -r z line; do [[ $line == *'<42>'* ]] && break; done
sort -u $hits
rm -f $hits
zpty -d z
'''


def comp_words(line):
    """COMP_WORDS for line with the cursor at its end, as bash splits it: at blanks, and '='
    is a word of its own (it is in COMP_WORDBREAKS); a new empty word after a blank."""
    words = []
    for w in line.split():
        for i, part in enumerate(w.split('=')):
            if i:
                words.append('=')
            if part:
                words.append(part)
    if line.endswith(' '):
        words.append('')
    return words


class CompletionTest(BusTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.bash_file = os.path.join(CONFIG.source_root, 'completion', 'fsgatectl.bash')
        cls.zsh_dir = os.path.join(CONFIG.source_root, 'completion')
        # An image for --root, and a module name only it knows (a vendor file names it), so
        # that an answer shows where it came from; the service's root gets its own below.
        cls.image = tempfile.mkdtemp(prefix='image-', dir=cls.workdir)
        make_scratch_root(cls.image)
        reset_root(cls.image)
        write(cls.image, 'usr/lib/modprobe.d/' + conf_name('hfsimageonly'), 'blacklist hfsimageonly\n')
        # As people type it: "fsgatectl", found in $PATH.
        cls.path = os.path.dirname(CONFIG.fsgatectl) + ':' + os.environ.get('PATH', '/usr/bin:/bin')
        cls.nobus = 'unix:path=' + os.path.join(cls.workdir, 'nobus')

    def setUp(self):
        super().setUp()
        if not os.path.exists(BASH_COMPLETION):
            self.skipTest(f'{BASH_COMPLETION} is missing (apt-get install bash-completion)')
        self.vendor('hfsserviceonly', 'blacklist hfsserviceonly\n')

    # -- helpers --------------------------------------------------------------------------
    def env(self, bus=True):
        """The private bus, or with bus=False an address where nothing listens."""
        return dict(self.stack.env, PATH=self.path, DBUS_SYSTEM_BUS_ADDRESS=self.stack.address if bus else self.nobus)

    def bash(self, line, bus=True, uid=None):
        """COMPREPLY for line, the cursor at its end. Completion must say nothing on stderr:
        it would land in the middle of the person's command line."""
        words = comp_words(line)
        cmd = self.stack.as_uid(['bash', '--norc', '--noprofile', '-c', BASH_DRIVER, 'bash', BASH_COMPLETION,
                                 self.bash_file, line] + words, uid)
        p = subprocess.run(cmd, env=self.env(bus), capture_output=True, text=True, timeout=TIMEOUT + 5,
                           stdin=subprocess.DEVNULL, cwd=self.workdir)
        self.assertEqual((p.returncode, p.stderr), (0, ''), f'{line!r} {words!r}: {p!r}')
        return [w for w in p.stdout.split('\n') if w]

    def zsh(self, line, bus=True):
        p = subprocess.run(['zsh', '-f', '-c', ZSH_DRIVER, 'zsh', self.zsh_dir, line], env=self.env(bus),
                           capture_output=True, text=True, timeout=TIMEOUT + 5, stdin=subprocess.DEVNULL,
                           cwd=self.workdir)
        self.assertEqual(p.returncode, 0, f'{line!r}: {p!r}')
        return [w for w in p.stdout.split('\n') if w]

    def ctl(self, *args, bus=True):
        p = subprocess.run([CONFIG.fsgatectl] + list(args), env=self.env(bus), capture_output=True, text=True,
                           timeout=TIMEOUT + 5, stdin=subprocess.DEVNULL)
        self.assertEqual(p.returncode, 0, p)
        return p.stdout

    def help_verbs(self):
        """The commands --help shows, in its order."""
        text = self.ctl('--help')
        block = text.split('Commands:\n', 1)[1].split('\n\n', 1)[0]
        return [line.split()[0] for line in block.splitlines()]

    def help_options(self):
        """The long options --help shows, as completion offers them: "--root=" for one
        taking a value."""
        return sorted(re.sub(r'=.*', '=', m) for m in re.findall(r'(?m)^\s+(?:-h )?(--[a-z-]+(?:=\S+)?)',
                                                                  self.ctl('--help')))

    def names(self, prefix, *args, bus=True):
        """Every module and type fsgatectl list --json shows that starts with prefix."""
        entries = json.loads(self.ctl(*args, '--json', 'list', bus=bus))
        return sorted({n for e in entries for n in [e['module']] + e['types'] if n.startswith(prefix)})

    # -- bash -----------------------------------------------------------------------------
    def test_bash_verbs(self):
        verbs = self.help_verbs()
        self.assertIn('exempt-loaded', verbs)
        self.assertEqual(self.bash('fsgatectl '), verbs)
        self.assertEqual(self.bash('fsgatectl de'), ['deny'])
        self.assertEqual(self.bash('fsgatectl --json --root=/ l'), ['list', 'load', 'log'])
        # The verb comes after options with a value in either spelling.
        self.assertEqual(self.bash(f'fsgatectl --root {self.image} --kernel-release {self.kver} re'), ['reset'])
        # Typed as a path, that very program is asked.
        self.assertEqual(self.bash(f'{CONFIG.fsgatectl} sta'), ['status'])
        self.assertEqual(self.bash(f'{CONFIG.fsgatectl} st'), ['status', 'stop-observing'])
        # Nothing hidden is offered.
        self.assertEqual(self.bash('fsgatectl list-'), [])

    def test_bash_options(self):
        got = self.bash('fsgatectl --')
        self.assertEqual(sorted(got), self.help_options())
        self.assertIn('--root=', got)
        self.assertIn('--no-ask-password', got)
        self.assertNotIn('--list-verbs', got)
        self.assertEqual(sorted(self.bash('fsgatectl --ro')), ['--root=', '--route='])
        self.assertEqual(self.bash('fsgatectl --roo'), ['--root='])
        # After the verb too: getopt takes them anywhere.
        self.assertEqual(self.bash('fsgatectl deny --forc'), ['--force'])
        self.assertEqual(self.bash('fsgatectl allow --for'), ['--force', '--for='])

    def test_bash_option_values(self):
        parent, base = os.path.split(self.image)
        self.assertEqual(self.bash(f'fsgatectl --root={parent}/{base[:4]}'), [self.image])
        self.assertEqual(self.bash(f'fsgatectl --root {parent}/{base[:4]}'), [self.image])
        self.assertEqual(self.bash(f'fsgatectl --root={self.image} --kernel-release='), [self.kver])
        self.assertEqual(self.bash(f'fsgatectl --root {self.image} --kernel-release {self.kver[:3]}'), [self.kver])

    def test_bash_names_offline(self):
        """After --root=DIR the names come from that image, and no bus is needed."""
        want = self.names('h', '--root=' + self.image, bus=False)
        self.assertIn('hfs', want)
        self.assertIn('hfsimageonly', want)
        self.assertEqual(self.bash(f'fsgatectl --root={self.image} deny h', bus=False), want)
        self.assertEqual(self.bash(f'fsgatectl --root {self.image} deny --force h', bus=False), want)
        self.assertEqual(self.bash(f'fsgatectl --root={self.image} --kernel-release={self.kver} status hfsi',
                                   bus=False), ['hfsimageonly'])
        # why: a type, or a device path.
        self.assertEqual(self.bash(f'fsgatectl --root={self.image} why vx', bus=False), ['vxfs'])
        self.assertEqual(self.bash(f'fsgatectl --root={self.image} why /dev/nul', bus=False), ['/dev/null'])
        # One argument only, but several names for allow, deny, reset and status, and
        # patterns (names) for list; none for load.
        self.assertEqual(self.bash(f'fsgatectl --root={self.image} load hfs ', bus=False), [])
        self.assertEqual(self.bash(f'fsgatectl --root={self.image} deny hfs h', bus=False), want)
        self.assertEqual(self.bash(f'fsgatectl --root={self.image} status hfs h', bus=False), want)
        self.assertEqual(self.bash(f'fsgatectl --root={self.image} list vxfs h', bus=False), want)
        # --state= and --origin= take the words fsgatectl lists (--state=help), comma-separated.
        self.assertEqual(self.bash('fsgatectl list --state=', bus=False), ['allowed', 'denied', 'builtin'])
        self.assertEqual(self.bash('fsgatectl list --state=denied,b', bus=False), ['denied,builtin'])
        self.assertEqual(self.bash('fsgatectl list --origin ad', bus=False), ['admin'])

    def test_bash_names_from_the_service(self):
        want = self.names('')
        self.assertIn('freevxfs', want)
        self.assertIn('vxfs', want)
        self.assertIn('hfsserviceonly', want)
        self.assertNotIn('hfsimageonly', want)
        self.assertEqual(self.bash('fsgatectl status '), want)
        self.assertEqual(self.bash('fsgatectl allow hfss'), ['hfsserviceonly'])
        # As anybody: listing needs no polkit.
        self.assertEqual(self.bash('fsgatectl load free', uid=NOBODY), ['freevxfs'])

    def test_profiles(self):
        """apply and audit complete the installed profiles (here the build's), the same with
        --root and without a bus: profiles come with fsgate, not with the image."""
        d = self.stack.env['FSGATE_PROFILE_DIR']
        want = sorted(f[:-len('.profile')] for f in os.listdir(d) if f.endswith('.profile'))
        self.assertIn('cis', want)
        self.assertIn('opensuse', want)
        self.assertEqual(self.bash('fsgatectl apply '), want)
        self.assertEqual(self.bash('fsgatectl audit --hard c'), ['cis'])
        self.assertEqual(self.bash(f'fsgatectl --root={self.image} apply u', bus=False), ['unused'])
        self.assertEqual(self.bash('fsgatectl apply cis '), [])
        if shutil.which('zsh'):
            self.assertEqual(sorted(self.zsh('fsgatectl audit ')), want)
            self.assertEqual(self.zsh(f'fsgatectl --root={self.image} apply o', bus=False), ['opensuse'])

    def test_bash_service_unreachable(self):
        """No service: no names, and no error message in the middle of the command line."""
        self.assertEqual(self.bash('fsgatectl status ', bus=False), [])
        self.assertEqual(self.bash('fsgatectl ', bus=False), self.help_verbs())

    # -- zsh ------------------------------------------------------------------------------
    def test_zsh(self):
        if not shutil.which('zsh'):
            self.skipTest('zsh is missing (apt-get install zsh)')
        p = subprocess.run(['zsh', '-n', os.path.join(self.zsh_dir, '_fsgatectl')], capture_output=True, text=True)
        self.assertEqual((p.returncode, p.stderr), (0, ''), p)
        self.assertEqual(self.zsh('fsgatectl '), sorted(self.help_verbs()))
        self.assertEqual(sorted(self.zsh('fsgatectl --')), sorted(o.rstrip('=') for o in self.help_options()))
        self.assertEqual(self.zsh(f'fsgatectl --root={self.image} deny h', bus=False),
                         self.names('h', '--root=' + self.image, bus=False))
        self.assertEqual(self.zsh(f'fsgatectl --root={self.image} --kernel-release='), [self.kver])
        self.assertEqual(self.zsh('fsgatectl status hfss'), ['hfsserviceonly'])
        self.assertEqual(self.zsh('fsgatectl deny minix hfss'), ['hfsserviceonly'])
        self.assertEqual(self.zsh('fsgatectl status minix hfss'), ['hfsserviceonly'])
        self.assertEqual(self.zsh('fsgatectl load minix hfss'), [])
        self.assertEqual(self.zsh('fsgatectl list vxfs hfss'), ['hfsserviceonly'])
        self.assertEqual(sorted(self.zsh('fsgatectl list --origin=')), sorted(ORIGINS))


if __name__ == '__main__':
    fb.main()

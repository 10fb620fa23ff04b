#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Differential test: fsgate's view of filesystem autoloading against kmod's own.

Builds one scratch root (tests/kernel/make-scratch-root.sh --with-kmod), then for each of N
seeded random modprobe.d configurations compares

  fsgate:  fsgatectl --root=ROOT --json list            (state "allowed" / "denied")
  kmod:    chroot ROOT /usr/sbin/modprobe -S KVER -n -v fs-TYPE   (dry run)

An entry must be "allowed" iff, for every filesystem type it serves, the dry run loads the
entry's module (an `insmod .../MODULE.ko` line, or `builtin MODULE`). A non-zero exit of
modprobe counts as "not loaded". Every mismatch is printed with the configuration that
caused it and how to reproduce it (--seed S --only I).

Hard denies: for every module an install line of the configuration names,
`fsgatectl --root=ROOT --json status MODULE` must give the install command that
`modprobe -S KVER -n -v MODULE` (an explicit load, dry run) prints (none when it prints
`insmod .../MODULE.ko`), and call it hard exactly when that command is one of the refusing
ones the generator writes (/bin/false, /bin/true, the Kicksecure script); openSUSE's
unblacklist line loads the module, so it is not hard.

--routes HOOK: before each comparison, HOOK --refresh-routes (fsgate-blocked, as
fsgate-routes.service runs it) writes fsgate's routes for the blocks no deny of fsgate's
reports; kmod reads them, fsgate's model does not. The comparison then also shows that a
fresh route never stands between kmod and a module fsgate calls allowed (its dry run would
print the hook instead of the insmod), nor changes another type's answer; at least one route
must have been written. (A dry run does not run the hook: what the hook decides for a stale
route is bus-opensuse's to check.)

--self-check additionally flips the state of one entry per configuration in fsgate's output
and verifies that the comparison reports exactly that extra mismatch, proving the check is
live. Run with /usr/bin/python3; needs root (chroot).
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

from fsgatetest.root import SUSE_VENDOR_FILE

HERE = os.path.dirname(os.path.abspath(__file__))
MAKE_ROOT = os.environ.get('FSGATE_MAKE_SCRATCH_ROOT') or \
        os.path.join(HERE, '..', 'kernel', 'make-scratch-root.sh')

# Precedence order, highest first (kmod 30 on Debian 12; lib -> usr/lib in the root).
CONF_DIRS = ['etc/modprobe.d', 'run/modprobe.d', 'usr/local/lib/modprobe.d', 'usr/lib/modprobe.d']
DEFAULT_CMDLINE = 'BOOT_IMAGE=/vmlinuz root=/dev/vda quiet'
MIN_TYPED_ENTRIES = 30
MAX_ERRORS = 3           # fsgatectl failures before giving up (each prints its configuration)
MODULE_SUFFIXES = ('.ko', '.ko.xz', '.ko.zst', '.ko.gz')
DISABLED_SCRIPT = '/usr/bin/disabled-filesys-by-security-misc'
# The install commands the generator writes that load nothing: a hard deny.
REFUSING = {'/bin/false', '/bin/true', DISABLED_SCRIPT}

# openSUSE's default list (facts/opensuse.md); several do not exist in Debian's kernel.
SUSE_DEFAULT = ('adfs affs bfs befs cramfs efs exofs f2fs freevxfs hfs hfsplus hpfs jffs2 jfs '
                'kafs minix nilfs2 ntfs ntfs3 omfs orangefs pstore qnx4 qnx6 reiserfs romfs '
                'sysv ufs zonefs').split()
SUSE_VENDOR = SUSE_VENDOR_FILE

FEATURES = {
    'blacklist': 'blacklist MODULE',
    'blacklist-dash': 'blacklist with - for _ (ocfs2-dlmfs)',
    'blacklist-type': 'blacklist TYPE where TYPE is no module (vxfs, iso9660, ext2): blocks nothing',
    'install-false': 'install MODULE /bin/false',
    'install-true': 'install MODULE /bin/true',
    'install-disabled': 'install MODULE /usr/bin/disabled-filesys-by-security-misc (Kicksecure)',
    'install-loads': 'install MODULE ...; /sbin/modprobe --ignore-install MODULE (loads after all: not hard)',
    'fsgate-hard': "fsgate's hard deny file: blacklist, install MODULE /bin/false, routes to the hook",
    'alias-off': 'alias fs-TYPE off',
    'alias-other': 'alias fs-TYPE OTHER (another fs module, a missing name, a routed name with install)',
    'alias-to-dependent': 'alias fs-TYPE X where X depends on TYPE\'s module (which then loads anyway)',
    'alias-underscore': 'alias fs_TYPE off (kmod normalizes - and _ in alias names)',
    'alias-glob': 'alias fs-PREFIX* off (kmod matches config aliases with fnmatch)',
    'comment': '# blacklist M, also indented',
    'comment-continuation': 'a comment ending in \\ swallows the next line',
    'continuation': 'blacklist \\<newline>MODULE',
    'noise': 'blank lines, options lines, trailing words, BLACKLIST, blacklist a,b',
    'softdep': 'softdep M pre: X (kmod ignores install commands of modules with softdeps)',
    'trailing-space': 'trailing spaces and tabs',
    'mask-devnull': 'same basename in a higher directory as a symlink to /dev/null',
    'mask-empty': 'same basename in a higher directory as an empty file',
    'override': 'same basename in a higher directory with different content',
    'ignored-files': 'files kmod ignores: *.conf.bak, *~, README, .hidden.conf, X.CONF, a directory d.conf',
    'alias-suffix': 'files named *.alias (kmod 30 reads them like *.conf)',
    'symlink': 'a .conf symlink to a regular file elsewhere in the root (relative or absolute)',
    'lib-path': 'files written through ROOT/lib/modprobe.d (lib -> usr/lib)',
    'opensuse': 'openSUSE vendor files 60-blacklist_fs-M.conf and their /etc overrides',
    'cmdline': 'modprobe.blacklist=a,b on /proc/cmdline',
    'cmdline-dash': 'modprobe.blacklist=ocfs2-dlmfs (kmod 30 does not normalize these)',
}


def norm(name):
    return name.replace('-', '_')


def log(*a):
    print(*a, flush=True)


class KernelModel:
    """What the scratch root's module tree offers, read from its modules.* files."""

    def __init__(self, moddir):
        self.types = {}          # module -> [fs types]
        self.present = set()     # modules with a file (modules.dep)
        self.deps_of_others = set()
        with open(os.path.join(moddir, 'modules.dep')) as f:
            deps = {}
            for line in f:
                key, _, rest = line.partition(':')
                if not key:
                    continue
                m = norm(os.path.basename(key).split('.ko')[0])
                self.present.add(m)
                deps[m] = [norm(os.path.basename(d).split('.ko')[0]) for d in rest.split()]
        with open(os.path.join(moddir, 'modules.alias')) as f:
            for line in f:
                w = line.split()
                if len(w) == 3 and w[0] == 'alias' and w[1].startswith('fs-'):
                    self.types.setdefault(norm(w[2]), []).append(w[1][3:])
        self.targets = sorted(m for m in self.types if m in self.present)
        self.deps = deps
        self.dependents = {}     # fs module -> fs modules whose modules.dep line names it
        for m in self.targets:
            for d in deps.get(m, []):
                if d in self.types:
                    self.deps_of_others.add(d)
                    self.dependents.setdefault(d, []).append(m)
        # An install command on a module that another fs module depends on (configfs,
        # sunrpc, fuse) shows in the dry run as `install ...` followed by `insmod` of the
        # dependent module, while a real load of the dependent then fails: the dry run
        # cannot judge that, so such modules get no install lines.
        self.install_targets = [m for m in self.targets if m not in self.deps_of_others]
        self.underscored = [m for m in self.targets if '_' in m]
        self.type_names = sorted({t for m, ts in self.types.items() for t in ts
                                  if norm(t) not in self.types})
        self.suse = [m for m in SUSE_DEFAULT]


class Config:
    """One modprobe.d configuration: files to write (in order) and a kernel command line."""

    def __init__(self, index):
        self.index = index
        self.files = []          # (relpath, kind, data): kind in file, devnull, symlink, dir
        self.cmdline = DEFAULT_CMDLINE
        self.features = set()

    def add(self, relpath, kind, data='', feature=None):
        if any(real_dir(p) == real_dir(relpath) for p, _, _ in self.files):
            return False
        self.files.append((relpath, kind, data))
        if feature:
            self.features.add(feature)
        return True

    def describe(self):
        out = [f'  /proc/cmdline: {self.cmdline}']
        for relpath, kind, data in self.files:
            if kind == 'devnull':
                out.append(f'  {relpath} -> /dev/null')
            elif kind == 'symlink':
                out.append(f'  {relpath} -> {data}')
            elif kind == 'dir':
                out.append(f'  {relpath}/ (directory)')
            elif data == '':
                out.append(f'  {relpath} (empty file)')
            else:
                out.append(f'  {relpath}:')
                for line in data.split('\n')[:-1] if data.endswith('\n') else data.split('\n'):
                    out.append('    | ' + line.replace('\t', '^I') + '$')
        if not self.files:
            out.append('  (no modprobe.d files)')
        return '\n'.join(out)


def real_dir(relpath):
    """Same file, whichever of lib/ and usr/lib/ it was written through."""
    return 'usr/' + relpath if relpath.startswith('lib/') else relpath


class Generator:
    def __init__(self, model, seed, skip):
        self.k = model
        self.seed = seed
        self.on = {f: f not in skip for f in FEATURES}

    def rng_for(self, index):
        return random.Random(f'fsgate-kmod-diff:{self.seed}:{index}')

    def generate(self, index):
        c = Config(index)
        if index == 0:
            return c             # the baseline: no configuration at all
        r = self.rng_for(index)
        k = self.k
        focus = r.sample(k.targets, r.randint(2, min(12, len(k.targets))))

        def mod():
            return r.choice(focus) if r.random() < 0.8 else r.choice(k.targets)

        def typ(m=None):
            m = m or mod()
            return r.choice(k.types[m])

        def line_group():
            """A few lines of one kind, and the feature it exercises."""
            choices = [f for f in ('blacklist', 'blacklist-dash', 'blacklist-type', 'install-false',
                                   'install-true', 'install-disabled', 'install-loads', 'alias-off', 'alias-other', 'alias-to-dependent',
                                   'alias-underscore',
                                   'alias-glob', 'comment', 'comment-continuation', 'continuation',
                                   'noise', 'softdep') if self.on[f]]
            weights = {'blacklist': 8, 'alias-underscore': 0.5, 'alias-glob': 0.5,
                       'alias-to-dependent': 0.5}
            if not choices:
                return [], None
            f = r.choices(choices, [weights.get(x, 2) for x in choices])[0]
            m = mod()
            if f == 'blacklist':
                return [f'blacklist {m}'], f
            if f == 'blacklist-dash':
                if not k.underscored:
                    return [f'blacklist {m}'], 'blacklist'
                return [f'blacklist {r.choice(k.underscored).replace("_", "-")}'], f
            if f == 'blacklist-type':
                return [f'blacklist {r.choice(k.type_names)}'], f
            if f in ('install-false', 'install-true'):
                im = m if m in k.install_targets else r.choice(k.install_targets)
                return [f'install {im} /bin/{f[8:]}'], f
            if f in ('install-disabled', 'install-loads'):
                im = m if m in k.install_targets else r.choice(k.install_targets)
                if f == 'install-disabled':
                    return [f'install {im} {DISABLED_SCRIPT}'], f
                return [f'install {im} /bin/echo loading {im}; /sbin/modprobe --ignore-install {im} $CMDLINE_OPTS'], f
            if f == 'alias-off':
                return [f'alias fs-{typ(m)} off'], f
            if f == 'alias-other':
                t = typ(m)
                how = r.random()
                if how < 0.5:
                    # Another module that does not pull this one in as a dependency.
                    other = r.choice([o for o in k.targets if m not in k.deps.get(o, ())])
                    return [f'alias fs-{t} {other}'], f
                if how < 0.65:
                    return [f'alias fs-{t} fsgate_test_nosuch'], f
                if how < 0.8:
                    return [f'alias fs-{t} {m}'], f         # to its own module: changes nothing
                return [f'alias fs-{t} fsgate_denied_{m}',
                        f'install fsgate_denied_{m} /bin/true {m}'], f
            if f == 'alias-to-dependent':
                if not k.dependents:
                    return [f'alias fs-{typ(m)} off'], 'alias-off'
                d = r.choice(sorted(k.dependents))
                return [f'alias fs-{typ(d)} {r.choice(k.dependents[d])}'], f
            if f == 'alias-underscore':
                return [f'alias fs_{typ(m)} off'], f
            if f == 'alias-glob':
                t = typ(m)
                return [f'alias fs-{t[:max(2, len(t) - 2)]}* off'], f
            if f == 'softdep':
                # A softdep that resolves to a module makes kmod skip the module's install
                # command (ext4, btrfs, f2fs, cifs, nfsd have softdeps in modules.softdep);
                # one that resolves to nothing does not. Config files sorting before
                # "modules.softdep" override the tree's softdeps (first match wins).
                dep = r.choice(['crc32c', 'crc32c', 'fsgate_test_nosuch'])
                return [f'softdep {m} {r.choice(["pre", "post"])}: {dep}'], f
            if f == 'comment':
                pre = r.choice(['', '  ', '\t'])
                verb = r.choice([f'blacklist {m}', f'install {m} /bin/false', f'alias fs-{typ(m)} off'])
                return [f'{pre}#{r.choice(["", " "])}{verb}'], f
            if f == 'comment-continuation':
                return [f'# {m} is blacklisted below \\', f'blacklist {m}'], f
            if f == 'continuation':
                if r.random() < 0.6 or m not in k.install_targets:
                    return ['blacklist \\', f'{r.choice(["", "  "])}{m}'], f
                return [f'install {m} \\', '/bin/false'], f
            # noise
            return [r.choice(['', '', f'options {m} fsgate_test=1', f'blacklist {m} # and a comment',
                              f'BLACKLIST {m}', f'blacklist {m},{mod()}', f'blacklist {m} extra',
                              f'  blacklist {m}'])], 'noise'

        def content(nmin=1, nmax=6):
            lines = []
            for _ in range(r.randint(nmin, nmax)):
                group, f = line_group()
                if f:
                    c.features.add(f)
                lines += group
            if self.on['trailing-space']:
                for i, ln in enumerate(lines):
                    if ln.endswith('\\'):
                        continue         # keep continuations continuing
                    if r.random() < 0.15:
                        lines[i] = ln + r.choice([' ', '  ', '\t', ' \t'])
                        c.features.add('trailing-space')
            return '\n'.join(lines) + '\n'

        def dirpath(i):
            d = CONF_DIRS[i]
            if d == 'usr/lib/modprobe.d' and self.on['lib-path'] and r.random() < 0.3:
                c.features.add('lib-path')
                return 'lib/modprobe.d'
            return d

        words = ['local', 'hardening', 'cis', 'storage', 'legacy', 'vendor', 'blacklist', 'site', 'fs']

        # openSUSE vendor files, and what the unblacklist helper or a hardening role puts in /etc.
        if self.on['opensuse'] and r.random() < 0.5:
            c.features.add('opensuse')
            for m in r.sample(k.suse, r.randint(1, 8)):
                name = f'60-blacklist_fs-{m}.conf'
                c.add(f'{dirpath(3)}/{name}', 'file', SUSE_VENDOR.format(m=m))
                how = r.random()
                if how < 0.25:
                    c.add(f'etc/modprobe.d/{name}', 'devnull')                    # "yes"
                elif how < 0.35:
                    c.add(f'etc/modprobe.d/{name}', 'file', f'blacklist {m}\n')    # "never"
                elif how < 0.45:
                    c.add(f'etc/modprobe.d/{name}', 'file',
                          f'# hardening role\ninstall {m} /bin/true\nblacklist {m}\n')
                elif how < 0.5:
                    c.add(f'etc/modprobe.d/{name}', 'file', '# __THIS FILE MAY BE MODIFIED__\n')

        # fsgate's own hard deny (Deny with HARD), in /etc or /run.
        if self.on['fsgate-hard'] and r.random() < 0.3:
            c.features.add('fsgate-hard')
            for m in r.sample(k.install_targets, r.randint(1, 3)):
                d = r.choice(['etc/modprobe.d', 'run/modprobe.d'])
                name = f'60-blacklist_fs-{m}.conf'
                routes = ''.join(f'alias fs-{t} fsgate_blocked_{t}\n'
                                 f'install fsgate_blocked_{t} /usr/libexec/fsgate-blocked {t} {m} /{d}/{name}\n'
                                 for t in k.types[m])
                c.add(f'{d}/{name}', 'file', f'# Written by fsgate: hard deny\nblacklist {m}\n'
                                             f'install {m} /bin/false\n{routes}')

        for _ in range(r.randint(1, 7)):
            di = r.randrange(len(CONF_DIRS))
            base = f'{r.randint(0, 99):02d}-{r.choice(words)}{r.randint(0, 9)}'
            suffix = '.conf'
            if self.on['alias-suffix'] and r.random() < 0.05:
                suffix = '.alias'
                c.features.add('alias-suffix')
            c.add(f'{dirpath(di)}/{base}{suffix}', 'file', content())

        # Masks and overrides: a same-named file in a strictly higher directory.
        lower = [(p, kind) for p, kind, _ in c.files
                 if kind == 'file' and not p.startswith('etc/')]
        for p, _ in r.sample(lower, min(len(lower), r.randint(0, 3))):
            name = os.path.basename(p)
            level = CONF_DIRS.index(os.path.dirname(real_dir(p)))
            higher = CONF_DIRS[r.randrange(level)]
            what = r.choice([f for f in ('mask-devnull', 'mask-empty', 'override') if self.on[f]] or [None])
            if what == 'mask-devnull':
                c.add(f'{higher}/{name}', 'devnull', feature=what)
            elif what == 'mask-empty':
                c.add(f'{higher}/{name}', 'file', '', feature=what)
            elif what == 'override':
                c.add(f'{higher}/{name}', 'file', content(1, 3), feature=what)

        # Files and entries kmod ignores.
        if self.on['ignored-files'] and r.random() < 0.3:
            d = CONF_DIRS[r.randrange(len(CONF_DIRS))]
            for name in r.sample(['90-old.conf.bak', '90-edit.conf~', '90-off.disabled', 'README',
                                  '.90-hidden.conf', '90-UPPER.CONF', '90-dir.conf'], r.randint(1, 3)):
                m = mod()
                if name == '90-dir.conf':
                    c.add(f'{d}/{name}', 'dir', f'blacklist {m}\n', feature='ignored-files')
                else:
                    c.add(f'{d}/{name}', 'file', f'blacklist {m}\nalias fs-{typ(m)} off\n',
                          feature='ignored-files')

        # A .conf that is a symlink to a regular file elsewhere in the root.
        if self.on['symlink'] and r.random() < 0.15:
            m = mod()
            target = f'usr/share/fsgate-test/{m}.conf'
            c.add(target, 'file', f'blacklist {m}\n')
            di = r.randrange(len(CONF_DIRS))
            link = f'{CONF_DIRS[di]}/70-link-{m}.conf'
            if r.random() < 0.5:
                dest = '/' + target
            else:
                dest = os.path.relpath(target, os.path.dirname(link))
            c.add(link, 'symlink', dest, feature='symlink')

        # modprobe.blacklist= on the kernel command line.
        if self.on['cmdline'] and r.random() < 0.3:
            names = [mod() for _ in range(r.randint(1, 3))]
            if self.on['cmdline-dash'] and k.underscored and r.random() < 0.2:
                names.append(r.choice(k.underscored).replace('_', '-'))
                c.features.add('cmdline-dash')
            params = [f'modprobe.blacklist={",".join(names)}']
            if len(names) > 1 and r.random() < 0.3:
                params = [f'modprobe.blacklist={n}' for n in names]
            c.cmdline = ' '.join(['BOOT_IMAGE=/vmlinuz', *params, 'root=/dev/vda', 'quiet'])
            c.features.add('cmdline')
        return c


def wipe(root):
    for d in CONF_DIRS:
        p = os.path.join(root, d)
        os.makedirs(p, exist_ok=True)
        for e in os.scandir(p):
            if e.is_dir(follow_symlinks=False):
                shutil.rmtree(e.path)
            else:
                os.unlink(e.path)
    shutil.rmtree(os.path.join(root, 'usr/share/fsgate-test'), ignore_errors=True)
    with open(os.path.join(root, 'proc/cmdline'), 'w') as f:
        f.write(DEFAULT_CMDLINE + '\n')


BASE_DIR = None   # --base-dir: files laid under every configuration (e.g. fsgate's vendor files)


def write_config(root, c):
    wipe(root)
    if BASE_DIR:
        for name in sorted(os.listdir(BASE_DIR)):
            if name.endswith('.conf'):
                shutil.copyfile(os.path.join(BASE_DIR, name), os.path.join(root, 'usr/lib/modprobe.d', name))
    for relpath, kind, data in c.files:
        path = os.path.join(root, relpath)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.lexists(path):
            os.unlink(path)     # a generated file replaces a --base-dir file of the same name
        if kind == 'devnull':
            os.symlink('/dev/null', path)
        elif kind == 'symlink':
            os.symlink(data, path)
        elif kind == 'dir':
            os.mkdir(path)
            with open(os.path.join(path, 'inner.conf'), 'w') as f:
                f.write(data)
        else:
            with open(path, 'w') as f:
                f.write(data)
    with open(os.path.join(root, 'proc/cmdline'), 'w') as f:
        f.write(c.cmdline + '\n')


class Oracle:
    """kmod's verdict, from a dry run of modprobe inside the scratch root."""

    def __init__(self, root, kver):
        self.root = root
        self.kver = kver
        self.calls = 0

    def _run(self, *args):
        self.calls += 1
        p = subprocess.run(['chroot', self.root, '/usr/sbin/modprobe', '-S', self.kver, *args],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
        return p.returncode, p.stdout

    def probe(self, fstype):
        """(loaded module names, exit status, output) of an autoload of fs-TYPE."""
        rc, out = self._run('-n', '-v', f'fs-{fstype}')
        if rc == 0 and not out.strip():
            # kmod 30 prints nothing for built-in modules with -n -v; --show-depends says
            # `builtin NAME` (and still nothing when the alias is blacklisted).
            rc2, out2 = self._run('--show-depends', f'fs-{fstype}')
            if rc2 == 0 and any(ln.startswith('builtin ') for ln in out2.splitlines()):
                out = out2
        loaded = set()
        for ln in out.splitlines():
            w = ln.split()
            if len(w) >= 2 and w[0] == 'insmod':
                base = os.path.basename(w[1])
                for suf in MODULE_SUFFIXES:
                    if base.endswith(suf):
                        loaded.add(norm(base[:-len(suf)]))
            elif len(w) >= 2 and w[0] == 'builtin':
                loaded.add(norm(w[1]))
        return (loaded if rc == 0 else set()), rc, out


def fsgate_status(fsgatectl, root, module):
    p = subprocess.run([fsgatectl, f'--root={root}', '--json', 'status', module],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    if p.returncode != 0:
        raise RuntimeError(f'{fsgatectl} --root={root} --json status {module} exited {p.returncode}: '
                           f'{p.stderr.strip()}')
    x = json.loads(p.stdout)
    for key, t in (('hard', bool), ('explicit_load_possible', bool), ('install_command', str),
                   ('install_file', str), ('files', list)):
        if not isinstance(x.get(key), t):
            raise RuntimeError(f'status {module} lacks {key!r} of the right type: {x!r}')
    return x


def install_named(c):
    """The modules an install line of the configuration names (comments and masks included:
    fsgate must get those right too)."""
    out = set()
    for _, kind, data in c.files:
        if kind != 'file':
            continue
        for ln in data.replace('\\\n', '').splitlines():
            w = ln.split()
            if len(w) >= 2 and w[0] == 'install':
                out.add(norm(w[1]))
    return out


def explicit_verdict(oracle, module):
    """(install command kmod runs for `modprobe MODULE` or None, loads the module, output)."""
    rc, out = oracle._run('-n', '-v', module)
    cmd, loads = None, False
    for ln in out.splitlines():
        w = ln.split(None, 1)
        if w and w[0] == 'install' and cmd is None:
            cmd = w[1].strip() if len(w) > 1 else ''
        if w and w[0] == 'insmod' and len(w) > 1:
            base = os.path.basename(w[1].split()[0])
            if any(base == module + suf or norm(base) == module + suf for suf in MODULE_SUFFIXES):
                loads = True
    return cmd, loads, rc, out


def compare_hard(x, verdict):
    """A description of the mismatch between fsgate's status x and kmod's explicit dry run, or None."""
    cmd, loads, rc, out = verdict
    # The dry run prints "install COMMAND OPTIONS" (the module's options lines appended).
    def runs(c):
        return cmd is not None and (cmd == c or cmd.startswith(c + ' ') or cmd.startswith(c + '\t'))
    want_hard = any(runs(c) for c in REFUSING)
    shown = '; '.join(ln.strip() for ln in out.splitlines()) or '(no output)'
    # kmod keeps trailing blanks of the line in the command; its dry run strips them.
    fc = x['install_command'].strip()
    if (not fc and cmd is not None) or (fc and not runs(fc)) or x['hard'] != want_hard or \
            (cmd is None and x['explicit_load_possible'] != loads):
        return (f'  MISMATCH {x["module"]} (explicit load): fsgate says hard={x["hard"]}, '
                f'explicit_load_possible={x["explicit_load_possible"]}, install {x["install_command"]!r} '
                f'from {x["install_file"]!r}; kmod: modprobe -n -v {x["module"]}: exit {rc}: {shown}')
    return None


REQUIRED_KEYS = {'module': str, 'types': list, 'state': str, 'origin': (str, type(None)),
                 'deciding_file': (str, type(None)), 'available': bool, 'builtin': bool,
                 'loaded': bool, 'mounted': bool}


def write_routes(hook, root):
    """fsgate's routes for ROOT's configuration; how many types they route."""
    p = subprocess.run([hook, '--refresh-routes'], env=dict(os.environ, FSGATE_ROOT=root),
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise RuntimeError(f'{hook} --refresh-routes exited {p.returncode}: {p.stderr.strip()[:500]}')
    try:
        with open(os.path.join(root, 'run/modprobe.d/fsgate-routes.conf')) as f:
            return sum(1 for ln in f if ln.startswith('alias '))
    except FileNotFoundError:
        return 0


def fsgate_list(fsgatectl, root):
    p = subprocess.run([fsgatectl, f'--root={root}', '--json', 'list'],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    if p.returncode != 0:
        raise RuntimeError(f'{fsgatectl} --root={root} --json list exited {p.returncode}: '
                           f'{p.stderr.strip()}')
    try:
        data = json.loads(p.stdout)
    except json.JSONDecodeError as ex:
        raise RuntimeError(f'fsgatectl printed invalid JSON ({ex}): {p.stdout[:500]!r}')
    if not isinstance(data, list):
        raise RuntimeError(f'fsgatectl printed {type(data).__name__}, not a JSON array')
    for x in data:
        if not isinstance(x, dict):
            raise RuntimeError(f'list entry is not an object: {x!r}')
        for key, t in REQUIRED_KEYS.items():
            if key not in x or not isinstance(x[key], t):
                raise RuntimeError(f'list entry lacks {key!r} of the right type: {x!r}')
        if x['state'] not in ('allowed', 'denied'):
            raise RuntimeError(f'list entry has state {x["state"]!r}: {x!r}')
        if not all(isinstance(t, str) and t for t in x['types']):
            raise RuntimeError(f'list entry has bad types: {x!r}')
    return data


def compare(entries, verdict):
    """Mismatches as (entry, expected state, {type: (loaded, rc, output)})."""
    out = []
    for x in entries:
        if not x['types']:
            continue
        m = norm(x['module'])
        per_type = {t: verdict(t) for t in x['types']}
        expected = 'allowed' if all(m in v[0] for v in per_type.values()) else 'denied'
        if x['state'] != expected:
            out.append((x, expected, per_type))
    return out


def format_mismatch(x, expected, per_type):
    lines = [f'  MISMATCH {x["module"]} (types {", ".join(x["types"])}): fsgate says {x["state"]} '
             f'(origin {x["origin"]!r}, deciding file {x["deciding_file"]!r}, builtin {x["builtin"]}), '
             f'kmod says {expected}']
    for t, (loaded, rc, out) in per_type.items():
        shown = '; '.join(ln.strip() for ln in out.splitlines()) or '(no output)'
        lines.append(f'    modprobe -n -v fs-{t}: exit {rc}: {shown}')
    return '\n'.join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--fsgatectl', help='the built fsgatectl (required)')
    ap.add_argument('--configs', type=int, default=60, help='number of configurations (default 60)')
    ap.add_argument('--seed', default='1', help='random seed (default 1)')
    ap.add_argument('--only', type=int, action='append', metavar='I',
                    help='run only configuration I (repeatable), e.g. to reproduce a failure')
    ap.add_argument('--skip', action='append', default=[], metavar='FEATURE',
                    help='do not generate FEATURE (repeatable); see --list-features')
    ap.add_argument('--list-features', action='store_true', help='list generator features and exit')
    ap.add_argument('--self-check', action='store_true',
                    help='also flip one fsgate state per configuration and verify it is caught')
    ap.add_argument('--show', action='store_true', help='print every configuration')
    ap.add_argument('--keep', action='store_true', help='keep the scratch root (path is printed)')
    ap.add_argument('--routes', metavar='HOOK', help='write fsgate\'s routes with HOOK --refresh-routes first')
    ap.add_argument('--base-dir', help='copy the *.conf files of this directory into usr/lib/modprobe.d first')
    a = ap.parse_args()
    global BASE_DIR
    BASE_DIR = a.base_dir

    if a.list_features:
        for f, d in FEATURES.items():
            print(f'{f:22} {d}')
        return 0
    if not a.fsgatectl:
        ap.error('--fsgatectl is required')
    bad = [f for f in a.skip if f not in FEATURES]
    if bad:
        ap.error(f'unknown feature(s) {", ".join(bad)}; see --list-features')
    if os.geteuid() != 0:
        print('kmod-differential: needs root (chroot); skipping', file=sys.stderr)
        return 77
    fsgatectl = os.path.abspath(a.fsgatectl)
    if not os.access(fsgatectl, os.X_OK):
        print(f'kmod-differential: {fsgatectl} is not executable', file=sys.stderr)
        return 1

    tmp = tempfile.mkdtemp(prefix='fsgate-kmod-diff.')
    root = os.path.join(tmp, 'root')
    try:
        t0 = time.monotonic()
        p = subprocess.run([MAKE_ROOT, root, '--with-kmod'], stdout=subprocess.PIPE, text=True)
        kver = next((ln[5:] for ln in p.stdout.splitlines() if ln.startswith('KVER=')), None)
        if p.returncode != 0 or not kver:
            print(f'kmod-differential: {MAKE_ROOT} failed (exit {p.returncode})', file=sys.stderr)
            return 1
        log(f'scratch root {root} (kernel {kver}) ready in {time.monotonic() - t0:.1f} s')
        model = KernelModel(os.path.join(root, 'usr/lib/modules', kver))
        gen = Generator(model, a.seed, set(a.skip))
        oracle = Oracle(root, kver)
        flip_rng = random.Random(f'fsgate-kmod-diff-flip:{a.seed}')

        indices = a.only if a.only else range(a.configs)
        n_configs = n_checks = n_mismatch = n_errors = 0
        n_flips = n_flips_caught = 0
        n_hard_checks = n_hard = 0
        kmod_allowed = kmod_denied = 0
        n_routes = 0
        seen_features = set()
        seen_types = set()
        for i in indices:
            c = gen.generate(i)
            seen_features |= c.features
            write_config(root, c)
            header = (f'configuration #{i} (reproduce: --seed {a.seed} --only {i}'
                      f'{"".join(" --skip " + s for s in a.skip)}):\n{c.describe()}')
            if a.show:
                log(header)
            n_configs += 1
            try:
                if a.routes:
                    n_routes += write_routes(a.routes, root)
                entries = fsgate_list(fsgatectl, root)
            except (RuntimeError, subprocess.TimeoutExpired) as ex:
                log(f'ERROR in {header}\n  {ex}')
                n_errors += 1
                if n_errors >= MAX_ERRORS:
                    log(f'stopping after {n_errors} errors')
                    break
                continue
            typed = [x for x in entries if x['types']]
            if len(typed) < MIN_TYPED_ENTRIES:
                log(f'ERROR in {header}\n  fsgatectl listed {len(entries)} entries, {len(typed)} '
                    f'with types (need at least {MIN_TYPED_ENTRIES})')
                n_errors += 1
                if n_errors >= MAX_ERRORS:
                    log(f'stopping after {n_errors} errors')
                    break
                continue

            cache = {}

            def verdict(t):
                if t not in cache:
                    cache[t] = oracle.probe(t)
                return cache[t]

            mismatches = compare(entries, verdict)
            for x in typed:
                seen_types.update(x['types'])
                n_checks += len(x['types'])
                for t in x['types']:
                    if norm(x['module']) in verdict(t)[0]:
                        kmod_allowed += 1
                    else:
                        kmod_denied += 1
            if mismatches:
                n_mismatch += len(mismatches)
                log(f'FAIL {header}')
                for mm in mismatches:
                    log(format_mismatch(*mm))

            # Hard or soft: the explicit load, for every module an install line names.
            targets = set(model.targets)
            for m in sorted(install_named(c) & targets):
                try:
                    x = fsgate_status(fsgatectl, root, m)
                except (RuntimeError, subprocess.TimeoutExpired, json.JSONDecodeError) as ex:
                    log(f'ERROR in {header}\n  {ex}')
                    n_errors += 1
                    continue
                v = explicit_verdict(oracle, m)
                n_hard_checks += 1
                n_hard += x['hard']
                bad = compare_hard(x, v)
                if bad:
                    n_mismatch += 1
                    log(f'FAIL {header}\n{bad}')

            if a.self_check:
                vi = flip_rng.choice([j for j, x in enumerate(entries) if x['types']])
                victim = entries[vi]
                flipped = [dict(x) for x in entries]
                flipped[vi]['state'] = 'denied' if victim['state'] == 'allowed' else 'allowed'
                got = {(mm[0]['module'], tuple(mm[0]['types'])) for mm in compare(flipped, verdict)}
                real = {(mm[0]['module'], tuple(mm[0]['types'])) for mm in mismatches}
                n_flips += 1
                if got == real ^ {(victim['module'], tuple(victim['types']))}:
                    n_flips_caught += 1
                else:
                    log(f'SELF-CHECK FAIL in {header}\n  flipping {victim["module"]} to the wrong '
                        f'state was not reported as exactly one new mismatch (got {sorted(got)})')

        # Coverage notes: what fsgate left out, which generator features never fired.
        all_types = {t for m in model.targets for t in model.types[m]}
        missing = sorted(all_types - seen_types)
        if missing and n_configs:
            log(f'note: fs types of modules in the tree that fsgate never listed: {", ".join(missing)}')
        unused = sorted(set(FEATURES) - seen_features - set(a.skip))
        if unused and not a.only:
            log(f'note: generator features that never fired: {", ".join(unused)}')

        log(f'explicit loads: {n_hard_checks} checks, {n_hard} hard denies')
        log(f'checked {n_configs} configurations, {n_checks} type checks, {n_mismatch} mismatches'
            f'{f", {n_errors} errors" if n_errors else ""} '
            f'(kmod: {kmod_allowed} loads, {kmod_denied} blocked; {oracle.calls} modprobe runs; '
            f'{time.monotonic() - t0:.1f} s)')
        failed = n_mismatch > 0 or n_errors > 0
        if a.routes:
            log(f'routes: {n_routes} written in all')
            if n_configs >= 5 and not a.only and n_routes == 0:
                log('FAIL: no route was written: the routes were not put to the test')
                failed = True
        if n_configs >= 5 and n_checks and not a.only and (kmod_allowed == 0 or kmod_denied == 0):
            log('FAIL: kmod never ' + ('loaded' if kmod_allowed == 0 else 'blocked') +
                ' anything: the oracle or the generator is broken')
            failed = True
        if n_configs and n_checks == 0:
            log('FAIL: nothing was checked')
            failed = True
        if a.self_check:
            log(f'self-check: {n_flips_caught} of {n_flips} deliberate flips caught')
            if n_flips == 0 or n_flips_caught != n_flips:
                return 1
            if failed:
                log('self-check: the comparison is live (the real mismatches above are reported, '
                    'not counted against the self-check)')
            return 0
        return 1 if failed else 0
    finally:
        if a.keep:
            log(f'kept scratch root {root}')
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())

# SPDX-License-Identifier: LGPL-2.1-or-later
"""openSUSE's own pieces, from suse-module-tools' sources in ../shared/third_party (GPL-2.0-or-
later; read and run by the tests, nothing of them goes into fsgate): its vendor files made as its
spec makes them, and its real `unblacklist` helper run on a terminal over a scratch root."""

import os
import re
import shlex
import shutil
import subprocess
import tarfile

from .root import PREFIX, SUFFIX

TOOLS_VERSION = 'aa56d018d9bc'
# ../shared beside the repository (tests/lib/fsgatetest/ is three levels down in it).
TOOLS_TARBALL = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', '..', 'shared',
                             'third_party', 'suse-module-tools', f'suse-module-tools-{TOOLS_VERSION}.tar.gz')
UNBLACKLIST = '/usr/lib/module-init-tools/unblacklist'


def available():
    return os.path.exists(TOOLS_TARBALL)


def _member(name):
    with tarfile.open(TOOLS_TARBALL) as t:
        return t.extractfile(f'suse-module-tools-{TOOLS_VERSION}/{name}').read().decode()


def _spec():
    return _member('suse-module-tools.spec')


def default_list():
    """The spec's %fs_blacklist: the filesystems openSUSE denies by default."""
    m = re.search(r'^%global fs_blacklist (.+)$', _spec(), re.M)
    return m.group(1).split()


def vendor_file(module):
    """The text of /usr/lib/modprobe.d/60-blacklist_fs-MODULE.conf as the spec's %install loop
    writes it (its `echo "\\ ... " >FILE`, with $mod and %{name} expanded as rpm and sh would,
    and the newline echo adds after the text's own)."""
    spec = _spec()
    name = re.search(r'^Name:\s*(\S+)$', spec, re.M).group(1)
    body = re.search(r'for mod in %\{fs_blacklist\}; do\n    echo "\\\n(.*?)" \\\n', spec, re.S).group(1)
    return body.replace('%{name}', name).replace('\\"', '"').replace('$mod', module) + '\n'


def install_layout(root):
    """ROOT gets openSUSE's layout instead of fsgate's vendor package: the spec's vendor files
    for its default list and the unblacklist helper where their install lines run it."""
    vendor_dir = os.path.join(root, 'usr/lib/modprobe.d')
    os.makedirs(vendor_dir, exist_ok=True)
    for name in os.listdir(vendor_dir):
        if name.startswith(PREFIX) and name.endswith(SUFFIX):
            os.unlink(os.path.join(vendor_dir, name))
    for module in default_list():
        with open(os.path.join(vendor_dir, PREFIX + module + SUFFIX), 'w') as f:
            f.write(vendor_file(module))
    helper = os.path.join(root, UNBLACKLIST.lstrip('/'))
    os.makedirs(os.path.dirname(helper), exist_ok=True)
    with open(helper, 'w') as f:
        f.write(_member('unblacklist'))
    os.chmod(helper, 0o755)


def run_with_root_config(root, argv, input=None, timeout=60):
    """Runs ARGV (as root) in a private mount namespace where ROOT's etc/modprobe.d and
    usr/lib/modprobe.d stand at /etc/modprobe.d and /usr/lib/modprobe.d, and ROOT's run at /run
    (for run/modprobe.d, which the host may not have), the directories openSUSE's helper and
    kmod read: the host's /etc and /run are never touched. Returns (exit status, stdout and
    stderr)."""
    if not shutil.which('unshare'):
        raise RuntimeError('unshare is needed to put a scratch root\'s modprobe.d in place')
    os.makedirs(os.path.join(root, 'run', 'modprobe.d'), exist_ok=True)
    inner = ('set -e; mount --bind "$1/etc/modprobe.d" /etc/modprobe.d; '
             'mount --bind "$1/usr/lib/modprobe.d" /usr/lib/modprobe.d; '
             'mount --bind "$1/run" /run; shift; exec "$@"')
    p = subprocess.run(['unshare', '--mount', '--propagation', 'private', 'sh', '-c', inner, 'sh', root, *argv],
                       input=input, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def unblacklist(root, module, answer, timeout=60):
    """Runs ROOT's unblacklist helper for MODULE as root on a terminal (util-linux `script`),
    answering ANSWER ("y", "n", "e") at its prompt, as `modprobe MODULE` on a terminal would,
    over ROOT's configuration (run_with_root_config()). bash, not dash: the helper tests $UID.
    Returns (exit status, what the terminal showed)."""
    if not shutil.which('script'):
        raise RuntimeError('script is needed to run openSUSE\'s unblacklist on a terminal')
    helper = os.path.join(root, UNBLACKLIST.lstrip('/'))
    # bash -c TEXT NAME: the helper's $0 is its installed path, as in the comment it writes.
    on_terminal = f'bash -c "$(cat {shlex.quote(helper)})" {UNBLACKLIST} {shlex.quote(module)}'
    return run_with_root_config(root, ['script', '-qec', on_terminal, '/dev/null'], input=answer + '\n',
                                timeout=timeout)

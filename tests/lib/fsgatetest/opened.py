# SPDX-License-Identifier: LGPL-2.1-or-later
"""What Open safely leaves on the host: the FUSE mounts under a prefix and the drivers serving
them (squashfuse, fuse2fs, guestmount and its QEMU), for the tests that open media (bus-open,
bus-open-vm, bus-notify, notify-gnome)
to check and to clean up after themselves; the media they open (images, the squashfs stick
those that click Open safely open), and the open itself, timed."""

import hashlib
import os
import shutil
import subprocess
import tempfile
import time

from .root import udev_record
from .util import TIMEOUT, wait_until


def mounts_under(prefix):
    """(mountpoint, options, fstype, superblock options) of each mount below prefix."""
    out = []
    with open('/proc/self/mountinfo') as f:
        for line in f:
            fields = line.split()
            mp = fields[4].encode().decode('unicode_escape')
            if mp.startswith(prefix):
                sep = fields.index('-')
                out.append((mp, fields[5], fields[sep + 1], fields[sep + 3]))
    return out


def _cmdline(pid):
    try:
        with open(f'/proc/{pid}/cmdline', 'rb') as f:
            return f.read().split(b'\0')
    except OSError:
        return []


def _parent(pid):
    try:
        with open(f'/proc/{pid}/stat') as f:
            return int(f.read().rsplit(')', 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def drivers(root=None):
    """pids of the drivers serving a handed-over connection (squashfuse, fuse2fs; guestmount,
    whose medium is at fd 1000): every one
    on the machine, or with root those of the fsgated of that scratch root (their parent;
    fsgated starts them). Other checkouts' suites may run at the same time: a test that
    waits for its own drivers to end, or ends them, names its root."""
    pids = []
    want = ('--root=' + root).encode() if root else None
    for p in os.listdir('/proc'):
        if not p.isdigit():
            continue
        cmd = _cmdline(p)
        if not (cmd and ((cmd[0] in (b'squashfuse', b'fuse2fs') and b'/dev/fd/3' in cmd) or
                         (cmd[0] == b'guestmount' and b'/dev/fd/1000' in cmd))):
            continue
        if want and want not in _cmdline(_parent(p)):
            continue
        pids.append(int(p))
    return pids


def vm_processes():
    """pids of what the VM route runs as nobody: guestmount (and its recovery process) and
    QEMU. Another user's QEMU (a VM suite's, as root) is not counted."""
    pids = []
    for p in os.listdir('/proc'):
        try:
            if not p.isdigit() or os.stat(f'/proc/{p}').st_uid != 65534:
                continue
            with open(f'/proc/{p}/comm') as f:
                comm = f.read().strip()
        except OSError:
            continue
        if comm.startswith('qemu-system') or comm == 'guestmount':
            pids.append(int(p))
    return pids


def unmount_all(prefix, root=None):
    """What a failed test left: every mount below prefix lazily unmounted (which ends its
    driver), every driver killed (with root: that scratch root's fsgated's only)."""
    for mp, *_ in mounts_under(prefix):
        subprocess.run(['umount', '-l', mp], check=False)
    for pid in drivers(root) + (vm_processes() if root is None else []):
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass


def reachable_opendir(workdir, root):
    """The scratch root's run/fsgate-open, where the mountpoints are: workdir and root (below
    it) made enterable for the callers who open media, who must reach them."""
    for d in (workdir, root):
        os.chmod(d, 0o755)
    return os.path.join(root, 'run/fsgate-open')


def images_dir(workdir):
    """workdir/images, new, for the test's images: every user may list it (a caller names
    the image it opens by its path)."""
    images = os.path.join(workdir, 'images')
    os.makedirs(images)
    os.chmod(images, 0o755)
    return images


def only_for(path, uid):
    """path readable by uid alone (the driver, nobody, reads it through the descriptor
    handed over, never by its path)."""
    os.chown(path, uid, uid)
    os.chmod(path, 0o600)


def truncated_copy(image, path, size):
    """path: the first size bytes of image, readable by all: its header says the type, the
    driver cannot read the rest."""
    with open(image, 'rb') as f:
        data = f.read(size)
    with open(path, 'wb') as f:
        f.write(data)
    os.chmod(path, 0o644)


def timed_open(stack, *args, uid=None, timeout=TIMEOUT):
    """fsgatectl open ARGS as uid: (its result, the seconds it took)."""
    t0 = time.monotonic()
    r = stack.ctl('open', *args, uid=uid, timeout=timeout)
    return r, time.monotonic() - t0


def wait_nothing_open(stack, opendir):
    """What fsgated does when a driver ends comes a moment after it: no mount below opendir,
    no mountpoint left in it, nothing in OpenMedia."""
    wait_until(lambda: not mounts_under(opendir) and not stack.prop('OpenMedia') and
               not (os.path.isdir(opendir) and os.listdir(opendir)),
               what='no mount, no mountpoint, nothing in OpenMedia')


def assert_read_back(tc, mp, files, uid):
    """For a BusTestCase tc: each of files ({name: content}) below mp reads back whole as uid."""
    for name, data in files.items():
        rc, out, err = tc.stack.run(['sha256sum', '--', os.path.join(mp, name)], uid=uid)
        tc.assertEqual(rc, 0, err)
        tc.assertEqual(out.split()[0], hashlib.sha256(data).hexdigest(), name)


def assert_inert_mount(tc, mp, fstype):
    """For a BusTestCase tc: mp is one mount of fstype, read-only, nosuid, nodev and noexec,
    for its user alone (no allow_other). Returns its superblock options."""
    [(_, opts, shown, super_opts)] = mounts_under(mp)
    tc.assertEqual(shown, fstype)
    for o in ('ro', 'nosuid', 'nodev', 'noexec'):
        tc.assertIn(o, opts.split(','))
    tc.assertNotIn('allow_other', super_opts)
    return super_opts


def squashfs_stick(tc):
    """For a BusTestCase tc: a loop device (read-only) over a squashfs image with one file,
    hello.txt, squashfs denied the way openSUSE denies it. fsgated reads the scratch root's
    udev database (the record written here): the node names the stick. The mountpoints are
    under the scratch root's run/fsgate-open, which the opener's uid must reach. Skips
    without loop devices, mksquashfs or squashfuse. (node, that run/fsgate-open)."""
    if not os.path.exists('/dev/loop-control'):
        tc.skipTest('no loop devices on this kernel')
    if not shutil.which('mksquashfs') or not os.path.exists('/usr/bin/squashfuse'):
        tc.skipTest('mksquashfs or squashfuse missing (tools/install-deps)')
    tc.vendor('squashfs', 'blacklist squashfs\n')
    opendir = reachable_opendir(tc.workdir, tc.root)
    tc.addCleanup(unmount_all, opendir, tc.root)
    src = tempfile.mkdtemp(prefix='src-', dir=tc.workdir)
    with open(os.path.join(src, 'hello.txt'), 'w') as f:
        f.write('Hello from the stick\n')
    img = tempfile.mktemp(prefix='stick-', suffix='.sqfs', dir=tc.workdir)
    subprocess.run(['mksquashfs', src, img, '-noappend', '-quiet', '-no-progress'], check=True,
                   stdout=subprocess.DEVNULL)
    node = subprocess.run(['losetup', '-r', '-f', '--show', img], capture_output=True, text=True,
                          check=True).stdout.strip()
    tc.addCleanup(subprocess.run, ['losetup', '-d', node], capture_output=True)
    udev_record(tc.root, node, 'squashfs')
    return node, opendir

# SPDX-License-Identifier: LGPL-2.1-or-later
"""What Open safely leaves on the host: the FUSE mounts under a prefix and the drivers serving
them (squashfuse, fuse2fs, guestmount and its QEMU), for the tests that open media (bus-open, bus-notify) to check and
to clean up after themselves."""

import os
import subprocess


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


def drivers():
    """pids of the drivers serving a handed-over connection (squashfuse, fuse2fs; guestmount,
    whose medium is at fd 1000)."""
    pids = []
    for p in os.listdir('/proc'):
        if not p.isdigit():
            continue
        try:
            with open(f'/proc/{p}/cmdline', 'rb') as f:
                cmd = f.read().split(b'\0')
        except OSError:
            continue
        if cmd and ((cmd[0] in (b'squashfuse', b'fuse2fs') and b'/dev/fd/3' in cmd) or
                    (cmd[0] == b'guestmount' and b'/dev/fd/1000' in cmd)):
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


def unmount_all(prefix):
    """What a failed test left: every mount below prefix lazily unmounted, every driver killed."""
    for mp, *_ in mounts_under(prefix):
        subprocess.run(['umount', '-l', mp], check=False)
    for pid in drivers() + vm_processes():
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass

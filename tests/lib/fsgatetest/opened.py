# SPDX-License-Identifier: LGPL-2.1-or-later
"""What Open safely leaves on the host: the FUSE mounts under a prefix and the drivers serving
them (squashfuse, fuse2fs), for the tests that open media (bus-open, bus-notify) to check and
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
    """pids of the drivers serving a handed-over connection (squashfuse, fuse2fs)."""
    pids = []
    for p in os.listdir('/proc'):
        if not p.isdigit():
            continue
        try:
            with open(f'/proc/{p}/cmdline', 'rb') as f:
                cmd = f.read().split(b'\0')
        except OSError:
            continue
        if cmd and cmd[0] in (b'squashfuse', b'fuse2fs') and b'/dev/fd/3' in cmd:
            pids.append(int(p))
    return pids


def unmount_all(prefix):
    """What a failed test left: every mount below prefix lazily unmounted, every driver killed."""
    for mp, *_ in mounts_under(prefix):
        subprocess.run(['umount', '-l', mp], check=False)
    for pid in drivers():
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass

# SPDX-License-Identifier: LGPL-2.1-or-later
"""Journal files with the entries fsgated writes (service/block-reports.c, service/log.c), made by
systemd's own writer (systemd-journal-remote, from export format): the host runs no journald.
fsgatectl log reads them through FSGATE_JOURNAL_DIR."""

import struct
import subprocess
import time

JOURNAL_REMOTE = '/lib/systemd/systemd-journal-remote'
BLOCKED = 'f300f0bf231648efbb9c6d79d5d67564'
CHANGED = 'efb905bbe1504e55b29815e87e6c0f5a'
LOADED = '8320ed33661a44c3985de4e3bbfdd10d'
REFUSED = 'd97d19d74e8c4d338aeeb7ba7ea1c3f0'
NOW = int(time.time() * 1e6)
MIN = 60 * 1000000


def export_entry(fields, usec):
    """One entry in the journal export format; a value with a newline or control byte binary."""
    out = [f'__REALTIME_TIMESTAMP={usec}\n'.encode(), f'__MONOTONIC_TIMESTAMP={usec}\n'.encode(),
           b'_BOOT_ID=0123456789abcdef0123456789abcdef\n', b'_UID=0\n']
    for k, v in fields.items():
        if k == '_UID':
            out[3] = f'_UID={v}\n'.encode()
            continue
        b = v.encode() if isinstance(v, str) else v
        if any(c < 32 for c in b):
            out.append(k.encode() + b'\n' + struct.pack('<Q', len(b)) + b + b'\n')
        else:
            out.append(k.encode() + b'=' + b + b'\n')
    return b''.join(out) + b'\n'


def blocked(module, usec, **extra):
    f = {'MESSAGE': f'Blocked autoload of filesystem {module}', 'MESSAGE_ID': BLOCKED, 'PRIORITY': '4',
         'SYSLOG_IDENTIFIER': 'fsgated', 'FSGATE_TYPE': module, 'FSGATE_MODULE': module, 'FSGATE_DEVICE': '',
         'FSGATE_SOURCE': f'/usr/lib/modprobe.d/60-blacklist_fs-{module}.conf', 'FSGATE_ORIGIN': 'vendor',
         'FSGATE_LABEL': '', 'FSGATE_CAUSE': 'kernel', 'FSGATE_SEAT': '', 'FSGATE_SESSION': '',
         'FSGATE_SESSION_UID': '-1'}
    f.update(extra)
    return export_entry(f, usec)


def request(message_id, module, usec, uid=0):
    return export_entry({'MESSAGE': 'a request', 'MESSAGE_ID': message_id, 'SYSLOG_IDENTIFIER': 'fsgated',
                         'FSGATE_REQUEST_UID': str(uid), 'FSGATE_REQUEST_PID': '42', 'FSGATE_MODULE': module},
                        usec)


def write_journal(path, entries):
    """entries (export_entry()'s bytes) into a new journal file at path."""
    p = subprocess.run([JOURNAL_REMOTE, '-o', path, '-'], input=b''.join(entries), capture_output=True,
                       timeout=60)
    if p.returncode != 0:
        raise RuntimeError(f'{JOURNAL_REMOTE} failed: {p.stderr.decode(errors="replace")}')

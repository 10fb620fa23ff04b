# SPDX-License-Identifier: LGPL-2.1-or-later
"""Journal files with the entries fsgated writes (service/block-reports.c, service/log.c), made by
systemd's own writer (systemd-journal-remote, from export format): the host runs no journald.
fsgatectl log reads them through FSGATE_JOURNAL_DIR."""

import os
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


WOULD_BLOCK = '0d0f34f05bae466196f7be43c1b94579'
JOURNALD = '/lib/systemd/systemd-journald'


class Journald:
    """The real systemd-journald, run in a private mount namespace whose /run is a scratch
    directory (the host runs no journald, and its /run and /etc are never touched): programs
    started with run() log to it through the socket sd_journal_send() knows,
    /run/systemd/journal/socket, and fsgatectl reads its files with FSGATE_JOURNAL_DIR=self.dir.
    The kernel log is not read (ReadKMsg=no): only what the programs send is there."""

    def __init__(self, scratch):
        self.run_dir = os.path.join(scratch, 'journald-run')
        self.conf = os.path.join(scratch, 'journald.conf')
        os.makedirs(os.path.join(self.run_dir, 'systemd', 'journal'), exist_ok=True)
        os.makedirs(os.path.join(self.run_dir, 'log'), exist_ok=True)
        with open(self.conf, 'w') as f:
            f.write('[Journal]\nStorage=volatile\nReadKMsg=no\nRateLimitBurst=0\n')
        self.dir = os.path.join(self.run_dir, 'log', 'journal')
        self.socket = os.path.join(self.run_dir, 'systemd', 'journal', 'socket')
        inner = ('set -e; mount --bind "$1" /run; mount --bind "$2" /etc/systemd/journald.conf; '
                 'exec ' + JOURNALD)
        self.proc = subprocess.Popen(['unshare', '--mount', '--propagation', 'private', 'sh', '-c', inner, 'sh',
                                      self.run_dir, self.conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while not os.path.exists(self.socket):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError('systemd-journald did not start')
            time.sleep(0.05)

    def run(self, argv, env=None, timeout=30):
        """argv with /run/systemd the journal's (and nothing else of /run changed but that)."""
        inner = 'set -e; mount --bind "$1" /run/systemd; shift; exec "$@"'
        return subprocess.run(['unshare', '--mount', '--propagation', 'private', 'sh', '-c', inner, 'sh',
                               os.path.join(self.run_dir, 'systemd'), *argv], env=env, capture_output=True,
                              text=True, timeout=timeout)

    def sync(self):
        """Everything sent so far is in the files (journalctl --sync asks the same)."""
        p = self.run(['journalctl', '--sync'])
        if p.returncode != 0:
            time.sleep(1)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

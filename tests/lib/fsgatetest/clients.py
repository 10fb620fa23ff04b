# SPDX-License-Identifier: LGPL-2.1-or-later
"""Real clients on the private system bus: busctl, dbus-send, gdbus and fsgatectl (as root
or, through setpriv, as another uid), their replies parsed; signals through dbus-monitor."""

import json
import re
import shlex
import subprocess
import threading
import time

from .names import BUS_NAME, IFACE, OBJ_PATH
from .util import CONFIG, TIMEOUT, die_with_parent, stop_process


def unpack(v):
    """busctl --json=short's variant {'type': T, 'data': D} to D, recursively for a{sv}."""
    if isinstance(v, dict) and set(v) == {'type', 'data'}:
        return unpack(v['data']) if v['type'] == 'a{sv}' else v['data']
    if isinstance(v, dict):
        return {k: unpack(x) for k, x in v.items()}
    return v


class Reply:
    """One finished client call: ok, error name and message, parsed data."""

    def __init__(self, cmd, rc, out, err, error=None, message=None, data=None):
        self.cmd, self.rc, self.out, self.err = cmd, rc, out, err
        self.error, self.message, self.data = error, message, data

    @property
    def ok(self):
        return self.rc == 0 and self.error is None

    def __repr__(self):
        return (f'Reply(rc={self.rc}, error={self.error!r}, message={self.message!r}, '
                f'data={self.data!r}, cmd={self.cmd!r}, stderr={self.err[-500:]!r})')


class Entry:
    FIELDS = ('module', 'types', 'state', 'origin', 'source', 'available', 'builtin', 'loaded', 'mounted')

    def __init__(self, values):
        if len(values) != len(self.FIELDS):
            raise AssertionError(f'an entry has {len(values)} fields, not 9: {values!r}')
        for k, v in zip(self.FIELDS, values):
            setattr(self, k, v)

    def as_tuple(self):
        return tuple(getattr(self, k) for k in self.FIELDS)

    def __eq__(self, other):
        return isinstance(other, Entry) and self.as_tuple() == other.as_tuple()

    def __repr__(self):
        return 'Entry' + repr(self.as_tuple())


class Typed:
    """A dbus-send argument given verbatim, e.g. Typed('uint32:1')."""

    def __init__(self, arg):
        self.arg = arg


class PendingSend:
    """A dbus-send still running (Clients.send_async())."""

    def __init__(self, cmd, proc, timeout):
        self.cmd, self.proc, self.timeout = cmd, proc, timeout
        self.reply = None

    def poll(self):
        return self.proc.poll()

    def result(self):
        if self.reply is None:
            out, err = self.proc.communicate(timeout=self.timeout + 5)
            self.reply = Clients._send_reply(self.cmd, self.proc.returncode, out.decode(errors='replace'),
                                             err.decode(errors='replace'))
        return self.reply

    def wait(self):
        """Ends it either way (a cleanup)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate()


class Clients:
    """Stack's client calls; the stack provides env and busdir (the clients' working directory)."""

    def as_uid(self, cmd, uid):
        if uid in (None, 0):
            return cmd
        return ['setpriv', f'--reuid={uid}', f'--regid={uid}', '--clear-groups', '--'] + cmd

    def run(self, cmd, uid=None, timeout=TIMEOUT, input=None, env=None):
        full = self.as_uid(cmd, uid)
        p = subprocess.run(full, env=env or self.env, capture_output=True, timeout=timeout + 5,
                           input=input, cwd=self.busdir)
        return p.returncode, p.stdout.decode(errors='replace'), p.stderr.decode(errors='replace')

    @staticmethod
    def _send_cmd(method, args, timeout):
        typed = [('string:' + a if isinstance(a, str) else f'uint64:{a}') if not isinstance(a, Typed) else a.arg
                 for a in args]
        return ['dbus-send', '--system', '--print-reply', f'--reply-timeout={timeout * 1000}',
                '--dest=' + BUS_NAME, OBJ_PATH, f'{IFACE}.{method}'] + typed

    @staticmethod
    def _send_reply(cmd, rc, out, err):
        m = re.match(r'^Error ([A-Za-z0-9_.]+): (.*)$', err, re.S)
        if m:
            return Reply(cmd, rc, out, err, error=m.group(1), message=m.group(2).rstrip('\n'))
        if rc != 0:
            return Reply(cmd, rc, out, err, error='(dbus-send failed)', message=err)
        return Reply(cmd, rc, out, err)

    def send(self, method, *args, uid=None, timeout=TIMEOUT):
        """dbus-send: the exact error name and message. args are dbus-send's typed strings
        ('string:hfs', 'uint64:1'); a str is taken as string:, an int as uint64:."""
        cmd = self._send_cmd(method, args, timeout)
        rc, out, err = self.run(cmd, uid=uid, timeout=timeout)
        return self._send_reply(cmd, rc, out, err)

    def send_async(self, method, *args, uid=None, timeout=TIMEOUT):
        """send() without waiting: poll() is None while the call is unanswered, result() waits
        for the Reply."""
        cmd = self._send_cmd(method, args, timeout)
        return PendingSend(cmd, subprocess.Popen(self.as_uid(cmd, uid), env=self.env, cwd=self.busdir,
                                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE), timeout)

    def busctl(self, method, sig='', *args, uid=None, timeout=TIMEOUT, interactive=None, iface=IFACE):
        """busctl --json: parsed return values. (busctl shows only 'Access denied' for
        AccessDenied: use send() or gdbus() for error names.)"""
        cmd = ['busctl', '--system', '--json=short', f'--timeout={timeout}']
        if interactive is not None:
            cmd.append('--allow-interactive-authorization=' + ('yes' if interactive else 'no'))
        cmd += ['call', BUS_NAME, OBJ_PATH, iface, method]
        if sig:
            cmd += [sig] + [str(a) for a in args]
        rc, out, err = self.run(cmd, uid=uid, timeout=timeout)
        if rc != 0:
            return Reply(cmd, rc, out, err, error='(busctl failed)', message=err.strip())
        data = json.loads(out)['data'] if out.strip() else None
        return Reply(cmd, rc, out, err, data=data)

    def gdbus(self, method, *args, uid=None, interactive=False, timeout=TIMEOUT):
        """gdbus call: can set allow-interactive-authorization and prints error names."""
        cmd = ['gdbus', 'call', '--system', '--dest', BUS_NAME, '--object-path', OBJ_PATH,
               '--method', f'{IFACE}.{method}', '--timeout', str(timeout)]
        if interactive:
            cmd.append('--interactive')
        cmd += ['--'] + [a if isinstance(a, str) else f'uint64 {a}' for a in args]
        rc, out, err = self.run(cmd, uid=uid, timeout=timeout)
        m = re.search(r'GDBus\.Error:([A-Za-z0-9_.]+): (.*)$', err, re.S)
        if m:
            return Reply(cmd, rc, out, err, error=m.group(1), message=m.group(2).strip())
        if rc != 0:
            return Reply(cmd, rc, out, err, error='(gdbus failed)', message=err)
        return Reply(cmd, rc, out, err)

    def ctl(self, *args, uid=None, timeout=TIMEOUT):
        cmd = [CONFIG.fsgatectl] + list(args)
        rc, out, err = self.run(cmd, uid=uid, timeout=timeout, input=b'')
        return Reply(cmd, rc, out, err)

    def run_hint(self, line, uid=None, timeout=TIMEOUT):
        """A command fsgatectl printed as advice ("fsgatectl deny --soft hfs"), run as written
        (shell words), with this build's fsgatectl for the first word: every hint fsgate
        prints must work."""
        words = shlex.split(line)
        if not words or words[0] != 'fsgatectl':
            raise AssertionError(f'not a fsgatectl command: {line!r}')
        return self.ctl(*words[1:], uid=uid, timeout=timeout)

    # -- convenience over busctl (root) --------------------------------------------------
    def get(self, name, uid=None):
        r = self.busctl('GetFilesystem', 's', name, uid=uid)
        if not r.ok:
            raise AssertionError(f'GetFilesystem({name!r}) failed: {r!r}')
        return Entry(r.data[0])

    def list(self, uid=None):
        r = self.busctl('ListFilesystems', uid=uid)
        if not r.ok:
            raise AssertionError(f'ListFilesystems failed: {r!r}')
        return [Entry(v) for v in r.data[0]]

    def prop(self, name):
        cmd = ['busctl', '--system', '--json=short', 'get-property', BUS_NAME, OBJ_PATH, IFACE, name]
        rc, out, err = self.run(cmd)
        if rc != 0:
            raise AssertionError(f'get-property {name} failed: {err}')
        return json.loads(out)['data']


class SignalMonitor:
    """Collects FilesystemChanged signals with a real dbus-monitor (BecomeMonitor as root)."""

    def __init__(self, stack):
        self.stack = stack
        self.signals = []          # (path, sender, [args])
        self.cond = threading.Condition()
        rule = f"type='signal',interface='{IFACE}',member='FilesystemChanged'"
        self.proc = subprocess.Popen(['stdbuf', '-oL', 'dbus-monitor', '--system', rule],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=stack.env, text=True,
                                     errors='replace', preexec_fn=die_with_parent)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()
        # Ready once our own marker signal comes through.
        self._marker = 0
        self.barrier()

    def _read(self):
        cur = None
        for line in self.proc.stdout:
            if line.startswith('signal '):
                m = re.search(r'sender=(\S+) .* path=([^;]+); interface=([^;]+); member=(\S+)', line)
                cur = None
                if m and m.group(4) == 'FilesystemChanged':
                    cur = (m.group(2), m.group(1), [])
                    with self.cond:
                        self.signals.append(cur)
                        self.cond.notify_all()
                continue
            m = re.match(r'^\s+string "(.*)"$', line.rstrip('\n'))
            if cur is not None and m:
                with self.cond:
                    cur[2].append(m.group(1))
                    self.cond.notify_all()

    def barrier(self):
        """Sends a marker signal and waits until it arrives: everything the daemon emitted
        before now has been read."""
        self._marker += 1
        tag = f'__marker_{self._marker}__'
        deadline = time.monotonic() + TIMEOUT
        # Sent again until seen: the first one may go out before dbus-monitor is a monitor.
        while True:
            rc, _, err = self.stack.run(['dbus-send', '--system', '--type=signal', '/org/fsgate/test/marker',
                                         f'{IFACE}.FilesystemChanged', 'string:' + tag, 'string:-', 'string:-'])
            if rc != 0:
                raise AssertionError('cannot send a marker signal: ' + err)
            with self.cond:
                if self.cond.wait_for(lambda: any(len(s[2]) == 3 and s[2][0] == tag for s in self.signals), 0.25):
                    return
            if time.monotonic() > deadline:
                raise AssertionError('dbus-monitor did not see the marker signal')

    def take(self):
        """Signals from the service since the last take(), as (module, state, origin)."""
        self.barrier()
        with self.cond:
            owner = self.stack.name_owner(BUS_NAME) if self.stack.has_owner(BUS_NAME) else None
            out = []
            for path, sender, args in self.signals:
                if path == OBJ_PATH:
                    if sender != owner:
                        raise AssertionError(f'FilesystemChanged from {sender}, not the owner {owner} of {BUS_NAME}')
                    out.append(tuple(args))
            self.signals.clear()
            return out

    def stop(self):
        stop_process(self.proc)
        self.thread.join(TIMEOUT)
        self.proc.stdout.close()


MARKER_PATH = '/org/fsgate/test/marker'


class BlockedMonitor:
    """Blocked signals as (type, module, device, {detail: value}) via dbus-monitor, with
    the rule sender='org.fsgate.fsgate1': dbus-daemon matches a well-known sender against
    the name's owner when the signal is sent, so the first Blocked of a newly activated
    fsgated is seen too (issue 40; a client that learns the owner first and then subscribes
    to it, as `gdbus monitor --dest` does, can miss it). Returns once the rules are in place:
    a marker signal of its own (another sender, MARKER_PATH) has come through. wrapper: a
    command dbus-monitor runs under (e.g. nice)."""

    def __init__(self, stack, wrapper=()):
        self.signals, self.cond = [], threading.Condition()
        self.markers = 0
        rule = f"type='signal',sender='{BUS_NAME}',interface='{IFACE}',member='Blocked'"
        marker = f"type='signal',path='{MARKER_PATH}'"
        self.proc = subprocess.Popen([*wrapper, 'stdbuf', '-oL', 'dbus-monitor', '--system', rule, marker],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=stack.env, text=True,
                                     errors='replace', preexec_fn=die_with_parent)
        threading.Thread(target=self._read, daemon=True).start()
        # dbus-monitor becomes a monitor asynchronously: markers until one arrives.
        deadline = time.monotonic() + TIMEOUT
        while True:
            rc, _, err = stack.run(['dbus-send', '--system', '--type=signal', MARKER_PATH, 'org.fsgate.test.Marker.Ready'])
            if rc != 0:
                raise AssertionError('cannot send a marker signal: ' + err)
            with self.cond:
                if self.cond.wait_for(lambda: self.markers > 0, 0.25):
                    break
            if time.monotonic() > deadline:
                raise AssertionError('dbus-monitor did not see the marker signal')

    def _read(self):
        cur, key = None, None
        for line in self.proc.stdout:
            if line.startswith('signal '):
                cur = None
                if f'path={MARKER_PATH};' in line:
                    with self.cond:
                        self.markers += 1
                        self.cond.notify_all()
                    continue
                if 'member=Blocked' in line:
                    cur = {'args': [], 'details': {}}
                    with self.cond:
                        self.signals.append(cur)
                continue
            if cur is None:
                continue
            if line.rstrip('\n') == '   ]':
                # The end of the details (a{sv}, at the signal's top level): complete.
                with self.cond:
                    cur['done'] = True
                    self.cond.notify_all()
                continue
            m = re.match(r'^\s+(?:variant\s+)?string "(.*)"$', line.rstrip('\n'))
            u = re.match(r'^\s+(?:variant\s+)?uint64 (\d+)$', line.rstrip('\n'))
            b = re.match(r'^\s+(?:variant\s+)?boolean (true|false)$', line.rstrip('\n'))
            with self.cond:
                if m and len(cur['args']) < 3:
                    cur['args'].append(m.group(1))
                elif m and key is None:
                    key = m.group(1)
                elif (m or u or b) and key is not None:
                    cur['details'][key] = m.group(1) if m else int(u.group(1)) if u else b.group(1) == 'true'
                    key = None
                self.cond.notify_all()

    def wait(self, n, timeout=5):
        with self.cond:
            # The whole message, every detail read, not just its first arguments.
            self.cond.wait_for(lambda: len(self.signals) >= n and all(s.get('done') for s in self.signals[:n]), timeout)
            return [(*s['args'], dict(s['details'])) for s in self.signals]

    def stop(self):
        stop_process(self.proc)
        self.proc.stdout.close()

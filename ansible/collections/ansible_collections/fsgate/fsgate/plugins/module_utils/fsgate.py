# SPDX-License-Identifier: LGPL-2.1-or-later
"""Calls to fsgated (org.fsgate.fsgate1) through busctl, shared by the fsgate modules.

busctl is part of systemd, so a managed host needs nothing else. It honours
DBUS_SYSTEM_BUS_ADDRESS. It prints only an error's message (and "Access denied" for every
AccessDenied), never its name. sd-bus's debug log does name every error it receives:
    Got message type=error ... reply_cookie=2 ... error-name=NAME error-message=MESSAGE
so busctl runs with SYSTEMD_LOG_LEVEL=debug, and a failed call is read from that line.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import re

BUS_NAME = 'org.fsgate.fsgate1'
OBJECT_PATH = '/org/fsgate/fsgate1'
INTERFACE = 'org.fsgate.fsgate1.Manager'

FLAG_RUNTIME = 0x1
FLAG_LOAD_NOW = 0x2
FLAG_FORCE = 0x4
FLAG_HARD = 0x8
FLAG_DRY_RUN = 0x10
FLAG_SOFT = 0x20
FLAG_OBSERVE = 0x80

# Exit statuses of fsgatectl that still print their JSON answer on stdout: audit's "not
# compliant" (9).
CTL_EXIT_NOT_COMPLIANT = 9

# The fields of an entry, (sassssbbbb), in order.
ENTRY_FIELDS = ('module', 'types', 'state', 'origin', 'source',
                'available', 'builtin', 'loaded', 'mounted')

_SENT = re.compile(r'^Sent message type=method_call .*\bmember=(\S+) cookie=(\d+) ', re.M)
_ERROR = re.compile(r'^Got message type=error .*\breply_cookie=(\d+) .*?'
                    r'\berror-name=(\S+) error-message=(.*)$', re.M)


class FsgateError(Exception):
    """A failed call: name is the D-Bus error name, or None when busctl got no reply."""

    def __init__(self, call, name, message):
        self.call = call
        self.name = name
        self.message = message
        super(FsgateError, self).__init__(
            '%s failed: %s: %s' % (call, name, message) if name else '%s failed: %s' % (call, message))


def entry(values):
    """An entry as busctl's JSON gives it (a list) turned into a dict."""
    return dict(zip(ENTRY_FIELDS, values))


def target_file(module, runtime):
    """The file fsgate writes for a module (the openSUSE name)."""
    return '%s/modprobe.d/60-blacklist_fs-%s.conf' % ('/run' if runtime else '/etc', module)


def _error_from_log(member, stderr):
    """The (name, message) of the error replying to our call of member, if sd-bus logged it."""
    cookies = [c for m, c in _SENT.findall(stderr) if m == member]
    found = None
    for reply_cookie, name, message in _ERROR.findall(stderr):
        if not cookies or reply_cookie in cookies:
            found = (name, message.strip())
    return found


def _busctl_message(stderr):
    """busctl's own complaint, without sd-bus's debug lines."""
    lines = [l.strip() for l in stderr.splitlines() if l.strip()]
    for line in reversed(lines):
        if line.startswith('Call failed: '):
            return line[len('Call failed: '):]
        if line.startswith('Failed to '):
            return line
    return lines[-1] if lines else 'busctl failed without a message'


def _label(method, args):
    """How a call is named in messages and results: Allow(hfs, 0x1)."""
    return '%s(%s)' % (method, ', '.join('0x%x' % a if isinstance(a, int) else a for a in args))


class Fsgate(object):
    """The service as seen from one module run. changes lists the changing calls made."""

    def __init__(self, module):
        self.module = module
        self.busctl = module.get_bin_path('busctl')
        if not self.busctl:
            module.fail_json(msg='busctl (from systemd) is not installed on this host; '
                                 'fsgate talks to fsgated over D-Bus through it')
        self.changes = []

    def _run(self, member, label, argv):
        cmd = [self.busctl, '--system', '--json=short', '--allow-interactive-authorization=no', '--'] + argv
        rc, out, err = self.module.run_command(
            cmd, environ_update={'SYSTEMD_LOG_LEVEL': 'debug', 'SYSTEMD_LOG_COLOR': '0', 'LC_ALL': 'C'})
        if rc != 0:
            found = _error_from_log(member, err)
            if found:
                raise FsgateError(label, found[0], found[1])
            raise FsgateError(label, None, _busctl_message(err))
        return out

    def call(self, method, signature='', *args, **kwargs):
        """Calls a Manager method; returns the reply's data list (empty for no reply). label:
        how messages name the call (default: Method(arg, ...))."""
        argv = ['call', BUS_NAME, OBJECT_PATH, INTERFACE, method]
        if signature:
            argv += [signature] + ['%s' % a for a in args]
        label = kwargs.get('label') or _label(method, args)
        out = self._run(method, label, argv).strip()
        if not out:
            return []
        try:
            return json.loads(out)['data']
        except (ValueError, KeyError, TypeError):
            raise FsgateError(label, None, 'unexpected output from busctl: %r' % out[:200])

    def change(self, method, name, flags):
        """A call that may change the configuration (Allow, Deny, Reset): recorded in changes."""
        self.changes.append(_label(method, (name, flags)))
        return self.call(method, 'st', name, flags)

    def get(self, name):
        return entry(self.call('GetFilesystem', 's', name)[0])

    def list(self):
        return [entry(v) for v in self.call('ListFilesystems')[0]]

    def get_property(self, prop):
        argv = ['get-property', BUS_NAME, OBJECT_PATH, INTERFACE, prop]
        label = 'property %s' % prop
        try:
            return json.loads(self._run('Get', label, argv))['data']
        except (ValueError, KeyError, TypeError):
            raise FsgateError(label, None, 'unexpected output from busctl')

    # ---- Observations (fsgate's "observe before enforcing") -----------------------------

    def observation(self):
        """The observation on now, as GetObservation gives it: a dict (profile, since_usec,
        modules), or None when none is on (or the service is too old to observe)."""
        try:
            data = self.call('GetObservation')
        except FsgateError as e:
            if e.name == 'org.freedesktop.DBus.Error.UnknownMethod':
                return None
            raise
        if not data or not data[0]:
            return None
        return dict(profile=data[0], since_usec=int(data[1]), modules=list(data[2]))

    def stop_observing(self):
        """Ends the observation; the profile it was of ("" when none was on)."""
        self.changes.append('StopObserving()')
        data = self.call('StopObserving')
        return data[0] if data else ''

    def plan(self, name, flags):
        """A dry run of ApplyProfile (no polkit, nothing written): its changes as dicts."""
        data = self.call('ApplyProfile', 'st', name, (flags | FLAG_DRY_RUN) & ~FLAG_FORCE)
        return [dict(module=m, change=c, file=f) for m, c, f in (data[0] if data else [])]

    def ctl_json(self, args, ok=(0,)):
        """fsgatectl --json ARGS, its JSON answer. An error (fsgatectl's {"error","message"}
        on stderr) raises FsgateError with the error's name."""
        ctl = self.module.get_bin_path('fsgatectl')
        label = 'fsgatectl %s' % ' '.join(args)
        if not ctl:
            raise FsgateError(label, None, 'fsgatectl (from fsgate) is not installed on this host; '
                                           'an observation\'s evidence is read with it')
        rc, out, err = self.module.run_command([ctl, '--json'] + list(args), environ_update={'LC_ALL': 'C'})
        if rc not in ok:
            for line in reversed(err.strip().splitlines()):
                try:
                    e = json.loads(line)
                    raise FsgateError(label, e.get('error') or None, e.get('message', ''))
                except (ValueError, AttributeError):
                    continue
            raise FsgateError(label, None, 'exit status %d: %s' % (rc, err.strip()[-500:]))
        try:
            return json.loads(out)
        except ValueError:
            raise FsgateError(label, None, 'unexpected output: %r' % out[:200])

    def audit(self, name):
        """fsgatectl audit NAME as JSON: the verdict, and under "observed" what an observation
        of the profile recorded in the journal (since it began; all of it when none is on)."""
        return self.ctl_json(['audit', name], ok=(0, CTL_EXIT_NOT_COMPLIANT))

    def observed_use(self, name, flags=0, audit=None):
        """The modules that enforcing profile NAME (with flags) would deny now and that the
        journal shows used while it was observed: the audit's "observed" entries, in module
        order. With audit, that answer of audit() is used rather than asked again."""
        if audit is None:
            audit = self.audit(name)
        observed = audit.get('observed') or {}
        denied = set(c['module'] for c in self.plan(name, flags))
        return [m for m in observed.get('modules', []) if m.get('module') in denied]

    def fail(self, error, **result):
        """Ends the module run with a failure naming the D-Bus error."""
        self.module.fail_json(msg='fsgate: %s' % error, dbus_error=error.name or '',
                              dbus_message=error.message, **result)


def describe_use(m):
    """One observed module in a line, as fsgatectl says it:
    udf: 3 autoloads observed, last on 2026-12-07 14:29 UTC, /dev/sr0, asked by alice (uid 1000, mount, session 2)"""
    import time
    count = int(m.get('count', 0))
    s = '%s: %d autoload%s observed' % (m.get('module', '?'), count, '' if count == 1 else 's')
    if m.get('last_usec'):
        s += ', last on %s' % time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(int(m['last_usec']) // 1000000))
    if m.get('last_device'):
        s += ', %s' % m['last_device']
    uid = int(m.get('last_uid', -1))
    if uid >= 0:
        who = '%s (uid %d' % (m['last_user'], uid) if m.get('last_user') else 'uid %d (' % uid
        parts = [p for p in (m.get('last_command'),) if p]
        if m.get('last_session'):
            parts.append('session %s' % m['last_session'])
        if m.get('last_user'):
            s += ', asked by %s%s)' % (who, ''.join(', ' + p for p in parts))
        else:
            s += ', asked by %s%s)' % (who, ', '.join(parts))
    return s

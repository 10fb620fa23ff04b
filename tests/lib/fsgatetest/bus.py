# SPDX-License-Identifier: LGPL-2.1-or-later
"""Private dbus-daemons: a system-like bus rendered from tools/private-bus.conf.in (for
tools/private-fsgated too, through `python3 -m fsgatetest bus-config`) and, for
fsgate-notify's test, a session bus."""

import os
import re
import select
import subprocess
import threading
from xml.sax.saxutils import escape

from .names import POLKIT_NAME
from .util import CONFIG, TIMEOUT, die_with_parent, read_text, stop_process

# What --allow-monitoring and --mock-polkit (tools/private-fsgated's options) put at @EXTRA@;
# the tests have both: they watch signals with dbus-monitor as root, and run the MOCK polkit
# as root (real polkitd's policy gives its name to user polkitd).
ALLOW_MONITORING = ('<policy user="root"><allow send_destination="org.freedesktop.DBus" '
                    'send_interface="org.freedesktop.DBus.Monitoring"/></policy>')
ALLOW_MOCK_POLKIT = (f'<policy user="root"><allow own="{POLKIT_NAME}"/></policy>'
                     f'<policy context="default"><allow send_destination="{POLKIT_NAME}"/></policy>')

# A private session bus like Debian's session.conf, except that uid 65534 (fsgate-notify)
# and root (the harness, the MOCK notification server) share it.
SESSION_BUS_CONFIG = '''<!-- SPDX-License-Identifier: LGPL-2.1-or-later -->
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <auth>EXTERNAL</auth>
  <listen>unix:path={socket}</listen>
  <policy context="default">
    <allow user="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
'''


def project_policy_file():
    """The project's bus policy, exactly as installed (meson installs the source file)."""
    return os.path.join(CONFIG.source_root, 'dbus', 'org.fsgate.fsgate1.conf')


def system_bus_config(socket, extra=ALLOW_MONITORING + ALLOW_MOCK_POLKIT, policy=None, service_dir=None):
    """tools/private-bus.conf.in filled in: the system bus's default policy, EXTRA, then the
    project's own policy file (or the file POLICY). SERVICE_DIR: a directory of activation
    files (.service) the bus activates from; without <servicehelper> dbus-daemon starts Exec=
    itself, as the user it runs as, with its own environment."""
    if service_dir is not None:
        extra += f'<servicedir>{escape(service_dir)}</servicedir>'
    template = os.path.join(CONFIG.source_root, 'tools', 'private-bus.conf.in')
    with open(template) as f:
        text = f.read()
    for key, value in (('@SOCKET@', escape(socket)), ('@POLICY@', escape(policy or project_policy_file())),
                       ('@EXTRA@', extra)):
        if key not in text:
            raise RuntimeError(f'{template} has no {key}')
        text = text.replace(key, value)
    left = re.findall(r'@[A-Z_]+@', text)
    if left:
        raise RuntimeError(f'{template}: nothing fills {", ".join(left)}')
    return text


class PrivateBus:
    """A dbus-daemon listening on a socket in DIRECTORY: kind 'system' (the template above,
    socket system_bus_socket; with POLICY, a bus policy file, instead of the project's) or
    'session' (socket bus). Its config and log (bus.conf, bus.log) go to DIRECTORY too; the
    socket is open to every uid. SERVICE_DIR (system only): bus activation from there."""

    def __init__(self, directory, kind='system', policy=None, service_dir=None):
        if kind not in ('system', 'session'):
            raise ValueError(f'no {kind} bus')
        self.dir = directory
        self.kind = kind
        self.policy = policy
        self.service_dir = service_dir
        self.socket = os.path.join(directory, 'system_bus_socket' if kind == 'system' else 'bus')
        self.address = 'unix:path=' + self.socket
        self.log_path = os.path.join(directory, 'bus.log')
        self.proc = None
        self._conn = None
        self._conn_lock = threading.Lock()

    def config(self):
        if self.kind == 'system':
            return system_bus_config(self.socket, policy=self.policy, service_dir=self.service_dir)
        return SESSION_BUS_CONFIG.format(socket=escape(self.socket))

    def start(self, env):
        conf = os.path.join(self.dir, 'bus.conf')
        with open(conf, 'w') as f:
            f.write(self.config())
        with open(self.log_path, 'w') as logf:
            self.proc = subprocess.Popen(['dbus-daemon', '--config-file=' + conf, '--nofork', '--nopidfile',
                                          '--print-address=1'],
                                         stdout=subprocess.PIPE, stderr=logf, env=env,
                                         preexec_fn=die_with_parent)
        # The address is printed once the daemon listens.
        r, _, _ = select.select([self.proc.stdout], [], [], TIMEOUT)
        line = self.proc.stdout.readline().decode() if r else ''
        if not line.startswith('unix:'):
            raise RuntimeError(f'{self.kind} dbus-daemon did not start: {line!r} {read_text(self.log_path)}')
        os.chmod(self.socket, 0o777)

    def conn(self):
        """The harness's own python-dbus connection (plumbing only: name polling, mock control)."""
        import dbus
        with self._conn_lock:
            if self._conn is None:
                self._conn = dbus.bus.BusConnection(self.address)
            return self._conn

    def call(self, dest, path, iface, method, sig='', args=(), timeout=TIMEOUT):
        return self.conn().call_blocking(dest, path, iface, method, sig, list(args), timeout=timeout)

    def has_owner(self, name):
        return bool(self.call('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus',
                              'NameHasOwner', 's', [name]))

    def name_owner(self, name):
        return str(self.call('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus',
                             'GetNameOwner', 's', [name]))

    def stop(self):
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:
                pass
            self._conn = None
        stop_process(self.proc)
        if self.proc is not None:
            self.proc.stdout.close()
        self.proc = None

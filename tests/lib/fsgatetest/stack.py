# SPDX-License-Identifier: LGPL-2.1-or-later
"""Stack: a private system bus, optionally the MOCK polkit, and fsgated on a scratch root,
with the clients that call it; what BusTestCase starts for each test class."""

import os

from .bus import PrivateBus
from .clients import Clients
from .fsgated import Fsgated
from .polkit import MockPolkit
from .util import CONFIG, TIMEOUT, read_text, stop_process


class Stack(MockPolkit, Fsgated, Clients):
    """Everything lives in WORKDIR: the bus in WORKDIR/bus (also the clients' working
    directory), the logs of the MOCK polkit and fsgated. env is what every process started
    here gets: the private bus as the system bus, no session bus. bus_policy: a bus policy
    file the bus loads instead of the project's (None: the project's). service_dir: a
    directory of activation files for the bus (see activation_file())."""

    def __init__(self, workdir, bus_policy=None, service_dir=None):
        self.workdir = workdir
        os.chmod(workdir, 0o755)     # uid 65534 must reach the socket
        self.busdir = os.path.join(workdir, 'bus')
        os.makedirs(self.busdir, mode=0o755, exist_ok=True)
        self.system_bus = PrivateBus(self.busdir, 'system', policy=bus_policy, service_dir=service_dir)
        self.socket = self.system_bus.socket
        self.address = self.system_bus.address
        self.env = dict(os.environ)
        self.env['DBUS_SYSTEM_BUS_ADDRESS'] = self.address
        # The hook's rate-limit state, per stack: never the host's /run/fsgate, which would
        # outlive the run and be shared between tests running at once.
        self.env['FSGATE_RUNTIME_DIR'] = os.path.join(workdir, 'run-fsgate')
        # The profiles of this build (ApplyProfile, fsgatectl apply/audit), not installed ones.
        self.env['FSGATE_PROFILE_DIR'] = os.path.join(CONFIG.build_root, 'data', 'profiles')
        # The site's profiles (/etc/fsgate/profiles): never the host's; absent until a test
        # writes one.
        self.env['FSGATE_SITE_PROFILE_DIR'] = os.path.join(workdir, 'site-profiles')
        # fsgated logs 10 refusals a user per window (service/refusal-ratelimit.h). Here every
        # refusal is logged, so that a test finds the line it looks for however many refusals
        # the tests before it caused, on a machine of any speed. (A 1 s window did that only on
        # machines slow enough to spend a second on the tests before.) The limit itself is
        # tested in tests/load/test-faults.py and tests/unit/test-refusal-ratelimit.c.
        self.env['FSGATE_REFUSAL_LOG_BURST'] = '1000000'
        self.env.pop('DBUS_SESSION_BUS_ADDRESS', None)
        self.env.pop('INVOCATION_ID', None)   # fsgated logs to stderr only outside systemd
        self.env['LC_ALL'] = 'C.UTF-8'
        self.env['SYSTEMD_COLORS'] = '0'
        self.env['SYSTEMD_PAGER'] = 'cat'
        self.polkit = None
        self._init_fsgated()

    read = staticmethod(read_text)

    # -- the bus ------------------------------------------------------------------------------
    @property
    def bus(self):
        """The dbus-daemon's process (None when not running)."""
        return self.system_bus.proc

    def start_bus(self):
        self.system_bus.start(self.env)

    def conn(self):
        """The harness's own python-dbus connection (plumbing only: name polling, mock control)."""
        return self.system_bus.conn()

    def bus_call(self, dest, path, iface, method, sig='', args=(), timeout=TIMEOUT):
        return self.system_bus.call(dest, path, iface, method, sig, args, timeout)

    def has_owner(self, name):
        return self.system_bus.has_owner(name)

    def name_owner(self, name):
        return self.system_bus.name_owner(name)

    def stop(self):
        self.stop_daemon()
        if self.polkit is not None:
            stop_process(self.polkit)
            self.polkit = None
        self.system_bus.stop()

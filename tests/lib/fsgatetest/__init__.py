# SPDX-License-Identifier: LGPL-2.1-or-later
"""fsgatetest: the harness of fsgate's host bus, load and notify tests.

Every fixture is real except polkit: a real dbus-daemon configured like the system bus
(tools/private-bus.conf.in, the template tools/private-fsgated uses, with the project's bus
policy file), the built fsgated on a scratch root made from the Debian kernel's module
tree, and real clients (busctl, dbus-send, gdbus, dbus-monitor, fsgatectl).

Polkit is a MOCK: python-dbusmock's `polkitd` template, which answers CheckAuthorization
from a list set with SetAllowed(). A real polkitd (with the project's .policy and rules)
only runs in the VM suite. Names of tests and helpers that rely on the mock say "mock".

Runs as root only (fsgated must own its name; non-root callers are made with setpriv).
Exit status 77 (meson: skipped) when not root or when a needed tool is missing. meson puts
tests/lib on PYTHONPATH; by hand: PYTHONPATH=tests/lib /usr/bin/python3 tests/bus/test-X.py.

FSGATE_DAEMON_WRAPPER (a command line, split like a shell would) runs every fsgated under
that wrapper, e.g.
    FSGATE_DAEMON_WRAPPER="valgrind --error-exitcode=99 --leak-check=full \\
        --errors-for-leak-kinds=definite" meson test -C build --suite bus
For valgrind, each daemon gets its own log (--log-file=...%p, added when not given; a
given one without %p gets .%p appended) and every log is parsed when that daemon has
exited: any memory error or definite leak fails the test, as does a SIGTERM that does not
lead to exit status 0. Waits are then scaled by FSGATE_TIMEOUT_MULTIPLIER (default 5 with
a wrapper, 1 without).

Modules: util (CONFIG, timeouts, processes, python-dbusmock's mocks), names (bus names, errors,
actions, flags), bus (private dbus-daemons), polkit (the MOCK polkit), fsgated (the daemon under test),
clients (busctl, dbus-send, gdbus, fsgatectl; signal monitors), root (scratch roots),
stack (all of them together), case (BusTestCase, main), opened (Open safely's mounts and
drivers on the host). What the tests use is here.
"""

from .bus import PrivateBus, system_bus_config
from .case import BusTestCase, assert_memory_back, cli_main, main
from .clients import BlockedMonitor, Entry, Reply, SignalMonitor, Typed, unpack
from .fsgated import daemon_is_sanitized
from .names import (ACTION_ALLOW, ACTION_DENY, ACTION_GRANT, ACTION_LOAD, ACTION_OPEN, ACTION_OPEN_SYSTEM, BUS_NAME,
                    E_ACCESS_DENIED, E_AUTH_CANCELLED, E_INTERACTIVE, E_INVALID_ARGS, E_LIMITS_EXCEEDED, ERR, FORCE, HARD,
                    SOFT, IFACE, LOAD_NOW, MOCK_IFACE, OBJ_PATH, POLKIT_NAME, RUNTIME)
from .risk import RISK_KEYS, expected_facts, expected_phrase, notify_risk_line
from .root import (DEFAULT_PROC, MODPROBE_DIRS, ROUTES, SUSE_VENDOR_FILE, TEMP_PREFIX, add_builtin, conf_name,
                   expected_from_files, last_change, make_scratch_root, modprobe_files, proc_modules_line,
                   reset_root, snapshot, symlink, target_state, udev_record, write)
from .stack import Stack
from .util import (CONFIG, DAEMON_WRAPPER, NOBODY, PYTHON, TIMEOUT, TIMEOUT_MULTIPLIER, die_with_parent, log,
                   percentile, read_text, start_dbusmock, stop_dbusmock, stop_process, wait_until)

__all__ = ['cli_main', 'unpack', 'RISK_KEYS', 'expected_facts', 'expected_phrase', 'notify_risk_line', 'ACTION_ALLOW', 'ACTION_DENY', 'ACTION_GRANT', 'ACTION_LOAD', 'ACTION_OPEN', 'ACTION_OPEN_SYSTEM', 'BUS_NAME', 'CONFIG', 'DAEMON_WRAPPER',
           'DEFAULT_PROC', 'E_ACCESS_DENIED', 'E_AUTH_CANCELLED', 'E_INTERACTIVE', 'E_INVALID_ARGS', 'E_LIMITS_EXCEEDED', 'ERR', 'FORCE', 'HARD', 'SOFT', 'IFACE',
           'LOAD_NOW', 'MOCK_IFACE', 'MODPROBE_DIRS', 'NOBODY', 'OBJ_PATH', 'POLKIT_NAME', 'PYTHON',
           'ROUTES', 'RUNTIME', 'SUSE_VENDOR_FILE', 'TEMP_PREFIX', 'TIMEOUT', 'TIMEOUT_MULTIPLIER', 'add_builtin',
           'assert_memory_back', 'BlockedMonitor', 'BusTestCase', 'conf_name', 'daemon_is_sanitized',
           'die_with_parent', 'Entry', 'expected_from_files', 'last_change', 'log', 'main',
           'make_scratch_root', 'modprobe_files', 'percentile', 'PrivateBus', 'proc_modules_line',
           'read_text', 'Reply', 'reset_root', 'SignalMonitor', 'snapshot', 'Stack', 'start_dbusmock',
           'stop_dbusmock', 'stop_process', 'symlink', 'system_bus_config', 'target_state', 'Typed', 'udev_record', 'wait_until', 'write']

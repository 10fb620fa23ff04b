# SPDX-License-Identifier: LGPL-2.1-or-later
"""What every part of the harness shares: the run's configuration (CONFIG, set by main()),
the timeouts, logging, waiting, and the life of helper processes."""

import os
import shlex
import signal
import subprocess
import sys
import time

NOBODY = 65534
PYTHON = '/usr/bin/python3'   # Debian's: python3-dbus and python3-dbusmock load only here
# FSGATE_DAEMON_WRAPPER: see the package's docstring.
DAEMON_WRAPPER = shlex.split(os.environ.get('FSGATE_DAEMON_WRAPPER', ''))
# A slow daemon (valgrind: ~20-50x slower) needs longer waits; nothing here sleeps for a
# fixed time because of it, the bounds only get wider.
TIMEOUT_MULTIPLIER = float(os.environ.get('FSGATE_TIMEOUT_MULTIPLIER') or (5 if DAEMON_WRAPPER else 1))
TIMEOUT = int(20 * TIMEOUT_MULTIPLIER)   # seconds: the upper bound for any single wait


class Config:
    """The built programs and the trees, from the command line (see main())."""
    fsgated = None
    fsgatectl = None
    hook = None          # fsgate-blocked, for the tests that run it (set by them)
    source_root = None
    build_root = None


CONFIG = Config()


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def read_text(path):
    """A log file's text; '' when it cannot be read."""
    try:
        with open(path, errors='replace') as f:
            return f.read()
    except OSError:
        return ''


def wait_until(pred, timeout=TIMEOUT, interval=0.01, what='condition'):
    """Poll pred() until it returns something true; fail after timeout seconds."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f'timed out after {timeout}s waiting for {what}')
        time.sleep(interval)
        interval = min(interval * 1.5, 0.2)


def percentile(values, q):
    """The q-quantile (0..1) of values, nan for none."""
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))] if v else float('nan')


_libc = None


def die_with_parent():
    """preexec_fn for long-lived helpers: SIGKILL when the test process dies, so that a test
    killed by meson's timeout leaves no dbus-daemon, mock or fsgated behind."""
    import ctypes
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_PDEATHSIG = 1
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def stop_process(p, sig=signal.SIGTERM, timeout=5):
    if p is None or p.poll() is not None:
        return
    try:
        p.send_signal(sig)
        p.wait(timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait(timeout)
    except ProcessLookupError:
        pass


def start_dbusmock(args, env, log_path, name, has_owner, what):
    """python-dbusmock, `python3 -m dbusmock ARGS` (its stderr appended to log_path), waited
    for until it owns name on its bus (has_owner: that bus's); its process, which dies with
    the test. what names it in a failure (e.g. 'the MOCK polkit')."""
    with open(log_path, 'a') as logf:
        p = subprocess.Popen([PYTHON, '-m', 'dbusmock'] + list(args), stdout=subprocess.DEVNULL, stderr=logf,
                             env=env, preexec_fn=die_with_parent)

    def up():
        if p.poll() is not None:
            raise RuntimeError(f'{what} exited: {read_text(log_path)}')
        return has_owner(name)
    wait_until(up, what=f'{what} to own {name}')
    return p


def stop_dbusmock(p, name, has_owner, what):
    """Stops what start_dbusmock() started and waits until name has left its bus."""
    stop_process(p)
    wait_until(lambda: not has_owner(name), what=f'{what} to leave the bus')

#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A local attacker against fsgated: each way in that was found, a regression test:

- the writers' lock: an unprivileged process can neither hold it (flock on the world-
  readable modprobe.d, the old lock, stalls nothing; the lock file cannot be opened) nor
  stop a second fsgated from taking its name; a root writer that keeps it makes a change
  fail with org.fsgate.fsgate1.Error.Busy in bounded time, changing nothing, while reads go on;
- a flood of change requests polkit refuses (each one a plan that needs a "what if"
  build) does not stall a root caller: GetFilesystem's p99 meanwhile stays under P99_BOUND;
- a RUNTIME change works on a read-only /etc without modprobe.d (the lock is not in /etc);
- a config file the service cannot read (a 0600 file of another user, fsgated with only
  CAP_SYS_MODULE) is skipped and named, not a failure of every answer;
- the idle exit: a call that needs polkit and reaches fsgated after it decided to leave is
  still answered (granted), not refused with "fsgated is stopping" (gdb holds fsgated right
  before it releases its name).

The hook storm is tests/load/test-hook-storm.py. Bus harness: tests/lib/fsgatetest (real
dbus-daemon, MOCK polkit, real clients).
"""

import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import unittest

sys.dont_write_bytecode = True      # keep the source tree clean
HERE = os.path.dirname(os.path.abspath(__file__))
import fsgatetest as fb  # noqa: E402
from fsgatetest import (ACTION_ALLOW, ACTION_DENY, E_ACCESS_DENIED, E_LIMITS_EXCEEDED, ERR, NOBODY,  # noqa: E402
                        PYTHON, RUNTIME, BusTestCase, percentile, snapshot, wait_until)

E_BUSY = ERR + 'Busy'
LOCK_TIMEOUT = 5.0          # core/lock.h FSGATED_LOCK_TIMEOUT_USEC
# Seconds, for a root GetFilesystem next to a flood. The code before the fix took 9.95 s on
# an idle machine; under ASan on a 2-core machine that also builds YaST, the fixed code took
# up to 1.4 s. The figures themselves are the benchmark's (bench/run-bench).
P99_BOUND = 3.0
FLOOD_CLIENT = os.path.join(HERE, 'unauthorized-flood-client.py')


def lock_path(root):
    st = os.stat(root)
    return f'/run/fsgate/root-{st.st_dev:x}-{st.st_ino:x}.lock'


class LockTest(BusTestCase):

    def hold_as_nobody(self, path):
        """flock(1) as uid 65534 on path, until the test ends."""
        # Its own process group: flock(1) forks the command, which must go with it (meson
        # waits for whatever holds the test's output open).
        p = subprocess.Popen(self.stack.as_uid(['flock', path, 'sh', '-c', 'echo locked; exec sleep 600'], NOBODY),
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
        self.addCleanup(p.stdout.close)
        self.addCleanup(p.wait)
        self.addCleanup(os.killpg, p.pid, signal.SIGKILL)
        self.assertEqual(p.stdout.readline().strip(), 'locked')
        return p

    def hold_lock(self):
        """Takes the writers' lock of the root as a root writer does (fsgated removes the file
        when a write is done: a holder makes it)."""
        fd = os.open(lock_path(self.root), os.O_RDONLY | os.O_CREAT, 0o600)
        self.addCleanup(os.close, fd)
        fcntl.flock(fd, fcntl.LOCK_EX)
        return fd

    def test_unprivileged_flock_stalls_nothing(self):
        st = self.stack
        self.hold_as_nobody(os.path.join(self.root, 'etc/modprobe.d'))
        self.hold_as_nobody(os.path.join(self.root, 'run/modprobe.d'))
        t0 = time.monotonic()
        self.assertReplyOk(st.send('Deny', 'minix', 0, timeout=5))
        self.assertReplyOk(st.send('Reset', 'minix', 0, timeout=5))
        self.assertLess(time.monotonic() - t0, 5)
        self.assertState('minix', 'allowed', 'default')
        # A daemon started meanwhile takes its name at once (it cleans up under the lock).
        st.stop_daemon()
        t0 = time.monotonic()
        st.start_daemon(self.root, self.kver)
        self.assertLess(time.monotonic() - t0, 5 * fb.TIMEOUT_MULTIPLIER)
        # An image's lock file goes when its writer is done: none gathers in /run/fsgate.
        path = lock_path(self.root)
        self.assertFalse(os.path.exists(path), path)
        # While a writer holds it, that user cannot even open it.
        fd = self.hold_lock()
        change = st.send_async('Deny', 'jfs', 0)
        self.addCleanup(change.wait)
        rc, out, err = st.run(['flock', '-n', path, 'true'], uid=NOBODY)
        self.assertNotEqual(rc, 0, 'uid 65534 could take the writers\' lock')
        self.assertEqual(os.stat(path).st_mode & 0o777, 0o600)
        fcntl.flock(fd, fcntl.LOCK_UN)
        self.assertReplyOk(change.result())
        self.assertFalse(os.path.exists(path), path)

    def test_root_writer_holding_the_lock_gives_busy(self):
        st = self.stack
        self.assertReplyOk(st.send('Deny', 'minix', 0))
        before = snapshot(self.root)
        fd = self.hold_lock()
        t0 = time.monotonic()
        r = st.send('Deny', 'jfs', 0)
        elapsed = time.monotonic() - t0
        self.assertError(r, E_BUSY, 'try again')
        self.assertLess(elapsed, LOCK_TIMEOUT + 3 * fb.TIMEOUT_MULTIPLIER)
        self.assertEqual(snapshot(self.root), before)
        self.assertEqual(st.get('jfs').state, 'allowed')
        # The offline CLI on the same root waits for the same lock, and says so.
        p = st.ctl('--root=' + self.root, 'deny', 'jfs')
        self.assertEqual(p.rc, 1, p)
        self.assertIn('try again', p.err)
        self.assertEqual(snapshot(self.root), before)
        fcntl.flock(fd, fcntl.LOCK_UN)
        self.assertReplyOk(st.send('Deny', 'jfs', 0))
        self.assertState('jfs', 'denied', 'admin')

    def test_change_waiting_for_the_lock_delays_no_read(self):
        # fsgated answers everyone from one loop: a change waiting for the lock another
        # writer holds must wait on a timer, not in place. Checked by order, not by time:
        # every read below is answered while the change still waits, and the change is
        # done once the lock is free (it waited, it did not fail).
        st = self.stack
        self.assertReplyOk(st.send('Deny', 'minix', 0))
        fd = self.hold_lock()
        change = st.send_async('Deny', 'jfs', 0)
        self.addCleanup(change.wait)
        # Time for the change to reach fsgated before the reads (on the tree before the fix,
        # fsgated then slept in place until Busy and the first read came after it). Should
        # the change arrive later, the reads still come first: this cannot fail a fixed tree.
        time.sleep(0.5)
        for _ in range(3):
            self.assertEqual(st.get('jfs', uid=NOBODY).state, 'allowed')
            self.assertIsNone(change.poll(), 'a read was answered only after the waiting change')
        fcntl.flock(fd, fcntl.LOCK_UN)
        self.assertReplyOk(change.result())
        self.assertState('jfs', 'denied', 'admin')


class UnauthorizedFloodTest(BusTestCase):

    def test_refused_changes_cost_what_a_read_costs(self):
        st = self.stack
        self.vendor('hfs')                                  # Allow hfs: a plan with a "what if"
        self.assertReplyOk(st.send('Deny', 'minix', 0))     # Reset minix: the same
        self.vendor('udf')
        self.assertReplyOk(st.send('Deny', 'jfs', RUNTIME))
        before = snapshot(self.root)
        idle = []
        for _ in range(50):
            t0 = time.monotonic()
            st.bus_call(fb.BUS_NAME, fb.OBJ_PATH, fb.IFACE, 'GetFilesystem', 's', ['hfs'])
            idle.append(time.monotonic() - t0)
        calls = ['Allow:hfs:0', 'Reset:minix:0', 'Allow:udf:1', 'Reset:jfs:1', 'Allow:hfs:1']
        floods = []
        for _ in range(10):
            cmd = st.as_uid([PYTHON, FLOOD_CLIENT, '--address', st.address, '--calls', '150'] +
                            [f'--call={c}' for c in calls], NOBODY)
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, preexec_fn=fb.die_with_parent)
            self.addCleanup(fb.stop_process, p, signal.SIGKILL)
            floods.append(p)
        busy = []
        while any(p.poll() is None for p in floods):
            t0 = time.monotonic()
            st.bus_call(fb.BUS_NAME, fb.OBJ_PATH, fb.IFACE, 'GetFilesystem', 's', ['hfs'])
            busy.append(time.monotonic() - t0)
            time.sleep(0.01)
        results = [json.loads(p.communicate(timeout=fb.TIMEOUT)[0]) for p in floods]
        # polkit's "no", or, past 8 of the user's calls waiting for it, LimitsExceeded at once:
        # each connection sends its 150 without waiting for the replies.
        for res in results:
            self.assertLessEqual(set(res['errors']), {E_ACCESS_DENIED, E_LIMITS_EXCEEDED}, res)
            self.assertEqual(sum(res['errors'].values()), 150, res)
        limited = sum(res['errors'].get(E_LIMITS_EXCEEDED, 0) for res in results)
        self.assertGreater(limited, 0, 'more than 8 calls of uid 65534 waited for polkit at once')
        fb.log(f'{limited} of 1500 refused with LimitsExceeded, the others by polkit')
        fb.log(f'root GetFilesystem: idle p50 {percentile(idle, .5) * 1000:.2f} ms; during 1500 refused '
               f'changes from uid 65534 (10 connections, {max(r["seconds"] for r in results):.1f} s): '
               f'{len(busy)} calls, p50 {percentile(busy, .5) * 1000:.2f} ms, p99 {percentile(busy, .99) * 1000:.2f} ms')
        self.assertGreater(len(busy), 0)
        self.assertLess(percentile(busy, .99), P99_BOUND)
        self.assertEqual(snapshot(self.root), before)


class ReadOnlyEtcTest(BusTestCase):
    """ROOT/etc read-only (a bind mount in fsgated's own mount namespace) and without
    modprobe.d: a RUNTIME change still works, since nothing of it lives in /etc."""

    start_daemon = False

    def test_runtime_change_on_read_only_etc(self):
        shutil.rmtree(os.path.join(self.root, 'etc/modprobe.d'))
        self.addCleanup(os.makedirs, os.path.join(self.root, 'etc/modprobe.d'), exist_ok=True)
        etc = os.path.join(self.root, 'etc')
        wrapper = ['unshare', '--mount', '--propagation', 'private', '--', 'sh', '-c',
                   'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"', 'sh', etc]
        st = self.stack
        st.start_daemon(self.root, self.kver, wrapper=wrapper)
        self.addCleanup(st.stop_daemon)
        self.assertReplyOk(st.send('Deny', 'minix', RUNTIME))
        self.assertDenyFile(self.run_file('minix'), 'minix')
        self.assertError(st.send('Deny', 'jfs', 0), ERR + 'ReadOnly')


class UnreadableConfigTest(BusTestCase):
    """fsgated with only CAP_SYS_MODULE (the unit's old bounding set) cannot read a 0600
    file another user owns in modprobe.d. It skips that file and names it (property
    UnreadableFiles, fsgatectl's warning) instead of failing every answer."""

    start_daemon = False

    def test_unreadable_file_is_named_not_fatal(self):
        st = self.stack
        path = os.path.join(self.root, 'etc/modprobe.d/50-private.conf')
        fb.write(self.root, 'etc/modprobe.d/50-private.conf', 'blacklist jfs\n', mode=0o600)
        os.chown(path, NOBODY, NOBODY)
        wrapper = ['setpriv', '--inh-caps=-all', '--bounding-set=-all,+sys_module', '--']
        st.start_daemon(self.root, self.kver, wrapper=wrapper)
        self.addCleanup(st.stop_daemon)
        self.assertEqual(st.get('minix').state, 'allowed')
        self.assertEqual(len(st.list()), len(st.list()))
        rc, out, err = st.run(['busctl', '--system', '--json=short', 'get-property', fb.BUS_NAME, fb.OBJ_PATH,
                               fb.IFACE, 'UnreadableFiles'])
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out)['data'], ['/etc/modprobe.d/50-private.conf'])
        p = st.ctl('status', 'jfs')
        self.assertEqual(p.rc, 0, p)
        self.assertIn('cannot read /etc/modprobe.d/50-private.conf', p.err)
        # Readable again: named no more.
        os.chmod(path, 0o644)
        rc, out, err = st.run(['busctl', '--system', '--json=short', 'get-property', fb.BUS_NAME, fb.OBJ_PATH,
                               fb.IFACE, 'UnreadableFiles'])
        self.assertEqual(json.loads(out)['data'], [])
        self.assertState('jfs', 'denied', 'admin')


@unittest.skipIf(fb.DAEMON_WRAPPER, 'gdb cannot hold fsgated under FSGATE_DAEMON_WRAPPER')
@unittest.skipUnless(shutil.which('gdb'), 'gdb is missing')
class IdleExitTest(BusTestCase):
    """gdb stops fsgated right where it has decided to exit (sd_bus_release_name); a Deny
    from a caller polkit (the MOCK) allows is sent to the name meanwhile, so it is queued
    for this instance. It must be answered: granted and written."""

    start_daemon = False

    def test_call_arriving_while_leaving_is_answered(self):
        st = self.stack
        st.mock_polkit_allow([ACTION_DENY, ACTION_ALLOW])
        d = st.start_daemon(self.root, self.kver, extra=['--idle-timeout=2'])
        gdb = subprocess.Popen(['gdb', '-q', '-nx', '-batch', '-p', str(d.pid),
                                '-ex', 'break sd_bus_release_name', '-ex', 'continue',
                                '-ex', 'shell touch ' + os.path.join(self.workdir, 'at-exit'),
                                '-ex', 'shell while [ ! -e ' + os.path.join(self.workdir, 'go') + ' ]; do sleep 0.1; done',
                                '-ex', 'detach'],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               preexec_fn=fb.die_with_parent)
        self.addCleanup(fb.stop_process, gdb, signal.SIGKILL)
        wait_until(lambda: os.path.exists(os.path.join(self.workdir, 'at-exit')), timeout=60,
                   what='fsgated to reach its idle exit under gdb')
        cmd = st.as_uid(['dbus-send', '--system', '--print-reply', '--reply-timeout=20000', '--dest=' + fb.BUS_NAME,
                         fb.OBJ_PATH, fb.IFACE + '.Deny', 'string:minix', 'uint64:0'], NOBODY)
        call = subprocess.Popen(cmd, env=st.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(fb.stop_process, call)
        time.sleep(1)   # the call is in fsgated's socket: nothing observable says so
        open(os.path.join(self.workdir, 'go'), 'w').close()
        out, err = call.communicate(timeout=fb.TIMEOUT)
        gdb.communicate(timeout=fb.TIMEOUT)
        self.assertEqual(call.returncode, 0, err)
        self.assertDenyFile(self.etc(module='minix'), 'minix')
        wait_until(lambda: d.poll() is not None, what='fsgated to exit')
        self.assertEqual(d.returncode, 0, st.daemon_output())


if __name__ == '__main__':
    fb.main()

#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Fault tests: fsgated when its environment misbehaves.

- a read-only configuration directory (a read-only bind mount inside `unshare -m`; the
  host's mounts are not touched) → org.fsgate.fsgate1.Error.ReadOnly, nothing changed,
  List and Get keep answering;
- polkit missing, crashing while asked, or hanging (the MOCK polkitd, python-dbusmock's
  polkitd template, told to never answer CheckAuthorization; or SIGSTOPped) → the caller
  never gets a success, nothing is written, List keeps answering meanwhile; after the
  daemon's own polkit timeout (25 s, non-interactive) the request is refused and a late
  "yes" from polkit changes nothing;
- a caller that disconnects while its authorization is pending leaves nothing behind, even
  when polkit then says yes (see CallerDisconnectTest for why that is the right outcome);
- a client flooding the service with malformed calls (wrong signatures and types, 1 MiB
  names, bad names, unknown members; thousands, pipelined) is refused with InvalidArgs /
  InvalidName (and the bus's own errors for unknown members) while fsgated neither grows
  (VmRSS within RSS_SLACK_KIB) nor stalls others (p99 of a concurrent GetFilesystem < 1 s);
- a second fsgated on the same bus exits non-zero and the first keeps the name;
- a SIGTERM that arrives while fsgated is still requesting its name (the bus stopped with
  SIGSTOP) ends in a clean exit (status 0) once the bus answers, not in death by signal;
- the journal fields of refusals (a fake journald socket in fsgated's own mount
  namespace): FSGATE_MODULE= names the module, or is absent for ExemptLoaded as a whole;
- a user refused over and over gets REFUSALS_LOGGED_BURST lines a window, the next line
  says how many were not logged, and another user's refusals are logged as before.

SIGKILL at random moments of a burst of 200 writes is tests/bus/test-stress.py (KillTest).

Options (before unittest's): --skip-polkit-timeout (or FSGATE_SKIP_POLKIT_TIMEOUT=1)
skips the one test that waits out the daemon's 25 s polkit timeout; --flood-calls=N
(default 20000). Bus harness: tests/lib/fsgatetest (MOCK polkit, real dbus-daemon,
real clients).
"""

import argparse
import json
import os
import pwd
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import unittest

sys.dont_write_bytecode = True      # keep the source tree clean
HERE = os.path.dirname(os.path.abspath(__file__))
import fsgatetest as fb  # noqa: E402
from fsgatetest.api import define  # noqa: E402
from fsgatetest import (ACTION_ALLOW, ACTION_DENY, ACTION_LOAD, CONFIG, E_ACCESS_DENIED,  # noqa: E402
                        E_INVALID_ARGS, E_LIMITS_EXCEEDED, ERR, NOBODY, PYTHON, RUNTIME, BusTestCase,
                        SignalMonitor, percentile, proc_modules_line, snapshot, wait_until, write)

ap = argparse.ArgumentParser(add_help=False)
ap.add_argument('--skip-polkit-timeout', action='store_true',
                default=os.environ.get('FSGATE_SKIP_POLKIT_TIMEOUT', '') not in ('', '0'))
ap.add_argument('--flood-calls', type=int, default=20000)
OPTS, _rest = ap.parse_known_args()
sys.argv = sys.argv[:1] + _rest

FLOOD_CLIENT = os.path.join(HERE, 'flood-client.py')
E_NO_REPLY = 'org.freedesktop.DBus.Error.NoReply'
E_INVALID_NAME = ERR + 'InvalidName'
E_READ_ONLY = ERR + 'ReadOnly'
DAEMON_POLKIT_TIMEOUT = 25          # service/polkit-bridge.c, non-interactive checks
RSS_SLACK_KIB = 512
REFUSAL_BURST = define('service/refusal-ratelimit.h', 'REFUSALS_LOGGED_BURST')
# The journal's id of a refusal: public (the catalog, journalctl MESSAGE_ID=), so copied on
# purpose: this fails when service/log.h changes it.
MESSAGE_REFUSED = 'd97d19d74e8c4d338aeeb7ba7ea1c3f0'
# fsgated's window for refusal lines here (FSGATE_REFUSAL_LOG_WINDOW_SEC): long enough for
# REFUSAL_BURST + 15 calls in a row under a sanitizer, short enough to wait out once.
REFUSAL_WINDOW_SEC = int(20 * fb.TIMEOUT_MULTIPLIER)
P99_BOUND = 1.0                     # seconds, for a GetFilesystem next to a flood


class Prober:
    """A well-behaved client in a thread (its own connection): GetFilesystem and
    ListFilesystems in a loop, recording each call's latency and any failure."""

    def __init__(self, stack, calls=(('GetFilesystem', 's', ['hfs']),), pause=0.01):
        import dbus
        self.conn = dbus.bus.BusConnection(stack.address)
        self.calls = calls
        self.pause = pause
        self.latencies = []
        self.failures = []
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        import dbus
        i = 0
        while not self.stop_event.is_set():
            method, sig, args = self.calls[i % len(self.calls)]
            i += 1
            t0 = time.monotonic()
            try:
                self.conn.call_blocking(fb.BUS_NAME, fb.OBJ_PATH, fb.IFACE, method, sig, args, timeout=fb.TIMEOUT)
            except dbus.DBusException as e:
                self.failures.append((method, e.get_dbus_name(), str(e)[:200]))
            self.latencies.append(time.monotonic() - t0)
            self.stop_event.wait(self.pause)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop_event.set()
        self.thread.join(fb.TIMEOUT + 5)
        self.conn.close()

    def summary(self):
        v = self.latencies
        return (f'{len(v)} calls, p50 {percentile(v, .5) * 1000:.1f} ms, p99 {percentile(v, .99) * 1000:.1f} ms, '
                f'max {max(v) * 1000 if v else float("nan"):.1f} ms, {len(self.failures)} failures')


class FaultBase(BusTestCase):

    def nobody(self, method, *args, timeout=fb.TIMEOUT):
        return self.stack.send(method, *args, uid=NOBODY, timeout=timeout)

    def start_call(self, method, *args, uid=NOBODY, reply_timeout):
        """A dbus-send call in the background; returns (Popen, start time)."""
        typed = ['string:' + a if isinstance(a, str) else f'uint64:{a}' for a in args]
        cmd = self.stack.as_uid(['dbus-send', '--system', '--print-reply', f'--reply-timeout={int(reply_timeout * 1000)}',
                                 '--dest=' + fb.BUS_NAME, fb.OBJ_PATH, f'{fb.IFACE}.{method}'] + typed, uid)
        p = subprocess.Popen(cmd, env=self.stack.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=fb.die_with_parent)
        self.addCleanup(fb.stop_process, p, signal.SIGKILL)
        return p, time.monotonic()

    @staticmethod
    def error_of(stderr):
        return stderr.split(':', 1)[0].replace('Error ', '', 1).strip() if stderr.startswith('Error ') else None

    def sync(self):
        """Every message that reached fsgated before now has been handled."""
        self.stack.get('hfs')

    def assertNothingChanged(self, before, what):
        now = snapshot(self.root)
        if now != before:
            added = sorted(set(now) - set(before))
            removed = sorted(set(before) - set(now))
            changed = sorted(k for k in set(now) & set(before) if now[k] != before[k])
            self.fail(f'{what} changed something on disk: added {added}, removed {removed}, changed {changed}')
        self.assertNoTempFiles()


# ---------------------------------------------------------------------------------------------

class ReadOnlyFaultTest(FaultBase):
    """ROOT/etc/modprobe.d and ROOT/run read-only (bind mounts in fsgated's own mount
    namespace), ROOT/run/modprobe.d absent: every write is ReadOnly, for root and for a
    caller the MOCK polkit allows; reads keep working."""

    start_daemon = False

    def setUp(self):
        super().setUp()
        self.vendor('hfs')
        # For ExemptLoaded: hfs in use (mounted).
        write(self.root, 'proc/modules', proc_modules_line('hfs'))
        write(self.root, 'proc/mounts', '/dev/vda / ext4 rw,relatime 0 0\n/dev/sdb1 /mnt hfs ro 0 0\n')
        rc = subprocess.run([CONFIG.fsgatectl, '--root=' + self.root, 'deny', 'minix'], capture_output=True).returncode
        self.assertEqual(rc, 0)
        os.rmdir(os.path.join(self.root, 'run/modprobe.d'))
        script = ('for d in "$1" "$2"; do mount --bind "$d" "$d" && mount -o remount,bind,ro "$d" || exit 1; done; '
                  'shift 2; exec "$@"')
        wrapper = ['unshare', '--mount', '--propagation', 'private', '--', 'sh', '-c', script, 'sh',
                   os.path.join(self.root, 'etc/modprobe.d'), os.path.join(self.root, 'run')]
        self.stack.start_daemon(self.root, self.kver, wrapper=wrapper)
        self.addCleanup(self.stack.stop_daemon)
        self.stack.mock_polkit_allow([ACTION_ALLOW, ACTION_DENY, ACTION_LOAD])

    def test_read_only_config_directory(self):
        st = self.stack
        entries = st.list()
        before = snapshot(self.root)
        calls = [('Deny', 'jfs', 0), ('Deny', 'jfs', RUNTIME), ('Allow', 'hfs', 0), ('Allow', 'hfs', RUNTIME),
                 ('Reset', 'minix', 0), ('Allow', 'minix', 0)]
        for uid in (None, NOBODY):
            for call in calls:
                r = st.send(*call, uid=uid)
                self.assertError(r, E_READ_ONLY)
                self.assertRegex(r.message, r'/(etc|run)/modprobe\.d', r)
                # Reads are unaffected, and say what they said before.
                self.assertEqual(st.list(uid=uid), entries)
        self.assertNothingChanged(before, 'a refused write')
        self.assertState('minix', 'denied', 'admin')
        self.assertState('hfs', 'denied', 'vendor')
        # No FilesystemChanged for changes that did not happen.
        mon = SignalMonitor(st)
        self.addCleanup(mon.stop)
        self.assertError(st.send('Deny', 'udf', 0), E_READ_ONLY)
        self.assertEqual(mon.take(), [])
        self.assertIsNone(st.daemon.poll())

    def test_exempt_loaded_on_read_only_config(self):
        """hfs is mounted and vendor-denied: ExemptLoaded has to write an /etc mask and cannot.
        A package script must learn that the exemption did not happen (ReadOnly), not get
        success with an empty list."""
        st = self.stack
        before = snapshot(self.root)
        mon = SignalMonitor(st)
        self.addCleanup(mon.stop)
        r = st.send('ExemptLoaded')
        self.assertNothingChanged(before, 'ExemptLoaded')
        self.assertError(r, E_READ_ONLY, r'hfs.*/etc/modprobe\.d')
        self.assertEqual(mon.take(), [])
        # The same through polkit (the mock allows it): refused the same way.
        self.assertError(self.nobody('ExemptLoaded'), E_READ_ONLY)
        self.assertNothingChanged(before, 'ExemptLoaded')


# ---------------------------------------------------------------------------------------------

class PolkitMissingTest(FaultBase):
    """No polkit on the bus, or polkit dying while asked: refusals, promptly; reads go on."""

    def test_polkit_missing_refuses_and_reads_go_on(self):
        st = self.stack
        self.vendor('hfs')
        # hfs mounted: ExemptLoaded has something to ask for (with nothing, it asks nobody).
        write(self.root, 'proc/mounts', '/dev/vda / ext4 rw,relatime 0 0\n/dev/sdb1 /mnt/mac hfs ro 0 0\n')
        self.assertReplyOk(st.send('Deny', 'udf', 0))      # as root: something for Reset to remove
        st.stop_mock_polkit()
        self.addCleanup(lambda: st.polkit is None and st.start_mock_polkit())
        before = snapshot(self.root)
        calls = [('Allow', 'hfs', 0), ('Deny', 'minix', 0), ('Deny', 'minix', RUNTIME), ('Reset', 'udf', 0),
                 ('Load', 'minix'), ('ExemptLoaded',)]
        errors = []
        with Prober(st, calls=(('ListFilesystems', '', []), ('GetFilesystem', 's', ['hfs']))) as probe:
            threads = []
            for i in range(24):
                call = calls[i % len(calls)]
                t = threading.Thread(target=lambda c=call: errors.append((c, self.nobody(*c))))
                t.start()
                threads.append(t)
            for t in threads:
                t.join(fb.TIMEOUT + 10)
        self.assertEqual(len(errors), 24)
        # Refused: by the missing polkit, or at once while 8 of nobody's calls wait for it.
        for call, r in errors:
            self.assertIn(r.error, (E_ACCESS_DENIED, E_LIMITS_EXCEEDED), r)
        self.assertEqual(probe.failures, [])
        self.assertGreater(len(probe.latencies), 0)
        fb.log(f'polkit missing: reads meanwhile: {probe.summary()}')
        self.assertNothingChanged(before, 'a request without polkit')

    def test_polkit_crashing_while_asked(self):
        """The MOCK polkit holds the call, then is SIGKILLed: the bus answers fsgated's
        pending CheckAuthorization with an error, and the caller is refused at once (not
        after the 25 s timeout)."""
        st = self.stack
        self.addCleanup(lambda: st.polkit is None and st.start_mock_polkit())
        st.mock_polkit_allow([ACTION_DENY])
        st.mock_polkit('SimulateHang', 'b', [True])
        before = snapshot(self.root)
        p, t0 = self.start_call('Deny', 'minix', 0, reply_timeout=60)
        wait_until(lambda: st.mock_polkit('HaveHangingCalls'), what='the Deny to reach the mock polkit')
        st.polkit.kill()
        st.polkit.wait(fb.TIMEOUT)
        st.polkit = None
        out, err = p.communicate(timeout=fb.TIMEOUT + 10)
        elapsed = time.monotonic() - t0
        self.assertEqual(self.error_of(err), E_ACCESS_DENIED, err)
        self.assertLess(elapsed, DAEMON_POLKIT_TIMEOUT - 5, 'refused only by the timeout')
        self.assertNothingChanged(before, 'a request whose polkit died')


# ---------------------------------------------------------------------------------------------

class PolkitHangingTest(FaultBase):
    """The MOCK polkit takes CheckAuthorization and never answers (SimulateHang, or the
    whole process SIGSTOPped). Callers waiting less than the daemon get NoReply and
    nothing is written; callers waiting longer get AccessDenied after the daemon's 25 s;
    the late "yes" that follows changes nothing. Reads are answered throughout."""

    def tearDown(self):
        st = self.stack
        if st.polkit is not None:
            # Whatever is still held gets a late "no": a later test must not see it applied.
            st.polkit.send_signal(signal.SIGCONT)
            st.mock_polkit_allow([])
            st.mock_polkit('SimulateHang', 'b', [False])
            st.mock_polkit('ReleaseHangingCalls')
        super().tearDown()

    def test_polkit_stopped_caller_gives_up(self):
        st = self.stack
        self.vendor('hfs')
        st.mock_polkit_allow([ACTION_ALLOW, ACTION_DENY])
        st.mock_polkit('SimulateHang', 'b', [True])   # the calls in the queue stay unanswered after SIGCONT
        before = snapshot(self.root)
        st.polkit.send_signal(signal.SIGSTOP)
        with Prober(st, calls=(('ListFilesystems', '', []), ('GetFilesystem', 's', ['hfs']))) as probe:
            p1, t1 = self.start_call('Deny', 'minix', 0, reply_timeout=2)
            p2, t2 = self.start_call('Allow', 'hfs', RUNTIME, reply_timeout=3)
            out1, err1 = p1.communicate(timeout=fb.TIMEOUT)
            out2, err2 = p2.communicate(timeout=fb.TIMEOUT)
        self.assertEqual(self.error_of(err1), E_NO_REPLY, err1)
        self.assertEqual(self.error_of(err2), E_NO_REPLY, err2)
        self.assertEqual(probe.failures, [])
        self.assertLess(percentile(probe.latencies, .99), P99_BOUND, probe.summary())
        fb.log(f'polkit stopped: reads meanwhile: {probe.summary()}')
        self.assertNothingChanged(before, 'a request while polkit hangs')
        st.polkit.send_signal(signal.SIGCONT)
        self.assertNothingChanged(before, 'a request while polkit hangs')

    @unittest.skipIf(OPTS.skip_polkit_timeout, '--skip-polkit-timeout')
    def test_polkit_hanging_past_the_daemon_timeout(self):
        st = self.stack
        self.vendor('hfs')
        st.mock_polkit_allow([ACTION_ALLOW, ACTION_DENY])
        st.mock_polkit('SimulateHang', 'b', [True])
        mon = SignalMonitor(st)
        self.addCleanup(mon.stop)
        before = snapshot(self.root)
        with Prober(st, calls=(('ListFilesystems', '', []), ('GetFilesystem', 's', ['hfs'])), pause=0.1) as probe:
            short, _ = self.start_call('Deny', 'minix', 0, reply_timeout=2)
            long, t0 = self.start_call('Allow', 'hfs', 0, reply_timeout=DAEMON_POLKIT_TIMEOUT + 30)
            out, err_short = short.communicate(timeout=fb.TIMEOUT)
            self.assertEqual(self.error_of(err_short), E_NO_REPLY, err_short)
            self.assertNothingChanged(before, 'a request while polkit hangs')
            out, err_long = long.communicate(timeout=DAEMON_POLKIT_TIMEOUT + 40)
            elapsed = time.monotonic() - t0
        self.assertEqual(self.error_of(err_long), E_ACCESS_DENIED, err_long)
        self.assertRegex(err_long, r'(?i)polkit|authoriz')
        self.assertGreater(elapsed, DAEMON_POLKIT_TIMEOUT - 2)
        self.assertEqual(probe.failures, [])
        self.assertLess(percentile(probe.latencies, .99), P99_BOUND, probe.summary())
        fb.log(f'polkit hanging: refused after {elapsed:.1f}s; reads meanwhile: {probe.summary()}')
        # The short caller's request timed out in the daemon too (sent just before).
        wait_until(lambda: st.daemon_output()[self._log_mark:].count('Refused') >= 2,
                   what='both requests to be refused in the log')
        self.assertNothingChanged(before, 'a request refused by the polkit timeout')
        # polkit wakes up and says yes to both: too late, nothing may change.
        self.assertEqual(st.mock_polkit('HaveHangingCalls'), True)
        st.mock_polkit('ReleaseHangingCalls')
        self.sync()
        time.sleep(0.5)
        self.sync()
        self.assertNothingChanged(before, 'a late yes from polkit')
        self.assertEqual(mon.take(), [])


# ---------------------------------------------------------------------------------------------

class CallerDisconnectTest(FaultBase):
    """A caller that disconnects while its authorization is pending leaves nothing behind,
    even if polkit then says yes.

    The choice tested: the change is NOT applied. The authorization was asked for the
    subject `system-bus-name` of the caller; once that name is gone there is nobody to
    apply the change for, nobody who learns whether it happened (no reply, no error), and a
    real polkitd asked a moment later could not even resolve the subject and would refuse:
    applying it would make the outcome depend on a race. A grant for a vanished subject is
    therefore treated like a refusal (fail closed), as the security model asks (README.md)."""

    def test_disconnect_while_authorization_pending(self):
        st = self.stack
        st.mock_polkit_allow([ACTION_ALLOW, ACTION_DENY])
        st.mock_polkit('SimulateHang', 'b', [True])
        self.addCleanup(st.mock_polkit, 'ReleaseHangingCalls')
        self.addCleanup(st.mock_polkit, 'SimulateHang', 'b', [False])
        self.vendor('hfs')
        mon = SignalMonitor(st)
        self.addCleanup(mon.stop)
        before = snapshot(self.root)
        p1, _ = self.start_call('Deny', 'minix', 0, reply_timeout=60)
        p2, _ = self.start_call('Allow', 'hfs', RUNTIME, reply_timeout=60)
        wait_until(lambda: len(st.mock_polkit_calls()) >= 2, what='both calls to reach the mock polkit')
        subjects = [c[1][1]['name'] for c in st.mock_polkit_calls()]
        for p in (p1, p2):
            p.kill()
            p.wait(fb.TIMEOUT)
        wait_until(lambda: not any(st.has_owner(s) for s in subjects), what='the callers to leave the bus')
        # Now polkit says yes.
        st.mock_polkit('ReleaseHangingCalls')
        self.sync()
        time.sleep(0.5)
        self.sync()
        out = st.daemon_output()[self._log_mark:]
        self.assertNothingChanged(before, f'a request whose caller disconnected (fsgated said:\n{out})')
        self.assertEqual(mon.take(), [])


# ---------------------------------------------------------------------------------------------

# What each kind of the flood client's calls must get. Unknown members are refused by the
# bus policy (AccessDenied: the policy opens only fsgate's interfaces) or by sd-bus.
FLOOD_EXPECTED = {
    'get-int': {E_INVALID_ARGS}, 'get-two-strings': {E_INVALID_ARGS}, 'get-no-args': {E_INVALID_ARGS},
    'get-array': {E_INVALID_ARGS}, 'get-variant': {E_INVALID_ARGS}, 'list-with-args': {E_INVALID_ARGS},
    'allow-swapped': {E_INVALID_ARGS}, 'allow-uint32': {E_INVALID_ARGS}, 'deny-string-flags': {E_INVALID_ARGS},
    'deny-extra': {E_INVALID_ARGS}, 'reset-no-flags': {E_INVALID_ARGS},
    'allow-unknown-flags': {E_INVALID_ARGS}, 'deny-unknown-flags': {E_INVALID_ARGS},
    'get-1mib': {E_INVALID_NAME}, 'get-1mib-dots': {E_INVALID_NAME}, 'deny-1mib': {E_INVALID_NAME},
    'allow-1mib': {E_INVALID_NAME}, 'load-1mib': {E_INVALID_NAME},
    'get-empty': {E_INVALID_NAME}, 'get-dotdot': {E_INVALID_NAME}, 'deny-slash': {E_INVALID_NAME},
    'deny-newline': {E_INVALID_NAME}, 'allow-shell': {E_INVALID_NAME}, 'get-300': {E_INVALID_NAME},
    'unknown-method': {'org.freedesktop.DBus.Error.UnknownMethod', E_ACCESS_DENIED},
    'unknown-interface': {'org.freedesktop.DBus.Error.UnknownInterface', 'org.freedesktop.DBus.Error.UnknownMethod',
                          E_ACCESS_DENIED},
    'unknown-object': {'org.freedesktop.DBus.Error.UnknownObject', 'org.freedesktop.DBus.Error.UnknownMethod',
                       E_ACCESS_DENIED},
    'property-unknown': {'org.freedesktop.DBus.Error.UnknownProperty', E_INVALID_ARGS},
    'property-set-const': {'org.freedesktop.DBus.Error.PropertyReadOnly', E_ACCESS_DENIED},
}


class FloodTest(FaultBase):
    """uid 65534 floods fsgated with malformed calls, 32 pipelined on one connection."""

    def flood(self, calls, extra=()):
        st = self.stack
        cmd = st.as_uid([PYTHON, FLOOD_CLIENT, '--address', st.address, '--calls', str(calls),
                         '--duration', str(30 * fb.TIMEOUT_MULTIPLIER)] + list(extra), NOBODY)
        p = subprocess.Popen(cmd, env=st.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, cwd=st.busdir, preexec_fn=fb.die_with_parent)
        self.addCleanup(fb.stop_process, p, signal.SIGKILL)
        line = p.stdout.readline()
        if line.strip() != 'ready':
            fb.stop_process(p, signal.SIGKILL)
            self.fail(f'the flood client did not start: {line!r} {p.stderr.read()}')
        p.stdin.write('go\n')
        p.stdin.flush()
        return p

    def finish(self, p):
        out, err = p.communicate(timeout=120 * fb.TIMEOUT_MULTIPLIER)
        self.assertEqual(p.returncode, 0, err)
        return json.loads(out)

    def test_flood_of_malformed_calls(self):
        st = self.stack
        self.vendor('hfs')
        st.mock_polkit_allow([ACTION_ALLOW, ACTION_DENY, ACTION_LOAD])  # nothing may get that far
        before = snapshot(self.root)
        st.list()
        # Warm-up: the same flood, shorter, so that the allocator has its working set.
        self.finish(self.flood(3000))
        mem_before = st.daemon_memory()
        samples = []
        with Prober(st, pause=0.005) as probe:
            p = self.flood(OPTS.flood_calls)
            while p.poll() is None:
                try:
                    samples.append(st.daemon_memory()['VmRSS'])
                except (OSError, KeyError):
                    pass
                time.sleep(0.1)
            result = self.finish(p)
            time.sleep(0.2)
        self.sync()
        mem_after = st.daemon_memory()

        bad = {}
        for kind, counts in result['counts'].items():
            for name, n in counts.items():
                if name not in FLOOD_EXPECTED[kind]:
                    bad[(kind, name)] = n
        v = probe.latencies
        fb.log(f'flood: {result["answered"]} malformed calls answered in {result["seconds"]:.1f}s '
               f'({result["answered"] / result["seconds"]:.0f}/s); concurrent GetFilesystem: {probe.summary()}')
        for kind in sorted(result['counts']):
            fb.log(f'  {kind:20} {result["counts"][kind]}')
        fb.log(f'  fsgated VmRSS before {mem_before["VmRSS"]} KiB, after {mem_after["VmRSS"]} KiB '
               f'(delta {mem_after["VmRSS"] - mem_before["VmRSS"]:+d} KiB, slack {RSS_SLACK_KIB}), max sampled '
               f'{max(samples) if samples else "?"} KiB, VmHWM {mem_after["VmHWM"]} KiB')
        self.assertEqual(bad, {}, 'unexpected answers (kind, error): count')
        self.assertEqual(result['answered'], result['sent'])
        # The flood ends by count or, on a slow or busy machine (valgrind, ASan, a shared CI
        # host), by time: what matters is that every call sent got its answer, and that
        # there were enough of them to be a flood. No rate is asserted here (see bench/).
        self.assertGreaterEqual(result['answered'], min(OPTS.flood_calls, 1000))
        self.assertEqual(probe.failures, [])
        self.assertGreater(len(v), 10, 'the concurrent client hardly got a call in')
        self.assertLess(percentile(v, .99), P99_BOUND * fb.TIMEOUT_MULTIPLIER, probe.summary())
        self.assertIsNone(st.daemon.poll(), 'fsgated died')
        self.assertNothingChanged(before, 'the flood')
        self.assertEqual(st.mock_polkit_calls(), [], 'a malformed call reached polkit')
        fb.assert_memory_back(self, mem_before, mem_after, RSS_SLACK_KIB, 'during the flood')


# ---------------------------------------------------------------------------------------------

class SecondInstanceTest(FaultBase):

    def test_second_instance_refuses_to_start(self):
        st = self.stack
        owner = st.name_owner(fb.BUS_NAME)
        first = st.daemon
        daemon_wrapper, _ = st.daemon_wrapper()
        cmd = daemon_wrapper + [CONFIG.fsgated, '--root=' + self.root, '--idle-timeout=0',
                                '--kernel-release=' + self.kver]
        p = subprocess.run(cmd, env=st.env, capture_output=True, text=True, timeout=fb.TIMEOUT)
        self.assertNotEqual(p.returncode, 0, f'a second fsgated started: {p.stderr}')
        self.assertIn(fb.BUS_NAME, p.stderr)
        self.assertIsNone(first.poll(), 'the first fsgated died')
        self.assertEqual(st.name_owner(fb.BUS_NAME), owner, 'the name changed hands')
        self.assertTrue(st.list())
        self.assertReplyOk(st.send('Deny', 'minix', 0))
        self.assertDenyFile(self.etc(module='minix'), 'minix')
        fb.log(f'second instance: exit status {p.returncode}: {p.stderr.strip()}')



# ---------------------------------------------------------------------------------------------

class SignalTest(FaultBase):
    """SIGTERM while fsgated is still connecting: the bus is SIGSTOPped, so fsgated waits in
    its (synchronous) name request. The signal must wait for the event loop, which then
    exits cleanly once the bus answers; before the fix it killed fsgated halfway."""

    def test_sigterm_while_requesting_the_name(self):
        st = self.stack
        st.stop_daemon()
        daemon_wrapper, log_pattern = st.daemon_wrapper()
        cmd = daemon_wrapper + [CONFIG.fsgated, '--root=' + self.root, '--idle-timeout=0',
                                '--kernel-release=' + self.kver]
        st.bus.send_signal(signal.SIGSTOP)
        self.addCleanup(st.bus.send_signal, signal.SIGCONT)
        with open(os.path.join(self.workdir, 'fsgated-sigterm.log'), 'w') as logf:
            p = subprocess.Popen(cmd, env=st.env, stdout=logf, stderr=logf, preexec_fn=fb.die_with_parent)
        p.wrapper_log = log_pattern.replace('%p', str(p.pid)) if log_pattern else None
        p.stopped_by = 'SIGTERM'
        st.daemons_started.append(p)      # its exit is checked like every fsgated's (tearDown)
        self.addCleanup(fb.stop_process, p, signal.SIGKILL)
        # Long enough to be past start-up and waiting for the bus (nothing else can happen).
        time.sleep(1.0 * fb.TIMEOUT_MULTIPLIER)
        self.assertIsNone(p.poll(), 'fsgated exited before the bus answered')
        p.send_signal(signal.SIGTERM)
        time.sleep(0.2)
        self.assertIsNone(p.poll(), 'fsgated died of the SIGTERM instead of deferring it')
        st.bus.send_signal(signal.SIGCONT)
        p.wait(fb.TIMEOUT)
        out = st.read(os.path.join(self.workdir, 'fsgated-sigterm.log'))
        self.assertEqual(p.returncode, 0, out)
        self.assertFalse(st.has_owner(fb.BUS_NAME), 'fsgated left its name behind')


# ---------------------------------------------------------------------------------------------

class JournalSink:
    """A fake journald: a datagram socket that fsgated (in its own mount namespace, where a
    tmpfs hides the host's /run) sees as /run/systemd/journal/socket. Parses the native
    protocol (KEY=VALUE lines; KEY, a 64-bit length and the bytes for values with newlines)."""

    def __init__(self, workdir):
        self.dir = os.path.join(workdir, 'journal')
        os.makedirs(self.dir, exist_ok=True)
        path = os.path.join(self.dir, 'socket')
        if os.path.lexists(path):
            os.unlink(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.sock.setblocking(False)

    def wrapper(self):
        script = ('mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/journal && '
                  'mount --bind "$1" /run/systemd/journal && shift && exec "$@"')
        return ['unshare', '--mount', '--propagation', 'private', '--', 'sh', '-c', script, 'sh', self.dir]

    @staticmethod
    def parse(data):
        fields = {}
        while data:
            nl = data.index(b'\n')
            line = data[:nl]
            if b'=' in line:
                k, v = line.split(b'=', 1)
                data = data[nl + 1:]
            else:
                k = line
                n = struct.unpack('<Q', data[nl + 1:nl + 9])[0]
                v = data[nl + 9:nl + 9 + n]
                data = data[nl + 9 + n + 1:]
            fields[k.decode()] = v.decode(errors='replace')
        return fields

    def take(self):
        out = []
        while True:
            try:
                out.append(self.parse(self.sock.recv(1 << 20)))
            except BlockingIOError:
                return out

    def close(self):
        self.sock.close()


class JournalTest(FaultBase):

    start_daemon = False
    refusal_window = REFUSAL_WINDOW_SEC

    def setUp(self):
        super().setUp()
        self.journal = JournalSink(self.workdir)
        self.addCleanup(self.journal.close)
        env = ['env', f'FSGATE_REFUSAL_LOG_WINDOW_SEC={self.refusal_window}',
               f'FSGATE_REFUSAL_LOG_BURST={REFUSAL_BURST}']
        self.stack.start_daemon(self.root, self.kver, wrapper=env + self.journal.wrapper())
        self.addCleanup(self.stack.stop_daemon)

    def test_exempt_loaded_journal_fields(self):
        """Regression: the journal entry for a module ExemptLoaded could not exempt carried
        an empty FSGATE_MODULE=. Now: the module's name; and a refusal of the whole
        ExemptLoaded has no FSGATE_MODULE= at all and says ExemptLoaded."""
        st = self.stack
        self.vendor('hfs')
        # squashfs: denied by vendor files (so ExemptLoaded tries it), one of them not
        # fsgate's name, which a mask cannot override: not exempted. minix: loaded (by a
        # user's namespace mount, say) but not mounted: not in use, not exempted, told.
        self.vendor('squashfs')
        self.vendor('minix')
        write(self.root, 'usr/lib/modprobe.d/50-hardening.conf', 'blacklist squashfs\n')
        write(self.root, 'proc/modules', ''.join(proc_modules_line(m) for m in ('hfs', 'squashfs', 'minix')))
        write(self.root, 'proc/mounts', '/dev/vda / ext4 rw,relatime 0 0\n/dev/sdb1 /mnt/a hfs ro 0 0\n'
                                        '/dev/loop0 /mnt/b squashfs ro 0 0\n')
        self.journal.take()
        self.assertError(self.nobody('ExemptLoaded'), E_ACCESS_DENIED)       # the mock refuses all
        r = st.busctl('ExemptLoaded')
        self.assertReplyOk(r)
        self.assertEqual(r.data, [['hfs']])
        self.sync()
        entries = wait_until(lambda: [e for e in self.journal.take() if e.get('MESSAGE_ID')],
                             what='journal entries from fsgated')
        fb.log('journal: ' + '; '.join(f'{e.get("FSGATE_MODULE", "-")}: {e["MESSAGE"]}' for e in entries))
        refused = [e for e in entries if e['MESSAGE'].startswith('Refused ')]
        self.assertEqual(len(refused), 1, entries)
        self.assertIn('ExemptLoaded', refused[0]['MESSAGE'])
        self.assertNotIn('FSGATE_MODULE', refused[0])
        self.assertEqual(refused[0]['FSGATE_REQUEST_UID'], str(NOBODY))
        skipped = [e for e in entries if e['MESSAGE'].startswith('Not exempted: ')]
        self.assertEqual([e.get('FSGATE_MODULE') for e in skipped], ['squashfs'], entries)
        allowed = [e for e in entries if 'in use: allowed' in e['MESSAGE']]
        self.assertEqual([e.get('FSGATE_MODULE') for e in allowed], ['hfs'], entries)
        unmounted = [e for e in entries if ' is loaded but nothing is mounted with it: ' in e['MESSAGE']]
        self.assertEqual([e.get('FSGATE_MODULE') for e in unmounted], ['minix'], entries)
        self.assertIn('fsgatectl allow minix', unmounted[0]['MESSAGE'])
        self.assertEqual(unmounted[0]['MESSAGE_ID'], MESSAGE_REFUSED)
        for e in entries:
            self.assertNotEqual(e.get('FSGATE_MODULE'), '', f'an empty FSGATE_MODULE= in {e}')

    def test_refusals_of_one_user_are_logged_within_bounds(self):
        """polkit's "no" is quick, so a user can be refused as fast as they ask. Regression:
        each refusal was a journal line, without bound."""
        st = self.stack
        self.vendor('hfs')
        before = snapshot(self.root)
        self.journal.take()
        calls = REFUSAL_BURST + 15
        refused = []
        t0 = time.monotonic()
        for _ in range(calls):
            self.assertError(self.nobody('Allow', 'hfs', 0), E_ACCESS_DENIED)
            # The fake journald's queue holds 10 datagrams (net.unix.max_dgram_qlen): drain it.
            refused += [e for e in self.journal.take() if e['MESSAGE'].startswith('Refused ')]
        self.assertLess(time.monotonic() - t0, self.refusal_window, 'the flood outlasted one window: '
                        'raise REFUSAL_WINDOW_SEC')
        self.sync()
        refused += [e for e in self.journal.take() if e['MESSAGE'].startswith('Refused ')]
        self.assertEqual(len(refused), REFUSAL_BURST, [e['MESSAGE'] for e in refused])
        self.assertEqual({e['FSGATE_REQUEST_UID'] for e in refused}, {str(NOBODY)})
        self.assertNotIn('not logged', refused[0]['MESSAGE'])

        # Another user is logged as before.
        other = sorted(u.pw_uid for u in pwd.getpwall() if 0 < u.pw_uid < 1000 and u.pw_uid != NOBODY)[0]
        self.assertError(st.send('Allow', 'hfs', 0, uid=other), E_ACCESS_DENIED)
        entries = wait_until(lambda: [e for e in self.journal.take() if e['MESSAGE'].startswith('Refused ')],
                             what="the other user's refusal in the journal")
        self.assertEqual([e['FSGATE_REQUEST_UID'] for e in entries], [str(other)])

        # The next window's first line says how many were not logged. The window began at
        # fsgated's first refusal, some time after t0 (a polkit round trip: over a second under
        # ASan on a loaded machine, where a 0.5 s margin landed in the same window): a quarter
        # of a window of margin.
        time.sleep(max(0.0, self.refusal_window - (time.monotonic() - t0) + self.refusal_window / 4))
        self.assertError(self.nobody('Allow', 'hfs', 0), E_ACCESS_DENIED)
        entries = wait_until(lambda: [e for e in self.journal.take() if e['MESSAGE'].startswith('Refused ')],
                             what='the next window\'s refusal in the journal')
        fb.log('journal: ' + entries[0]['MESSAGE'])
        self.assertEqual(len(entries), 1, entries)
        self.assertIn('; 15 earlier refusals of this user were not logged', entries[0]['MESSAGE'])
        self.assertEqual(entries[0]['MESSAGE_ID'], MESSAGE_REFUSED)
        self.assertEqual(entries[0]['FSGATE_MODULE'], 'hfs')
        self.assertEqual(snapshot(self.root), before)


if __name__ == '__main__':
    fb.main()

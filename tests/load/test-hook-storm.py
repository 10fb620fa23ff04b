#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Hook storm: an unprivileged user in a user namespace can make the kernel run the deny
hook (fsgate-blocked, as root) as often as it likes (`unshare -Urm mount -t hfs ...`; the
real thing runs in the VM suite, tests/vm/scenarios/storm.sh). Here the test plays the
kernel: the built hook, run as root the way modprobe's install line runs it (without
standard input, output and error, as the kernel starts modprobe), ATTEMPTS times from
WORKERS threads at once, against the real fsgated on the private bus (MOCK polkit;
harness: tests/lib/fsgatetest). Its kernel log line goes to a scratch file
(FSGATE_KMSG), its state to a scratch directory (FSGATE_RUNTIME_DIR, /run/fsgate for real).

Checked (the limits are service/hook/hook-ratelimit.h's):
- one type: exactly HOOK_BURST kernel log lines and at most HOOK_BURST Blocked signals per
  window; once the window has passed, the next attempt first writes one line with the
  number it suppressed; at most one reporting child (the hook's detached fork, a session
  leader) alive at any sampled moment; every attempt exits 0 (none runs into its 3 s
  alarm: the hook never waits for the bus); the median attempt is printed;
- fsgated stopped (SIGSTOP) while eight types are hammered: at most HOOK_REPORTERS_MAX
  reporting children, one per type, however long the storm;
- a state directory or file the hook cannot trust (writable by others, a symlink) is not
  used: the attempt is logged, nothing is reported, nothing is written;
- the route path (`--route`, a block another file's deny leaves silent): the request is
  counted before the state is built; past the burst no modprobe.d file is opened (strace),
  unless the configuration changed since the last build: a module allowed meanwhile is
  built once and loaded, and loaded without a build after that;
- fsgated's record of the devices it reported (ROOT/run/fsgate/reported, kept across idle
  exits) holds the newest REPORTED_MAX (service/block-reports.c) and forgets the oldest.

Options (before unittest's): --attempts=N (default 1000), --workers=N (default 8), --hook
(the fsgate-blocked to test; meson passes the built one).
"""

import argparse
import os
import re
import signal
import struct
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True      # keep the source tree clean
import fsgatetest as fb  # noqa: E402
from fsgatetest import CONFIG, BlockedMonitor, BusTestCase, wait_until  # noqa: E402
from fsgatetest.api import define  # noqa: E402

ap = argparse.ArgumentParser(add_help=False)
ap.add_argument('--attempts', type=int, default=1000)
ap.add_argument('--workers', type=int, default=8)
OPTS, _rest = ap.parse_known_args()
sys.argv = sys.argv[:1] + _rest

HOOK_BURST = define('service/hook/hook-ratelimit.h', 'HOOK_BURST')
HOOK_REPORTERS_MAX = define('service/hook/hook-ratelimit.h', 'HOOK_REPORTERS_MAX')
REPORTED_MAX = define('service/block-reports.c', 'REPORTED_MAX')
REPORTER_LIFETIME = 15      # the reporting child's alarm (service/hook/fsgate-blocked.c)
# Starting the hook costs ~10 ms on an idle machine and 200-300 ms when the machine is
# loaded tenfold: printed, not bounded. A hook that waited for the bus would be killed by
# its 3 s alarm, which attempt() fails on.

LINE_RE = re.compile(r'^<4>fsgate: blocked autoload of filesystem (\S+) \(module (\S+), denied by (\S+)\); '
                     r'see: fsgatectl why \S+$')
SUMMARY_RE = re.compile(r'^<4>fsgate: (\d+) more blocked autoloads of filesystem (\S+) \(module (\S+)\) '
                        r'suppressed; at most (\d+) are logged per (\d+) s$')


class HookSampler:
    """Samples /proc in a thread: the hook's processes, and among them the reporting
    children (the hook's detached fork calls setsid(): a session leader; the hook itself,
    run by the test, is not). A sweep of /proc is not a snapshot: a reporter seen early in
    it may be gone when the next one is seen. So reporters count as alive at once only if
    each is still there after the sweep: all were then alive together at the moment the
    sweep saw the last of them."""

    def __init__(self, hook):
        self.hook = os.path.realpath(hook)
        self.peak_all = self.peak_reporters = 0
        self.peak_per_type = {}
        self.samples = 0
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def hook_processes(self):
        """[(pid, is_reporter, type)] of the hook's live processes."""
        out = []
        for name in os.listdir('/proc'):
            if not name.isdigit():
                continue
            try:
                if os.readlink(f'/proc/{name}/exe') != self.hook:
                    continue
                with open(f'/proc/{name}/stat') as f:
                    fields = f.read().rsplit(')', 1)[1].split()
                with open(f'/proc/{name}/cmdline', 'rb') as f:
                    argv = f.read().split(b'\0')
            except OSError:
                continue    # gone meanwhile, or a kernel thread
            if fields[0] == 'Z':
                continue
            route = len(argv) > 2 and argv[1] == b'--route'     # --route TYPE MODULE
            out.append((int(name), int(fields[3]) == int(name), argv[1 + route].decode() if len(argv) > 1 else '?'))
        return out

    def reporters(self):
        return [p for p in self.hook_processes() if p[1]]

    def still_reporting(self, pid):
        try:
            with open(f'/proc/{pid}/stat') as f:
                fields = f.read().rsplit(')', 1)[1].split()
            return os.readlink(f'/proc/{pid}/exe') == self.hook and fields[0] != 'Z' and int(fields[3]) == pid
        except OSError:
            return False

    def _run(self):
        while not self.stop_event.is_set():
            procs = self.hook_processes()
            rep = [t for pid, r, t in procs if r and self.still_reporting(pid)]
            self.samples += 1
            self.peak_all = max(self.peak_all, len(procs))
            self.peak_reporters = max(self.peak_reporters, len(rep))
            for t in set(rep):
                self.peak_per_type[t] = max(self.peak_per_type.get(t, 0), rep.count(t))
            self.stop_event.wait(0.005)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop_event.set()
        self.thread.join(10)

    def summary(self):
        return (f'peak {self.peak_all} hook processes, {self.peak_reporters} reporting children '
                f'(per type {dict(sorted(self.peak_per_type.items()))}), {self.samples} samples')


class HookStormTest(BusTestCase):

    def setUp(self):
        super().setUp()
        self.hook = CONFIG.hook
        self.mon = BlockedMonitor(self.stack)
        self.addCleanup(self.mon.stop)
        self.kmsg = os.path.join(self.workdir, 'kmsg')
        open(self.kmsg, 'w').close()
        # Not created: the hook makes it (0755) like a /run/fsgate that fsgated never made.
        self.rundir = os.path.join(self.workdir, 'run-fsgate-' + self._testMethodName)
        self.addCleanup(self.wait_reporters_gone)

        # A stand-in for /sbin/modprobe (the route path loads by name): records, loads nothing.
        self.modprobe_log = os.path.join(self.workdir, 'modprobe.log')
        self.modprobe = os.path.join(self.workdir, 'modprobe')
        with open(self.modprobe, 'w') as f:
            f.write(f'#!/bin/sh\necho "$@" >> {self.modprobe_log}\n')
        os.chmod(self.modprobe, 0o755)
        open(self.modprobe_log, 'w').close()

    def env(self, window):
        return dict(self.stack.env, FSGATE_KMSG=self.kmsg, FSGATE_RUNTIME_DIR=self.rundir,
                    FSGATE_HOOK_WINDOW_SEC=str(window), FSGATE_ROOT=self.root, FSGATE_MODPROBE=self.modprobe)

    @staticmethod
    def hook_args(type_, module, route):
        """The install line's arguments: a deny of fsgate's, or a route (core/routes.c)."""
        if route:
            return ['--route', type_, module]
        return [type_, module, '/usr/lib/modprobe.d/' + fb.conf_name(module)]

    def attempt(self, env, type_, module=None, route=False):
        """One blocked autoload, as modprobe runs the install line when the kernel asks: with
        no standard input, output or error (kernel/umh.c opens none). Returns its duration."""
        module = module or type_
        t0 = time.monotonic()
        p = subprocess.run(['sh', '-c', 'exec "$@" <&- >&- 2>&-', 'sh', self.hook, *self.hook_args(type_, module, route)],
                           env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, timeout=10)
        self.assertEqual(p.returncode, 0)
        return time.monotonic() - t0

    def storm(self, types, window, attempts=None, workers=None, route=False):
        """attempts runs of the hook, round-robin over types, from workers threads at once.
        Returns (seconds, [duration of each attempt], sampler)."""
        attempts, workers = attempts or OPTS.attempts, workers or OPTS.workers
        env = self.env(window)
        durations, errors, lock = [], [], threading.Lock()
        counter = iter(range(attempts))

        def worker():
            while True:
                with lock:
                    i = next(counter, None)
                if i is None:
                    return
                try:
                    d = self.attempt(env, types[i % len(types)], route=route)
                except Exception as e:  # noqa: BLE001 - reported below
                    with lock:
                        errors.append(repr(e))
                    return
                with lock:
                    durations.append(d)

        with HookSampler(self.hook) as sampler:
            t0 = time.monotonic()
            threads = [threading.Thread(target=worker) for _ in range(workers)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            took = time.monotonic() - t0
        self.assertEqual(errors, [], 'attempts failed')
        durations.sort()
        fb.log(f'  {attempts} attempts ({len(types)} type(s), {workers} at once) in {took:.2f} s; '
               f'per attempt p50 {durations[len(durations) // 2] * 1000:.1f} ms, max {durations[-1] * 1000:.1f} ms; '
               f'{sampler.summary()}')
        return took, durations, sampler

    def kmsg_lines(self):
        """(lines, summaries): [(type, module, source)], [(count, type, module, burst, window)]"""
        lines, summaries = [], []
        with open(self.kmsg) as f:
            for text in f.read().splitlines():
                m, s = LINE_RE.match(text), SUMMARY_RE.match(text)
                self.assertTrue(m or s, f'unexpected kernel log line: {text!r}')
                if m:
                    lines.append(m.groups())
                else:
                    summaries.append((int(s.group(1)), s.group(2), s.group(3), int(s.group(4)), int(s.group(5))))
        return lines, summaries

    def state_attempts(self, type_, counter='state'):
        """The attempts counted in type_'s current window (struct RateLimitCount: begin, let
        through, held back since); counter 'route': those of the route path."""
        with open(os.path.join(self.rundir, f'hook-{type_}.{counter}'), 'rb') as f:
            _begin_ms, passed, dropped = struct.unpack('=QQQ', f.read(24))
        return passed + dropped

    def wait_reporters_gone(self, sampler=None):
        """The reporting children all exited (they give up after REPORTER_LIFETIME s)."""
        sampler = sampler or HookSampler(self.hook)
        wait_until(lambda: not sampler.reporters(), timeout=REPORTER_LIFETIME + 5, what='reporting children to exit')

    def signals(self, expect_at_least):
        """The Blocked signals so far, once the reporters are done and at least
        expect_at_least have arrived (waiting a little longer for stragglers)."""
        self.wait_reporters_gone()
        self.mon.wait(expect_at_least)
        return self.mon.wait(10 ** 6, timeout=0.5)

    # -- one type --------------------------------------------------------------------------
    def test_storm_one_type(self):
        self.vendor('hfs')
        # One window for the whole storm, whatever the machine's speed.
        took, durations, sampler = self.storm(['hfs'], window=3600)
        lines, summaries = self.kmsg_lines()
        sig = self.signals(1)
        fb.log(f'  kernel log: {len(lines)} lines, {len(summaries)} summaries; {len(sig)} Blocked signals')
        self.assertEqual(len(lines), HOOK_BURST, 'kernel log lines in one window')
        self.assertEqual(summaries, [], 'a summary before the window ended')
        self.assertLessEqual(len(sig), HOOK_BURST, f'Blocked signals: {sig[:5]}')
        self.assertTrue(all(s[:3] == ('hfs', 'hfs', '') for s in sig), sig[:5])
        self.assertLessEqual(sampler.peak_reporters, 1, sampler.summary())
        # Times are figures, not bounds (a loaded machine or a sanitizer build is slower):
        # what is bounded is what an attempt may start, above.
        fb.log(f'  median attempt {durations[len(durations) // 2] * 1000:.0f} ms, whole storm {took:.1f} s')

        # Every attempt counted, none twice, however many ran at once.
        self.assertEqual(self.state_attempts('hfs'), OPTS.attempts)
        suppressed = OPTS.attempts - HOOK_BURST

        # The window ends (this attempt is told it lasts 1 s): one line with the count first,
        # then the attempt's own line, and a report.
        time.sleep(1.1)
        self.attempt(self.env(1), 'hfs')
        lines, summaries = self.kmsg_lines()
        self.assertEqual(summaries, [(suppressed, 'hfs', 'hfs', HOOK_BURST, 1)])
        self.assertEqual(len(lines), HOOK_BURST + 1)
        with open(self.kmsg) as f:
            self.assertTrue(SUMMARY_RE.match(f.read().splitlines()[-2]), 'the summary comes before the new line')
        self.assertEqual(len(self.signals(len(sig) + 1)), len(sig) + 1)

    def test_windows_open_again(self):
        self.vendor('minix')
        env = self.env(2)
        for _ in range(HOOK_BURST + 2):
            self.attempt(env, 'minix')
        lines, summaries = self.kmsg_lines()
        self.assertEqual((len(lines), summaries), (HOOK_BURST, []))
        time.sleep(2.1)
        for _ in range(HOOK_BURST + 1):
            self.attempt(env, 'minix')
        lines, summaries = self.kmsg_lines()
        self.assertEqual(summaries, [(2, 'minix', 'minix', HOOK_BURST, 2)])
        self.assertEqual(len(lines), 2 * HOOK_BURST)
        # Reports go at most one at a time per type: a few, never more than the lines.
        sig = self.signals(1)
        self.assertLessEqual(len(sig), 2 * HOOK_BURST)
        # Each type has its own budget.
        self.vendor('hfs')
        self.attempt(env, 'hfs')
        self.assertEqual(len(self.kmsg_lines()[0]), 2 * HOOK_BURST + 1)
        st = os.stat(self.rundir)
        self.assertEqual((st.st_mode & 0o7777, st.st_uid), (0o755, 0), 'the state directory the hook made')
        for name in os.listdir(self.rundir):
            st = os.lstat(os.path.join(self.rundir, name))
            self.assertEqual((oct(st.st_mode), st.st_uid), (oct(0o100600), 0), name)

    # -- the route path ----------------------------------------------------------------------
    def conf_opens(self, env, type_):
        """The modprobe.d files one routed request opens (strace): a state build reads every
        one; a request past the burst, with the configuration as the last build saw it, none."""
        trace = os.path.join(self.workdir, 'strace')
        p = subprocess.run(['strace', '-f', '-qq', '-e', 'trace=openat,openat2,open', '-o', trace,
                            self.hook, *self.hook_args(type_, type_, True)],
                           env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=30)
        self.assertEqual(p.returncode, 0)
        with open(trace) as f:
            return len([line for line in f if re.search(r'\.conf"', line)])

    def modprobe_runs(self):
        with open(self.modprobe_log) as f:
            return f.read().splitlines()

    def test_route_storm_builds_the_state_only_within_the_burst(self):
        """Issue 36 item 6: the route path built the whole state for every request, before
        its limit (17 ms of CPU against 2 ms for a deny's)."""
        self.vendor('hfs')      # a plain blacklist: the block a route makes visible
        env = self.env(3600)
        took, durations, sampler = self.storm(['hfs'], window=3600, route=True)
        lines, summaries = self.kmsg_lines()
        self.assertEqual((len(lines), summaries), (HOOK_BURST, []), 'kernel log lines in one window')
        self.assertTrue(all(x[2] == '/usr/lib/modprobe.d/' + fb.conf_name('hfs') for x in lines), lines)
        self.assertEqual(self.modprobe_runs(), [])
        fb.log(f'  route path: median attempt {durations[len(durations) // 2] * 1000:.1f} ms, '
               f'whole storm {took:.1f} s (figures, not bounds)')
        # Past the burst a request opens no modprobe.d file: no state is built.
        self.assertEqual([self.conf_opens(env, 'hfs') for _ in range(3)], [0, 0, 0])
        self.assertEqual(self.state_attempts('hfs', 'route'), OPTS.attempts + 3, 'every request counted')
        # Allowed meanwhile (an admin's mask, before fsgate-routes.path rebuilds the routes):
        # still past the burst, the next request builds once and loads by name, as the
        # kernel's request would have; the ones after it load without a build.
        mask = self.etc(module='hfs')
        os.makedirs(os.path.dirname(mask), exist_ok=True)
        os.symlink('/dev/null', mask)
        opens = [self.conf_opens(env, 'hfs') for _ in range(3)]
        self.assertGreater(opens[0], 0, opens)
        self.assertEqual(opens[1:], [0, 0])
        self.assertEqual(self.modprobe_runs(), ['-q -- hfs'] * 3)
        # Denied again: built once more, and nothing loads.
        os.unlink(mask)
        opens = [self.conf_opens(env, 'hfs') for _ in range(3)]
        self.assertGreater(opens[0], 0, opens)
        self.assertEqual(opens[1:], [0, 0])
        self.assertEqual(self.modprobe_runs(), ['-q -- hfs'] * 3)
        self.assertEqual(len(self.kmsg_lines()[0]), HOOK_BURST, 'all past the burst: quiet')
        # A record the hook did not write is not believed (a torn one neither): it builds.
        with open(os.path.join(self.rundir, 'hook-hfs.verdict'), 'r+b') as f:
            f.write(b'\xff' * 8)
        self.assertGreater(self.conf_opens(env, 'hfs'), 0)
        self.assertEqual(self.conf_opens(env, 'hfs'), 0)
        self.assertEqual(self.modprobe_runs(), ['-q -- hfs'] * 3)

    # -- fsgated stopped ---------------------------------------------------------------------
    def test_storm_with_fsgated_stopped(self):
        types = ['hfs', 'hfsplus', 'minix', 'ufs', 'qnx4', 'qnx6', 'affs', 'befs']
        for t in types:
            self.vendor(t)
        self.stack.get('hfs')   # fsgated has seen the vendor files before it stops
        pid = self.stack.daemon.pid
        os.kill(pid, signal.SIGSTOP)
        resumed = False
        try:
            took, durations, sampler = self.storm(types, window=3600)
            # The reporters that got a slot wait for the stopped service; nobody else may start.
            fb.log(f'  still waiting for fsgated: {len(sampler.reporters())} reporting children')
            self.assertLessEqual(sampler.peak_reporters, HOOK_REPORTERS_MAX, sampler.summary())
            self.assertTrue(all(n <= 1 for n in sampler.peak_per_type.values()), sampler.summary())
            fb.log(f'  median attempt {durations[len(durations) // 2] * 1000:.0f} ms')
            lines, _ = self.kmsg_lines()
            for t in types:
                self.assertEqual(len([x for x in lines if x[0] == t]), HOOK_BURST, f'kernel log lines for {t}')
            os.kill(pid, signal.SIGCONT)
            resumed = True
            sig = self.signals(1)
            fb.log(f'  after SIGCONT: {len(sig)} Blocked signals ({sorted(s[0] for s in sig)})')
            self.assertLessEqual(len(sig), HOOK_BURST * len(types))
            for t in types:
                self.assertLessEqual(len([s for s in sig if s[0] == t]), HOOK_BURST, t)
        finally:
            if not resumed:
                os.kill(pid, signal.SIGCONT)

    # -- state the hook must not trust -------------------------------------------------------
    def test_untrusted_state_is_not_used(self):
        self.vendor('hfs')
        os.makedirs(self.rundir)
        os.chmod(self.rundir, 0o777)
        env = self.env(3600)
        for _ in range(HOOK_BURST + 2):
            self.attempt(env, 'hfs')
        # Logged every time (a block never goes unseen), reported never, nothing written.
        self.assertEqual(len(self.kmsg_lines()[0]), HOOK_BURST + 2)
        self.assertEqual(os.listdir(self.rundir), [])
        self.assertEqual(self.signals(0), [])

        os.chmod(self.rundir, 0o755)
        victim = os.path.join(self.workdir, 'victim')
        with open(victim, 'w') as f:
            f.write('untouched\n')
        os.symlink(victim, os.path.join(self.rundir, 'hook-hfs.state'))
        self.attempt(env, 'hfs')
        with open(victim) as f:
            self.assertEqual(f.read(), 'untouched\n')
        self.assertEqual(len(self.kmsg_lines()[0]), HOOK_BURST + 3)
        self.assertEqual(self.signals(0), [])

    # -- fsgated's record of reported devices --------------------------------------------
    def test_reported_records_are_capped(self):
        self.vendor('hfs')
        reported = os.path.join(self.root, 'run/fsgate/reported')
        n = REPORTED_MAX + 44
        # Names no host device has: no udev details, DISKSEQ 0.
        devs = [f'/dev/fsgstorm{i}' for i in range(n)]
        for d in devs:
            self.assertReplyOk(self.stack.send('ReportDevice', d, 'hfs'))
        sig = self.mon.wait(n, timeout=fb.TIMEOUT)
        self.assertEqual(len(sig), n, 'one Blocked signal per new device')
        names = set(os.listdir(reported))
        fb.log(f'  {n} devices reported: {len(names)} records kept')
        self.assertEqual(names, {f'{os.path.basename(d)}!hfs!0' for d in devs[-REPORTED_MAX:]})

        # The newest are still known, across a restart too; the dropped ones are reported
        # again (once), pushing out the next oldest.
        self.stack.restart_daemon()
        self.assertReplyOk(self.stack.send('ReportDevice', devs[-1], 'hfs'))
        self.assertReplyOk(self.stack.send('ReportDevice', devs[0], 'hfs'))
        self.assertReplyOk(self.stack.send('ReportDevice', devs[0], 'hfs'))
        sig = self.mon.wait(n + 1, timeout=fb.TIMEOUT)
        time.sleep(0.3)
        sig = self.mon.wait(n + 2, timeout=0.5)
        self.assertEqual([s[:3] for s in sig[n:]], [('hfs', 'hfs', devs[0])])
        names = set(os.listdir(reported))
        self.assertEqual(len(names), REPORTED_MAX)
        self.assertIn('fsgstorm0!hfs!0', names)
        self.assertNotIn(f'fsgstorm{n - REPORTED_MAX}!hfs!0', names)


if __name__ == '__main__':
    fb.main()

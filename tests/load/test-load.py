#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Load test: 32 concurrent clients for --duration seconds (default 30) mixing
ListFilesystems, GetFilesystem, Allow, Deny and Reset on a few modules.

Half the clients are root, half uid 65534 going through polkit, which here is a MOCK
(python-dbusmock's polkitd template) allowing every fsgate action. Each client is its own
process with its own connection (tests/load/load-client.py). Checked afterwards:
- only expected errors: none for root; for the polkit path ConcurrentChange (the
  configuration changed while polkit was asked; the plan is made again and refused) and
  LimitsExceeded (more than 8 of uid 65534's calls waiting for polkit at once);
- the files: every file in etc/run modprobe.d is fsgate's deny file or a /dev/null mask for
  one of the modules, no .fsgate-tmp-* file; GetFilesystem agrees with the files;
- the final state of each module is what the last successful replies imply (the last one
  by reply time, or one that overlapped it), and exactly what the last FilesystemChanged
  signal for it said;
- fsgated's VmRSS after the load is within RSS_SLACK_KIB of its level before the load
  (measured after a warm-up with the same mix); VmHWM is reported.

Options (before unittest's): --duration=SEC (or FSGATE_LOAD_DURATION), --warmup=SEC,
--clients=N. Seed: FSGATE_TEST_SEED. Bus harness: tests/lib/fsgatetest.
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True      # keep the source tree clean
HERE = os.path.dirname(os.path.abspath(__file__))
import fsgatetest as fb  # noqa: E402
from fsgatetest import (ACTION_ALLOW, ACTION_DENY, ACTION_LOAD, E_LIMITS_EXCEEDED, ERR, NOBODY, PYTHON,  # noqa: E402
                        BusTestCase, SignalMonitor, expected_from_files, last_change, percentile)

ap = argparse.ArgumentParser(add_help=False)
ap.add_argument('--duration', type=float, default=float(os.environ.get('FSGATE_LOAD_DURATION', 30)))
ap.add_argument('--warmup', type=float, default=3)
ap.add_argument('--clients', type=int, default=32)
OPTS, _rest = ap.parse_known_args()
sys.argv = sys.argv[:1] + _rest

SEED = int(os.environ.get('FSGATE_TEST_SEED', time.time_ns() % 1000000))
CLIENT = os.path.join(HERE, 'load-client.py')

# After a warm-up with the same mix, the heap has its working size; what the load itself
# may add (allocator fragmentation, a larger sd-bus queue kept) must stay under this.
RSS_SLACK_KIB = 512

VENDOR_DENIED = {'hfs'}             # gets openSUSE's vendor file: Reset goes back to denied
EXPECTED_ERRORS = {
    'root': set(),
    'nobody': {ERR + 'ConcurrentChange', E_LIMITS_EXCEEDED},
}


class LoadTest(BusTestCase):

    MODULES = ['hfs', 'minix', 'jfs']       # changed in /etc
    RUNTIME_MODULES = ['udf']               # changed in /run only (so never Overridden)

    def run_clients(self, n, duration, seed, n_entries):
        """n client processes (even: root, odd: uid 65534) calling for duration seconds.
        Returns [(kind, records)]."""
        st = self.stack
        procs = []
        try:
            for i in range(n):
                kind = 'root' if i % 2 == 0 else 'nobody'
                cmd = [PYTHON, CLIENT, '--address', st.address, '--duration', str(duration),
                       '--seed', str(seed * 1000 + i), '--modules', ','.join(self.MODULES),
                       '--runtime-modules', ','.join(self.RUNTIME_MODULES), '--entries', str(n_entries),
                       '--timeout', str(fb.TIMEOUT)]
                cmd = st.as_uid(cmd, None if kind == 'root' else NOBODY)
                p = subprocess.Popen(cmd, env=st.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, cwd=st.busdir, preexec_fn=fb.die_with_parent)
                procs.append((kind, p))
            # All connected before any starts, so that the load really is concurrent.
            for kind, p in procs:
                line = p.stdout.readline()
                if line.strip() != 'ready':
                    fb.stop_process(p, timeout=2)
                    self.fail(f'a {kind} client did not start: {line!r} {p.stderr.read()}')
            for _, p in procs:
                p.stdin.write('go\n')
                p.stdin.flush()
            out = []
            for kind, p in procs:
                stdout, stderr = p.communicate(timeout=duration + fb.TIMEOUT + 30)
                self.assertEqual(p.returncode, 0, f'a {kind} client failed: {stderr}')
                out.append((kind, json.loads(stdout)['records']))
            return out
        finally:
            for _, p in procs:
                fb.stop_process(p, timeout=2)

    def test_load(self):
        st = self.stack
        self.vendor('hfs')
        modules = self.MODULES + self.RUNTIME_MODULES
        st.mock_polkit_allow([ACTION_ALLOW, ACTION_DENY, ACTION_LOAD])
        n_entries = len(st.list())
        log = f'seed {SEED} (set FSGATE_TEST_SEED to repeat)'

        # Warm-up: the same mix, shorter, so that what is measured next is the steady state.
        t = time.monotonic()
        self.run_clients(OPTS.clients, OPTS.warmup, SEED + 1, n_entries)
        warm = time.monotonic() - t
        mem_before = st.daemon_memory()

        mon = SignalMonitor(st)
        self.addCleanup(mon.stop)
        mon.take()
        # Sample RSS while the load runs.
        samples = []
        stop_sampling = threading.Event()

        def sampler():
            while not stop_sampling.wait(0.2):
                try:
                    samples.append(st.daemon_memory()['VmRSS'])
                except (OSError, KeyError):
                    pass
        sampler_thread = threading.Thread(target=sampler, daemon=True)
        sampler_thread.start()
        t = time.monotonic()
        try:
            results = self.run_clients(OPTS.clients, OPTS.duration, SEED, n_entries)
        finally:
            stop_sampling.set()
            sampler_thread.join(5)
        elapsed = time.monotonic() - t
        self.assertIsNone(st.daemon.poll(), 'fsgated died under load')
        signals = mon.take()

        # -- only expected errors ---------------------------------------------------------
        unexpected = []
        counts = {}
        latencies = {}
        changes = []            # successful Allow/Deny/Reset: (module, op, t0, t1)
        for kind, records in results:
            for op, m, flags, t0, t1, error, detail in records:
                key = (kind, op, error or 'ok')
                counts[key] = counts.get(key, 0) + 1
                latencies.setdefault(op, []).append(t1 - t0)
                if error is None:
                    if op in ('Allow', 'Deny', 'Reset'):
                        changes.append((m, op, t0, t1))
                elif error not in EXPECTED_ERRORS[kind]:
                    unexpected.append((kind, op, m, flags, error, detail))
        total = sum(counts.values())
        fb.log(f'load: {OPTS.clients} clients, {total} calls in {elapsed:.1f}s ({total / elapsed:.0f}/s), '
               f'warm-up {warm:.1f}s; {log}')
        for key in sorted(counts):
            fb.log(f'  {key[0]:6} {key[1]:15} {key[2]:45} {counts[key]}')
        for op in sorted(latencies):
            v = latencies[op]
            fb.log(f'  latency {op:15} n={len(v):6} p50={percentile(v, .5) * 1000:7.1f}ms '
                   f'p99={percentile(v, .99) * 1000:7.1f}ms max={max(v) * 1000:7.1f}ms')
        self.assertEqual(unexpected[:20], [], f'{len(unexpected)} unexpected errors; {log}')
        for kind in ('root', 'nobody'):
            for op in ('Allow', 'Deny', 'Reset', 'ListFilesystems', 'GetFilesystem'):
                self.assertGreater(counts.get((kind, op, 'ok'), 0), 0, f'no successful {op} by {kind}')

        # -- files and final state --------------------------------------------------------
        self.assertNoTempFiles()
        self.assertOnlyFsgateFiles(modules)
        self.assertRoutesCurrent()
        decided = 0
        last_signal = {}
        for sig in signals:
            last_signal[sig[0]] = sig[1:]
        for m in modules:
            e = st.get(m)
            self.assertEqual((e.state, e.origin), expected_from_files(self.root, m, VENDOR_DENIED), f'{m}: {e!r}')
            if m in last_signal:
                self.assertEqual((e.state, e.origin), tuple(last_signal[m]),
                                 f'{m}: the last FilesystemChanged signal said {last_signal[m]}')
            # A change applied after `last` was answered after last's call began.
            found = last_change(changes, m, VENDOR_DENIED)
            if found is None:
                continue
            last, overlapping, possible = found
            self.assertIn(e.state, possible, f'{m}: last successful {last[1]}, overlapping '
                          f'{[c[1] for c in overlapping]}; {log}')
            if not overlapping:
                decided += 1
        fb.log(f'  {len(changes)} successful changes, {len(signals)} FilesystemChanged signals; '
               f'{decided} of {len(modules)} modules decided by a single last reply')

        # -- memory -----------------------------------------------------------------------
        # The daemon answers one more List and Get, so that nothing is half-done.
        st.list()
        mem_after = st.daemon_memory()
        fb.log(f'  fsgated VmRSS before {mem_before["VmRSS"]} KiB, after {mem_after["VmRSS"]} KiB '
               f'(delta {mem_after["VmRSS"] - mem_before["VmRSS"]:+d} KiB, slack {RSS_SLACK_KIB}), '
               f'max sampled during load {max(samples) if samples else "?"} KiB, VmHWM {mem_after["VmHWM"]} KiB')
        fb.assert_memory_back(self, mem_before, mem_after, RSS_SLACK_KIB, 'under load')


if __name__ == '__main__':
    fb.main()

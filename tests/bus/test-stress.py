#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Bus tests under load: SIGKILL during a burst of writes, and 16 concurrent clients.
Polkit is python-dbusmock's MOCK polkitd (allowing everything for the non-root clients)."""

import os
import random
import sys
import threading
import time

sys.dont_write_bytecode = True      # keep the source tree clean
import fsgatetest as fb  # noqa: E402
from fsgatetest import (ACTION_ALLOW, ACTION_DENY, ACTION_LOAD, ERR, FORCE, NOBODY, RUNTIME, TEMP_PREFIX,  # noqa: E402
                        BusTestCase, expected_from_files, last_change, wait_until, write)

SEED = int(os.environ.get('FSGATE_TEST_SEED', time.time_ns() % 1000000))

# Which module a Reset falls back to: hfs gets openSUSE's vendor file.
VENDOR_DENIED = {'hfs'}
DISCONNECTED = {
    'org.freedesktop.DBus.Error.NoReply',
    'org.freedesktop.DBus.Error.ServiceUnknown',
    'org.freedesktop.DBus.Error.NameHasNoOwner',
    'org.freedesktop.DBus.Error.Disconnected',
}


class StressBase(BusTestCase):

    def reference_deny_files(self, modules):
        """What fsgate writes for a deny of each module, to compare crash leftovers with."""
        ref = {}
        for m in modules:
            self.assertReplyOk(self.stack.send('Allow', m, 0))   # a vendor-denied one needs a mask first
            self.assertReplyOk(self.stack.send('Deny', m, FORCE))
            with open(self.etc(module=m)) as f:
                ref[m] = f.read()
            self.assertReplyOk(self.stack.send('Reset', m, 0))
            self.assertFalse(os.path.lexists(self.etc(module=m)))
        return ref

    def check_files(self, modules, ref, temps_allowed):
        """Every file in etc/run modprobe.d is fsgate's complete deny file, a /dev/null mask or
        (only between a crash and the restart) a temp file. Returns the temp files seen."""
        def complete(path, module, d):
            # The deny file names its own path (the hook reports it), so the /run copy
            # differs from the /etc reference only there.
            want = ref[module].replace('/etc/modprobe.d/', f'/{d}/')
            with open(path) as f:
                self.assertEqual(f.read(), want, f'{d}/{os.path.basename(path)} is not a complete deny file')
        temps = [] if temps_allowed else None
        self.assertOnlyFsgateFiles(modules, complete, temps)
        return temps or []

    def check_agreement(self, modules):
        for m in modules:
            e = self.stack.get(m)
            self.assertEqual((e.state, e.origin), expected_from_files(self.root, m, VENDOR_DENIED), f'{m}: {e!r}')


class KillTest(StressBase):
    """SIGKILL fsgated at random moments of a burst of Allow/Deny/Reset; after each kill only
    valid files exist, and after the restart no temp file remains."""

    MODULES = ['hfs', 'minix', 'jfs', 'udf']
    CALLS = 200
    KILLS = 25

    def test_sigkill_during_writes(self):
        import dbus
        st = self.stack
        rnd = random.Random(SEED)
        log = f'seed {SEED} (set FSGATE_TEST_SEED to repeat)'
        self.vendor('hfs')
        ref = self.reference_deny_files(self.MODULES)

        answered = [0]       # calls that got an answer from a live fsgated
        unexpected = []
        stop = threading.Event()
        lock = threading.Lock()
        # The clients pause while the files are checked after a restart, so that a temp file
        # of a write in progress is not mistaken for a leftover.
        gate = threading.Condition()
        paused = [False]
        inflight = [0]

        def enter():
            with gate:
                gate.wait_for(lambda: not paused[0] or stop.is_set())
                inflight[0] += 1

        def leave():
            with gate:
                inflight[0] -= 1
                gate.notify_all()

        def pause():
            with gate:
                paused[0] = True
                if not gate.wait_for(lambda: inflight[0] == 0, fb.TIMEOUT):
                    raise AssertionError('clients did not pause')

        def resume():
            with gate:
                paused[0] = False
                gate.notify_all()

        def client(i):
            r = random.Random(SEED * 100 + i)
            conn = dbus.bus.BusConnection(st.address)
            try:
                while not stop.is_set():
                    op = r.choice(['Allow', 'Deny', 'Reset'])
                    flags = r.choice([0, RUNTIME]) | (FORCE if op == 'Deny' else 0)
                    m = r.choice(self.MODULES)
                    enter()
                    try:
                        conn.call_blocking(fb.BUS_NAME, fb.OBJ_PATH, fb.IFACE, op, 'st', [m, flags],
                                           timeout=fb.TIMEOUT)
                    except dbus.DBusException as e:
                        name = e.get_dbus_name()
                        if name in DISCONNECTED:
                            leave()
                            # Killed under us: wait for the restart.
                            while not stop.is_set() and not conn.name_has_owner(fb.BUS_NAME):
                                stop.wait(0.002)
                            continue
                        if name != ERR + 'Overridden':   # a runtime change under an /etc file
                            with lock:
                                unexpected.append((op, m, flags, name, str(e)))
                    leave()
                    with lock:
                        answered[0] += 1
            finally:
                conn.close()

        threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(4)]
        for t in threads:
            t.start()
        kills = 0
        temps_seen = []
        try:
            for kills in range(1, self.KILLS + 1):
                time.sleep(rnd.uniform(0, 0.02))
                st.kill_daemon()
                temps_seen += self.check_files(self.MODULES, ref, temps_allowed=True)
                pause()
                st.start_daemon(self.root, self.kver)
                self.check_files(self.MODULES, ref, temps_allowed=False)
                resume()
            wait_until(lambda: answered[0] >= self.CALLS, timeout=60 * fb.TIMEOUT_MULTIPLIER, what=f'{self.CALLS} answered calls')
        finally:
            stop.set()
            resume()
            for t in threads:
                t.join(fb.TIMEOUT + 5)
        self.assertEqual(unexpected, [], log)
        self.check_files(self.MODULES, ref, temps_allowed=False)
        self.check_agreement(self.MODULES)
        fb.log(f'kill test: {kills} kills during {answered[0]} answered calls, temp files seen after a kill: '
               f'{len(temps_seen)}; {log}')

    def test_stale_temp_files_are_removed(self):
        # What a kill between creating and renaming a temp file leaves behind.
        st = self.stack
        st.stop_daemon()
        for d in ('etc/modprobe.d', 'run/modprobe.d'):
            write(self.root, f'{d}/{TEMP_PREFIX}0badc0de00001234', '# Written by fsgate: half')
            os.symlink('/dev/null', os.path.join(self.root, d, TEMP_PREFIX + 'deadbeef00004321'))
        write(self.root, 'etc/modprobe.d/50-local.conf', 'blacklist jfs\n')
        st.start_daemon(self.root, self.kver)
        self.assertNoTempFiles()
        self.assertEqual(os.listdir(os.path.join(self.root, 'etc/modprobe.d')), ['50-local.conf'])
        # And one that appears while it runs goes with the next write in that directory.
        write(self.root, f'etc/modprobe.d/{TEMP_PREFIX}0000000100000002', 'x')
        self.assertReplyOk(st.send('Deny', 'minix', 0))
        self.assertNoTempFiles()


class ConcurrencyTest(StressBase):
    """16 clients at once (busctl as root, dbus-send as uid 65534 through the MOCK polkit),
    mixing List/Get/Allow/Deny/Reset on a few modules."""

    MODULES = ['hfs', 'minix', 'jfs']      # changed in /etc
    RUNTIME_MODULES = ['udf']              # changed in /run only, so never Overridden
    CLIENTS = 16
    CALLS_PER_CLIENT = 20

    def test_sixteen_concurrent_clients(self):
        st = self.stack
        self.vendor('hfs')
        all_modules = self.MODULES + self.RUNTIME_MODULES
        ref = self.reference_deny_files(all_modules)
        st.mock_polkit_allow([ACTION_ALLOW, ACTION_DENY, ACTION_LOAD])
        records = []
        problems = []
        lock = threading.Lock()
        n_entries = len(st.list())

        def client(i):
            r = random.Random(SEED * 1000 + i)
            uid = None if i % 2 == 0 else NOBODY
            for _ in range(self.CALLS_PER_CLIENT):
                op = r.choice(['ListFilesystems', 'GetFilesystem', 'Allow', 'Deny', 'Reset', 'Allow', 'Deny', 'Reset'])
                m = r.choice(all_modules)
                flags = RUNTIME if m in self.RUNTIME_MODULES else 0
                t0 = time.monotonic()
                if op == 'ListFilesystems':
                    res = st.busctl(op, uid=uid)
                elif op == 'GetFilesystem':
                    res = st.busctl(op, 's', m, uid=uid)
                elif uid is None:
                    res = st.busctl(op, 'st', m, flags | (FORCE if op == 'Deny' else 0))
                else:
                    res = st.send(op, m, flags | (FORCE if op == 'Deny' else 0), uid=uid)
                t1 = time.monotonic()
                with lock:
                    if res.ok:
                        if op == 'ListFilesystems':
                            mods = [x[0] for x in res.data[0]]
                            if len(mods) != n_entries or mods != sorted(set(mods)):
                                problems.append(('malformed list', mods))
                        elif op == 'GetFilesystem':
                            if res.data[0][0] != m or res.data[0][2] not in ('allowed', 'denied'):
                                problems.append(('malformed entry', res.data))
                        else:
                            records.append((m, op, t0, t1))
                    elif uid is not None and res.error == ERR + 'ConcurrentChange':
                        pass    # the configuration changed while polkit was asked: expected
                    else:
                        problems.append((op, m, uid, res.error, res.message))

        threads = [threading.Thread(target=client, args=(i,)) for i in range(self.CLIENTS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120 * fb.TIMEOUT_MULTIPLIER)
        self.assertFalse(any(t.is_alive() for t in threads), 'a client hung')
        self.assertEqual(problems, [], f'seed {SEED}')
        self.assertIsNone(st.daemon.poll(), 'fsgated died')
        self.assertNoTempFiles()
        self.check_files(all_modules, ref, temps_allowed=False)
        self.check_agreement(all_modules)

        # The last successful change decides, where no other successful change overlapped it.
        decided = 0
        for m in all_modules:
            found = last_change(records, m, VENDOR_DENIED)
            if found is None:
                continue
            last, overlapping, possible = found
            state = st.get(m).state
            self.assertIn(state, possible, f'{m}: last change {last[1]}, overlapping {overlapping}; seed {SEED}')
            if not overlapping:
                decided += 1
        fb.log(f'concurrency: {len(records)} successful changes, {decided} of {len(all_modules)} '
               f'modules decided by a single last change; seed {SEED}')


if __name__ == '__main__':
    fb.main()

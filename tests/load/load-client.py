#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""One client of test-load.py: a process with its own bus connection (started as root or,
through setpriv, as another uid) that calls fsgated in a loop and reports every call.

Protocol: prints "ready" once connected, waits for one line on stdin ("go"), calls for
--duration seconds, then prints one JSON document:
  {"records": [[op, module, flags, t0, t1, error_name_or_null, detail], ...]}
with CLOCK_MONOTONIC times (shared by all processes, so records can be ordered).
Only python3-dbus is needed (Debian's /usr/bin/python3).
"""

import argparse
import json
import random
import sys
import time

import dbus

BUS_NAME = 'org.fsgate.fsgate1'
OBJ_PATH = '/org/fsgate/fsgate1'
IFACE = 'org.fsgate.fsgate1.Manager'
RUNTIME, FORCE = 0x1, 0x4


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--address', required=True)
    ap.add_argument('--duration', type=float, required=True)
    ap.add_argument('--seed', type=int, required=True)
    ap.add_argument('--modules', required=True, help='comma-separated, changed in /etc')
    ap.add_argument('--runtime-modules', default='', help='comma-separated, changed in /run only')
    ap.add_argument('--entries', type=int, required=True, help='how many entries List must return')
    ap.add_argument('--timeout', type=float, default=20)
    opts = ap.parse_args()

    rnd = random.Random(opts.seed)
    etc_modules = [m for m in opts.modules.split(',') if m]
    run_modules = [m for m in opts.runtime_modules.split(',') if m]
    modules = etc_modules + run_modules
    conn = dbus.bus.BusConnection(opts.address)
    print('ready', flush=True)
    if sys.stdin.readline().strip() != 'go':
        return 1

    ops = ['ListFilesystems', 'GetFilesystem', 'Allow', 'Deny', 'Reset']
    weights = [1, 2, 2, 2, 2]
    records = []
    end = time.monotonic() + opts.duration
    while time.monotonic() < end:
        op = rnd.choices(ops, weights)[0]
        m = rnd.choice(modules)
        flags = RUNTIME if m in run_modules else 0
        if op == 'Deny' and rnd.random() < 0.5:
            flags |= FORCE
        error = detail = None
        t0 = time.monotonic()
        try:
            if op == 'ListFilesystems':
                ret = conn.call_blocking(BUS_NAME, OBJ_PATH, IFACE, op, '', [], timeout=opts.timeout)
            elif op == 'GetFilesystem':
                ret = conn.call_blocking(BUS_NAME, OBJ_PATH, IFACE, op, 's', [m], timeout=opts.timeout)
            else:
                ret = conn.call_blocking(BUS_NAME, OBJ_PATH, IFACE, op, 'st', [m, flags], timeout=opts.timeout)
        except dbus.DBusException as e:
            error, detail = e.get_dbus_name() or '(no name)', str(e)[:300]
            ret = None
        t1 = time.monotonic()
        if error is None:
            # The replies must be well-formed, whatever the timing.
            if op == 'ListFilesystems':
                mods = [str(x[0]) for x in ret]
                if len(mods) != opts.entries or mods != sorted(set(mods)):
                    error, detail = 'malformed-list', repr(mods)[:300]
            elif op == 'GetFilesystem':
                if str(ret[0]) != m or str(ret[2]) not in ('allowed', 'denied'):
                    error, detail = 'malformed-entry', repr(ret)[:300]
                else:
                    detail = [str(ret[2]), str(ret[3])]
        records.append([op, m, flags, t0, t1, error, detail])
    conn.close()
    json.dump({'records': records}, sys.stdout)
    sys.stdout.write('\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())

#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The hostile client of test-faults.py: floods fsgated with malformed calls over one
connection, keeping --in-flight calls pipelined, and reports every reply.

Kinds of call (each is expected to be refused with the error names test-faults.py lists):
wrong signatures, wrong argument types, missing and extra arguments, unknown flag bits,
1 MiB names (plain and hostile), bad names, unknown methods, interfaces and objects,
properties that do not exist or are read-only.

Protocol: prints "ready" once connected, waits for "go" on stdin, sends until --calls calls
were answered (or --duration seconds passed), then prints one JSON document:
  {"counts": {kind: {error_name_or_"ok": n}}, "sent": n, "answered": n, "seconds": s}
Debian's /usr/bin/python3 (python3-dbus, python3-gi).
"""

import argparse
import json
import sys
import time

import dbus
import dbus.lowlevel
import dbus.mainloop.glib
from gi.repository import GLib

BUS_NAME = 'org.fsgate.fsgate1'
OBJ_PATH = '/org/fsgate/fsgate1'
IFACE = 'org.fsgate.fsgate1.Manager'
PROPS = 'org.freedesktop.DBus.Properties'
MIB = 1024 * 1024


def kinds():
    """name -> (path, interface, method, signature, args)"""
    big = 'a' * MIB
    hostile = ('../' * (MIB // 3 + 1))[:MIB]
    return {
        'get-int': (OBJ_PATH, IFACE, 'GetFilesystem', 'i', [7]),
        'get-two-strings': (OBJ_PATH, IFACE, 'GetFilesystem', 'ss', ['hfs', 'hfs']),
        'get-no-args': (OBJ_PATH, IFACE, 'GetFilesystem', '', []),
        'get-array': (OBJ_PATH, IFACE, 'GetFilesystem', 'as', [['hfs']]),
        'get-variant': (OBJ_PATH, IFACE, 'GetFilesystem', 'v', [dbus.String('hfs', variant_level=1)]),
        'list-with-args': (OBJ_PATH, IFACE, 'ListFilesystems', 's', ['hfs']),
        'allow-swapped': (OBJ_PATH, IFACE, 'Allow', 'ts', [0, 'hfs']),
        'allow-uint32': (OBJ_PATH, IFACE, 'Allow', 'su', ['hfs', 0]),
        'deny-string-flags': (OBJ_PATH, IFACE, 'Deny', 'ss', ['minix', '0']),
        'deny-extra': (OBJ_PATH, IFACE, 'Deny', 'sta{sv}', ['minix', 0, {'x': dbus.String('y', variant_level=1)}]),
        'reset-no-flags': (OBJ_PATH, IFACE, 'Reset', 's', ['minix']),
        'allow-unknown-flags': (OBJ_PATH, IFACE, 'Allow', 'st', ['minix', 0xff00]),
        'deny-unknown-flags': (OBJ_PATH, IFACE, 'Deny', 'st', ['minix', 1 << 63]),
        'get-1mib': (OBJ_PATH, IFACE, 'GetFilesystem', 's', [big]),
        'get-1mib-dots': (OBJ_PATH, IFACE, 'GetFilesystem', 's', [hostile]),
        'deny-1mib': (OBJ_PATH, IFACE, 'Deny', 'st', [big, 0]),
        'allow-1mib': (OBJ_PATH, IFACE, 'Allow', 'st', [hostile, 1]),
        'load-1mib': (OBJ_PATH, IFACE, 'Load', 's', [big]),
        'get-empty': (OBJ_PATH, IFACE, 'GetFilesystem', 's', ['']),
        'get-dotdot': (OBJ_PATH, IFACE, 'GetFilesystem', 's', ['..']),
        'deny-slash': (OBJ_PATH, IFACE, 'Deny', 'st', ['a/b', 0]),
        'deny-newline': (OBJ_PATH, IFACE, 'Deny', 'st', ['hfs\n', 0]),
        'allow-shell': (OBJ_PATH, IFACE, 'Allow', 'st', ['$(touch /tmp/x);`id`', 0]),
        'get-300': (OBJ_PATH, IFACE, 'GetFilesystem', 's', ['x' * 300]),
        'unknown-method': (OBJ_PATH, IFACE, 'Frobnicate', 's', ['hfs']),
        'unknown-interface': (OBJ_PATH, 'org.fsgate.fsgate1.Nope', 'GetFilesystem', 's', ['hfs']),
        'unknown-object': ('/org/fsgate/fsgate1/nope', IFACE, 'GetFilesystem', 's', ['hfs']),
        'property-unknown': (OBJ_PATH, PROPS, 'Get', 'ss', [IFACE, 'Nope']),
        'property-set-const': (OBJ_PATH, PROPS, 'Set', 'ssv', [IFACE, 'Version', dbus.String('9', variant_level=1)]),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--address', required=True)
    ap.add_argument('--calls', type=int, default=5000)
    ap.add_argument('--duration', type=float, default=60)
    ap.add_argument('--in-flight', type=int, default=32)
    ap.add_argument('--only', default='', help='comma-separated kinds (default: all)')
    ap.add_argument('--big-every', type=int, default=10,
                    help='a 1 MiB call only every N-th time its turn comes (traffic)')
    opts = ap.parse_args()

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    conn = dbus.bus.BusConnection(opts.address)
    table = kinds()
    if opts.only:
        table = {k: v for k, v in table.items() if k in opts.only.split(',')}
    names = sorted(table)
    # The messages are built once: the flood measures fsgated, not this client.
    msgs = {}
    for k, (path, iface, method, sig, args) in table.items():
        msgs[k] = (path, iface, method, sig, args)
    counts = {k: {} for k in names}
    state = {'sent': 0, 'answered': 0, 'turn': 0, 'in_flight': 0}
    loop = GLib.MainLoop()
    print('ready', flush=True)
    if sys.stdin.readline().strip() != 'go':
        return 1
    start = time.monotonic()

    def next_kind():
        while True:
            state['turn'] += 1
            k = names[state['turn'] % len(names)]
            if '1mib' in k and (state['turn'] // len(names)) % opts.big_every:
                continue
            return k

    def send_one():
        k = next_kind()
        path, iface, method, sig, args = msgs[k]
        m = dbus.lowlevel.MethodCallMessage(BUS_NAME, path, iface, method)
        m.append(*args, signature=sig)

        def on_reply(reply):
            if isinstance(reply, dbus.lowlevel.ErrorMessage):
                name = reply.get_error_name()
            else:
                name = 'ok'
            counts[k][name] = counts[k].get(name, 0) + 1
            state['answered'] += 1
            state['in_flight'] -= 1
            refill()
        conn.send_message_with_reply(m, on_reply, timeout_s=60, require_main_loop=True)
        state['sent'] += 1
        state['in_flight'] += 1

    def refill():
        done = state['sent'] >= opts.calls or time.monotonic() - start > opts.duration
        while not done and state['in_flight'] < opts.in_flight:
            send_one()
            done = state['sent'] >= opts.calls
        if state['in_flight'] == 0 and done:
            loop.quit()

    GLib.idle_add(lambda: refill() and False)
    loop.run()
    json.dump({'counts': counts, 'sent': state['sent'], 'answered': state['answered'],
               'seconds': time.monotonic() - start}, sys.stdout)
    sys.stdout.write('\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())

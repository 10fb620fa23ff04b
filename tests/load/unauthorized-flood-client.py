#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A caller polkit refuses, flooding fsgated with change requests that each need a full
plan (a vendor-denied Allow, a Reset of fsgate's own file): --calls calls pipelined over one
connection, at most --in-flight unanswered. Prints one JSON document when every call has
been answered: {"errors": {name: n}, "seconds": s}. Debian's /usr/bin/python3.
"""

import argparse
import json
import time

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

ap = argparse.ArgumentParser()
ap.add_argument('--address', required=True)
ap.add_argument('--calls', type=int, default=200)
ap.add_argument('--in-flight', type=int, default=50)
ap.add_argument('--call', action='append', required=True, help='METHOD:NAME:FLAGS')
opts = ap.parse_args()

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.bus.BusConnection(opts.address)
obj = bus.get_object('org.fsgate.fsgate1', '/org/fsgate/fsgate1', introspect=False)
calls = [c.split(':') for c in opts.call]
loop = GLib.MainLoop()
state = {'sent': 0, 'answered': 0, 'errors': {}}
t0 = time.monotonic()


def done(name):
    state['answered'] += 1
    state['errors'][name] = state['errors'].get(name, 0) + 1
    send()
    if state['answered'] == opts.calls:
        loop.quit()


def send():
    while state['sent'] < opts.calls and state['sent'] - state['answered'] < opts.in_flight:
        method, name, flags = calls[state['sent'] % len(calls)]
        state['sent'] += 1
        obj.get_dbus_method(method, 'org.fsgate.fsgate1.Manager')(
            name, dbus.UInt64(int(flags)), timeout=120,
            reply_handler=lambda *a: done('ok'), error_handler=lambda e: done(e.get_dbus_name()))


GLib.idle_add(lambda: send() and False)
loop.run()
print(json.dumps({'errors': state['errors'], 'seconds': time.monotonic() - t0}))

#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The person at GNOME Shell, for tests/gnome/test-notify-gnome.py: runs in the GNOME root as
the session's user (python3-gi of the root) and does its commands in order, in ONE process:
a remote desktop session ends with its caller's connection (../shared/facts/desktops.md).

  wait-banner TEXT     until the shell's banner has TEXT in its title and is shown (slid
                       in: the probe extension). Quick: once the person was active, a
                       banner the pointer is not over goes after 4 s; move nothing before
                       it is shown either (a banner shown under a pointer that moved while
                       the last one went may go at once)
  key KEYSYM           press and release a key (0xff1b: Escape, out of the overview)
  hover                the pointer onto the banner's title; until it is expanded and still
  shot FILE            a screenshot (org.gnome.Shell.Screenshot, as org.gnome.Screenshot)
  click LABEL          a left click on the middle of the banner's button LABEL, then the
                       ActionInvoked the shell sends for it (its action id)
  sleep SECONDS

Each command prints one JSON line on stdout: the banner as the probe reads it, the action.
Pointer: mutter's RemoteDesktop (no caller check on the session bus); only relative motion
without a ScreenCast stream, so the pointer goes to the bottom right corner (+5000,+5000)
first and is moved from there by differences, never through the top left hot corner.
"""
import json
import sys
import time

from gi.repository import Gio, GLib

WIDTH, HEIGHT = 1280, 800
BTN_LEFT = 0x110
TIMEOUT = 30
SHOWN = 2      # messageTray.js State.SHOWN

bus = Gio.bus_get_sync(Gio.BusType.SESSION)


def call(dest, path, iface, method, args=None, reply=None, conn=bus):
    r = conn.call_sync(dest, path, iface, method, args, GLib.VariantType(reply) if reply else None,
                       Gio.DBusCallFlags.NONE, 10000)
    return r.unpack() if r is not None else None


T0 = time.monotonic()
_last = [None]


def probe():
    s = call('org.gnome.Shell', '/org/fsgate/Test/ShellProbe', 'org.fsgate.Test.ShellProbe', 'Banner', reply='(s)')[0]
    b = json.loads(s)
    # Each change of the banner on stderr, which the suite shows when a command fails.
    short = json.dumps({k: b[k] for k in ('title', 'trayState', 'expanded', 'box', 'queue', 'notifications') if k in b})
    if short != _last[0]:
        print(f'{time.monotonic() - T0:6.2f} {short}', file=sys.stderr, flush=True)
        _last[0] = short
    return b


def say(obj):
    print(json.dumps(obj), flush=True)


def until(pred, what, timeout=TIMEOUT):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        ctx = GLib.MainContext.default()
        while ctx.pending():
            ctx.iteration(False)
        time.sleep(0.05)
    sys.exit(f'drive.py: timed out waiting for {what}; the banner: {json.dumps(probe())}')


class Pointer:
    def __init__(self):
        rd = 'org.gnome.Mutter.RemoteDesktop'
        self.path = call(rd, '/org/gnome/Mutter/RemoteDesktop', rd, 'CreateSession', reply='(o)')[0]
        self.session('Start')
        self.x = self.y = None

    def session(self, method, args=None):
        return call('org.gnome.Mutter.RemoteDesktop', self.path, 'org.gnome.Mutter.RemoteDesktop.Session', method,
                    args)

    def corner(self):
        self.session('NotifyPointerMotionRelative', GLib.Variant('(dd)', (5000.0, 5000.0)))
        self.x, self.y = WIDTH - 1, HEIGHT - 1

    def move(self, x, y):
        if self.x is None:
            self.corner()
        self.session('NotifyPointerMotionRelative', GLib.Variant('(dd)', (float(x - self.x), float(y - self.y))))
        self.x, self.y = x, y

    def click(self):
        self.session('NotifyPointerButton', GLib.Variant('(ib)', (BTN_LEFT, True)))
        time.sleep(0.05)
        self.session('NotifyPointerButton', GLib.Variant('(ib)', (BTN_LEFT, False)))

    def key(self, keysym):
        self.session('NotifyKeyboardKeysym', GLib.Variant('(ub)', (keysym, True)))
        self.session('NotifyKeyboardKeysym', GLib.Variant('(ub)', (keysym, False)))


def still(pred):
    """The banner once pred holds of it and its boxes stayed the same for 0.3 s (the
    shell eases a banner in and its expansion over 0.2 s)."""
    seen = []

    def check():
        b = probe()
        if not b or 'banner' in b or not pred(b):
            seen.clear()
            return None
        key = json.dumps([b['box'], [x['box'] for x in b['buttons']], b['bodyStack']])
        seen.append(key)
        if len(seen) >= 6 and len(set(seen[-6:])) == 1:
            return b
        return None
    return check


def main(argv):
    pointer = None
    invoked = []
    bus.signal_subscribe(None, 'org.freedesktop.Notifications', 'ActionInvoked', '/org/freedesktop/Notifications',
                         None, Gio.DBusSignalFlags.NONE,
                         lambda c, sender, p, i, s, params: invoked.append(list(params.unpack())))
    while argv:
        cmd = argv.pop(0)
        if cmd == 'wait-banner':
            text = argv.pop(0)
            say(until(lambda: (lambda b: b if 'banner' not in b and text in b['title'] and b['trayState'] == SHOWN
                               else None)(probe()), f'a banner titled …{text}…, shown'))
        elif cmd == 'key':
            pointer = pointer or Pointer()
            pointer.key(int(argv.pop(0), 0))
            time.sleep(0.5)
        elif cmd == 'hover':
            pointer = pointer or Pointer()
            x, y, w, h = probe()['box']
            pointer.move(x + w // 2, y + 20)
            say(until(still(lambda b: b['expanded'] and all(x['mapped'] for x in b['buttons'])), 'the banner expanded'))
        elif cmd == 'shot':
            path = argv.pop(0)
            # The shell lets only a few names take screenshots; this connection takes one.
            conn = Gio.DBusConnection.new_for_address_sync(
                Gio.dbus_address_get_for_bus_sync(Gio.BusType.SESSION, None),
                Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
                None, None)
            call('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus', 'RequestName',
                 GLib.Variant('(su)', ('org.gnome.Screenshot', 4)), '(u)', conn=conn)
            ok, used = call('org.gnome.Shell', '/org/gnome/Shell/Screenshot', 'org.gnome.Shell.Screenshot',
                            'Screenshot', GLib.Variant('(bbs)', (False, False, path)), '(bs)', conn=conn)
            conn.close_sync(None)
            if not ok:
                sys.exit(f'drive.py: the screenshot failed ({used})')
            say({'shot': used})
        elif cmd == 'click':
            label = argv.pop(0)
            pointer = pointer or Pointer()
            b = probe()
            [btn] = [x for x in b['buttons'] if x['label'] == label] or sys.exit(
                f'drive.py: no button {label!r} on the banner: {json.dumps(b)}')
            x, y, w, h = btn['box']
            pointer.move(x + w // 2, y + h // 2)
            time.sleep(0.2)
            invoked.clear()
            pointer.click()
            say({'clicked': label, 'at': [x + w // 2, y + h // 2],
                 'invoked': until(lambda: invoked[:], f'ActionInvoked after the click on {label!r}', 10)})
        elif cmd == 'watch':
            end = time.monotonic() + float(argv.pop(0))
            while time.monotonic() < end:
                probe()
                time.sleep(0.02)
        elif cmd == 'sleep':
            time.sleep(float(argv.pop(0)))
        else:
            sys.exit(f'drive.py: unknown command {cmd!r}')


if __name__ == '__main__':
    main(sys.argv[1:])

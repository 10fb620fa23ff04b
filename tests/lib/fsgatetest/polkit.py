# SPDX-License-Identifier: LGPL-2.1-or-later
"""The MOCK polkit: python-dbusmock's `polkitd` template on the private system bus, which
answers CheckAuthorization from a list set with SetAllowed() and records every call. A real
polkitd (with the project's .policy and rules) only runs in the VM suite."""

import os

from .names import MOCK_IFACE, POLKIT_IFACE, POLKIT_NAME, POLKIT_PATH
from .util import start_dbusmock, stop_dbusmock


class MockPolkit:
    """Stack's MOCK polkit methods. self.polkit is its process (None when not running);
    the stack provides workdir, env, has_owner() and bus_call()."""

    def start_mock_polkit(self, allowed=()):
        self.polkit = start_dbusmock(['--system', '--template', 'polkitd'], self.env,
                                     os.path.join(self.workdir, 'polkit-mock.log'), POLKIT_NAME, self.has_owner,
                                     'the MOCK polkit')
        self.mock_polkit_allow(allowed)

    def stop_mock_polkit(self):
        stop_dbusmock(self.polkit, POLKIT_NAME, self.has_owner, 'the MOCK polkit')
        self.polkit = None

    def mock_polkit(self, method, sig='', args=()):
        return self.bus_call(POLKIT_NAME, POLKIT_PATH, MOCK_IFACE, method, sig, args)

    def mock_polkit_answer(self, python_ret):
        """The MOCK polkit answers every CheckAuthorization with python_ret, a python
        expression for (is_authorized, is_challenge, details); stop_mock_polkit() undoes it."""
        self.mock_polkit('AddMethod', 'sssss', [POLKIT_IFACE, 'CheckAuthorization', '(sa{sv})sa{ss}us',
                                                '(bba{ss})', 'ret = ' + python_ret])

    def mock_polkit_allow(self, actions):
        """The MOCK polkit says yes to exactly these actions from now on."""
        import dbus
        self.mock_polkit('SetAllowed', 'as', [dbus.Array(list(actions), signature='s')])

    def mock_polkit_calls(self):
        """[(action_id, subject, details, flags)] of CheckAuthorization calls since the last clear."""
        out = []
        for _ts, method, args in self.mock_polkit('GetCalls'):
            if str(method) != 'CheckAuthorization':
                continue
            subject = (str(args[0][0]), {str(k): str(v) for k, v in args[0][1].items()})
            details = {str(k): str(v) for k, v in args[2].items()}
            out.append((str(args[1]), subject, details, int(args[3])))
        return out

    def mock_polkit_clear(self):
        self.mock_polkit('ClearCalls')

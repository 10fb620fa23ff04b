# SPDX-License-Identifier: LGPL-2.1-or-later
"""fsgated's public names as the tests spell them: bus name, object, interface, error names,
polkit action ids and method flags. A test that spells one of them differently from the
service fails: that is the point of spelling them here rather than reading the C header."""

BUS_NAME = 'org.fsgate.fsgate1'
OBJ_PATH = '/org/fsgate/fsgate1'
IFACE = 'org.fsgate.fsgate1.Manager'
ERR = 'org.fsgate.fsgate1.Error.'
E_ACCESS_DENIED = 'org.freedesktop.DBus.Error.AccessDenied'
# polkit's dialog dismissed (polkit.dismissed): not a refusal.
E_AUTH_CANCELLED = ERR + 'AuthenticationCancelled'
# More of one user's requests (or of all) wait for polkit than fsgated lets wait.
E_LIMITS_EXCEEDED = 'org.freedesktop.DBus.Error.LimitsExceeded'
E_INTERACTIVE = 'org.freedesktop.DBus.Error.InteractiveAuthorizationRequired'
E_INVALID_ARGS = 'org.freedesktop.DBus.Error.InvalidArgs'

POLKIT_NAME = 'org.freedesktop.PolicyKit1'
POLKIT_IFACE = 'org.freedesktop.PolicyKit1.Authority'
POLKIT_PATH = '/org/freedesktop/PolicyKit1/Authority'
MOCK_IFACE = 'org.freedesktop.DBus.Mock'

ACTION_ALLOW = 'org.fsgate.fsgate1.allow'
ACTION_DENY = 'org.fsgate.fsgate1.deny'
ACTION_LOAD = 'org.fsgate.fsgate1.load'
ACTION_GRANT = 'org.fsgate.fsgate1.grant'
ACTION_OPEN = 'org.fsgate.fsgate1.open'
ACTION_OPEN_SYSTEM = 'org.fsgate.fsgate1.open-system'

RUNTIME, LOAD_NOW, FORCE = 0x1, 0x2, 0x4
HARD = 0x8
DRY_RUN = 0x10
SOFT = 0x20

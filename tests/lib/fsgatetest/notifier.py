# SPDX-License-Identifier: LGPL-2.1-or-later
"""The fsgate-notify the notifier's suites run (bus-notify, notify-gnome)."""

import os
import sys


def notifier_from_argv(argv, here):
    """(fsgate-notify's path, the build root) from --fsgate-notify PATH (taken out of argv),
    $FSGATE_NOTIFY, or BUILD/clients/notify/fsgate-notify, BUILD from --build-root,
    $FSGATE_BUILD_ROOT or the source tree's build/ beside here. Exits 1 if it is not an
    executable: a suite that found nothing to run must not pass."""
    path = os.environ.get('FSGATE_NOTIFY')
    if '--fsgate-notify' in argv:
        i = argv.index('--fsgate-notify')
        path = argv[i + 1]
        del argv[i:i + 2]
    build_root = os.environ.get('FSGATE_BUILD_ROOT') or os.path.join(here, '..', '..', 'build')
    if '--build-root' in argv:
        build_root = argv[argv.index('--build-root') + 1]
    path = os.path.abspath(path or os.path.join(build_root, 'clients', 'notify', 'fsgate-notify'))
    if not os.access(path, os.X_OK):
        print(f'error: {path} is not an executable (build first, or pass --fsgate-notify)', file=sys.stderr)
        sys.exit(1)
    return path, build_root

# SPDX-License-Identifier: LGPL-2.1-or-later
"""`python3 -m fsgatetest bus-config --source-root=SRC --socket=PATH [--allow-monitoring]
[--mock-polkit] [--service-dir=DIR]`: prints the system-like bus's configuration, tools/private-bus.conf.in filled
in by bus.py, the one place that knows the policy lines each option adds. tools/private-fsgated
starts its dbus-daemon with it, as the harness's Stack does."""

import argparse
import sys

from .bus import ALLOW_MOCK_POLKIT, ALLOW_MONITORING, system_bus_config
from .util import CONFIG


def main(argv):
    parser = argparse.ArgumentParser(prog='python3 -m fsgatetest')
    sub = parser.add_subparsers(dest='command', required=True)
    config = sub.add_parser('bus-config', help="the private system bus's configuration")
    config.add_argument('--source-root', required=True)
    config.add_argument('--socket', required=True)
    config.add_argument('--allow-monitoring', action='store_true', help='root may monitor the bus')
    config.add_argument('--mock-polkit', action='store_true', help='root may own the MOCK polkit\'s name')
    config.add_argument('--service-dir', help='bus activation from the .service files in this directory')
    args = parser.parse_args(argv)
    CONFIG.source_root = args.source_root
    extra = (ALLOW_MONITORING if args.allow_monitoring else '') + (ALLOW_MOCK_POLKIT if args.mock_polkit else '')
    sys.stdout.write(system_bus_config(args.socket, extra=extra, service_dir=args.service_dir))
    return 0


sys.exit(main(sys.argv[1:]))

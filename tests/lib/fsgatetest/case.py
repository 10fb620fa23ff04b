# SPDX-License-Identifier: LGPL-2.1-or-later
"""BusTestCase (a Stack per test class, a clean scratch root per test, the assertions the
tests share) and main(), every bus, load and notify test's entry point."""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

from .fsgated import daemon_is_sanitized
from .names import BUS_NAME
from .root import ROUTES, SUSE_VENDOR_FILE, TEMP_PREFIX, conf_name, make_scratch_root, reset_root, write
from .stack import Stack
from .util import CONFIG, DAEMON_WRAPPER, log


def assert_memory_back(tc, before, after, slack_kib, what):
    """fsgated's VmRSS after WHAT is within slack_kib of its level before. Not checked under
    FSGATE_DAEMON_WRAPPER (the RSS is the wrapper's) or ASan (see daemon_is_sanitized())."""
    if DAEMON_WRAPPER:
        log('  (FSGATE_DAEMON_WRAPPER set: the RSS is the wrapper\'s; not checked)')
    elif daemon_is_sanitized():
        log('  (ASan build: freed memory stays in quarantine, the RSS is not checked; '
            'LeakSanitizer checks at exit)')
    else:
        tc.assertLessEqual(after['VmRSS'], before['VmRSS'] + slack_kib,
                           f'fsgated grew {what}: {before} -> {after}')


class BusTestCase(unittest.TestCase):
    """setUpClass: a scratch root, a private bus, the MOCK polkit, fsgated.
    setUp: the scratch root's modprobe.d directories emptied and /proc reset;
    the MOCK polkit refusing everything; its call log cleared."""

    start_polkit = True
    start_daemon = True
    # The text of a bus policy file to load instead of the project's (None: the project's).
    bus_policy = None
    # True: the bus activates fsgated (the built one, on the scratch root, as root) on the
    # first call to its name, as a system's bus does; start_daemon is then usually False.
    bus_activation = False

    @classmethod
    def setUpClass(cls):
        cls.workdir = tempfile.mkdtemp(prefix='fsgate-bus-')
        cls.addClassCleanup(shutil.rmtree, cls.workdir, ignore_errors=True)
        cls.root = os.path.join(cls.workdir, 'root')
        cls.kver = make_scratch_root(cls.root)
        cls.prepare_root(cls.root)
        policy = None
        if cls.bus_policy is not None:
            policy = os.path.join(cls.workdir, 'bus-policy.conf')
            with open(policy, 'w') as f:
                f.write(cls.bus_policy)
        service_dir = None
        if cls.bus_activation:
            service_dir = os.path.join(cls.workdir, 'services')
            os.makedirs(service_dir)
            # dbus-daemon starts Exec= with its own environment (the stack's: the private
            # bus as the system bus, the runtime dir); fsgated's output goes to bus.log.
            with open(os.path.join(service_dir, BUS_NAME + '.service'), 'w') as f:
                f.write(f'[D-BUS Service]\nName={BUS_NAME}\nExec={CONFIG.fsgated} --root={cls.root} '
                        f'--kernel-release={cls.kver} --idle-timeout=0\nUser=root\n')
        cls.stack = Stack(cls.workdir, bus_policy=policy, service_dir=service_dir)
        cls.addClassCleanup(cls.stack.stop)
        cls.stack.start_bus()
        if cls.start_polkit:
            cls.stack.start_mock_polkit()
        if cls.start_daemon:
            cls.stack.start_daemon(cls.root, cls.kver)

    @classmethod
    def prepare_root(cls, root):
        """Hook: change the scratch root once per class (e.g. its module tree)."""

    def setUp(self):
        reset_root(self.root)
        st = self.stack
        if st.polkit is None and self.start_polkit:
            st.start_mock_polkit()
        if st.polkit is not None:
            st.mock_polkit_allow([])
            st.mock_polkit_clear()
        if self.start_daemon and (st.daemon is None or st.daemon.poll() is not None):
            st.start_daemon(self.root, self.kver)
        self._log_mark = len(st.daemon_output())

    @classmethod
    def tearDownClass(cls):
        # Leak reports come when fsgated exits: stop it and look.
        cls.stack.stop_daemon()
        reports = cls.stack.sanitizer_reports()
        if reports:
            raise AssertionError('sanitizer reports from fsgated:\n' + '\n'.join(reports) +
                                 '\n' + cls.stack.daemon_output()[-20000:])
        problems = cls.stack.take_daemon_problems()
        if problems:
            raise AssertionError('fsgated exits (FSGATE_DAEMON_WRAPPER, SIGTERM):\n' + '\n'.join(problems))

    def tearDown(self):
        reports = self.stack.sanitizer_reports(self.stack.daemon_output()[self._log_mark:])
        if reports:
            self.fail('sanitizer reports from fsgated during this test:\n' + '\n'.join(reports))
        problems = self.stack.take_daemon_problems()
        if problems:
            self.fail('fsgated exits during this test (FSGATE_DAEMON_WRAPPER, SIGTERM):\n' + '\n'.join(problems))
        if hasattr(self, '_outcome'):
            # On failure, show what the daemon said during this test.
            result = getattr(self._outcome, 'result', None)
            errors = getattr(self._outcome, 'errors', None) or []
            failed = any(exc for _, exc in errors) if errors else False
            if result is not None and hasattr(result, 'failures'):
                failed = failed or any(t is self for t, _ in result.failures + result.errors)
            if failed:
                out = self.stack.daemon_output()[self._log_mark:]
                if out:
                    log(f'--- fsgated output during {self.id()} ---\n{out}--- end ---')

    # -- helpers --------------------------------------------------------------------------
    def vendor(self, module, content=None):
        """openSUSE's vendor file for module in usr/lib/modprobe.d (exactly as shipped)."""
        return write(self.root, 'usr/lib/modprobe.d/' + conf_name(module),
                     content if content is not None else SUSE_VENDOR_FILE.format(m=module))

    def etc(self, name=None, module=None):
        return os.path.join(self.root, 'etc/modprobe.d', name or conf_name(module))

    def run_file(self, module):
        return os.path.join(self.root, 'run/modprobe.d', conf_name(module))

    def assertReplyOk(self, r):
        self.assertTrue(r.ok, f'call failed: {r!r}')

    def assertError(self, r, name, message_re=None):
        self.assertFalse(r.ok, f'expected {name}, the call succeeded: {r!r}')
        self.assertEqual(r.error, name, f'wrong error: {r!r}')
        if message_re is not None:
            self.assertRegex(r.message, message_re)

    def assertMask(self, path):
        self.assertTrue(os.path.islink(path), f'{path} is not a symlink')
        self.assertEqual(os.readlink(path), '/dev/null')

    def assertDenyFile(self, path, module):
        self.assertFalse(os.path.islink(path), f'{path} is a symlink')
        self.assertTrue(os.path.isfile(path), f'{path} does not exist')
        with open(path) as f:
            text = f.read()
        self.assertTrue(text.startswith('# Written by fsgate'), text)
        self.assertIn(f'blacklist {module}', text.splitlines())
        self.assertTrue(text.endswith('\n'))
        return text

    def assertRoutesFile(self, path):
        """fsgate's routes file (core/routes.h), rebuilt after each change: whole, from some
        moment (after a kill -9 it may be a change behind the configuration)."""
        with open(path) as f:
            text = f.read()
        self.assertTrue(text.startswith('# Written by fsgate: routes') and text.endswith('\n'), text)
        for line in text.splitlines():
            self.assertRegex(line, r'^(#.*|alias fs-\S+ fsgate_routed_\S+|install fsgate_routed_\S+ \S+ --route \S+ \S+)$')

    def assertRoutesCurrent(self):
        """What the service left in the routes is what a rebuild from the files makes now."""
        p = subprocess.run([CONFIG.hook, '--refresh-routes'], env=dict(self.stack.env, FSGATE_ROOT=self.root),
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p)
        self.assertIn(' unchanged', p.stdout, 'the service left routes that the files no longer ask for')

    def assertAbsent(self, path):
        self.assertFalse(os.path.lexists(path), f'{path} exists')

    def assertState(self, name, state, origin, source=None):
        e = self.stack.get(name)
        self.assertEqual((e.state, e.origin), (state, origin), f'{name}: {e!r}')
        if source is not None:
            self.assertEqual(e.source, source, f'{name}: {e!r}')
        return e

    def assertOnlyFsgateFiles(self, modules, deny_file=None, temps=None):
        """Every file in the root's etc/ and run/modprobe.d is fsgated's routes, or one of
        modules' /dev/null mask or deny file: deny_file(path, module, directory) checks the
        latter's content (by default assertDenyFile). A temp file of fsgate's atomic writes
        fails, unless temps is a list: then its "DIR/NAME" is added to it (after a kill -9,
        before the restart)."""
        for d in ('etc/modprobe.d', 'run/modprobe.d'):
            full = os.path.join(self.root, d)
            for name in sorted(os.listdir(full)):
                p = os.path.join(full, name)
                if name.startswith(TEMP_PREFIX):
                    self.assertIsNotNone(temps, f'temp file {d}/{name} left behind')
                    temps.append(f'{d}/{name}')
                    continue
                if f'{d}/{name}' == ROUTES:
                    self.assertRoutesFile(p)
                    continue
                owner = [m for m in modules if name == conf_name(m)]
                self.assertEqual(len(owner), 1, f'unexpected file {d}/{name}')
                if os.path.islink(p):
                    self.assertEqual(os.readlink(p), '/dev/null', f'{d}/{name}')
                elif deny_file:
                    deny_file(p, owner[0], d)
                else:
                    self.assertDenyFile(p, owner[0])

    def assertNoTempFiles(self):
        for d in ('etc/modprobe.d', 'run/modprobe.d'):
            full = os.path.join(self.root, d)
            left = [n for n in os.listdir(full) if n.startswith(TEMP_PREFIX)] if os.path.isdir(full) else []
            self.assertEqual(left, [], f'temp files left in {d}')


def main():
    """Reads the harness's options (the rest go to unittest), skips (77) when not root or a
    tool is missing, and runs the tests of the calling script."""
    here = os.path.dirname(os.path.abspath(__file__))   # SOURCE/tests/lib/fsgatetest
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument('--fsgated', default=os.environ.get('FSGATED'))
    ap.add_argument('--fsgatectl', default=os.environ.get('FSGATECTL'))
    ap.add_argument('--source-root', default=os.environ.get('FSGATE_SOURCE_ROOT'))
    ap.add_argument('--build-root', default=os.environ.get('FSGATE_BUILD_ROOT'))
    ap.add_argument('--hook', default=None)  # fsgate-blocked; named so that meson builds it first
    opts, rest = ap.parse_known_args()
    CONFIG.source_root = os.path.abspath(opts.source_root or os.path.join(here, '..', '..', '..'))
    CONFIG.build_root = os.path.abspath(opts.build_root or os.path.join(CONFIG.source_root, 'build'))
    CONFIG.fsgated = os.path.abspath(opts.fsgated or os.path.join(CONFIG.build_root, 'service', 'fsgated'))
    CONFIG.fsgatectl = os.path.abspath(opts.fsgatectl or os.path.join(CONFIG.build_root, 'clients', 'fsgatectl'))
    CONFIG.hook = os.path.abspath(opts.hook or os.path.join(CONFIG.build_root, 'service', 'hook', 'fsgate-blocked'))

    if os.geteuid() != 0:
        print('SKIP: the bus tests must run as root (fsgated owns a system bus name; '
              'non-root callers are made with setpriv)', file=sys.stderr)
        sys.exit(77)
    missing = [t for t in ('dbus-daemon', 'dbus-send', 'dbus-monitor', 'busctl', 'gdbus', 'setpriv', 'stdbuf',
                           'unshare', 'mount') if not shutil.which(t)]
    try:
        import dbus  # noqa: F401
        import dbusmock  # noqa: F401
    except ImportError as e:
        missing.append(f'python module ({e}) for {sys.executable}')
    if missing:
        print('SKIP: missing ' + ', '.join(missing), file=sys.stderr)
        sys.exit(77)
    for p in (CONFIG.fsgated, CONFIG.fsgatectl):
        if not os.access(p, os.X_OK):
            print(f'error: {p} is not an executable (build first, or pass --fsgated/--fsgatectl)',
                  file=sys.stderr)
            sys.exit(1)
    # meson's timeout sends SIGTERM: turn it into an exception so that cleanups run.
    def on_term(signum, frame):
        raise KeyboardInterrupt(f'signal {signum}')
    signal.signal(signal.SIGTERM, on_term)
    run_tests([sys.argv[0]] + rest, verbosity=2)


def run_tests(argv, verbosity=1):
    """unittest's run, ended with meson's exit statuses: 77 (SKIP) when every test was
    skipped (a suite whose inputs are missing must not read as OK), unless CI=true, where
    that is a failure: CI runs where every input is meant to be."""
    result = unittest.main(argv=argv, verbosity=verbosity, exit=False).result
    if not result.wasSuccessful():
        sys.exit(1)
    if result.testsRun and len(result.skipped) == result.testsRun:
        reasons = '; '.join(sorted({why for _, why in result.skipped}))
        if os.environ.get('CI') == 'true':
            print(f'FAIL: every test skipped, under CI=true: {reasons}', file=sys.stderr)
            sys.exit(1)
        print(f'SKIP: every test skipped: {reasons}', file=sys.stderr)
        sys.exit(77)
    sys.exit(0)


def cli_main(need=(), root=False):
    """For a test of fsgatectl alone, no bus: --fsgatectl (meson passes it; else the build
    tree's), skipped (77) without a program of need (paths or commands) or, with root, when
    not root; then the calling script's tests."""
    here = os.path.dirname(os.path.abspath(__file__))   # SOURCE/tests/lib/fsgatetest
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument('--fsgatectl')
    opts, rest = ap.parse_known_args()
    CONFIG.source_root = os.path.abspath(os.path.join(here, '..', '..', '..'))
    CONFIG.fsgatectl = os.path.abspath(opts.fsgatectl or os.path.join(CONFIG.source_root, 'build', 'clients',
                                                                       'fsgatectl'))
    missing = [p for p in need if not (os.access(p, os.X_OK) if os.path.isabs(p) else shutil.which(p))]
    if missing:
        print('SKIP: missing ' + ', '.join(missing), file=sys.stderr)
        sys.exit(77)
    if root and os.geteuid() != 0:
        print('SKIP: root only', file=sys.stderr)
        sys.exit(77)
    run_tests([sys.argv[0]] + rest, verbosity=2)

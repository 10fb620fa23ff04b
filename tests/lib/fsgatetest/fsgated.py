# SPDX-License-Identifier: LGPL-2.1-or-later
"""fsgated under test: the built daemon on a scratch root, started until it owns its name,
stopped with SIGTERM (exit status 0 expected) or killed; under FSGATE_DAEMON_WRAPPER
(valgrind) each daemon's log is checked once it has exited; sanitizer reports in its
output; its memory."""

import os
import re
import signal
import subprocess

from .names import BUS_NAME
from .util import CONFIG, DAEMON_WRAPPER, TIMEOUT, die_with_parent, read_text, wait_until


def daemon_is_sanitized():
    """Whether fsgated is an ASan build: its allocator keeps freed memory in quarantine, so
    its RSS says nothing about leaks (LeakSanitizer reports those at exit instead)."""
    with open(CONFIG.fsgated, 'rb') as f:
        return b'__asan_init' in f.read()


class Fsgated:
    """Stack's fsgated methods. self.daemon is the running daemon's process (None when
    stopped); the stack provides workdir, env and has_owner()."""

    def _init_fsgated(self):
        self.daemon = None
        self.daemon_log = None
        self.daemon_args = None
        self.daemons_started = []  # every fsgated this stack ran, for their exit checks
        self.daemon_problems = []  # unclean exits and valgrind findings, see take_daemon_problems()

    def start_daemon(self, root, kver=None, extra=(), wrapper=()):
        """Starts fsgated (under wrapper, e.g. unshare, then FSGATE_DAEMON_WRAPPER) and waits
        until it owns its name."""
        self.daemon_log = os.path.join(self.workdir, 'fsgated.log')
        args = [CONFIG.fsgated, '--root=' + root, '--idle-timeout=0']
        if kver:
            args.append('--kernel-release=' + kver)
        args += list(extra)
        self.daemon_args = (root, kver, tuple(extra), tuple(wrapper))
        daemon_wrapper, log_pattern = self.daemon_wrapper()
        logf = open(self.daemon_log, 'a')
        self.daemon = subprocess.Popen(list(wrapper) + daemon_wrapper + args, stdout=logf, stderr=logf,
                                       env=self.env, start_new_session=True, preexec_fn=die_with_parent)
        logf.close()
        # The wrappers exec (unshare, sh -c 'exec', valgrind): the pid stays fsgated's.
        self.daemon.wrapper_log = log_pattern.replace('%p', str(self.daemon.pid)) if log_pattern else None
        self.daemons_started.append(self.daemon)

        def up():
            if self.daemon.poll() is not None:
                raise RuntimeError(f'fsgated exited with {self.daemon.returncode}: {read_text(self.daemon_log)}' +
                                   self.wrapper_log_text(self.daemon))
            return self.has_owner(BUS_NAME)
        wait_until(up, what='fsgated to own ' + BUS_NAME)
        return self.daemon

    def daemon_wrapper(self):
        """FSGATE_DAEMON_WRAPPER as argv, and for valgrind the log file pattern (with %p)."""
        w = list(DAEMON_WRAPPER)
        if not w or not os.path.basename(w[0]).startswith('valgrind'):
            return w, None
        logs = [a for a in w if a.startswith('--log-file=')]
        if logs:
            pattern = logs[-1][len('--log-file='):]
            if '%p' not in pattern:
                pattern += '.%p'
            w = [a for a in w if not a.startswith('--log-file=')]
        else:
            os.makedirs(os.path.join(self.workdir, 'valgrind'), exist_ok=True)
            pattern = os.path.join(self.workdir, 'valgrind', 'fsgated.%p.log')
        return w[:1] + ['--log-file=' + pattern] + w[1:], pattern

    def restart_daemon(self):
        root, kver, extra, wrapper = self.daemon_args
        self.stop_daemon()
        return self.start_daemon(root, kver, extra, wrapper)

    def kill_daemon(self):
        """SIGKILL, no cleanup: the crash case."""
        p = self.daemon
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(TIMEOUT)
        p.stopped_by = 'SIGKILL'
        self.check_exited_daemon(p)
        wait_until(lambda: not self.has_owner(BUS_NAME), what='the bus to notice fsgated died')

    def stop_daemon(self):
        """SIGTERM: fsgated must exit with status 0 (and, under valgrind, after the leak check)."""
        p = self.daemon
        if p is not None and p.poll() is None:
            p.stopped_by = 'SIGTERM'
            try:
                os.killpg(p.pid, signal.SIGTERM)
                p.wait(TIMEOUT if DAEMON_WRAPPER else 5)
            except subprocess.TimeoutExpired:
                self.daemon_problems.append(f'fsgated (pid {p.pid}) did not exit on SIGTERM: killed')
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(5)
                p.stopped_by = 'SIGKILL'
            except ProcessLookupError:
                pass
        if p is not None:
            self.check_exited_daemon(p)
        self.daemon = None

    # Headings of valgrind's error records (memcheck), for logs cut short by SIGKILL.
    VALGRIND_ERROR_RE = re.compile(
        r'^==\d+== (Invalid (read|write|free)|Mismatched free|Conditional jump|Use of uninitialised|'
        r'Syscall param|Source and destination overlap|Argument .* of function|Process terminating|'
        r'.* bytes in .* blocks are definitely lost)', re.M)

    def check_exited_daemon(self, p):
        """Once per exited fsgated: its exit status after SIGTERM, and its valgrind log."""
        if p.poll() is None or getattr(p, 'checked', False):
            return
        p.checked = True
        how = getattr(p, 'stopped_by', None)
        if how == 'SIGTERM' and p.returncode != 0:
            self.daemon_problems.append(f'fsgated (pid {p.pid}) exited with {p.returncode} after SIGTERM, not 0' +
                                        self.wrapper_log_text(p))
        if not getattr(p, 'wrapper_log', None):
            return
        text = self.wrapper_log_text(p, raw=True)
        problems = []
        m = re.search(r'ERROR SUMMARY: (\d+) errors', text)
        if m and int(m.group(1)) > 0:
            problems.append(f'valgrind: {m.group(1)} errors')
        m = re.search(r'definitely lost: ([\d,]+) bytes', text)
        if m and int(m.group(1).replace(',', '')) > 0:
            problems.append(f'valgrind: {m.group(1)} bytes definitely lost')
        if not problems and self.VALGRIND_ERROR_RE.search(text):
            problems.append('valgrind reported errors' + (' (log cut short by SIGKILL)' if how == 'SIGKILL' else ''))
        if not m and how == 'SIGTERM' and 'ERROR SUMMARY' not in text:
            problems.append('valgrind printed no summary after SIGTERM (no clean exit?)')
        if problems:
            self.daemon_problems.append(f'fsgated (pid {p.pid}, {how or "exited"}): ' + '; '.join(problems) +
                                        f'\n--- {p.wrapper_log} ---\n{text[-20000:]}')

    def wrapper_log_text(self, p, raw=False):
        path = getattr(p, 'wrapper_log', None)
        if not path:
            return ''
        text = read_text(path)
        return text if raw else f'\n--- {path} ---\n{text[-20000:]}'

    def take_daemon_problems(self):
        """Problems found in daemons that exited since the last call (and are now reaped)."""
        for p in self.daemons_started:
            if p is not self.daemon and p.poll() is not None:
                self.check_exited_daemon(p)
        out, self.daemon_problems = self.daemon_problems, []
        return out

    def daemon_memory(self):
        """{'VmRSS': KiB, 'VmHWM': KiB, ...} of the running fsgated, from /proc/PID/status
        (under FSGATE_DAEMON_WRAPPER, that of the wrapper: valgrind's, not meaningful)."""
        out = {}
        with open(f'/proc/{self.daemon.pid}/status') as f:
            for line in f:
                k, _, v = line.partition(':')
                if k.startswith('Vm') or k.startswith('Rss'):
                    out[k] = int(v.split()[0])
        return out

    SANITIZER_MARKERS = ('ERROR: AddressSanitizer', 'ERROR: LeakSanitizer', 'runtime error:',
                         'UndefinedBehaviorSanitizer')

    def sanitizer_reports(self, text=None):
        """Lines of a sanitizer build's reports in fsgated's output (none for a normal build)."""
        text = self.daemon_output() if text is None else text
        return [line for line in text.splitlines() if any(m in line for m in self.SANITIZER_MARKERS)]

    def daemon_output(self):
        return read_text(self.daemon_log) if self.daemon_log else ''

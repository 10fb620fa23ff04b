# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the tests of the YaST module in YaST's real UIs share (tests/yast-tui/test-tui.py,
the text UI in tmux; tests/yast-qt/test-qt.py, the Qt UI through libyui's REST API): their
options and start, the fixture over fsgated's scratch root, the files an action writes
there, the texts the module's own code means to show (expected-texts.rb), one y2start's
directory and exit, TAP-like results, and y2log's verdict. Standard library only; of the
harness the drivers use nothing but util.read_text (no bus, no mock)."""

import argparse
import json
import os
import re
import shutil
import subprocess
import time

from fsgatetest.util import read_text  # noqa: F401 (the drivers import it from here)

PREFIX = "60-blacklist_fs-"


class Failure(Exception):
    pass


def ok(msg):
    print(f"ok - {msg}", flush=True)


def expect(cond, msg, shown=None):
    """shown: what the UI showed (anything with text()), added to the failure's message."""
    if not cond:
        raise Failure(msg + (f"\nthe screen:\n{shown.text()}" if shown else ""))


def words(text):
    """Text as a person reads it: whitespace and line breaks are one space."""
    return " ".join(text.split())


def plain(html):
    """The text of a RichText as shown: tags removed, entities decoded."""
    text = re.sub(r"<[^>]*>", " ", html)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")


def expect_no_errors(yast):
    """y2log (yast.y2log()) has no error (level 3 and above) at all: none from the module, CWM,
    YaST or libyui."""
    errors = [line for line in yast.y2log().splitlines() if re.search(r" <[345]> ", line)]
    expect(not errors, f"{yast.name}: y2log has errors:\n" + "\n".join(errors[:20]))


def conf(root, directory, module):
    """The content of module's file in root + directory, "-> TARGET" for a link, None if none."""
    path = os.path.join(root + directory, f"{PREFIX}{module}.conf")
    if os.path.islink(path):
        return "-> " + os.readlink(path)
    if os.path.exists(path):
        with open(path) as f:
            return f.read()
    return None


def wait_file(root, directory, module, pred, what, timeout=10):
    deadline = time.monotonic() + timeout
    while True:
        content = conf(root, directory, module)
        if pred(content):
            return content
        if time.monotonic() > deadline:
            raise Failure(f"{what}: {directory}/{PREFIX}{module}.conf is {content!r}")
        time.sleep(0.1)


def restore(root):
    """The state the sessions start from, as the rspec suite's TestEnv.restore: openSUSE-style
    vendor files for hfs and cramfs, a foreign admin file for ufs, minix mounted."""
    for d in ("/etc/modprobe.d", "/run/modprobe.d"):
        for f in os.listdir(root + d):
            os.unlink(os.path.join(root + d, f))
    for mod in ("hfs", "cramfs"):
        with open(f"{root}/usr/lib/modprobe.d/{PREFIX}{mod}.conf", "w") as f:
            f.write(f"blacklist {mod}\n")
    with open(f"{root}/etc/modprobe.d/{PREFIX}ufs.conf", "w") as f:
        f.write("install ufs /bin/true\n")
    with open(f"{root}/proc/mounts", "w") as f:
        f.write("/dev/vda / ext4 rw,relatime 0 0\n/dev/vdb /srv/old minix rw 0 0\n")
    with open(f"{root}/proc/modules", "w") as f:
        f.write("")


def session_parser(doc):
    """The driver's options (its docstring's first line the description), with those both
    drivers take from their run-tests.sh: where YaST finds the module and fsgatectl, the
    scratch root, the work and artifact directories, and the texts' oracle."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--y2dir", required=True, help="Y2DIR: the module's src directory")
    ap.add_argument("--bindir", required=True, help="directory holding fsgatectl, overlaid on /usr/bin")
    ap.add_argument("--root", required=True, help="fsgated's scratch root")
    ap.add_argument("--work", required=True)
    ap.add_argument("--artifacts", required=True)
    ap.add_argument("--in-namespace", required=True)
    ap.add_argument("--expected-texts", required=True)
    ap.add_argument("--yast-lib", required=True)
    ap.add_argument("--fake-yast", required=True)
    return ap


def start(args):
    """Before the sessions: the artifacts directory, the fixture over fsgated's root, and the
    texts the module means to show there (English)."""
    os.makedirs(args.artifacts, exist_ok=True)
    restore(args.root)
    return expected_texts(args.expected_texts, args.yast_lib, args.fake_yast)


class Y2Start:
    """One `y2start CLIENT UI` under in-namespace.sh (y2log and stderr into its log directory,
    fsgatectl from --bindir in /usr/bin, the target at /mnt): its directory under the work
    directory (NAME/log, NAME/home) and its exit status, written to NAME/status."""

    def __init__(self, args, name):
        self.args = args
        self.name = name
        self.dir = os.path.join(args.work, name)
        self.log = os.path.join(self.dir, "log")
        os.makedirs(os.path.join(self.log, "YaST2"))
        os.makedirs(os.path.join(self.dir, "home"))
        self.status_file = os.path.join(self.dir, "status")

    def env(self):
        """What both UIs' YaST is started with (env -i): the rest is the UI's own."""
        return {
            "HOME": os.path.join(self.dir, "home"),
            "LANG": "C.UTF-8",
            "Y2DIR": self.args.y2dir,
            "DBUS_SYSTEM_BUS_ADDRESS": os.environ["DBUS_SYSTEM_BUS_ADDRESS"],
        }

    def in_namespace(self, client_args, ui, target=""):
        """The command line that runs y2start in the namespace."""
        return ([self.args.in_namespace, self.log, self.args.bindir, target, self.status_file, "y2start"] +
                client_args + [ui])

    def exited(self):
        return os.path.exists(self.status_file)

    def status(self):
        with open(self.status_file) as f:
            return int(f.read().strip())

    def shown(self):
        """What the UI shows, for a failure's message ("" when it says nothing more)."""
        return ""

    def wait_exit(self, timeout=30):
        deadline = time.monotonic() + timeout
        while not self.exited():
            if time.monotonic() > deadline:
                raise Failure(f"YaST did not exit within {timeout} s{self.shown()}")
            time.sleep(0.2)
        return self.status()

    def y2log(self):
        return read_text(os.path.join(self.log, "YaST2", "y2log"))

    def keep_logs(self, names=("y2log", "stderr")):
        """Copies the logs named (y2log, stderr, signal) to the artifacts as NAME-LOG."""
        paths = {"y2log": os.path.join(self.log, "YaST2", "y2log"), "stderr": os.path.join(self.log, "stderr"),
                 "signal": os.path.join(self.log, "YaST2", "signal")}
        for name in names:
            if os.path.exists(paths[name]):
                shutil.copy(paths[name], os.path.join(self.args.artifacts, f"{self.name}-{name}"))


def expect_clean_exit(yast, exit_ok, y2log_ok):
    """After Close: y2start exits with 0 and y2log has no errors."""
    status = yast.wait_exit()
    expect(status == 0, f"y2start exited with {status} on Close\n{yast.stderr()}")
    ok(exit_ok)
    expect_no_errors(yast)
    ok(y2log_ok)


def run_sessions(artifacts, *sessions):
    """Runs the sessions in turn; the first Failure ends the run as "not ok". Returns the
    driver's exit status; either way says where the screens and logs are."""
    status = 0
    try:
        for session in sessions:
            session()
    except Failure as e:
        print(f"not ok - {e}", flush=True)
        status = 1
    print(f"screens and logs: {artifacts}", flush=True)
    return status


def expected_texts(script, yast_lib, fake_yast, catalog=None):
    """What the module's own code means to show, against the running fsgated
    (tests/yast-tui/expected-texts.rb, on Debian's ruby with the rspec suite's fake yast);
    with catalog (a .mo file), in its language."""
    out = subprocess.run(["ruby", script, yast_lib, fake_yast] + ([catalog] if catalog else []),
                         check=True, stdout=subprocess.PIPE, text=True,
                         env={k: v for k, v in os.environ.items() if k != "RUBYLIB"}).stdout
    return json.loads(out)

#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""fsgate's YaST module in YaST's real Qt UI, driven through libyui's REST API.

Started by run-tests.sh, which built the Qt UI (build-yast-qt.sh), started the real fsgated
over a scratch root on a private bus and an X server with a window manager. `y2start fsgate
qt` runs with YUI_HTTP_PORT (in ../yast-tui/in-namespace.sh: y2log into the work directory,
fsgatectl in /usr/bin); every check reads the dialog's widgets as libyui's REST API gives
them (GET /v1/dialog: JSON of every libyui widget, with labels, values, table cells) and
acts as its calls do (press, enter_text, select, check), which is what YaST's own
integration tests use.

Asserted, as in the text UI's test where it applies: the table's header and every row are
the cells the module's presenter made (expected-texts.rb, against the same fsgated); the
filter narrows the table; hfs's row says denied by the vendor file; Allow and Reset change
the row, the details panel and the file on disk; Deny of mounted minix asks first (No
changes nothing, Yes denies); Only until reboot writes to /run; a refused Allow shows the
service's error in words; every label's shortcut is the one the module gave it and none
is shared; Close exits 0; y2log has no error. Screenshots (PNG) are kept in the artifacts
directory.
"""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

from fsgatetest.yast import (PREFIX, Failure, Y2Start, conf, expect, expect_clean_exit, expected_texts, ok, plain,
                             read_text, run_sessions, session_parser, start, wait_file, words)

# The wizard's own buttons (yast2's Label.HelpButton and Label.CloseButton); the dialog's
# labels come from the module (expected-texts.rb).
WIZARD_LABELS = ["&Help", "C&lose"]
# What the Qt UI shows instead of the label given: YQWizard's Release Notes button (hidden,
# but its shortcut counts) is "&Release Notes", and libyui's shortcut manager resolves its
# clash with the module's "&Reset" by moving both. The text UI has no such button: R stays
# Reset's there (tests/yast-tui). Listed here so that any other move fails the test.
QT_MOVED = {"&Reset": "Re&set", "&Release Notes": "R&elease Notes"}
# The table's columns, as a person reads them (the presenter's header is compared whole).
COLUMNS = ["Module", "Autoload", "In use", "Decided by"]


def ruby_id(name):
    """A Ruby string id as the REST API spells it: quoted (symbols come plain)."""
    return f'"{name}"'


def free_port():
    # The port is free when asked for; YUI_REUSE_PORT lets YaST take it at once.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---- The dialog as JSON --------------------------------------------------------------------

class Dialog:
    """One GET /v1/dialog: the topmost dialog's widget tree."""

    def __init__(self, tree):
        self.tree = tree

    def widgets(self):
        """Every widget of the tree, depth first."""
        stack = [self.tree] if isinstance(self.tree, dict) else list(reversed(self.tree))
        while stack:
            w = stack.pop()
            yield w
            stack.extend(reversed(w.get("widgets", [])))

    def find(self, id=None, cls=None):
        return [w for w in self.widgets()
                if (id is None or w.get("id") == id) and (cls is None or w.get("class") == cls)]

    def one(self, id=None, cls=None):
        found = self.find(id, cls)
        expect(len(found) == 1, f"{len(found)} widgets with id {id!r} class {cls!r}", self)
        return found[0]

    def is_popup(self):
        return isinstance(self.tree, dict) and self.tree.get("type") == "popup"

    def table(self):
        return self.one(ruby_id("fsgate_filesystems"), "YTable")

    def rows(self):
        """The table's rows, each its cells' labels."""
        return [list(item.get("labels", [])) for item in self.table().get("items", [])]

    def row_ids(self):
        return [r[0] for r in self.rows()]

    def selected(self):
        sel = [item for item in self.table().get("items", []) if item.get("selected")]
        return sel[0]["labels"][0] if sel else None

    def details(self):
        return words(plain(self.one(ruby_id("fsgate_details"), "YRichText").get("text", "")))

    def richtext(self):
        return words(" ".join(plain(w.get("text", "")) for w in self.find(cls="YRichText")))

    def labels(self, enabled_only=False):
        """The labels of buttons and check boxes, with their & shortcuts."""
        return [w["label"] for w in self.widgets()
                if w.get("class") in ("YPushButton", "YQWizardButton", "YCheckBox") and w.get("label")
                and (not enabled_only or w.get("enabled", True))]

    def text(self):
        return json.dumps(self.tree, indent=1)[:6000]


# ---- One YaST with the REST API -------------------------------------------------------------

class Yast(Y2Start):
    def __init__(self, args, name, client_args):
        super().__init__(args, name)
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}/v1"
        env = dict(self.env(), **{
            "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
            "DISPLAY": args.display,
            "XDG_RUNTIME_DIR": args.runtime_dir,
            "YUI_HTTP_PORT": str(self.port),
            "YUI_REUSE_PORT": "1",
        })
        # Q/env.sh sets what the Qt prefix needs (libraries, Ruby's path), as a person
        # running it by hand would source it.
        cmd = (["env", "-i"] + [f"{k}={v}" for k, v in env.items()] +
               ["bash", "-c", '. "$0" && exec "$@"', os.path.join(args.qt_prefix, "env.sh")] +
               self.in_namespace(client_args, "qt"))
        with open(os.path.join(self.dir, "stdout"), "w") as out:
            self.proc = subprocess.Popen(cmd, cwd=self.dir, stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT)

    def request(self, method, path, **params):
        url = f"{self.base}/{path}?" + urllib.parse.urlencode(params)
        req = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
        with urllib.request.urlopen(req, timeout=20) as r:
            body = r.read().decode()
        return json.loads(body) if body.strip() else None

    def dialog(self):
        return Dialog(self.request("GET", "dialog"))

    def act(self, id, action, **params):
        """POST /v1/widgets: raises Failure when the API refuses (no such widget, disabled)."""
        try:
            self.request("POST", "widgets", id=id, action=action, **params)
        except urllib.error.HTTPError as e:
            raise Failure(f"{action} on {id}: HTTP {e.code} {e.read().decode(errors='replace')}")

    def press(self, id):
        self.act(id, "press")

    def wait(self, test, what, timeout=30):
        """Polls the dialog until test(dialog) holds; returns that dialog."""
        deadline = time.monotonic() + timeout
        last, error = None, None
        while time.monotonic() < deadline:
            if self.exited():
                raise Failure(f"YaST exited (status {self.status()}) while waiting for {what}\n{self.stderr()}")
            try:
                last = self.dialog()
                if test(last):
                    return last
            except (urllib.error.URLError, ConnectionError, socket.timeout, json.JSONDecodeError) as e:
                error = e  # not listening yet, or the dialog is being rebuilt
            except (KeyError, IndexError, Failure) as e:
                error = e  # a dialog without the widgets test looks at (a popup, say)
            time.sleep(0.2)
        raise Failure(f"timed out after {timeout} s waiting for {what} (last error: {error}); the dialog:\n"
                      + (last.text() if last else "(none)"))

    def screenshot(self, name):
        """The YaST window (its frame included), else the whole screen, as ARTIFACTS/NAME.png."""
        path = os.path.join(self.args.artifacts, f"{self.name}-{name}.png")
        geometry = window_geometry(self.args.display)
        crop = ["-crop", geometry] if geometry else []
        subprocess.run(["import", "-display", self.args.display, "-window", "root"] + crop + ["+repage", path],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return path

    def stderr(self):
        text = read_text(os.path.join(self.log, "stderr")) + read_text(os.path.join(self.dir, "stdout"))
        return text[-4000:]

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.keep_logs()


def window_geometry(display):
    """WxH+X+Y of YaST's top-level window with its frame, from xwininfo's tree of the root:
    the largest child of the root (openbox's frame holding the client)."""
    try:
        out = subprocess.run(["xwininfo", "-display", display, "-root", "-children"], check=True,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    best = None
    for m in re.finditer(r"^\s+0x[0-9a-f]+ .*?\s(\d+)x(\d+)\+(-?\d+)\+(-?\d+)\s+\+", out, re.M):
        w, h, x, y = map(int, m.groups())
        if 200 <= w < 1280 and 200 <= h < 800 and (best is None or w * h > best[0] * best[1]):
            best = (w, h, max(x, 0), max(y, 0))
    return f"{best[0]}x{best[1]}+{best[2]}+{best[3]}" if best else None


# ---- What a person checks -------------------------------------------------------------------

def shortcut(label):
    i = label.find("&")
    return label[i + 1].lower() if 0 <= i < len(label) - 1 else None


def expect_shortcuts(yast, want, where, settle=10):
    """The labels shown are exactly want (libyui's shortcut manager rewrites a label whose
    letter clashes: want has the shortcuts expected after that) and no letter is shared.
    The dialog is read again for up to settle seconds: a dialog just opened may still be
    changing its wizard buttons (an Abort that goes, Reset's shortcut not yet moved), and
    the REST API answers in between (1 of 27 runs read it then)."""
    deadline = time.monotonic() + settle
    d = yast.dialog()
    while sorted(d.labels()) != sorted(want) and time.monotonic() < deadline:
        time.sleep(0.2)
        d = yast.dialog()
    shown = d.labels()
    expect(sorted(shown) == sorted(want), f"{where}: the labels are {sorted(shown)}, the module's {sorted(want)}", d)
    letters = [shortcut(label) for label in shown]
    expect(None not in letters, f"{where}: a label without a shortcut: {shown}", d)
    expect(len(set(letters)) == len(letters), f"{where}: shortcuts shared: {shown}", d)


def popup_after(yast, module, button, what, want, shot):
    """module alone in the table and selected, button pressed: the popup that opens says want
    (the module's own words). Kept as screenshot shot."""
    filter_to(yast, module, [module])
    select(yast, module)
    yast.press(ruby_id(button))
    d = yast.wait(lambda d: d.is_popup(), what, 20)
    yast.screenshot(shot)
    expect(want in d.richtext(), f"{what}: not the module's words:\n  {want}\n  {d.richtext()}", d)
    return d


def expect_rows(d, texts, where):
    rows = d.rows()
    for cells in rows:
        want = texts["table"]["rows"].get(cells[0])
        expect(want == cells, f"{where}: {cells[0]}'s row shows {cells}, the module's cells are {want}", d)
    return rows


def filter_to(yast, text, want_rows):
    yast.act(ruby_id("fsgate_filter"), "enter_text", value=text)
    return yast.wait(lambda d: d.row_ids() == want_rows, f"the filter {text!r} to show {want_rows}", 20)


def select(yast, module):
    """Selects module's row, unless the filter left it selected already: the REST API's select
    also activates the row, an event of its own, and libyui keeps one pending event only, so
    a press sent while it is pending can be lost (seen: Deny did nothing)."""
    d = yast.dialog()
    if d.selected() == module and d.details().startswith(f"{module} "):
        return d
    yast.act(ruby_id("fsgate_filesystems"), "select", value=module)
    return yast.wait(lambda d: d.selected() == module and d.details().startswith(f"{module} "),
                     f"{module} selected, the panel about it", 20)


def press_and_wait(yast, button, root, directory, module, pred, what, panel):
    """Presses the module's button, waits until module's file satisfies pred and the panel
    says panel; returns that dialog."""
    yast.press(ruby_id(f"fsgate_{button}"))
    wait_file(root, directory, module, pred, what)
    return yast.wait(lambda d: not d.is_popup() and panel in d.details(), f"the panel to say {panel!r}", 20)


def session_online(args, texts):
    root = args.root
    yast = Yast(args, "online", ["fsgate"])
    try:
        d = yast.wait(lambda d: len(d.rows()) > 0, "the dialog with the table", 120)
        with open(os.path.join(args.artifacts, "online-main.json"), "w") as f:
            json.dump(d.tree, f, indent=1)
        expect(d.tree.get("class") == "YDialog" and not d.is_popup(), "the first dialog is not the main dialog", d)
        # The wizard's title is its debug label in the REST API.
        title = d.one("wizard", "YWizard").get("debug_label")
        expect(title == "Filesystem Autoload", f"the title is {title!r}", d)
        time.sleep(1)  # the first paint after the table filled
        yast.screenshot("main")
        ok("opened: `y2start fsgate qt` shows the dialog, its table filled")

        header = d.table().get("header", [])
        expect(header == texts["table"]["header"], f"the header is {header}, the module's {texts['table']['header']}", d)
        expect([h.replace("&", "") for h in header] == COLUMNS, f"the columns are {header}, want {COLUMNS}", d)
        rows = expect_rows(d, texts, "the main dialog")
        want = sorted(texts["table"]["rows"])
        expect(sorted(r[0] for r in rows) == want,
               f"the table holds {len(rows)} rows, the presenter {len(want)}: "
               f"{sorted(set(want) ^ {r[0] for r in rows})}", d)
        ok(f"the table: the columns {', '.join(COLUMNS)} and all {len(rows)} rows, each the presenter's cells")

        labels = [QT_MOVED.get(label, label) for label in texts["labels"] + WIZARD_LABELS + ["&Release Notes"]]
        expect_shortcuts(yast, labels, "the main dialog")
        ok("shortcuts: " + ", ".join(label.replace("&", "") + "=" + shortcut(label) for label in labels)
           + ": the module's, but Reset's moved from R to s by the wizard's hidden Release Notes; none shared")

        # Filter, then hfs: denied by the vendor file.
        # Names first, then types, where a name begins: never ib_qib and squashfs, whose
        # types ipathfs and squashfs merely contain "hfs" (issue 41 item 4).
        # A row found by its type says so in its first cell, the row's label.
        d = filter_to(yast, "ipathfs", ["ib_qib (type ipathfs)"])
        d = filter_to(yast, "hfs", ["hfs", "hfsplus"])
        ok("filter: 'hfs' leaves hfs and hfsplus; 'ipathfs' ib_qib, which says it was found by that type")
        d = select(yast, "hfs")
        cells = dict(zip(COLUMNS, [r for r in d.rows() if r[0] == "hfs"][0]))
        expect(cells["Autoload"] == "denied" and cells["Decided by"].endswith(f"{PREFIX}hfs.conf"),
               f"hfs's row is {cells}: want denied, decided by {PREFIX}hfs.conf", d)
        expect(f"hfs (types: hfs): denied; decided by vendor: /usr/lib/modprobe.d/{PREFIX}hfs.conf" in d.details(),
               f"the panel does not say hfs is denied by the vendor file: {d.details()}", d)
        card = words(texts["risk_hfs"] or "")
        expect(card and card in d.details(), f"the panel lacks hfs's risk card:\n  {card}\n  {d.details()}", d)
        ok(f"hfs: denied, decided by the vendor file {PREFIX}hfs.conf (row and panel), the risk card shown")
        time.sleep(0.5)
        shot = yast.screenshot("hfs")
        if args.docs_screenshot:
            shutil.copy(shot, args.docs_screenshot)

        # Allow hfs: the mask in /etc, the row and the panel; then Reset.
        d = press_and_wait(yast, "allow", root, "/etc/modprobe.d", "hfs", lambda c: c == "-> /dev/null",
                           "allow hfs", "hfs: allowed (admin:")
        cells = dict(zip(COLUMNS, [r for r in d.rows() if r[0] == "hfs"][0]))
        expect(cells["Autoload"] == "allowed" and cells["Decided by"].endswith(f"{PREFIX}hfs.conf"),
               f"after Allow hfs's row is {cells}", d)
        expect_rows(d, expected_texts(args.expected_texts, args.yast_lib, args.fake_yast), "after Allow")
        ok("allow: hfs is allowed (a mask in /etc/modprobe.d), its row and the panel say so")
        d = press_and_wait(yast, "reset", root, "/etc/modprobe.d", "hfs", lambda c: c is None, "reset hfs",
                           "hfs: denied (vendor:")
        expect(dict(zip(COLUMNS, [r for r in d.rows() if r[0] == "hfs"][0]))["Autoload"] == "denied",
               "after Reset hfs's row is not denied", d)
        ok("reset: hfs is back to the vendor file's deny")

        # Deny a mounted filesystem: the question, No, then Yes.
        d = popup_after(yast, "minix", "fsgate_deny", "the question before denying minix",
                        words(plain(texts["confirm_deny_minix"])), "popup-deny-mounted")
        expect(d.find("yes", "YPushButton") and d.find("no", "YPushButton"), "the question has no Yes and No", d)
        expect_shortcuts(yast, ["&Yes", "&No"], "the question")
        ok("deny mounted minix: the question, whole, with Yes and No")
        yast.press("no")
        d = yast.wait(lambda d: not d.is_popup() and "Nothing was changed." in d.details(), "No", 20)
        expect(conf(root, "/etc/modprobe.d", "minix") is None, "No still wrote minix's file")
        ok("No: nothing was changed")
        yast.press(ruby_id("fsgate_deny"))
        yast.wait(lambda d: d.is_popup(), "the question again", 20)
        yast.press("yes")
        wait_file(root, "/etc/modprobe.d", "minix", lambda c: c is not None and "\nblacklist minix\n" in "\n" + c,
                  "deny minix with Yes")
        d = yast.wait(lambda d: not d.is_popup() and "minix: denied (admin:" in d.details(), "Yes", 20)
        expect([r for r in d.rows() if r[0] == "minix"][0][1] == "denied", "minix's row is not denied", d)
        ok("Yes: minix is denied (FORCE), its row and the panel say so")
        press_and_wait(yast, "reset", root, "/etc/modprobe.d", "minix", lambda c: c is None, "reset minix",
                       "minix: allowed (default)")
        ok("reset: minix is allowed again")

        # Only until reboot: a deny in /run/modprobe.d.
        filter_to(yast, "udf", ["udf"])
        select(yast, "udf")
        yast.act(ruby_id("fsgate_runtime"), "check")
        yast.wait(lambda d: d.one(ruby_id("fsgate_runtime"), "YCheckBox").get("value") is True,
                  "Only until reboot checked", 10)
        press_and_wait(yast, "deny", root, "/run/modprobe.d", "udf", lambda c: c is not None and "blacklist udf" in c,
                       "deny udf until reboot", "udf: denied (until reboot:")
        expect(conf(root, "/etc/modprobe.d", "udf") is None, "the deny until reboot wrote to /etc")
        ok("Only until reboot: the deny of udf went to /run/modprobe.d")
        press_and_wait(yast, "reset", root, "/run/modprobe.d", "udf", lambda c: c is None, "reset udf",
                       "udf: allowed (default)")
        yast.act(ruby_id("fsgate_runtime"), "uncheck")
        # Settled before the next event: libyui keeps one pending event (see select()).
        yast.wait(lambda d: d.one(ruby_id("fsgate_runtime"), "YCheckBox").get("value") is False,
                  "Only until reboot unchecked", 10)
        ok("reset: udf's setting until reboot is gone")

        # The error: ufs is decided by a file fsgate did not write.
        d = popup_after(yast, "ufs", "fsgate_allow", "the error popup", words(texts["foreign_config_ufs"]),
                        "popup-error")
        expect("org.fsgate" not in d.richtext(), "a D-Bus error name in the popup", d)
        buttons = d.find(cls="YPushButton")
        expect(len(buttons) == 1, f"the error popup has the buttons {[b.get('label') for b in buttons]}", d)
        ok("error: ForeignConfig is shown in words, with the service's message")
        yast.press(buttons[0]["id"])
        yast.wait(lambda d: not d.is_popup(), "the error popup to close", 10)
        expect(conf(root, "/etc/modprobe.d", "ufs") == "install ufs /bin/true\n", "the foreign file changed")
        ok(f"{buttons[0].get('label', '').replace('&', '')} closes it; the foreign file is untouched")

        expect_shortcuts(yast, labels, "the main dialog at the end")
        yast.press("next")
        expect_clean_exit(yast, "Close: y2start exits with status 0", "y2log: no errors")
    except Failure:
        # What the screen showed when the check failed, for the person reading the log.
        try:
            yast.screenshot("failure")
            with open(os.path.join(args.artifacts, "online-failure.json"), "w") as f:
                json.dump(yast.dialog().tree, f, indent=1)
        except (OSError, subprocess.CalledProcessError, urllib.error.URLError, json.JSONDecodeError):
            pass
        raise
    finally:
        yast.close()


def main():
    ap = session_parser(__doc__)
    ap.add_argument("--qt-prefix", required=True, help="the Qt UI's prefix (build-yast-qt.sh)")
    ap.add_argument("--display", required=True, help="the X display (Xvfb's)")
    ap.add_argument("--runtime-dir", required=True, help="XDG_RUNTIME_DIR for Qt (mode 0700)")
    ap.add_argument("--docs-screenshot", help="also write hfs's screenshot here (docs/yast-qt.png)")
    args = ap.parse_args()
    texts = start(args)
    return run_sessions(args.artifacts, lambda: session_online(args, texts))


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""fsgate's YaST module in YaST's real text UI, used the way a person uses it.

Started by run-tests.sh, which built YaST (build-yast.sh), started the real fsgated over a
scratch root on a private bus (tools/private-fsgated) and made a second scratch root, the
installation target. Each session runs `y2start CLIENT ncurses` in a tmux pane of 80x24
(in-namespace.sh: y2log into the work directory, fsgatectl in /usr/bin, the target at
/mnt), reads the screen with `tmux capture-pane` and presses keys with `tmux send-keys`.

What is asserted is what a person sees: the whole text of every popup (wrapped, nothing
cut off at the screen's edge), the shortcut letter each label shows being the one its
label was given (libyui silently moves clashing shortcuts to other letters), at least 9
table rows at 80x24 (two lines of buttons above the table), every column of the table whole in 80 columns (the cells the presenter
made, the deciding file's name on the row of hfs, which the fixture's vendor file denies),
no error in y2log, exit status 0 on Close. What the actions change
is checked in the scratch root's files as well. Last, the main dialog in German: the
build's catalog where YaST reads catalogs, its title, columns, panel and buttons German.

Screens are kept in the artifacts directory (text, as capture-pane shows them).
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
import time

from fsgatetest.yast import (PREFIX, Failure, Y2Start, conf, expect, expect_clean_exit, expected_texts, ok, plain,
                             read_text, restore, run_sessions, session_parser, start, wait_file, words)

WIDTH, HEIGHT = 80, 24

# ---- The screen ----------------------------------------------------------------------------

SGR = re.compile(r"\x1b\[([0-9;]*)m")


class Screen:
    """One capture: the text, and each cell's attributes (colors, bold, reverse...)."""

    def __init__(self, escaped):
        self.lines = []
        self.attrs = []
        for raw in escaped.split("\n")[:HEIGHT]:
            text, attrs = self._parse(raw)
            self.lines.append(text.ljust(WIDTH))
            self.attrs.append(attrs + [()] * (WIDTH - len(attrs)))
        while len(self.lines) < HEIGHT:
            self.lines.append(" " * WIDTH)
            self.attrs.append([()] * WIDTH)

    @staticmethod
    def _parse(raw):
        """Splits a capture-pane -e line into text and one attribute tuple per character."""
        text, attrs = [], []
        state = {}
        pos = 0
        for m in SGR.finditer(raw):
            for ch in raw[pos:m.start()]:
                text.append(ch)
                attrs.append(tuple(sorted(state.items())))
            pos = m.end()
            params = [p for p in m.group(1).split(";")] if m.group(1) else ["0"]
            i = 0
            while i < len(params):
                p = int(params[i] or 0)
                if p == 0:
                    state = {}
                elif p in (38, 48):  # 38;5;N or 38;2;R;G;B
                    n = 3 if params[i + 1] == "5" else 5
                    state["fg" if p == 38 else "bg"] = ";".join(params[i:i + n])
                    i += n - 1
                elif 30 <= p <= 37 or 90 <= p <= 97:
                    state["fg"] = str(p)
                elif 40 <= p <= 47 or 100 <= p <= 107:
                    state["bg"] = str(p)
                elif p == 39:
                    state.pop("fg", None)
                elif p == 49:
                    state.pop("bg", None)
                elif 1 <= p <= 9:
                    state[str(p)] = True
                elif 21 <= p <= 29:
                    state.pop(str(p - 20), None)
                    if p == 22:
                        state.pop("2", None)
                i += 1
        for ch in raw[pos:]:
            text.append(ch)
            attrs.append(tuple(sorted(state.items())))
        return "".join(text), attrs

    def text(self):
        return "\n".join(line.rstrip() for line in self.lines)

    def find(self, needle):
        """All (row, column) where needle starts."""
        hits = []
        for r, line in enumerate(self.lines):
            c = line.find(needle)
            while c >= 0:
                hits.append((r, c))
                c = line.find(needle, c + 1)
        return hits

    def shortcut(self, row, col, length):
        """The character of the label at (row, col) drawn unlike the others: its shortcut.
        A button's brackets count as the label's own style ("[No]": N is the odd one)."""
        start, end = max(col - 1, 0), min(col + length + 1, WIDTH)
        cells = list(zip(self.lines[row][start:end], self.attrs[row][start:end]))
        counts = {}
        for ch, a in cells:
            if ch != " ":
                counts[a] = counts.get(a, 0) + 1
        if len(counts) < 2:
            return None
        odd = [(i, ch) for i, (ch, a) in enumerate(cells, start) if ch != " " and counts[a] == 1]
        if len(odd) != 1 or not col <= odd[0][0] < col + length:
            return None
        return odd[0][1]

    def boxes(self):
        """Every rectangle drawn with ┌┐└┘ corners: (top, left, bottom, right)."""
        found = []
        for top, line in enumerate(self.lines):
            for left, ch in enumerate(line):
                if ch != "┌":
                    continue
                right = left + 1
                while right < WIDTH and line[right] in "─┬┤├":
                    right += 1
                if right >= WIDTH or line[right] != "┐":
                    continue
                for bottom in range(top + 1, HEIGHT):
                    if self.lines[bottom][left] == "└" and self.lines[bottom][right] == "┘":
                        found.append((top, left, bottom, right))
                        break
                    if self.lines[bottom][left] not in "│├":
                        break
        return found

    def inside(self, box):
        top, left, bottom, right = box
        return [self.lines[r][left + 1:right] for r in range(top + 1, bottom)]


# ---- One YaST in tmux -----------------------------------------------------------------------

class Yast(Y2Start):
    def __init__(self, args, name, client_args, target="", extra_env=None):
        super().__init__(args, name)
        self.socket = os.path.join(self.dir, "tmux.sock")
        env = dict(self.env(), **{
            "TERM": "screen",
            "PATH": f"{args.prefix}/lib/YaST2/bin:{args.prefix}/sbin:{args.prefix}/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "LD_LIBRARY_PATH": f"{args.prefix}/lib:{args.prefix}/lib/YaST2/plugin",
            "RUBYLIB": f"{args.prefix}/ruby:{args.prefix}/abstract_method/lib",
        })
        env.update(extra_env or {})
        cmd = ["env", "-i"] + [f"{k}={v}" for k, v in env.items()] + self.in_namespace(client_args, "ncurses", target)
        # In the session's directory: YaST writes y2signal.log to the current one when
        # /var/log/YaST2 cannot take it.
        self.tmux("new-session", "-d", "-x", str(WIDTH), "-y", str(HEIGHT), "-s", "yast",
                  "-c", self.dir, shlex.join(cmd))
        self.watch = None  # called with every screen wait() returns

    def tmux(self, *argv, check=True):
        # A private server, without anyone's ~/.tmux.conf.
        return subprocess.run(["tmux", "-f", "/dev/null", "-S", self.socket] + list(argv), check=check,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True).stdout

    def screen(self):
        return Screen(self.tmux("capture-pane", "-p", "-e", "-t", "yast"))

    def keys(self, *keys):
        for k in keys:
            self.tmux("send-keys", "-t", "yast", k)
            time.sleep(0.15)

    def type(self, text):
        self.tmux("send-keys", "-t", "yast", "-l", text)

    def wait(self, what, timeout=60):
        """Polls the screen until what (a string, or a function of the Screen) holds."""
        test = (lambda s: what in s.text()) if isinstance(what, str) else what
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            if self.exited():
                raise Failure(f"YaST exited (status {self.status()}) while waiting for {what!r}"
                              f"\n{self.stderr()}")
            try:
                last = self.screen()
            except subprocess.CalledProcessError:
                last = None
            if last is not None and test(last):
                # Let the UI finish drawing, then read again.
                time.sleep(0.3)
                again = self.screen()
                shown = again if test(again) else last
                if self.watch:
                    self.watch(shown)
                return shown
            time.sleep(0.2)
        raise Failure(f"timed out after {timeout} s waiting for {what!r}; the screen:\n"
                      + (last.text() if last else "(none)"))

    def save(self, screen, name):
        path = os.path.join(self.args.artifacts, f"{self.name}-{name}.txt")
        with open(path, "w") as f:
            f.write(screen.text() + "\n")
        return path

    def stderr(self):
        return read_text(os.path.join(self.log, "stderr"))

    def shown(self):
        return f":\n{self.screen().text()}"

    def close(self):
        self.tmux("kill-server", check=False)
        self.keep_logs(("y2log", "stderr", "signal"))


# ---- What a person checks -------------------------------------------------------------------

def popup(screen, buttons):
    """The popup's box: the outermost box (of the smaller-than-the-screen ones) holding
    all of buttons' labels."""
    candidates = []
    for box in screen.boxes():
        top, left, bottom, right = box
        if right - left >= WIDTH - 2 and bottom - top >= HEIGHT - 3:
            continue  # the main dialog's frame, not a popup
        inner = "\n".join(screen.inside(box))
        if all(b in inner for b in buttons):
            candidates.append(box)
    expect(candidates, f"no popup with the buttons {buttons}", screen)
    return max(candidates, key=lambda b: (b[2] - b[0]) * (b[3] - b[1]))


def expect_whole_text(screen, box, text, what):
    """Every paragraph of text appears, wrapped but complete, inside the box."""
    # Frames and scroll bars (box drawing, arrows) are not text.
    shown = words(re.sub(r"[\u2500-\u257f\u2190-\u2193]", " ", " ".join(screen.inside(box))))
    for para in [p for p in re.split(r"\n\s*\n", text) if p.strip()]:
        expect(words(para) in shown,
               f"{what}: this paragraph is not shown whole:\n  {words(para)}\nthe popup shows:\n  {shown}",
               screen)


class Shortcuts:
    """The shortcut letter a label shows must be the one it was given ("Load &Now": N).

    libyui-ncurses draws a widget's shortcut letter in its own colour, and a disabled
    widget without one; when two widgets ask for the same letter, it silently gives one of
    them another. check() looks at every enabled label on a screen; all_seen() then says
    whether each label was seen enabled at least once."""

    def __init__(self, labels):
        self.labels = labels
        self.seen = set()

    def check(self, screen, where):
        for label in self.labels:
            shown = label.replace("&", "")
            key = label[label.index("&") + 1]
            for r, c in screen.find(shown):
                mark = screen.shortcut(r, c, len(shown))
                if mark is None:
                    continue  # disabled, or the same words in plain text
                expect(mark == key, f"{where}: {shown!r} shows the shortcut {mark!r}, its label says {key!r}"
                       " (libyui moved a shortcut that clashed with another)", screen)
                self.seen.add(label)

    def all_seen(self, where):
        missing = [label for label in self.labels if label not in self.seen]
        expect(not missing, f"{where}: never seen enabled, shortcut unchecked: {missing}")


def expect_shortcuts(screen, labels, where):
    check = Shortcuts(labels)
    check.check(screen, where)
    check.all_seen(where)


def table_rows(screen, first="Module"):
    """Module names in the table's first column below the header line, whose first cell is
    first (none without one)."""
    header = [r for r, line in enumerate(screen.lines) if re.match(rf"^\s*│{first}\s*│", line)]
    if not header:
        return []
    rows = []
    for line in screen.lines[header[0] + 1:]:
        m = re.match(r"^\s*│([a-z0-9_]+)\s*│", line)
        if not m:
            if rows:
                break
            continue
        rows.append(m.group(1))
    return rows


def table_box(screen, first="Module"):
    """The table's frame: the box whose first line inside is the header, first (Module) first."""
    for box in screen.boxes():
        top, left, _bottom, right = box
        if re.match(rf"{first}\s*│", screen.lines[top + 1][left + 1:right]):
            return box
    raise Failure("no table on the screen:\n" + screen.text())


def table_line(screen, box, first_cell):
    """The cells of the table's line (the header, or a row) whose first cell is first_cell,
    as shown between the frame's sides (a column cut off at the right side shows cut off)."""
    top, left, bottom, right = box
    for r in range(top + 1, bottom):
        cells = [c.strip() for c in screen.lines[r][left + 1:right].split("│")]
        if cells[0] == first_cell:
            return cells
    raise Failure(f"no table line starting with {first_cell!r}:\n" + screen.text())


def expect_table_fits(screen, texts, ids, where):
    """At 80x24 the table shows every column whole, nothing to scroll sideways: the header
    and the rows of ids show exactly the cells the presenter gave them (expected-texts.rb),
    and the frame's lower side is not a horizontal scroll bar (libyui-ncurses draws its
    thumb there, ├───┤, when the columns are wider than the frame)."""
    header = texts["table"]["header"]
    box = table_box(screen, header[0])
    top, left, bottom, right = box
    shown = table_line(screen, box, header[0])
    expect(shown == header, f"{where}: the table's header is {shown}, the module's {header}: columns are cut off "
           f"at {WIDTH} columns", screen)
    for module in ids:
        want = texts["table"]["rows"][module]
        shown = table_line(screen, box, module)
        expect(shown == want, f"{where}: {module}'s row shows {shown}, the module's cells are {want}", screen)
    border = screen.lines[bottom][left + 1:right]
    expect(set(border) == {"─"}, f"{where}: the table scrolls sideways at {WIDTH} columns: {border!r}", screen)


def expect_deciding_file_shown(screen, texts, module, directory, where):
    """module is denied by a file the fixture wrote into directory: its row shows that
    file's name whole, in the table's last column, and the row fits between the frame's
    sides (all its cells, as the presenter made them, and no horizontal scroll bar)."""
    name = f"{PREFIX}{module}.conf"
    box = table_box(screen)
    cells = table_line(screen, box, module)
    expect(len(cells) == len(texts["table"]["header"]) and cells[-1].endswith(name),
           f"{where}: {module}'s row does not show the deciding file {name} ({directory}) in its last column: "
           f"{cells}", screen)
    expect_table_fits(screen, texts, [module], where)


def panel_box(screen):
    """The panel below the table: the lowest box of (nearly) the screen's width."""
    boxes = [b for b in screen.boxes() if b[3] - b[1] >= WIDTH - 8 and b[2] - b[0] < HEIGHT - 3]
    expect(boxes, "no panel below the table", screen)
    return max(boxes, key=lambda b: b[0])


def focused(screen, box):
    """Whether the widget framed by box has the focus: libyui-ncurses draws its frame bold."""
    top, left, _bottom, _right = box
    return ("1", True) in screen.attrs[top][left]


def read_panel(yast, limit=40):
    """The whole text of the panel below the table, read as a person reads it at 80x24, where
    it shows one line: Tab until the panel has the focus, then Down line by line until its
    scroll mark says the end (↑ alone). Returns the words and the screens seen; the focus
    stays on the panel."""
    for _ in range(15):
        s = yast.screen()
        if focused(s, panel_box(s)):
            break
        yast.keys("Tab")
    else:
        raise Failure("Tab never reached the panel below the table:\n" + yast.screen().text())
    lines, screens = [], []
    for _ in range(limit):
        s = yast.screen()
        screens.append(s)
        top, left, bottom, right = panel_box(s)
        shown = [s.lines[r][left + 1:right].rstrip() for r in range(top + 1, bottom)]
        if not lines or shown != lines[-len(shown):]:
            lines += shown
        if s.lines[bottom - 1][right] == "↑":
            return words(" ".join(lines)), screens
        yast.keys("Down")
    raise Failure(f"the panel did not reach its end after {limit} lines:\n" + "\n".join(lines))


def risk_facts(path):
    """data/risk/kernel-facts.tsv: {module: {title, maintainers, section, userns_mount}}."""
    facts = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            module, title, maintainers, section, userns, _deprecated = \
                ("" if v == "-" else v for v in line.rstrip("\n").split("\t"))
            facts[module] = {"title": title, "maintainers": maintainers, "section": section,
                             "userns_mount": userns == "yes"}
    return facts


def expect_risk_card(yast, texts, where):
    """hfs selected: the panel shows the risk card the presenter built, whole, right after the
    row's line, and it says hfs's MAINTAINERS status and user namespace mount as
    data/risk/kernel-facts.tsv has them (read here, not by the module)."""
    shown, screens = read_panel(yast)
    card = words(texts["risk_hfs"] or "")
    first = [s for s in screens if "Kernel code:" in "".join(s.lines[panel_box(s)[0]:panel_box(s)[2]])]
    yast.save((first or screens)[0], "panel-risk-hfs")
    expect(card and card in shown, f"{where}: the panel does not show hfs's risk card whole:\n  {card}\n"
           f"the panel shows:\n  {shown}")
    facts = risk_facts(yast.args.risk_facts)["hfs"]
    code = f"Kernel code: {facts['maintainers']} ({facts['section']})" if facts["maintainers"] else \
        "Kernel code: no maintainer of its own"
    userns = "Users can mount it in a user namespace: " + ("yes" if facts["userns_mount"] else "no")
    for fact in (facts["title"], code, userns):
        expect(fact in card, f"{where}: the risk card does not say {fact!r} (data/risk/kernel-facts.tsv):\n  {card}")
    # The table shows the deciding file's name; the panel its whole path (restore() wrote it).
    path = f"/usr/lib/modprobe.d/{PREFIX}hfs.conf"
    expect(path in shown, f"{where}: the panel does not show the deciding file's path {path}:\n  {shown}")
    row = shown.find("hfs (types: hfs)")
    expect(0 <= row < shown.find(card) < shown.find("Deny: hfs is denied already."),
           f"{where}: the risk card is not between the row's line and the reasons:\n  {shown}")
    return shown


# ---- The sessions --------------------------------------------------------------------------

# The wizard's own buttons (yast2's Label.HelpButton and Label.CloseButton, the dialog's
# next button); the dialog's labels come from the module (expected-texts.rb).
WIZARD_LABELS = ["&Help", "C&lose"]


def press_and_wait(yast, key, root, directory, module, pred, what, panel):
    """Presses key, waits until module's file in root + directory satisfies pred (what names
    the step in a failure) and then until the screen shows panel; returns that screen."""
    yast.keys(key)
    wait_file(root, directory, module, pred, what)
    return yast.wait(panel, 20)


def reset_and_wait(yast, root, directory, module, panel, what=None):
    """Reset (Alt+R): module's file in root + directory goes, the screen shows panel."""
    return press_and_wait(yast, "M-r", root, directory, module, lambda c: c is None,
                          what or f"reset {module}", panel)


def close_cleanly(yast, close_ok, y2log_ok):
    """Close (Alt+L): y2start exits with 0 and y2log has no errors."""
    yast.keys("M-l")
    expect_clean_exit(yast, close_ok, y2log_ok)


def filter_focused(screen):
    """Whether the filter field has the focus: its cursor cell blinks."""
    hits = screen.find("Filter: ")
    if not hits:
        return False
    r, c = hits[0]
    end = screen.lines[r].find("[", c)  # the first button
    return any(("5", True) in a for a in screen.attrs[r][c + len("Filter: "):end])


def filter_to(yast, text, first_row):
    """Moves the focus back to the filter field (Shift+Tab, as a person would: the label
    "Filter:" has no shortcut), replaces its text, waits until first_row is the first row."""
    for _ in range(15):
        if filter_focused(yast.screen()):
            break
        yast.keys("BTab")
    else:
        raise Failure("Shift+Tab never reached the filter field:\n" + yast.screen().text())
    yast.keys("End")
    for _ in range(12):
        yast.keys("BSpace")
    yast.type(text)
    return yast.wait(lambda s: table_rows(s)[:1] == [first_row], 20)


# The labels of the actions that need a blocked drive (none in the online session).
DRIVE_LABELS = ["&Open Safely", "Load for This Dri&ve"]


def expect_lift_order(screen, texts):
    """The second line of buttons: the ways to use a denied filesystem in the presenter's
    order (expected-texts.rb), the safest first, Allow last."""
    want = [label.replace("&", "") for label in texts["lift_labels"]]
    line = [l for l in screen.lines if want[0] in l]
    expect(line, f"no line with {want[0]!r}", screen)
    shown = re.findall(r"\[([^\]]+)\]", line[0])
    expect(shown == want, f"the line of the ways to use a denied filesystem shows {shown}, want {want}", screen)


def grant_records(root):
    """The grants fsgated recorded in root's /run/fsgate/grants, as their texts."""
    d = root + "/run/fsgate/grants"
    return [read_text(os.path.join(d, f)) for f in os.listdir(d)] if os.path.isdir(d) else []


def session_online(args, texts):
    root = args.root
    yast = Yast(args, "online", ["fsgate"])
    try:
        s = yast.wait(lambda s: "Filesystem Autoload" in s.text() and len(table_rows(s)) > 0, 120)
        yast.save(s, "main")
        ok("opened: `y2start fsgate ncurses` shows the dialog with the table")

        rows = table_rows(s)
        expect(len(rows) >= 9, f"the table shows {len(rows)} rows at {WIDTH}x{HEIGHT}, want 9 or more", s)
        ok(f"the table shows {len(rows)} rows at {WIDTH}x{HEIGHT}")
        expect_table_fits(s, texts, rows, "the main dialog")
        ok(f"the table's columns fit in {WIDTH} columns: the header and every row shown whole")
        # Every screen from here on: the labels shown enabled show their own shortcuts.
        # Open Safely and Load for This Drive need a blocked drive that is still plugged in
        # (fsgatectl log): none here, so they stay disabled (their reasons are checked).
        labels = [label for label in texts["labels"] + WIZARD_LABELS if label not in DRIVE_LABELS]
        shortcuts = Shortcuts(labels)
        shortcuts.check(s, "main dialog")
        yast.watch = lambda s: shortcuts.check(s, "main dialog")

        # Filter, then allow and reset hfs (denied by the vendor file).
        s = filter_to(yast, "hfs", "hfs")
        expect(table_rows(s) == ["hfs", "hfsplus"], f"filter 'hfs' shows {table_rows(s)}", s)
        ok("filter: 'hfs' leaves hfs and hfsplus, never ib_qib or squashfs, whose types contain it (issue 41 item 4)")
        yast.save(s, "filter-hfs")
        expect_deciding_file_shown(s, texts, "hfs", "/usr/lib/modprobe.d", "online")
        ok(f"hfs's row shows its deciding file {PREFIX}hfs.conf whole and fits in {WIDTH} columns")
        expect_risk_card(yast, texts, "online")
        ok("risk card: the panel, scrolled line by line, says what the kernel source says of hfs "
           "(MAINTAINERS status as data/risk has it), after the row's line")
        filter_to(yast, "hfs", "hfs")  # the focus back on the filter, the panel at its top again
        press_and_wait(yast, "M-a", root, "/etc/modprobe.d", "hfs", lambda c: c == "-> /dev/null", "allow hfs",
                       "hfs: allowed (admin:")
        ok("allow: hfs is allowed (a mask in /etc/modprobe.d), and the panel says so")
        reset_and_wait(yast, root, "/etc/modprobe.d", "hfs", "hfs: denied (vendor:")
        ok("reset: hfs is back to the vendor file's deny")

        # Issue 41 item 2: the ways to use a denied filesystem on their own line, the safest
        # first and the permanent Allow last.
        s = filter_to(yast, "hfs", "hfs")
        expect_lift_order(s, texts)
        ok("order: Open Safely, Load for This Drive, Load for a While, Load Now, then Allow, on one line")
        # Load for a While: a grant of an hour, whose load fails on this host (fsgated over an
        # image never loads into the running kernel): the service's error, nothing granted.
        yast.keys("M-w")
        s = yast.wait("never loads a module", 20)
        yast.save(s, "popup-grant-failed")
        box = popup(s, ["OK"])
        expect_whole_text(s, box, texts["grant_failed_hfs"], "the failed grant's error")
        ok("Load for a While: the grant's failed load is shown whole, in words")
        yast.keys("Enter")
        yast.wait(lambda s: "[OK]" not in s.text(), 10)
        expect(not [g for g in grant_records(root) if "module=hfs\n" in g],
               "a grant of hfs is recorded after its load failed")
        expect(conf(root, "/etc/modprobe.d", "hfs") is None, "the grant wrote hfs's file")
        ok("nothing granted, nothing written")
        # End Grant: run-tests.sh recorded a grant of jfs before fsgated started.
        s = filter_to(yast, "jfs", "jfs")
        shown, _screens = read_panel(yast)
        expect("Loaded for a while: until " in shown and "End Grant ends it now." in shown,
               f"the panel does not show jfs's grant:\n  {shown}")
        ok("jfs's grant: the panel says until when, and that End Grant ends it")
        filter_to(yast, "jfs", "jfs")
        yast.keys("M-g")
        s = yast.wait("jfs: the grant ended.", 20)
        yast.save(s, "grant-ended")
        expect(not grant_records(root), "the grant's record is still in /run/fsgate/grants")
        expect(conf(root, "/etc/modprobe.d", "jfs") is None, "End Grant wrote jfs's file")
        ok("End Grant: the grant ended (a Deny, which wrote nothing: the vendor file denies jfs)")

        # Deny a mounted filesystem: the question, No, then Yes.
        filter_to(yast, "minix", "minix")
        yast.keys("M-d")
        s = yast.wait(lambda s: "minix is mounted now." in s.text() and "Yes" in s.text(), 20)
        yast.save(s, "popup-deny-mounted")
        box = popup(s, ["Yes", "No"])
        expect_whole_text(s, box, texts["confirm_deny_minix"], "the question before denying minix")
        expect_shortcuts(s, ["&Yes", "&No"], "the question")
        ok("deny mounted minix: the question is shown whole at 80x24, Yes and No with their shortcuts")
        yast.keys("M-n")
        yast.wait(lambda s: "Nothing was changed." in s.text() and "[No]" not in s.text(), 20)
        expect(conf(root, "/etc/modprobe.d", "minix") is None, "No still wrote minix's file")
        ok("No: nothing was changed")
        yast.keys("M-d")
        yast.wait(lambda s: "minix is mounted now." in s.text() and "[No]" in s.text(), 20)
        press_and_wait(yast, "M-y", root, "/etc/modprobe.d", "minix",
                       lambda c: c is not None and "\nblacklist minix\n" in "\n" + c, "deny minix with Yes",
                       "minix: denied (admin:")
        ok("Yes: minix is denied (FORCE), the panel says so")
        reset_and_wait(yast, root, "/etc/modprobe.d", "minix", "minix: allowed (default)")
        ok("reset: minix is allowed again")

        # Only until reboot: a deny in /run/modprobe.d, reset from there.
        filter_to(yast, "udf", "udf")
        yast.keys("M-b")
        yast.wait("[x] Only until reboot", 10)
        press_and_wait(yast, "M-d", root, "/run/modprobe.d", "udf", lambda c: c is not None and "blacklist udf" in c,
                       "deny udf until reboot", "udf: denied (until reboot:")
        expect(conf(root, "/etc/modprobe.d", "udf") is None, "the deny until reboot wrote to /etc")
        ok("Only until reboot: the deny of udf went to /run/modprobe.d")
        reset_and_wait(yast, root, "/run/modprobe.d", "udf", "udf: allowed (default)")
        yast.keys("M-b")
        yast.wait("[ ] Only until reboot", 10)
        ok("reset: udf's setting until reboot is gone")

        # The error popup: ufs is decided by a file fsgate did not write.
        filter_to(yast, "ufs", "ufs")
        yast.keys("M-a")
        s = yast.wait("fsgate does not change", 20)
        yast.save(s, "popup-error")
        box = popup(s, ["OK"])
        expect_whole_text(s, box, texts["foreign_config_ufs"], "the ForeignConfig error")
        expect_shortcuts(s, ["&OK"], "the error popup")
        expect("org.fsgate" not in s.text(), "a D-Bus error name in the popup")
        ok("error: ForeignConfig is shown whole, in words, with the service's message")
        yast.keys("Enter")
        yast.wait(lambda s: "[OK]" not in s.text(), 10)      # the popup's button: the panel keeps the hint
        expect(conf(root, "/etc/modprobe.d", "ufs") == "install ufs /bin/true\n", "the foreign file changed")
        ok("OK closes it; the foreign file is untouched")

        # Help.
        yast.keys("M-h")
        s = yast.wait(lambda s: "audited code" in s.text(), 20)
        yast.save(s, "help")
        box = popup(s, ["OK"])
        expect_whole_text(s, box, plain(texts["help"]), "the help")
        ok("help: the whole help text is shown")
        yast.keys("Enter")
        yast.wait(lambda s: "audited code" not in s.text(), 10)

        shortcuts.all_seen("main dialog")
        ok("every label of the main dialog showed its own shortcut: "
           + ", ".join(label.replace("&", "") + "=" + label[label.index("&") + 1] for label in labels))

        close_cleanly(yast, "Close: y2start exits with status 0", "y2log: no errors")
    finally:
        yast.close()


def session_offline(args, texts):
    """During installation (Stage.initial, as the installer's `initial` argument sets it) the
    module works offline on Installation.destdir (/mnt) through /usr/bin/fsgatectl --root."""
    target = args.target
    yast = Yast(args, "offline", ["fsgate", "--arg", "initial"], target=target)
    try:
        s = yast.wait(lambda s: "Filesystem Autoload" in s.text() and len(table_rows(s)) > 0, 120)
        yast.save(s, "main")
        expect("Filesystem Autoload: System at /mnt" in s.text(), "the title does not name /mnt", s)
        expect(not s.find("Only until reboot"), "Only until reboot is offered offline", s)
        ok("offline: the dialog opens on the installation target /mnt, no Only until reboot")
        rows = table_rows(s)
        expect(len(rows) >= 9, f"the table shows {len(rows)} rows at {WIDTH}x{HEIGHT}, want 9 or more", s)
        # Offline there is no Only until reboot (the labels are the online dialog's), and
        # Load Now stays disabled.
        shortcuts = Shortcuts([label for label in texts["labels"] + WIZARD_LABELS
                               if not re.search(r"re&?boot|Load|Open|Grant", label)])
        yast.watch = lambda s: shortcuts.check(s, "offline dialog")

        s = filter_to(yast, "hfs", "hfs")
        expect_deciding_file_shown(s, texts, "hfs", "/usr/lib/modprobe.d", "offline")
        ok(f"offline: hfs's row shows its deciding file {PREFIX}hfs.conf whole and fits in {WIDTH} columns")
        expect_risk_card(yast, texts, "offline")
        ok("offline risk card: fsgatectl --json list's facts of hfs in the panel")
        filter_to(yast, "hfs", "hfs")  # the focus back on the filter, the panel at its top again
        press_and_wait(yast, "M-a", target, "/etc/modprobe.d", "hfs", lambda c: c == "-> /dev/null",
                       "allow hfs offline", "hfs: allowed (admin:")
        ok("offline allow: fsgatectl --root wrote hfs's mask into the target")
        reset_and_wait(yast, target, "/etc/modprobe.d", "hfs", "hfs: denied (vendor:", "reset hfs offline")
        ok("offline reset: the mask is gone")
        shortcuts.all_seen("offline dialog")
        ok("offline: the labels showed their own shortcuts")

        close_cleanly(yast, "offline Close: status 0", "offline y2log: no errors")
    finally:
        yast.close()


# The German session: the labels as de.po translates them (with their shortcuts); the
# wizard's Help and Close are yast2's own texts (its "base" catalog is not installed here).
# German runs longer than English: the labels are short enough that the filter beside them
# keeps room to type in at 80 columns.
GERMAN_LABELS = ["&Erlauben", "&Verbieten", "&Standard", "La&den", "Bis &Neustart", "Sicher ö&ffnen",
                 "Für dieses Lauf&werk", "&Zeitweise laden", "&Beenden"]


def session_german(args, texts_de):
    """YaST in German finds the module's texts in the "fsgate" catalog: Yast::I18n reads
    catalogs from /usr/share/YaST2/locale only (where meson installs a link to each
    language's fsgate.mo), so the build's de catalog is put there in a read-only overlay
    (in-namespace.sh); YaST takes the language from LANGUAGE (then LC_ALL, LC_MESSAGES,
    LANG), and its FastGettext needs no glibc locale: the terminal stays C.UTF-8."""
    mo = os.path.join(args.locale_dir, "de", "LC_MESSAGES", "fsgate.mo")
    expect(os.path.isfile(mo), f"the build has no German catalog {mo}")
    share = os.path.join(args.work, "german-share")
    os.makedirs(os.path.join(share, "YaST2", "locale", "de", "LC_MESSAGES"))
    shutil.copy(mo, os.path.join(share, "YaST2", "locale", "de", "LC_MESSAGES", "fsgate.mo"))
    yast = Yast(args, "german", ["fsgate"], extra_env={"LANGUAGE": "de", "FSGATE_TUI_SHARE": share})
    try:
        s = yast.wait(lambda s: re.search(r"Filesystem Autoload|Automatisches Laden", s.text())
                      and re.search(r"│Modul", s.text()), 120)
        yast.save(s, "main")
        expect("Automatisches Laden von Dateisystemen" in s.text(), "the title is not German", s)
        # The columns Module and Autoload, and 9p's row: its state, In use and Decided by
        # (the header "In use" is newer than de.po's translations: not checked).
        header = [line for line in s.lines if line.lstrip().startswith("│Modul")]
        expect(header and re.search(r"│Modul\s*│Autom\. laden\s*│Benutzt\s*│Entschieden durch\s", header[0]),
               "the table's columns are not Modul, Autom. laden, Benutzt, Entschieden durch", s)
        expect(re.search(r"│9p\s*│erlaubt\s*│nein\s*│Voreinstellung\s", s.text()),
               "9p's row is not German (erlaubt, nein, Voreinstellung)", s)
        expect(re.search(r"\(Typen: [^)]*\): (erlaubt|verweigert); entschieden durch ", s.text()),
               "the panel below the table is not German", s)
        ok("German: the title, the table's columns and the panel are German")
        # Issue 41 item 3: German cells are wider than English ones; the table still fits.
        rows = table_rows(s, "Modul")
        expect(len(rows) >= 9, f"the German table shows {len(rows)} rows at {WIDTH}x{HEIGHT}, want 9 or more", s)
        expect_table_fits(s, texts_de, rows, "the German dialog")
        ok(f"German: the table's columns fit in {WIDTH} columns: the header and every row shown whole")
        for label in GERMAN_LABELS:
            expect(s.find(label.replace("&", "")), f"no {label.replace('&', '')!r} on the screen", s)
        filter_line = [line for line in s.lines if "Verbieten" in line]
        expect(filter_line and re.search(r"Filter: ▒{10,}", filter_line[0]),
               "the German filter has no room to type in (labels too wide for 80 columns)", s)
        ok("German: the filter keeps at least 10 columns beside the buttons")
        # The first row, 9p, is allowed by default: Erlauben and Standard are disabled
        # (shown without a shortcut); the enabled labels show their own shortcuts.
        shortcuts = Shortcuts(GERMAN_LABELS + WIZARD_LABELS)
        shortcuts.check(s, "the German dialog")
        unseen = {label for label in GERMAN_LABELS + WIZARD_LABELS if label not in shortcuts.seen}
        expect(unseen == {"&Erlauben", "&Standard", "Sicher ö&ffnen", "Für dieses Lauf&werk", "&Zeitweise laden",
                          "&Beenden"},
               f"the German dialog: never seen enabled, shortcut unchecked: {sorted(unseen)}", s)
        ok("German: Erlauben, Verbieten, Standard, Laden, Bis Neustart, Sicher öffnen, Für dieses Laufwerk, "
           "Zeitweise laden, Beenden; "
           "the enabled ones with their own shortcuts")
        close_cleanly(yast, "German Close: status 0", "German y2log: no errors")
    finally:
        yast.close()


def main():
    ap = session_parser(__doc__)
    ap.add_argument("--prefix", required=True, help="the YaST prefix (build-yast.sh)")
    ap.add_argument("--target", required=True, help="the installation target's scratch root")
    ap.add_argument("--locale-dir", required=True, help="the build's catalogs: LANG/LC_MESSAGES/fsgate.mo")
    ap.add_argument("--risk-facts", required=True, help="data/risk/kernel-facts.tsv, the risk card's oracle")
    args = ap.parse_args()
    texts = start(args)
    restore(args.target)
    texts_de = expected_texts(args.expected_texts, args.yast_lib, args.fake_yast,
                              os.path.join(args.locale_dir, "de", "LC_MESSAGES", "fsgate.mo"))
    return run_sessions(args.artifacts, lambda: session_online(args, texts),
                        lambda: session_offline(args, texts), lambda: session_german(args, texts_de))


if __name__ == "__main__":
    sys.exit(main())

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The History of blocks card: `fsgatectl --json log` through cockpit.spawn (superuser "try":
 * as root with administrative access, else as the user, who may not read the system journal),
 * newest first, with a filter, and what fsgate changed or loaded afterwards. An observation's
 * would-blocks are in the same log: shown as what they were (observation.js). Apart from
 * fsgate.js, which calls loadHistory() and renderHistory(). */

import { $, el } from "./dom.mjs";
import { ctlErrorName, ctlMessage, parseJson } from "./fsgatectl.mjs";
import { historyAskedBy, historyDecidedBy, historyWords, isWouldBlock } from "./observation.js";

const _ = cockpit.gettext;
const format = cockpit.format;

const HISTORY_LINES = 200;
let history = [];           /* fsgatectl log --json: the newest HISTORY_LINES entries */
let historyRun = 0;         /* the newest fsgatectl log asked for: older answers are dropped */

function historyText(b) {
    return [b.type, b.module, b.device, b.label, b.deciding_file, b.session, b.seat,
        b.session_uid >= 0 ? "uid " + b.session_uid : "", b.afterwards, historyWords(b)].join(" ").toLowerCase();
}

function historyRow(b) {
    const medium = b.device
        ? (b.label ? format(_("$0 “$1”"), b.device, b.label) : b.device)
        : _("no device (a mount or a request by name)");
    const session = b.session_uid >= 0
        ? format(_("uid $0, session $1 on $2"), b.session_uid, b.session || "?", b.seat || "?")
        : "";
    const who = [historyAskedBy(b), session].filter(Boolean).join("; ") || "—";
    let after = "—";
    if (b.afterwards)
        after = format(b.afterwards === "loaded" ? _("loaded at $0 (requested by uid $1)")
                                                  : _("changed at $0 (requested by uid $1)"),
                       new Date(b.afterwards_usec / 1000).toLocaleString(), b.afterwards_uid);
    const would = isWouldBlock(b);
    return el("tr", { class: would ? "history-row would-block" : "history-row", "data-module": b.module,
                      "data-would-block": would ? "true" : undefined, "data-profile": would ? b.profile : undefined },
              el("td", null, new Date(b.realtime_usec / 1000).toLocaleString()),
              el("td", null, b.type === b.module ? b.type : b.type + " (" + b.module + ")"),
              el("td", null, medium),
              el("td", { class: would ? "file observed" : "file" }, historyDecidedBy(b)),
              el("td", { class: "session" }, who),
              el("td", { class: "afterwards" }, after));
}

export function renderHistory() {
    const words = $("history-filter").value.trim().toLowerCase().split(/\s+/).filter(w => w);
    const rows = history.filter(b => words.every(w => historyText(b).includes(w))).map(historyRow);
    $("history-rows").replaceChildren(...rows);
    $("history").hidden = rows.length === 0;
    if (history.length === 0)
        $("history-note").textContent = _("No blocked mount in the system journal.");
    else if (rows.length === 0)
        $("history-note").textContent = _("No block matches the filter.");
    else
        $("history-note").textContent = format(cockpit.ngettext("$0 of $1 block, newest first",
                                                                "$0 of $1 blocks, newest first", history.length),
                                               rows.length, history.length);
}

export function loadHistory() {
    const run = ++historyRun;
    const failed = message => {
        history = [];
        renderHistory();
        $("history-note").textContent = format(_("The history cannot be shown: $0"), message);
    };

    cockpit.spawn(["fsgatectl", "--json", "log", "--lines=" + HISTORY_LINES], { superuser: "try", err: "message" })
            .then(out => {
                if (run !== historyRun)
                    return;
                const j = parseJson(out);
                if (!Array.isArray(j))
                    return failed(_("fsgatectl gave no list"));
                history = j.sort((a, b) => b.realtime_usec - a.realtime_usec);
                renderHistory();
            })
            .catch(ex => {
                if (run !== historyRun)
                    return;
                /* Exit status 4 (AccessDenied): this user may not read the system journal. Said in
                 * the page's words, with the way to it, not fsgatectl's rule for shells (issue 41). */
                if (ex.exit_status === 4 || ctlErrorName(ex) === "org.freedesktop.DBus.Error.AccessDenied") {
                    failed("");
                    $("history-note").textContent = _("The history of blocks is in the system journal, which only " +
                                                      "administrators can read. Turn on administrative access (the " +
                                                      "lock at the top) or ask an administrator.");
                } else {
                    failed(ctlMessage(ex));
                }
            });
}

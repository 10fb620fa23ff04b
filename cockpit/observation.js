/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The observation of a profile (README: "Rolling out a profile"; issue 39): while one is on,
 * nothing is denied and every autoload the profile would block goes ahead and is recorded.
 * The page says so: a notice at the top (since when, the command that shows the evidence, and
 * for an administrator Stop observing), "observed by PROFILE" on the rows the observation
 * names, and the History card's would-blocks as what they are, never as blocks.
 * GetObservation has no signal: the page asks again whenever it reloads the table.
 * An ES module in a .js file, so that xgettext reads it as JavaScript; the texts are plain
 * functions that node tests with a stand-in cockpit (tests/cockpit/test-observation.mjs). */

import { $, el } from "./dom.mjs";

const _ = cockpit.gettext;
const format = cockpit.format;

/* GetObservation's reply (s profile, t since_usec, as modules): null when nothing is observed. */
export function parseObservation([profile, since, modules]) {
    if (!profile)
        return null;
    return { profile, since: Number(since), modules: [...(modules || [])] };
}

/* The observed profile that names module, "" when none does. */
export function observedBy(obs, module) {
    return obs && obs.modules.includes(module) ? obs.profile : "";
}

/* The command that shows what was observed (an audit reads the journal; run by people). */
export function auditCommand(obs) {
    return "fsgatectl audit " + obs.profile;
}

export function noticeTitle(obs) {
    return format(_("Observing profile $0 since $1: nothing is denied; each autoload it would block goes ahead " +
                    "and is recorded."), obs.profile, new Date(obs.since / 1000).toLocaleString());
}

/* ---- the History card's would-blocks (fsgatectl log --json: "would_block": true) ---- */

export function isWouldBlock(b) {
    return b.would_block === true;
}

/* The "Decided by" of a history entry: its deciding file, or for a would-block what would have
 * decided and what happened instead. */
export function historyDecidedBy(b) {
    if (!isWouldBlock(b))
        return b.deciding_file;
    const text = format(_("would be blocked by $0 (observing; loaded)"), b.profile);
    if (b.count > 1)
        return text + " · " + format(cockpit.ngettext("$0 request", "$0 requests", b.count), b.count);
    return text;
}

/* Who asked for a would-block's module (read from /proc by the hook), "" when nobody waited. */
export function historyAskedBy(b) {
    if (!isWouldBlock(b) || b.asked_uid < 0)
        return "";
    return format(_("asked by $0 (uid $1, $2)"), b.asked_user || "?", b.asked_uid, b.asked_command || "?");
}

/* Words a would-block adds to what the history's filter matches. */
export function historyWords(b) {
    if (!isWouldBlock(b))
        return "";
    return ["would-block observing", b.profile, b.asked_user, b.asked_command, historyDecidedBy(b)].join(" ");
}

/* ---- on the page ---- */

let current = null;         /* parseObservation()'s answer, as last read */
let stopping = false;
let stopError = null;       /* describeError()'s { name, message } of a failed StopObserving */
let page = null;            /* fsgate.js's: { call, canStop, errorBox, changed } */

export function observation() {
    return current;
}

/* page.call(method, args, signature): a D-Bus call; page.canStop(): null when this user may stop
 * it, else why not (then the button is not offered: the notice is for reading); page.errorBox(err,
 * onDismiss); page.describeError(ex); page.changed(): the observation changed (rows to redraw). */
export function setupObservation(p) {
    page = p;
    $("observation-note").hidden = true;
}

/* "observed by PROFILE" under a module's name, or null. */
export function observedNote(module) {
    const profile = observedBy(current, module);
    return profile ? el("small", { class: "hint observed", "data-profile": profile },
                        format(_("observed by $0"), profile)) : null;
}

export function renderObservation() {
    const note = $("observation-note");
    if (!current) {
        note.hidden = true;
        note.replaceChildren();
        return;
    }
    const reason = page.canStop();
    note.dataset.profile = current.profile;
    note.replaceChildren(
        el("p", { class: "pf-c-alert__title observation-title" }, noticeTitle(current)),
        el("div", { class: "pf-c-alert__description" },
           el("p", null, _("What it would have blocked, who asked and on which device: "),
              el("code", { class: "observation-command" }, auditCommand(current))),
           stopError ? page.errorBox(stopError, () => { stopError = null; renderObservation() }) : null),
        reason === null
            ? el("div", { class: "pf-c-alert__action-group" },
                 el("button", { type: "button", class: "pf-c-button pf-m-secondary", "data-action": "stop-observing",
                                disabled: stopping, onclick: stopObserving },
                    stopping ? _("Working…") : _("Stop observing")))
            : null);
    note.hidden = false;
}

/* GetObservation again; page.changed() when the answer differs. An older fsgated has no such
 * method: then nothing is shown. */
export function loadObservation() {
    return page.call("GetObservation", [], "")
            .then(reply => parseObservation(reply))
            .catch(() => null)
            .then(obs => {
                const changed = JSON.stringify(obs) !== JSON.stringify(current);
                current = obs;
                renderObservation();
                if (changed)
                    page.changed();
            });
}

/* StopObserving: the observation ends, nothing is enforced (polkit may ask through Cockpit). */
function stopObserving() {
    stopping = true;
    stopError = null;
    renderObservation();
    page.call("StopObserving", [], "")
            .catch(ex => { stopError = page.describeError(ex) })
            .finally(() => {
                stopping = false;
                loadObservation();
            });
}

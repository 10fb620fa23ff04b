/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fsgate's Cockpit page. Plain JavaScript on Cockpit's own cockpit.js: one D-Bus client for
 * org.fsgate.fsgate1, a table of every filesystem module, one action panel at a time, and a
 * list of blocked mounts fed by the Blocked signal. The page keeps no state of its own that
 * the service could contradict: after every change it asks the service again. */
"use strict";

import { $, el } from "./dom.mjs";
import { matchEntry } from "./filter.mjs";
import { ctlMessage, parseJson } from "./fsgatectl.mjs";
import { loadHistory, renderHistory } from "./history.js";
import { loadObservation, observation, observedBy, observedNote, renderObservation, setupObservation } from "./observation.js";

const SERVICE = "org.fsgate.fsgate1";
const PATH = "/org/fsgate/fsgate1";
const IFACE = "org.fsgate.fsgate1.Manager";

/* Method flags, as in org.fsgate.fsgate1(5). */
const RUNTIME = 0x1;
const LOAD_NOW = 0x2;
const FORCE = 0x4;
const HARD = 0x8;
const DRY_RUN = 0x10;

const BLOCKED_MAX = 20;

/* Texts for people go through Cockpit's gettext: po.js (loaded before this file) has given
 * cockpit.locale() this package's catalog for the user's language, built from po/LANG.po.
 * D-Bus names, module names, file paths, error names and flag names stay as they are. */
const _ = cockpit.gettext;
const format = cockpit.format;

const ORIGIN_LABELS = {
    default: _("Default (nothing configured)"),
    vendor: _("Vendor"),
    local: _("Local"),
    runtime: _("Runtime, until reboot"),
    admin: _("Administrator"),
    cmdline: _("Kernel command line (modprobe.blacklist=)"),
};

/* The service's state words, as shown; data-state keeps the service's own word. */
const STATE_LABELS = {
    /* TRANSLATORS: a module's state in the table: the kernel may load it on its own. */
    allowed: _("allowed"),
    /* TRANSLATORS: a module's state in the table: the kernel may not load it on its own. */
    denied: _("denied"),
};

const client = cockpit.dbus(SERVICE, { bus: "system", superuser: "try" });
const permission = cockpit.permission({ admin: true });

const entries = new Map();  /* module → entry, as the service last reported it */
const errors = new Map();   /* module → the last failed call's error, shown under its row */
const busy = new Set();     /* modules with a call in flight */
let panel = null;           /* { module, action, runtime, force, loadNow, hard } */
/* newest first: { key, type, module, device, details, time, note (allowed), info (opened or granted), granted,
 * error, busy } */
let blocked = [];
let loaded = false;
let profilePreview = null;  /* { name, hard, changes } of the last successful dry run */
let profileBusy = false;

/* ---- D-Bus ---- */

function toEntry(t) {
    const [module, types, state, origin, source, available, builtin, isLoaded, mounted] = t;
    return { module, types, state, origin, source, available, builtin, loaded: isLoaded, mounted };
}

/* Every failure as { name, message }: a D-Bus error by its name, a Cockpit channel problem
 * (bridge gone, access denied to the bus) by Cockpit's problem code. Never a trace. */
function describeError(ex) {
    if (ex && ex.name && ex.name.indexOf(".") > 0)
        return { name: ex.name, message: ex.message || "" };
    if (ex && ex.problem)
        return { name: "cockpit: " + ex.problem, message: cockpit.message(ex) };
    return { name: _("Error"), message: String(ex && ex.message ? ex.message : ex) };
}

/* A failure in words: people read the heading, never a D-Bus name (that stays in the
 * element's data-error, for scripts and tests, and in the service's journal). */
const ERROR_TITLES = {
    "org.fsgate.fsgate1.Error.ForeignConfig": () => _("Decided by a file fsgate did not write"),
    "org.fsgate.fsgate1.Error.InUse": () => _("In use now"),
    "org.fsgate.fsgate1.Error.NeededForBoot": () => _("The system boots from it"),
    "org.fsgate.fsgate1.Error.ProfileConflict": () => _("Some modules of the profile cannot be denied"),
    "org.fsgate.fsgate1.Error.HardDenied": () => _("Denied hard: loading it is refused"),
    "org.fsgate.fsgate1.Error.HardDenyIgnored": () => _("A hard deny could not take effect"),
    "org.fsgate.fsgate1.Error.Overridden": () => _("A file in /etc takes precedence"),
    "org.fsgate.fsgate1.Error.ReadOnly": () => _("The configuration cannot be written"),
    "org.fsgate.fsgate1.Error.Builtin": () => _("Built into the kernel"),
    "org.fsgate.fsgate1.Error.NoSuchFilesystem": () => _("No such filesystem"),
    "org.fsgate.fsgate1.Error.NotAFilesystem": () => _("Not a filesystem"),
    "org.fsgate.fsgate1.Error.InvalidName": () => _("Not a valid name"),
    "org.fsgate.fsgate1.Error.LoadFailed": () => _("The module could not be loaded"),
    "org.fsgate.fsgate1.Error.ConcurrentChange": () => _("Changed meanwhile; try again"),
    "org.fsgate.fsgate1.Error.Busy": () => _("Another change is being written; try again"),
    "org.fsgate.fsgate1.Error.NoSuchProfile": () => _("No such profile"),
    "org.fsgate.fsgate1.Error.NoKernel": () => _("No kernel to judge against"),
    "org.fsgate.fsgate1.Error.AuthenticationCancelled": () => _("Authentication cancelled"),
    "org.freedesktop.DBus.Error.AccessDenied": () => _("Not authorized"),
    "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired": () => _("A password is needed"),
    "org.freedesktop.DBus.Error.LimitsExceeded": () => _("Too many requests are waiting"),
};

function errorTitle(name) {
    if (ERROR_TITLES[name])
        return ERROR_TITLES[name]();
    if (name.startsWith("cockpit: "))
        return _("The service cannot be reached");
    return _("Failed");
}

function errorBox(err, onDismiss) {
    return el("div", { class: "pf-c-alert pf-m-danger pf-m-inline inline-error", role: "alert", "data-error": err.name },
              el("p", { class: "pf-c-alert__title error-title" }, errorTitle(err.name)),
              el("div", { class: "pf-c-alert__description error-message" }, err.message),
              onDismiss ? el("div", { class: "pf-c-alert__action-group" },
                             el("button", { class: "pf-c-button pf-m-link pf-m-inline dismiss", type: "button", onclick: onDismiss },
                                _("Dismiss"))) : null);
}

function call(method, args, signature) {
    /* "i": polkit may ask the user (through Cockpit's agent) instead of refusing outright. */
    return client.call(PATH, IFACE, method, args, { type: signature, flags: "i" });
}

function showPageError(prefix, ex) {
    const err = describeError(ex);
    const box = $("page-error");
    const alert = errorBox(err);
    /* One description: PatternFly's alert puts every description in the same grid cell. */
    alert.querySelector(".pf-c-alert__description").prepend(el("div", { class: "page-error-context" }, prefix));
    box.replaceChildren(alert);
    box.hidden = false;
}

/* What the entry cannot carry, from Describe's a{sv} (variants as { t, v }): hard or soft,
 * and what the kernel source says of the module (the risk facts, in English as MAINTAINERS
 * has them). */
function withDescription(e, d) {
    const str = key => (d && d[key] && typeof d[key].v === "string") ? d[key].v : "";
    e.hard = !!(d && d.hard && d.hard.v);
    e.explicitLoad = !!(d && d.explicit_load_possible && d.explicit_load_possible.v);
    e.risk = str("risk_summary");
    e.riskTitle = str("risk_title");
    e.riskSource = str("risk_facts_source");
    /* The service's own answer to "would Allow be done now?": "" yes, else why not. */
    e.allowRefused = str("allow_refused");
    e.resetRefused = str("reset_refused");
    e.overrideOf = str("override_of");
    return e;
}

function loadAll() {
    $("app").setAttribute("aria-busy", "true");
    loadObservation();
    return Promise.all([client.call(PATH, IFACE, "ListFilesystems", []),
                        client.call(PATH, IFACE, "DescribeAll", [])])
            .then(([[list], [all]]) => {
                entries.clear();
                for (const t of list) {
                    const e = withDescription(toEntry(t), all[t[0]]);
                    entries.set(e.module, e);
                }
                loaded = true;
                $("page-error").hidden = true;
                renderTable();
            })
            .catch(ex => showPageError(_("Cannot list filesystem modules from the fsgate service."), ex))
            .finally(() => {
                $("loading").hidden = true;
                $("app").setAttribute("aria-busy", "false");
            });
}

function refreshOne(module) {
    return Promise.all([client.call(PATH, IFACE, "GetFilesystem", [module]),
                        client.call(PATH, IFACE, "Describe", [module])])
            .then(([[t], [d]]) => {
                const e = withDescription(toEntry(t), d);
                entries.set(e.module, e);
                renderModule(e.module);
                updateBlockedFor(e.module);
            })
            .catch(ex => {
                if (ex && ex.name === "org.fsgate.fsgate1.Error.NoSuchFilesystem") {
                    /* A module named only by a rule that is gone now. */
                    entries.delete(module);
                    renderModule(module);
                } else {
                    errors.set(module, describeError(ex));
                    renderModule(module);
                }
            });
}

function loadServiceInfo() {
    client.call(PATH, "org.freedesktop.DBus.Properties", "GetAll", [IFACE])
            .then(([props]) => {
                const v = props.Version ? props.Version.v : "?";
                const k = props.KernelRelease ? props.KernelRelease.v : "?";
                $("service-info").textContent = format(_("Kernel $0 · fsgate $1"), k, v);
            })
            .catch(() => { /* ListFilesystems reports an unreachable service. */ });
}

/* ---- what a row allows ---- */

function fsgateFile(e) {
    /* The file's name alone: xgettext's JavaScript scanner misreads a "/" inside a regular expression. */
    return e.source && /^60-blacklist_fs-.+\.conf$/.test(e.source.split("/").pop());
}

/* The reason an action cannot be taken now, or null when it can. */
function disabledReason(e, action) {
    if (permission.allowed === false)
        return _("Read-only: changing this needs administrative access.");
    if (permission.allowed === null)
        return _("Checking your privileges…");
    if (busy.has(e.module))
        return _("Working…");
    if (e.builtin)
        return format(_("$0 is built into the kernel: always available, it cannot be denied or loaded."), e.module);
    switch (action) {
    case "allow":
        if (e.state === "allowed")
            return format(_("$0 is allowed already."), e.module);
        if (e.origin === "cmdline")
            return _("Denied on the kernel command line (modprobe.blacklist=): change the boot loader configuration.");
        if (e.allowRefused)
            return format(_("Allow would be refused: $0"), e.allowRefused);
        return null;
    case "deny":
        /* A soft deny can still be made hard. */
        if (e.state === "denied" && e.hard)
            return format(_("$0 is denied already, hard."), e.module);
        return null;
    case "reset":
        if (e.origin !== "admin" && e.origin !== "runtime")
            return format(_("Nothing to reset: $0 decides, not an override in /etc or /run."),
                          ORIGIN_LABELS[e.origin] || e.origin);
        if (e.resetRefused)
            return format(_("Reset would be refused: $0"), e.resetRefused);
        /* Neither fsgate's name nor its override of a vendor file (which keeps that file's
         * name): a hardening role's file, say, which a Reset leaves as it is. */
        if (!fsgateFile(e) && !e.overrideOf)
            return format(_("Nothing to reset: $0 was not written by fsgate; edit it by hand."), e.source);
        return null;
    case "load":
        if (e.loaded)
            return format(_("$0 is loaded already."), e.module);
        if (!e.available)
            return format(_("This kernel has no module file for $0."), e.module);
        if (e.hard)
            return format(_("$0 is denied hard: explicit loads are refused. Allow it first."), e.module);
        return null;
    }
    return null;
}

const ACTIONS = [
    { id: "allow", label: _("Allow"), cls: "pf-m-secondary" },
    { id: "deny", label: _("Deny"), cls: "pf-m-secondary" },
    { id: "reset", label: _("Reset"), cls: "pf-m-secondary" },
    { id: "load", label: _("Load now"), cls: "pf-m-secondary" },
];

function openPanel(e, action) {
    if (panel && panel.module === e.module && panel.action === action) {
        closePanel();
        return;
    }
    const previous = panel ? panel.module : null;
    panel = {
        module: e.module,
        action,
        runtime: action === "reset" && e.origin === "runtime",
        force: false,
        loadNow: false,
        /* Deny on a module denied already is there to make it hard. */
        hard: action === "deny" && e.state === "denied",
    };
    errors.delete(e.module);
    if (previous && previous !== e.module)
        renderModule(previous);
    renderModule(e.module);
    const first = document.querySelector(`tbody[data-module="${CSS.escape(e.module)}"] .panel input, ` +
                                         `tbody[data-module="${CSS.escape(e.module)}"] .panel .pf-m-primary`);
    if (first)
        first.focus();
}

function closePanel() {
    const m = panel ? panel.module : null;
    panel = null;
    if (m)
        renderModule(m);
}

function flagsOf(p) {
    let f = 0;
    if (p.runtime && p.action !== "load")
        f |= RUNTIME;
    if (p.loadNow && p.action === "allow")
        f |= LOAD_NOW;
    if (p.force && p.action === "deny")
        f |= FORCE;
    if (p.hard && p.action === "deny")
        f |= HARD;
    return f;
}

function apply(e, p) {
    const flags = flagsOf(p);
    let promise;
    switch (p.action) {
    case "allow": promise = call("Allow", [e.module, flags], "st"); break;
    case "deny": promise = call("Deny", [e.module, flags], "st"); break;
    case "reset": promise = call("Reset", [e.module, flags], "st"); break;
    case "load": promise = call("Load", [e.module], "s"); break;
    }
    busy.add(e.module);
    errors.delete(e.module);
    renderModule(e.module);
    promise
            .then(() => {
                if (panel && panel.module === e.module)
                    panel = null;
            })
            .catch(ex => errors.set(e.module, describeError(ex)))
            .finally(() => {
                busy.delete(e.module);
                /* FilesystemChanged follows every change, but Load changes no configuration and a
                 * refused call changes nothing: ask once more either way. */
                refreshOne(e.module);
            });
}

/* ---- rendering ---- */

function yesNo(v, what) {
    return el("span", { class: v ? "flag flag-yes" : "flag flag-no", "aria-label": format("$0: $1", what, v ? _("yes") : _("no")) },
              v ? _("Yes") : _("No"));
}

/* PatternFly's label: the colour on the outer element, the text in its content. */
function label(cls, text) {
    return el("span", { class: `pf-c-label ${cls}` }, el("span", { class: "pf-c-label__content" }, text));
}

function stateBadge(e) {
    if (e.builtin)
        return label("badge badge-builtin", _("built in"));
    const badge = label(`badge badge-${e.state} ${e.state === "allowed" ? "pf-m-green" : "pf-m-red"}`,
                        STATE_LABELS[e.state] || e.state);
    if (e.state !== "denied")
        return badge;
    /* Hard: explicit loads refused too; soft: "modprobe" by root still loads it. */
    return el("span", null, badge, " ",
              el("span", { class: `deny-kind deny-${e.hard ? "hard" : "soft"}`,
                           title: e.hard ? _("Explicit loads (modprobe, Load now) are refused too")
                                         : _("Root can still load it explicitly (modprobe, Load now)") },
                 /* TRANSLATORS: the kind of a deny: explicit loads are refused too, or not. */
                 e.hard ? _("hard") : _("soft")));
}

function decidedBy(e) {
    return el("div", { class: "decided" },
              el("span", { class: `origin origin-${e.origin}` }, ORIGIN_LABELS[e.origin] || e.origin),
              e.source ? el("code", { class: "source" }, e.source) : null);
}

function actionButtons(e) {
    return el("div", { class: "actions" }, ACTIONS.map(a => {
        const reason = disabledReason(e, a.id);
        const open = panel && panel.module === e.module && panel.action === a.id;
        const button = el("button", {
            type: "button",
            class: `pf-c-button pf-m-small ${a.cls}${open ? " pf-m-active" : ""}`,
            "data-action": a.id,
            disabled: reason !== null,
            "aria-expanded": open ? "true" : "false",
            onclick: () => openPanel(e, a.id),
        }, a.label);
        /* A disabled button gets no pointer events: the reason sits on its wrapper. */
        return el("span", { class: "btn-wrap", title: reason || undefined, "data-reason": reason || undefined },
                  button);
    }));
}

function checkbox(label, hint, checked, onchange, name) {
    return el("label", { class: "check" },
              el("input", { type: "checkbox", class: "pf-c-check__input", name, checked, onchange: ev => onchange(ev.target.checked) }),
              el("span", null, label, hint ? el("small", null, hint) : null));
}

function panelBody(e, p) {
    const types = e.types.length ? e.types.join(", ") : e.module;
    const parts = [];
    let confirm;
    switch (p.action) {
    case "allow":
        parts.push(el("p", null, format(_("Let the kernel load $0 on its own when a $1 filesystem is mounted."), e.module, types)));
        parts.push(checkbox(_("Until reboot only (RUNTIME)"), _("written to /run/modprobe.d instead of /etc/modprobe.d"),
                            p.runtime, v => { p.runtime = v }, "runtime"));
        if (e.available && !e.loaded)
            parts.push(checkbox(_("Load it now as well (LOAD_NOW)"), null, p.loadNow, v => { p.loadNow = v }, "load-now"));
        confirm = format(_("Allow $0"), e.module);
        break;
    case "deny":
        parts.push(el("p", null, format(_("Stop the kernel from loading $0 on its own: mounting $1 then fails " +
                                          "with “unknown filesystem type”. “modprobe $0” by root still works, " +
                                          "unless the deny is hard."), e.module, types)));
        parts.push(checkbox(_("Until reboot only (RUNTIME)"), _("written to /run/modprobe.d instead of /etc/modprobe.d"),
                            p.runtime, v => { p.runtime = v }, "runtime"));
        parts.push(checkbox(_("Hard deny (HARD)"),
                            format(_("explicit loads are refused too: “install $0 /bin/false”, as CIS and OpenSCAP " +
                                     "want it; blocked mounts are still reported"), e.module),
                            p.hard, v => { p.hard = v }, "hard"));
        if (e.loaded || e.mounted) {
            parts.push(el("p", { class: "warning" },
                          format(e.mounted ? _("$0 is mounted now: after the next boot, what uses it could not be mounted.")
                                           : _("$0 is loaded now: after the next boot, what uses it could not be mounted."),
                                 e.module)));
            parts.push(checkbox(_("Deny anyway (FORCE)"), null, p.force, v => { p.force = v }, "force"));
        }
        confirm = format(_("Deny $0"), e.module);
        break;
    case "reset":
        parts.push(el("p", null, e.source
            ? format(_("Remove fsgate's override for $0 and go back to what the vendor configured (now decided by $1)."),
                     e.module, e.source)
            : format(_("Remove fsgate's override for $0 and go back to what the vendor configured."), e.module)));
        parts.push(checkbox(_("The runtime override (RUNTIME)"), _("in /run/modprobe.d, instead of the one in /etc/modprobe.d"),
                            p.runtime, v => { p.runtime = v }, "runtime"));
        if (!fsgateFile(e))
            parts.push(el("p", { class: "hint" }, _("The deciding file does not look like fsgate's: the service may refuse.")));
        confirm = format(_("Reset $0"), e.module);
        break;
    case "load":
        parts.push(el("p", null, format(_("Load $0 now, for this boot only. The configuration does not change: " +
                                          "the next boot decides as before."), e.module)));
        confirm = format(_("Load $0"), e.module);
        break;
    }
    const working = busy.has(e.module);
    parts.push(el("div", { class: "panel-buttons" },
                  el("button", { type: "button", class: p.action === "deny" ? "pf-c-button pf-m-danger" : "pf-c-button pf-m-primary",
                                 "data-confirm": p.action, disabled: working, onclick: () => apply(e, p) },
                     working ? _("Working…") : confirm),
                  el("button", { type: "button", class: "pf-c-button pf-m-link", disabled: working, onclick: closePanel },
                     _("Cancel"))));
    return parts;
}

function moduleBody(e) {
    const tbody = el("tbody", { "data-module": e.module, "data-state": e.state });
    tbody.append(el("tr", { class: "module-row" },
                    el("th", { scope: "row", class: "module-name" }, e.module,
                       e.available ? null : el("small", { class: "hint" }, _("not in this kernel")),
                       el("small", { class: "hint matched-type", hidden: true }),
                       observedNote(e.module),
                       e.risk ? el("small", { class: "risk", title: format(_("$0; facts from Linux $1"), e.riskTitle, e.riskSource) },
                                   e.risk) : null),
                    el("td", { class: "types" }, e.types.join(", ")),
                    el("td", { class: "state" }, stateBadge(e)),
                    el("td", null, decidedBy(e)),
                    el("td", { class: "loaded" }, yesNo(e.loaded, _("loaded"))),
                    el("td", { class: "mounted" }, yesNo(e.mounted, _("mounted"))),
                    el("td", { class: "actions-cell" }, actionButtons(e))));
    const err = errors.get(e.module);
    const p = panel && panel.module === e.module ? panel : null;
    if (p || err) {
        tbody.append(el("tr", { class: "panel-row" },
                        el("td", { colspan: "7" },
                           el("div", { class: p ? "panel" : "panel panel-error-only" },
                              err ? errorBox(err, () => { errors.delete(e.module); renderModule(e.module) }) : null,
                              p ? panelBody(e, p) : null))));
    }
    return tbody;
}

/* null when e's row is not shown, else filter.mjs's { type }. */
function matches(e, words, state) {
    if (state && e.state !== state)
        return null;
    /* Beyond names and types, the service's words and the words shown, so that a filter
     * typed in either matches. */
    const texts = [e.state, STATE_LABELS[e.state], e.origin, e.source, ORIGIN_LABELS[e.origin],
        e.loaded ? "loaded " + _("loaded") : "", e.mounted ? "mounted " + _("mounted") : "",
        e.builtin ? "builtin built-in " + _("built in") : "", e.risk,
        observedBy(observation(), e.module) ? "observed " + observedBy(observation(), e.module) : ""];
    return matchEntry(e, words, texts);
}

function applyFilter() {
    const words = $("filter").value.trim().toLowerCase().split(/\s+/).filter(Boolean);
    const state = $("state-filter").value;
    let shown = 0;
    for (const tbody of $("modules").tBodies) {
        const e = entries.get(tbody.dataset.module);
        const m = e ? matches(e, words, state) : null;
        tbody.hidden = !m;
        /* A row found by a type and not by its name says so: "hfs" is never ib_qib's "ipathfs". */
        const note = tbody.querySelector(".matched-type");
        note.hidden = !m || !m.type;
        note.textContent = m && m.type ? format(_("found by its type $0"), m.type) : "";
        if (m)
            shown++;
    }
    $("count").textContent = loaded
        ? format(cockpit.ngettext("$0 of $1 module", "$0 of $1 modules", entries.size), shown, entries.size)
        : "";
    $("no-match").hidden = !loaded || shown > 0;
}

function renderTable() {
    const table = $("modules");
    for (const tbody of [...table.tBodies])
        tbody.remove();
    for (const m of [...entries.keys()].sort())
        table.append(moduleBody(entries.get(m)));
    applyFilter();
}

function renderModule(module) {
    const table = $("modules");
    const old = [...table.tBodies].find(t => t.dataset.module === module);
    const e = entries.get(module);
    if (!e) {
        if (old)
            old.remove();
    } else if (old) {
        old.replaceWith(moduleBody(e));
    } else {
        const next = [...table.tBodies].find(t => t.dataset.module > module);
        table.insertBefore(moduleBody(e), next || null);
    }
    applyFilter();
}

function renderPermission() {
    const note = $("readonly-note");
    if (permission.allowed === false) {
        note.replaceChildren(el("p", { class: "pf-c-alert__title" }, _("Read-only.")),
                             el("div", { class: "pf-c-alert__description" }, _("You can see which filesystems may load, but changing that needs administrative " +
                               "access. Turn on administrative access in Cockpit's top bar, or log in as an " +
                               "administrator.")));
        note.hidden = false;
    } else {
        note.hidden = true;
    }
    if (loaded)
        renderTable();
    renderBlocked();
    renderGrants();
    renderOpenMedia();
    renderObservation();
    updateProfileButtons();
}

/* ---- Grants: loaded for a while ---- */

let grants = [];                /* the Grants property: [id, module, uid, since, until, device] */
const grantErrors = new Map();  /* module → the error of its End */

function loadGrants() {
    client.call(PATH, "org.freedesktop.DBus.Properties", "Get", [IFACE, "Grants"])
            .then(([v]) => { grants = v.v; renderGrants() })
            .catch(() => { /* an older fsgated has no grants: the card stays hidden */ });
}

/* End: a Deny of the module, which the configuration denies already: nothing is written, an
 * own hard deny stays hard, and the grant ends (Reset would also drop fsgate's own file). */
function endGrant(module) {
    busy.add(module);
    grantErrors.delete(module);
    renderGrants();
    call("Deny", [module, 0], "st")
            .catch(ex => grantErrors.set(module, describeError(ex)))
            .finally(() => { busy.delete(module); loadGrants(); refreshOne(module) });
}

function grantItem([id, module, uid, since, until, device]) {
    const end = new Date(Number(until) / 1000).toLocaleString();
    let reason = null;
    if (permission.allowed === false)
        reason = _("Read-only: changing this needs administrative access.");
    else if (permission.allowed === null)
        reason = _("Checking your privileges…");
    else if (busy.has(module))
        reason = _("Working…");
    const error = grantErrors.get(module);
    return el("li", { class: "blocked-item grant-item", "data-grant": id, "data-module": module },
              el("div", { class: "blocked-main" },
                 el("strong", null, module),
                 el("span", { class: "grant-end" },
                    device ? format(_("until $0, or until $1 is removed"), end, device) : format(_("until $0"), end)),
                 el("span", { class: "blocked-meta" }, format(_("asked for by uid $0"), String(uid))),
                 error ? errorBox(error, () => { grantErrors.delete(module); renderGrants() }) : null),
              el("div", { class: "actions" },
                 el("span", { class: "btn-wrap", title: reason || undefined, "data-reason": reason || undefined },
                    el("button", { type: "button", class: "pf-c-button pf-m-secondary", "data-action": "end-grant",
                                   disabled: reason !== null, onclick: () => endGrant(module) },
                       _("End now")))));
}

function renderGrants() {
    $("grants-list").replaceChildren(...grants.map(grantItem));
    $("grants-section").hidden = grants.length === 0;
}

/* ---- Recently blocked ---- */

/* A key of the Blocked signal's details: one of core/block-fields.c's rows, which
 * tests/contract/check-contract.py checks every key read here against. */
function detailValue(details, key) {
    const d = details && details[key];
    return d && d.v !== undefined ? d.v : undefined;
}

function formatSize(bytes) {
    const units = ["B", "KB", "MB", "GB", "TB"];
    let v = Number(bytes), i = 0;
    while (v >= 1000 && i < units.length - 1) {
        v /= 1000;
        i++;
    }
    return `${v < 10 && i > 0 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

function onBlocked(type, module, device, details) {
    const key = `${type}\t${device}`;
    blocked = blocked.filter(b => b.key !== key);
    blocked.unshift({ key, type, module, device, details: details || {}, time: new Date(), note: null, error: null });
    blocked.length = Math.min(blocked.length, BLOCKED_MAX);
    renderBlocked();
}

function updateBlockedFor(module) {
    const e = entries.get(module);
    let changed = false;
    for (const b of blocked) {
        if (b.module === module && e && e.state === "allowed" && !b.note) {
            b.note = format(_("$0 is allowed now: mount it again."), module);
            changed = true;
        }
    }
    if (changed)
        renderBlocked();
}

/* ---- Open safely: a medium's files read-only through a userspace driver, no module ---- */

/* `fsgatectl --json routes`: type → { driver, package, installed, usable }. Empty until it
 * answers (or when it cannot: then nothing is offered that might not work). */
let routes = new Map();

function loadRoutes() {
    cockpit.spawn(["fsgatectl", "--json", "routes"], { err: "message" })
            .then(out => {
                const j = parseJson(out);
                routes = new Map(Array.isArray(j) ? j.map(r => [r.type, r]) : []);
                renderBlocked();
            })
            .catch(() => { /* an older fsgatectl without routes: Open safely is not offered */ });
}

/* OpenSafely takes a descriptor, which Cockpit's D-Bus channel cannot pass: fsgatectl makes
 * the call (as root with administrative access, else as the user, whom polkit asks). */
function openBlocked(b) {
    b.busy = true;
    b.error = null;
    renderBlocked();
    cockpit.spawn(["fsgatectl", "--json", "open", b.device], { superuser: "try", err: "message" })
            .then(out => {
                const j = parseJson(out) || {};
                b.info = format(_("Opened safely at $0: its files read-only, $1 still off."), j.mountpoint || "?",
                                b.module);
            })
            .catch(ex => {
                let err = null;
                try {
                    err = JSON.parse(ex.message);
                } catch (e) { /* not fsgatectl's JSON */ }
                b.error = err && err.error ? { name: err.error, message: err.message || "" }
                                           : { name: _("Error"), message: ctlMessage(ex) };
            })
            .finally(() => {
                b.busy = false;
                renderBlocked();
                loadOpenMedia();
            });
}

/* The scoped grant: the module for this drive only, unloaded once it is removed. */
function grantBlocked(b) {
    b.busy = true;
    b.error = null;
    renderBlocked();
    call("Grant", [b.module, { device: { t: "s", v: b.device } }, 0], "sa{sv}t")
            .then(() => {
                b.granted = true;
                b.info = format(_("$0 is loaded while $1 is there: mount it again."), b.module, b.device);
            })
            .catch(ex => { b.error = describeError(ex) })
            .finally(() => {
                b.busy = false;
                renderBlocked();
                loadGrants();
                refreshOne(b.module);
            });
}

let openMedia = [];             /* the OpenMedia property: [id, mountpoint, device, uid, fstype, driver, since] */
const openErrors = new Map();   /* id → the error of its Close */
const closing = new Set();

function loadOpenMedia() {
    client.call(PATH, "org.freedesktop.DBus.Properties", "Get", [IFACE, "OpenMedia"])
            .then(([v]) => { openMedia = v.v; renderOpenMedia() })
            .catch(() => { /* an older fsgated opens nothing: the card stays hidden */ });
}

function closeOpen(id) {
    closing.add(id);
    openErrors.delete(id);
    renderOpenMedia();
    call("CloseSafely", [id], "s")
            .catch(ex => openErrors.set(id, describeError(ex)))
            .finally(() => { closing.delete(id); loadOpenMedia() });
}

function openItem([id, mountpoint, device, uid, fstype, driver, since]) {
    const error = openErrors.get(id);
    return el("li", { class: "blocked-item open-item", "data-open": id, "data-device": device,
                      "data-mountpoint": mountpoint },
              el("div", { class: "blocked-main" },
                 el("strong", null, device ? format(_("$0 on $1"), fstype, device) : format(_("$0 image"), fstype)),
                 el("span", { class: "open-mountpoint" }, format(_("at $0, read by $1"), mountpoint, driver)),
                 el("span", { class: "blocked-meta" },
                    format(_("for uid $0, since $1"), String(uid), new Date(Number(since) / 1000).toLocaleString())),
                 error ? errorBox(error, () => { openErrors.delete(id); renderOpenMedia() }) : null),
              el("div", { class: "actions" },
                 el("span", { class: "btn-wrap", title: closing.has(id) ? _("Working…") : undefined },
                    el("button", { type: "button", class: "pf-c-button pf-m-secondary", "data-action": "close-open",
                                   disabled: closing.has(id), onclick: () => closeOpen(id) },
                       _("Close")))));
}

function renderOpenMedia() {
    $("open-list").replaceChildren(...openMedia.map(openItem));
    $("open-section").hidden = openMedia.length === 0;
}

function allowBlocked(b) {
    b.busy = true;
    b.error = null;
    renderBlocked();
    call("Allow", [b.module, 0], "st")
            .then(() => { b.note = format(_("$0 is allowed now: mount it again."), b.module) })
            .catch(ex => { b.error = describeError(ex) })
            .finally(() => {
                b.busy = false;
                renderBlocked();
                refreshOne(b.module);
            });
}

/* Where a block came from (Blocked's details "cause" and "seat"). A mount request carries
 * nothing of who mounted: any local user may have, in a user namespace too, so it is no
 * reason to allow the module here. Without a cause (an older fsgated): the same. */
function blockedCause(b) {
    const seat = detailValue(b.details, "seat");
    if (detailValue(b.details, "cause") === "device" && b.device)
        return { kernel: false, text: seat ? format(_("a drive plugged in at $0"), seat) : _("a drive plugged in") };
    return {
        kernel: true,
        text: _("a mount request: any local user may have made it, also in a user namespace; fsgate cannot tell who"),
    };
}

function blockedItem(b) {
    const e = entries.get(b.module);
    const cause = blockedCause(b);
    const label = detailValue(b.details, "label");
    const vendor = [detailValue(b.details, "vendor"), detailValue(b.details, "model")].filter(Boolean).join(" ");
    const size = detailValue(b.details, "size");
    const source = detailValue(b.details, "source") || detailValue(b.details, "origin");
    const what = [label ? `“${label}”` : null, vendor || null, size ? formatSize(size) : null].filter(Boolean);

    let reason = null;
    if (cause.kernel)
        reason = format(_("Not offered for a mount request: anyone can cause one, so it is no sign that $0 is " +
                          "needed. If it is, allow it in the list above."), b.module);
    else if (permission.allowed === false)
        reason = _("Read-only: changing this needs administrative access.");
    else if (permission.allowed === null)
        reason = _("Checking your privileges…");
    else if (b.busy)
        reason = _("Working…");
    else if (b.note || (e && e.state === "allowed"))
        reason = format(_("$0 is allowed already."), b.module);

    /* Open safely first where a driver reads the type (it loads nothing, whatever the deny),
     * then this drive only, then the permanent allow: the safest choice first (issue 41). */
    const route = routes.get(b.type);
    const canOpen = !cause.kernel && b.device && route && route.usable;
    const openReason = b.busy ? _("Working…") : null;
    const missing = !cause.kernel && b.device && route && route.started && !route.installed
        ? format(_("Open safely would read it with $0 still off: install the package $1."), b.module, route.package)
        : null;
    /* A grant needs a drive: a mount request has none (and is no reason to load it either). */
    const canGrant = !cause.kernel && b.device;
    let grantReason = reason;
    if (!grantReason && b.granted)
        grantReason = format(_("$0 is loaded for this drive already."), b.module);

    return el("li", { class: "blocked-item", "data-type": b.type, "data-device": b.device,
                      "data-cause": cause.kernel ? "kernel" : "device" },
              el("div", { class: "blocked-main" },
                 el("strong", null, b.device ? format(_("$0 on $1"), b.type, b.device) : format(_("$0 filesystem"), b.type)),
                 what.length ? el("span", { class: "blocked-what" }, what.join(" · ")) : null,
                 el("span", { class: "blocked-cause" }, format(_("Cause: $0"), cause.text)),
                 el("span", { class: "blocked-meta" },
                    source
                        ? format(_("module $0, blocked at $1, denied by $2"), b.module, b.time.toLocaleTimeString(), source)
                        : format(_("module $0, blocked at $1"), b.module, b.time.toLocaleTimeString())),
                 missing ? el("span", { class: "blocked-meta open-missing" }, missing) : null,
                 b.info ? el("span", { class: "blocked-note blocked-info" }, b.info) : null,
                 b.note ? el("span", { class: "blocked-note" }, b.note) : null,
                 b.error ? errorBox(b.error, () => { b.error = null; renderBlocked() }) : null),
              el("div", { class: "actions" },
                 canOpen ? el("span", { class: "btn-wrap", title: openReason || undefined, "data-reason": openReason || undefined },
                              el("button", { type: "button", class: "pf-c-button pf-m-primary", "data-action": "open-safely",
                                             title: format(_("Its files read-only through $0, with $1 still off"),
                                                           route.driver, b.module),
                                             disabled: openReason !== null, onclick: () => openBlocked(b) },
                                 _("Open safely"))) : null,
                 canGrant ? el("span", { class: "btn-wrap", title: grantReason || undefined,
                                         "data-reason": grantReason || undefined },
                               el("button", { type: "button",
                                              class: canOpen ? "pf-c-button pf-m-secondary" : "pf-c-button pf-m-primary",
                                              "data-action": "grant-blocked", disabled: grantReason !== null,
                                              onclick: () => grantBlocked(b) },
                                  _("Load for this drive"))) : null,
                 el("span", { class: "btn-wrap", title: reason || undefined, "data-reason": reason || undefined },
                    el("button", { type: "button", class: "pf-c-button pf-m-secondary", "data-action": "allow-blocked",
                                   disabled: reason !== null, onclick: () => allowBlocked(b) },
                       format(_("Allow $0"), b.module))),
                 el("button", { type: "button", class: "pf-c-button pf-m-link", "data-action": "dismiss",
                                onclick: () => { blocked = blocked.filter(x => x !== b); renderBlocked() } },
                    _("Dismiss"))));
}

function renderBlocked() {
    $("blocked-list").replaceChildren(...blocked.map(blockedItem));
    $("blocked-empty").hidden = blocked.length > 0;
}

/* ---- profiles ---- */

function changesList(changes) {
    return el("ul", { class: "profile-changes" }, changes.map(([module, change, file]) =>
        el("li", { "data-module": module, "data-change": change },
           el("strong", null, module), " ", el("span", { class: "change" }, change), " ",
           el("code", { class: "file" }, file))));
}

function updateProfileButtons() {
    const name = $("profile").value;
    const hard = $("profile-hard").checked;
    let reason = null;
    if (permission.allowed === false)
        reason = _("Read-only: changing this needs administrative access.");
    else if (profileBusy)
        reason = _("Working…");
    else if (!profilePreview || profilePreview.name !== name || profilePreview.hard !== hard)
        reason = _("Preview the profile first.");
    else if (profilePreview.changes.length === 0)
        reason = _("Nothing to change.");
    $("profile-preview").disabled = profileBusy;
    $("profile-apply").disabled = reason !== null;
    const wrap = $("profile-apply-wrap");
    if (reason === null) {
        wrap.removeAttribute("title");
        delete wrap.dataset.reason;
    } else {
        wrap.title = reason;
        wrap.dataset.reason = reason;
    }
}

/* One ApplyProfile call: with DRY_RUN the preview, without it the change itself. */
function runProfile(dryRun) {
    const name = $("profile").value;
    const hard = $("profile-hard").checked;
    const result = $("profile-result");
    profileBusy = true;
    if (!dryRun)
        profilePreview = null;
    updateProfileButtons();
    call("ApplyProfile", [name, (hard ? HARD : 0) | (dryRun ? DRY_RUN : 0)], "st")
            .then(([changes]) => {
                if (dryRun)
                    profilePreview = { name, hard, changes };
                const what = format(dryRun ? (hard ? _("Applying $0 hard would write:") : _("Applying $0 would write:"))
                                           : (hard ? _("Applied $0 hard:") : _("Applied $0:")), name);
                result.replaceChildren(changes.length
                    ? el("div", { class: "profile-preview", "data-dry-run": dryRun ? "true" : "false" },
                         el("p", null, what), changesList(changes))
                    : el("p", { class: "empty" },
                         format(_("Nothing to change: every module of $0 is denied as asked already."), name)));
            })
            .catch(ex => {
                profilePreview = null;
                result.replaceChildren(errorBox(describeError(ex), () => result.replaceChildren()));
            })
            .finally(() => {
                profileBusy = false;
                updateProfileButtons();
                if (!dryRun)
                    loadAll();
            });
}

/* ---- Initramfs: fsgatectl, as an admin would run it (the History card is history.js) ---- */

let initramfsTimer = null;
let initramfsRun = 0;       /* the newest fsgatectl initramfs asked for: older answers are dropped */

function renderInitramfs(j) {
    const result = $("initramfs-result");

    $("initramfs-section").hidden = !j.generator;
    if (!j.generator)
        return;
    if (j.agrees) {
        result.replaceChildren(el("p", { class: "initramfs-agrees" },
                                  format(_("$0 ($1) agrees: every filesystem module it holds is denied or allowed there as here."),
                                         j.image, j.generator)));
        return;
    }
    const items = j.disagreements.map(d => el("li", { "data-module": d.module },
        format(_("$0: $1 here ($2), $3 in the initramfs ($4)"), d.module, STATE_LABELS[d.state] || d.state,
               d.deciding_file || "default", STATE_LABELS[d.state_inside] || d.state_inside,
               d.deciding_file_inside || "default")));
    const masks = j.disagreements.some(d => d.mask_not_copied);
    result.replaceChildren(
        el("div", { class: "pf-c-alert pf-m-warning pf-m-inline", role: "status" },
           el("p", { class: "pf-c-alert__title" }, format(_("$0 ($1) disagrees with the configuration:"), j.image, j.generator)),
           el("div", { class: "pf-c-alert__description" },
           el("ul", { class: "initramfs-disagreements" }, items),
           masks ? el("p", null, _("An allow by a /dev/null mask never reaches it: initramfs-tools copies only regular files of modprobe.d. Making it again does not change that; the module autoloads once the real root is mounted.")) : null,
           /* Printed, never run from here: making an initramfs is the admin's decision; only
            * where making it again would change something. */
           j.command ? el("p", null, _("To make it again from the configuration as it is now, run as root: "),
                          el("code", { class: "initramfs-command" }, j.command)) : null)));
}

function loadInitramfs() {
    const run = ++initramfsRun;
    const unchecked = message => {
        $("initramfs-section").hidden = false;
        $("initramfs-result").replaceChildren(
            el("p", { class: "initramfs-unchecked" }, format(_("The initramfs was not checked: $0"), message)));
    };
    const answer = out => {
        const j = parseJson(out);
        if (j && Array.isArray(j.disagreements))
            renderInitramfs(j);
        else
            unchecked(_("fsgatectl gave no answer"));
    };

    /* Exit status 9 (it disagrees) is an answer too: its JSON is the output. A look that
     * ends after a newer one started says nothing any more. */
    cockpit.spawn(["fsgatectl", "--json", "initramfs"], { superuser: "try", err: "message" })
            .then(out => {
                if (run === initramfsRun)
                    answer(out);
            })
            .catch((ex, out) => {
                if (run !== initramfsRun)
                    return;
                if (ex.exit_status === 9 && out)
                    answer(out);
                else
                    unchecked(ctlMessage(ex));
            });
}

/* Every change may make the initramfs disagree (or agree again); one look for a burst. */
function initramfsSoon() {
    clearTimeout(initramfsTimer);
    initramfsTimer = setTimeout(loadInitramfs, 1000);
}

/* ---- start ---- */

/* Follow Cockpit's own light/dark setting ("auto" follows the browser). */
function applyTheme() {
    let style = null;
    try {
        style = window.localStorage.getItem("shell:style");
    } catch (ex) { /* storage blocked: follow the browser */ }
    const dark = style === "dark" ||
        (style !== "light" && window.matchMedia("(prefers-color-scheme: dark)").matches);
    document.documentElement.classList.toggle("pf-theme-dark", dark);
}

function init() {
    /* The static texts of index.html marked translate="…". */
    cockpit.translate();
    applyTheme();
    window.addEventListener("storage", applyTheme);
    window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", applyTheme);
    $("filter").addEventListener("input", applyFilter);
    $("state-filter").addEventListener("change", applyFilter);
    $("refresh").addEventListener("click", () => { loadAll(); loadServiceInfo() });
    $("history-refresh").addEventListener("click", () => { loadHistory(); loadInitramfs() });
    $("history-filter").addEventListener("input", renderHistory);
    $("profile").addEventListener("change", updateProfileButtons);
    $("profile-hard").addEventListener("change", updateProfileButtons);
    $("profile-preview").addEventListener("click", () => runProfile(true));
    $("profile-apply").addEventListener("click", () => runProfile(false));
    setupObservation({
        call,
        describeError,
        errorBox,
        /* Stopping is offered to an administrator only; others read the notice. */
        canStop: () => (permission.allowed === true ? null : _("Read-only: changing this needs administrative access.")),
        /* The rows it names, and (after Stop observing) the modules' state and the history. */
        changed: () => { if (loaded) renderTable(); loadHistory() },
    });
    document.addEventListener("keydown", ev => {
        if (ev.key === "Escape" && panel)
            closePanel();
    });

    /* Administrative access turned on (or off) changes what fsgatectl may read. */
    permission.addEventListener("changed", () => { renderPermission(); loadHistory(); loadInitramfs() });

    client.subscribe({ path: PATH, interface: IFACE, member: "FilesystemChanged" },
                     (path, iface, signal, [module]) => { refreshOne(module); initramfsSoon() });
    client.subscribe({ path: PATH, interface: IFACE, member: "GrantEnded" },
                     (path, iface, signal, [id, module]) => { loadGrants(); refreshOne(module) });
    client.subscribe({ path: PATH, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged" },
                     (path, iface, signal, [changedIface]) => {
                         if (changedIface === IFACE) {
                             loadGrants();
                             loadOpenMedia();
                         }
                     });
    client.subscribe({ path: PATH, interface: IFACE, member: "Blocked" },
                     (path, iface, signal, [type, module, device, details]) => onBlocked(type, module, device, details));
    client.addEventListener("close", (ev, options) =>
        showPageError(_("Lost the connection to the system bus."), options || {}));

    /* Changes made outside fsgate (a file edited by hand, a module loaded) send no signal:
     * look again whenever the page becomes visible in Cockpit. */
    cockpit.addEventListener("visibilitychange", () => {
        if (!cockpit.hidden && loaded)
            loadAll();
    });

    renderPermission();
    loadServiceInfo();
    loadAll();
    loadGrants();
    loadOpenMedia();
    loadRoutes();
    loadHistory();
    loadInitramfs();
}

init();

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the page reads of fsgatectl run through cockpit.spawn (the History and Initramfs
 * cards): its --json output, and its --json error, which it writes as {"error", "message"}
 * on stderr (spawn's err: "message" puts that in the exception's message). */

/* fsgatectl's --json output, or null when it is not JSON (then the card says so). */
export function parseJson(out) {
    try {
        return JSON.parse(out);
    } catch (ex) {
        return null;
    }
}

/* The D-Bus error name in fsgatectl's --json error, "" without one. */
export function ctlErrorName(ex) {
    try {
        const j = JSON.parse(ex.message);
        return (j && j.error) || "";
    } catch (e) {
        return "";
    }
}

/* Its message, or Cockpit's own words for a failure that is not fsgatectl's. */
export function ctlMessage(ex) {
    try {
        const j = JSON.parse(ex.message);
        if (j && j.message)
            return j.message;
    } catch (e) { /* not fsgatectl's JSON */ }
    return cockpit.message(ex);
}

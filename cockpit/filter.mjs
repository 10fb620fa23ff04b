/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The module table's filter, apart from the page so that plain node tests it
 * (tests/cockpit/test-filter.mjs). The same rule as the YaST module's and, for globs, as
 * `fsgatectl list PATTERN`: a word matches a module's name first, then one of its types, and
 * only then the other words of its row (state, origin, file, risk). A word matches a name
 * where the name or a part of it after "_" or "-" begins ("qib" is ib_qib), never inside a
 * word: "hfs" is hfs and hfsplus, not ib_qib or squashfs, whose types ipathfs and squashfs
 * merely contain it. A word with * ? [ is a shell glob on the whole name ("*fat"). */

const GLOB = /[*?[]/;

function globRegExp(glob) {
    let re = "";
    for (let i = 0; i < glob.length; i++) {
        const c = glob[i];
        const close = c === "[" ? glob.indexOf("]", i + 2) : -1;
        if (c === "*")
            re += ".*";
        else if (c === "?")
            re += ".";
        else if (close > 0) {
            /* A bracket expression as fnmatch(3) has it: [!...] negates. */
            const body = glob.slice(i + 1, close).replace(/^!/, "^").replace(/\\/g, "\\\\");
            re += `[${body}]`;
            i = close;
        } else
            re += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
    }
    return new RegExp(`^${re}$`);
}

/* Whether word (lower case) matches name: a glob the whole name, else where it begins. */
export function nameMatches(word, name) {
    const names = [name.toLowerCase(), name.toLowerCase().replace(/_/g, "-")];
    if (GLOB.test(word)) {
        const re = globRegExp(word);
        return names.some(n => re.test(n));
    }
    return names.some(n => n.startsWith(word) || n.includes("_" + word) || n.includes("-" + word));
}

/* Whether word begins a word of text (a path, a phrase): "orphaned", "60-blacklist". */
function textMatches(word, text) {
    const t = text.toLowerCase();
    for (let i = t.indexOf(word); i >= 0; i = t.indexOf(word, i + 1))
        if (i === 0 || !/[a-z0-9]/.test(t[i - 1]))
            return true;
    return false;
}

/* How the row of e matches words (lower case, none empty), texts the other words its row
 * shows: null when one word matches nothing, else { type }, the first type a word matched
 * where the module name did not (null when none did). */
export function matchEntry(e, words, texts) {
    let type = null;
    for (const w of words) {
        if (nameMatches(w, e.module))
            continue;
        const t = e.types.find(n => nameMatches(w, n));
        if (t !== undefined) {
            type = type || t;
            continue;
        }
        if (!texts.some(text => text && textMatches(w, text)))
            return null;
    }
    return { type };
}

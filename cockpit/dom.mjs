/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The page's two DOM helpers, shared by fsgate.js and the parts apart from it (history.js,
 * observation.js): an element by id, and an element made with attributes and children. */

export const $ = id => document.getElementById(id);

/* attrs: "class", "onEVENT" (a listener), others as attributes (true: present, false, null or
 * undefined: left out); children: nodes, strings, arrays of them, null and false skipped. */
export function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
        if (v === undefined || v === null || v === false)
            continue;
        if (k === "class")
            node.className = v;
        else if (k.startsWith("on"))
            node.addEventListener(k.substring(2), v);
        else
            node.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children.flat()) {
        if (c === null || c === undefined || c === false)
            continue;
        node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return node;
}

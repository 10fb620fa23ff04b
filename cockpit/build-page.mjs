// SPDX-License-Identifier: LGPL-2.1-or-later
//
// node build-page.mjs NODE_MODULES OUTDIR
//
// Bundles the Cockpit page with esbuild: fsgate.css (PatternFly 4's base and the components
// the page uses, from NODE_MODULES/@patternfly/patternfly, then the page's own rules) and
// fsgate.js, into OUTDIR/fsgate.css and OUTDIR/fsgate.js. The PatternFly version is the one
// Debian 12's cockpit 287 builds its own pages with (package.json pins it), so the page
// looks like the shell around it, in light and dark.
//
// The output depends on the sources and the packages only: no paths, dates or hashes of
// the machine end up in it (tests/cockpit/check-bundle checks two builds byte for byte).

import { readFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL, fileURLToPath } from "node:url";

const [nodeModules, outdirArg] = process.argv.slice(2);
if (!nodeModules || !outdirArg) {
    console.error("usage: node build-page.mjs NODE_MODULES OUTDIR");
    process.exit(2);
}
const here = path.dirname(fileURLToPath(import.meta.url));
// esbuild resolves a relative outdir against absWorkingDir (the sources), not the caller.
const outdir = path.resolve(outdirArg);
const esbuild = await import(pathToFileURL(path.join(nodeModules, "esbuild", "lib", "main.js")).href);

// PatternFly's base declares @font-face rules for fonts in its own assets; Cockpit serves
// the same Red Hat fonts to every page from /cockpit/static/fonts (fsgate.css names them),
// and a second copy of 2 MB of fonts per page would be waste. The rules are dropped here;
// nothing else of PatternFly is changed.
const dropFontFaces = {
    name: "drop-patternfly-font-faces",
    setup(build) {
        build.onLoad({ filter: /[\\/]@patternfly[\\/]patternfly[\\/].*\.css$/ }, async args => {
            const css = await readFile(args.path, "utf8");
            return { contents: css.replace(/@font-face\s*\{[^}]*\}/g, ""), loader: "css" };
        });
    },
};

const common = {
    outdir,
    bundle: true,
    nodePaths: [nodeModules],
    // Cockpit's fonts: a URL on the server, not a file to bundle.
    external: ["../../static/*"],
    absWorkingDir: here,
    target: ["chrome100", "firefox100", "safari15"],
    charset: "utf8",
    logLevel: "warning",
};

// The script as written (readable in the browser's debugger), with the modules it imports
// (filter.mjs and observation.js, apart so that node tests them; dom.mjs, fsgatectl.mjs, history.js).
await esbuild.build({
    ...common,
    entryPoints: [path.join(here, "fsgate.js")],
    format: "iife",
    minify: false,
    // esbuild keeps only /*! comments: the source's SPDX line would be lost.
    banner: { js: "/*! SPDX-License-Identifier: LGPL-2.1-or-later (fsgate's Cockpit page) */" },
});

// PatternFly's npm package carries its license (MIT) only in package.json: the built style
// sheet names it in a header of its own.
const pf = JSON.parse(await readFile(path.join(nodeModules, "@patternfly", "patternfly", "package.json"), "utf8"));
const banner = `/*! fsgate's Cockpit page (LGPL-2.1-or-later). It bundles ${pf.name} ${pf.version} ` +
    `(${pf.license}, Copyright Red Hat, Inc., ${pf.homepage || "https://www.patternfly.org"}). */`;

// The styles minified: esbuild's unminified CSS names each source file by its path, and the
// packages' path is the cache's, which differs between machines.
await esbuild.build({
    ...common,
    entryPoints: [path.join(here, "fsgate.css")],
    minify: true,
    legalComments: "eof",
    banner: { css: banner },
    // The few images PatternFly's components point at (form controls' status icons) go into
    // the style sheet itself: one file less to install and serve.
    loader: { ".svg": "dataurl", ".png": "dataurl" },
    plugins: [dropFontFaces],
});

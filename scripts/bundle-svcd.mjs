// Bundles svcd (dist/cli/main.js and everything the daemon imports) into
// one file, dist/bundle/svcd.mjs, which bin/svcd.js runs, and the thread of
// its config worker (dist/api/configThread.js) into dist/bundle/configThread.mjs
// beside it, where src/api/configWorker.ts looks for it. Part of
// `npm run build:ts`, right after tsc.
//
// Why: loading ~170 files of the daemon and its packages one module at a
// time took ~200 ms of every daemon start (resolution, reads, one compile
// per file); the single file loads in ~100 ms. `svc` (the client) keeps
// the per-file dist/: it loads only what a command needs.
//
// Usage: node scripts/bundle-svcd.mjs [DIST]   (default: dist/ of this repo)
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dist = resolve(process.argv[2] ?? join(root, "dist"));
const entries = { svcd: join(dist, "cli", "main.js"), configThread: join(dist, "api", "configThread.js") };
for (const entry of Object.values(entries)) {
  if (!existsSync(entry)) {
    console.error(`bundle-svcd: ${entry} is missing: run tsc first (npm run build:ts)`);
    process.exit(1);
  }
}

await build({
  // Each output holds all it imports (no shared chunks): the thread loads one file too.
  entryPoints: entries,
  // Two levels below the package, like dist/cli/main.js and dist/daemon/main.js,
  // so their import.meta.url-relative paths (../../package.json, ../web) still hold.
  outdir: join(dist, "bundle"),
  outExtension: { ".js": ".mjs" },
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  // No keepNames: it wrapped every closure the daemon creates in a __name()
  // call (a property definition and an allocation each time: ~15 a started
  // job). Names stay as written anyway, except where two modules' top-level
  // names collide: esbuild then suffixes one (the client's ApiError is
  // ApiError2 in this bundle; the daemon's own error classes are unique).
  // No comments or indentation: the source V8 keeps in memory for the life of
  // the daemon is 1.8 MB instead of 2.9 MB, and one byte per character instead
  // of two (a single non-ASCII character in a comment, such as luxon's
  // examples, made it a 5.8 MB two-byte string). A smaller daemon also forks
  // its jobs faster (the page tables fork copies). Stack traces then give
  // line 1 and a column, with the function names.
  minifyWhitespace: true,
  // A source map beside the bundle (svcd.mjs.map, through tsc's own maps back to
  // src/*.ts, sources included): Node reads it only when asked, so it costs the
  // daemon nothing; `NODE_OPTIONS=--enable-source-maps svcd ...` maps a stack
  // trace to the sources (docs/ARCHITECTURE.md).
  sourcemap: "linked",
  sourcesContent: true,
  // Licence comments of the bundled packages go to svcd.mjs.LEGAL.txt.
  legalComments: "external",
  logLevel: "warning",
  external: [
    // native addon
    "better-sqlite3",
    // loaded only when needed (the first mail, dashboard assets): they stay lazy
    "nodemailer",
    "@fastify/static",
    // pino's transports find their worker files through __dirname, which a bundle does not have
    "pino",
    // External since keepNames (no longer used) made its dateformat rename
    // ~40 closures a log line; it loads from node_modules as before.
    "pino-pretty",
  ],
  // The bundled CommonJS packages call require() for Node's built-ins.
  banner: { js: 'import { createRequire as __svcCreateRequire } from "node:module";\nconst require = __svcCreateRequire(import.meta.url);' },
});

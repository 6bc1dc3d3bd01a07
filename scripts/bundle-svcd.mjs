// Bundles svcd (dist/cli/main.js and everything the daemon imports) into
// one file, dist/bundle/svcd.mjs, which bin/svcd.js runs. Part of
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
const entry = join(dist, "cli", "main.js");
if (!existsSync(entry)) {
  console.error(`bundle-svcd: ${entry} is missing: run tsc first (npm run build:ts)`);
  process.exit(1);
}

await build({
  entryPoints: [entry],
  // Two levels below the package, like dist/cli/main.js and dist/daemon/main.js,
  // so their import.meta.url-relative paths (../../package.json, ../web) still hold.
  outfile: join(dist, "bundle", "svcd.mjs"),
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  // Class and function names stay as written (logged error types, stack traces).
  keepNames: true,
  logLevel: "warning",
  external: [
    // native addon
    "better-sqlite3",
    // loaded only when needed (the first mail, dashboard assets): they stay lazy
    "nodemailer",
    "@fastify/static",
    // pino's transports find their worker files through __dirname, which a bundle does not have
    "pino",
    // It formats every log line through dateformat, which builds ~40 named
    // closures a call: bundled, keepNames would rename each one at run time
    // (400,000 extra calls for the 10,000 next-run lines of a startup).
    "pino-pretty",
  ],
  // The bundled CommonJS packages call require() for Node's built-ins.
  banner: { js: 'import { createRequire as __svcCreateRequire } from "node:module";\nconst require = __svcCreateRequire(import.meta.url);' },
});

#!/usr/bin/env node
import { statSync } from "node:fs";

// `svcd` is `svc daemon run`: the daemon in the foreground. It runs the
// one-file bundle that `npm run build:ts` makes (scripts/bundle-svcd.mjs:
// it starts ~150 ms sooner), unless tsc rebuilt dist/ after the bundle was
// made: then the bundle is stale and the per-file build runs instead.
const { main } = await import(bundleIsCurrent() ? "../dist/bundle/svcd.mjs" : "../dist/cli/main.js");
main(["daemon", "run", ...process.argv.slice(2)]);

function bundleIsCurrent() {
  try {
    const mtime = (path) => statSync(new URL(path, import.meta.url)).mtimeMs;
    return mtime("../dist/bundle/svcd.mjs") >= mtime("../dist/.tsbuildinfo");
  } catch {
    return false;
  }
}

// `npm pack` / `npm publish` ship package-lock.json as npm-shrinkwrap.json
// (prepack writes it, postpack removes it; `--remove` removes it).
//
// Why: an `npm install -g` of the package resolves its dependencies afresh,
// without our lock file, and without our `overrides` (npm reads overrides
// from the root project only, which a global install is not). Fresh
// resolution pulled light-my-request 7 and cookie 2, which need Node 22:
// the installed svc would not run on Node 20. A shrinkwrap is the lock file
// npm honours for an installed package, so users get the versions the tests
// ran with (test/install/newcomer.test.ts checks this through a real
// `npm pack` and `npm install -g`).
import { copyFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const shrinkwrap = join(root, "npm-shrinkwrap.json");
if (process.argv.includes("--remove")) rmSync(shrinkwrap, { force: true });
else copyFileSync(join(root, "package-lock.json"), shrinkwrap);

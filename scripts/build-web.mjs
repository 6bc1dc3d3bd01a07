// Builds the dashboard (src/web) with Vite into dist/web. Part of `npm install`
// through the `prepare` script, so a fresh clone serves the real dashboard.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const webRoot = join(root, "src", "web");
if (!existsSync(join(webRoot, "index.html"))) {
  console.log("build:web: no dashboard sources yet (src/web/index.html), skipped");
  process.exit(0);
}
const { build } = await import("vite");
await build({ root: webRoot, configFile: join(webRoot, "vite.config.ts"), logLevel: "warn" });

/**
 * Debian's chromium for the browser tests (playwright-core drives it; never
 * `npx playwright install`). CHROMIUM_PATH names another binary.
 */
import { existsSync } from "node:fs";
import type { Requirement } from "./skip.js";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
  "--disable-sync",
];

/** For describeUnless: skipped with the reason without chromium, a failure under CI=true (.ci/run installs it). */
export const NEEDS_CHROMIUM: Requirement = {
  missing: existsSync(CHROMIUM) ? null : `needs chromium: ${CHROMIUM} is missing (apt-get install -y --no-install-recommends chromium, or set CHROMIUM_PATH)`,
  requiredInCI: true,
};

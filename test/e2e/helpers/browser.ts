/**
 * Debian's chromium for the dashboard's browser tests (playwright-core
 * drives it; `npx playwright install` is never used). Without the browser
 * the suites are skipped locally and fail in CI. Screenshots go to a temp
 * directory, or to docs/screenshots/ with SVC_SCREENSHOTS=1 (how the
 * committed ones are made).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { ROOT } from "../../helpers/daemonKit.js";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const HAVE_CHROMIUM = existsSync(CHROMIUM);
if (!HAVE_CHROMIUM && process.env.CI) throw new Error(`${CHROMIUM} is missing: apt-get install -y --no-install-recommends chromium`);

export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
  "--disable-sync",
];

export function launch(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/** Builds dist/web when it is missing (the e2e suites need the built dashboard). */
export function ensureDashboardBuilt(): void {
  if (!existsSync(join(ROOT, "dist", "web", "index.html"))) {
    execFileSync(process.execPath, [join(ROOT, "scripts", "build-web.mjs")], { cwd: ROOT, stdio: "inherit" });
  }
}

/** Where screenshots go: docs/screenshots with SVC_SCREENSHOTS=1, else `fallback`. */
export function shotsDir(fallback: string): string {
  const dir = process.env.SVC_SCREENSHOTS ? join(ROOT, "docs", "screenshots") : fallback;
  mkdirSync(dir, { recursive: true });
  return dir;
}

export async function shot(page: Page, dir: string, name: string): Promise<void> {
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
}

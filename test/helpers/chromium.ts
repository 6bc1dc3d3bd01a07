/**
 * Debian's chromium for the browser tests (playwright-core drives it; never
 * `npx playwright install`). CHROMIUM_PATH names another binary. Without the
 * browser the suites are skipped with the reason (describeUnless) locally
 * and fail under CI=true. Screenshots go to a temp directory, or to
 * docs/screenshots/ with SVC_SCREENSHOTS=1 (how the committed ones are made).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, expect } from "vitest";
import { project, ROOT, startDaemon, type DaemonProc } from "./daemonKit.js";
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

/** Headless chromium with the arguments above. */
export function launch(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/** Builds dist/web when it is missing (the browser tests need the built dashboard). */
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

/** A full-page screenshot `name`.png in `dir`. */
export async function shot(page: Page, dir: string, name: string): Promise<void> {
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
}

/** expect.poll with room for a loaded machine: what a page shows may take seconds to settle there (the default gives up after 1 s). */
export const poll = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 10_000 });

export interface BrowserRig {
  /** The daemon, started from the built svcd on the project. */
  readonly d: DaemonProc;
  readonly browser: Browser;
  /** A temp directory removed after the suite (the project is below it). */
  readonly tmp: string;
  /** Where shot() writes: a temp directory, or docs/screenshots with SVC_SCREENSHOTS=1. */
  readonly shots: string;
}

/**
 * Registers, in the calling describe, the setup every dashboard browser
 * suite shares: the built dashboard, a temp project with `yaml` as svc.yaml
 * (`prepare` may write more into it, such as a seeded database, before the
 * daemon starts), a real svcd on it and headless chromium; all are stopped
 * and removed after the suite. The fields are set once the suite's
 * beforeAll hooks run (the suite's own come after this one's).
 */
export function browserRig(prefix: string, yaml: string, prepare?: (projectDir: string) => void): BrowserRig {
  const rig = {} as { -readonly [K in keyof BrowserRig]: BrowserRig[K] };
  beforeAll(async () => {
    ensureDashboardBuilt();
    rig.tmp = mkdtempSync(join(tmpdir(), prefix));
    rig.shots = shotsDir(join(rig.tmp, "shots"));
    const dir = project(yaml, { dir: mkdtempSync(join(rig.tmp, "p-")) });
    prepare?.(dir);
    rig.d = await startDaemon(dir);
    rig.browser = await launch();
  }, 60_000);
  afterAll(async () => {
    await rig.browser?.close();
    await rig.d?.stop();
    if (rig.tmp) rmSync(rig.tmp, { recursive: true, force: true });
  });
  return rig;
}

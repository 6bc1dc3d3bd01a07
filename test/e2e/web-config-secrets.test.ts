/**
 * The dashboard's config editor and secrets (CONTRACT §7.5), in real
 * headless Chromium against the built svcd under bearer auth:
 * - a viewer sees svc.yaml and svcd.yaml read-only with every secret `***`,
 *   no editor and no save button, and no answer the page received holds a
 *   secret;
 * - an admin edits the text as it is on disk (`?raw=1`): a save keeps every
 *   secret; pasting the redacted text and saving is refused at the lines of
 *   the `***` placeholders, and the file stays as it was.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { CHROMIUM, CHROMIUM_ARGS, NEEDS_CHROMIUM } from "../helpers/chromium.js";
import { cleanup, project, ROOT, startDaemon, type DaemonProc } from "../helpers/daemonKit.js";
import { describeUnless } from "../helpers/skip.js";


const ADMIN = "web-admin-token-5c1e";
const VIEWER = "web-viewer-token-8d2f";
const SECRETS = ["block-scalar-SECRET-1", "block-scalar-SECRET-2", "hook-SECRET-path-3", "global-env-SECRET-4"];

const SVC = `integrations:
  hooks: {provider: webhook, webhook_url: "http://127.0.0.1:9/${SECRETS[2]}"}
jobs:
  extract:
    description: Pull rows
    command: echo hi
    env:
      DB_PASSWORD: |
        ${SECRETS[0]}
        ${SECRETS[1]}
    frequency: manual
`;

const DAEMON = `auth:
  type: bearer
  bearer:
    token_file: tokens
executor:
  global_env:
    API_KEY:
      ${SECRETS[3]}
`;

/** Skipped with the reason without chromium; under CI=true (.ci/run) a missing chromium fails the file. */
const suite = (name: string, fn: () => void) => describeUnless(NEEDS_CHROMIUM, name, fn);

suite("config editor and secrets in the browser", () => {
  let dir: string;
  let d: DaemonProc;
  let browser: Browser;

  beforeAll(async () => {
    if (!existsSync(join(ROOT, "dist", "web", "index.html"))) throw new Error("dist/web is not built: npm run build:web");
    dir = project(SVC, { daemon: DAEMON, files: { tokens: `${ADMIN} admin\n${VIEWER} viewer\n` } });
    d = await startDaemon(dir);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await d?.stop();
    if (dir) cleanup(dir);
  });

  /** A signed-in page on #/config, recording the body of every API answer it gets. */
  async function configPage(token: string): Promise<{ page: Page; context: BrowserContext; answers: string[] }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(10_000);
    await context.addInitScript({ content: `sessionStorage.setItem("svc.token", ${JSON.stringify(token)});` });
    const page = await context.newPage();
    const answers: string[] = [];
    page.on("response", (r) => {
      if (new URL(r.url()).pathname.startsWith("/api/")) void r.text().then((t) => answers.push(`${r.url()} ${r.status()} ${t}`), () => undefined);
    });
    await page.goto(`${d.base}/#/config`);
    return { page, context, answers };
  }

  it("a viewer gets both files read-only with the secrets ***, no editor, and no secret in any answer", async () => {
    const { page, context, answers } = await configPage(VIEWER);
    const view = page.getByLabel("svc.yaml (read-only)");
    await view.waitFor();
    const text = await view.innerText();
    expect(text).toContain("DB_PASSWORD: \"***\"");
    expect(text).toContain('webhook_url: "***"');
    expect(text.split("\n").length).toBeGreaterThanOrEqual(SVC.trimEnd().split("\n").length);
    await page.getByTestId("read-only-reason").getByText("POST /api/config/save").waitFor();
    expect(await page.getByRole("textbox", { name: "svc.yaml" }).count()).toBe(0);
    expect(await page.getByRole("button", { name: "Save and reload" }).count()).toBe(0);
    const daemonText = page.getByLabel("svcd.yaml", { exact: true });
    await daemonText.waitFor();
    expect(await daemonText.innerText()).toContain('API_KEY:\n      "***"');
    await page.getByText("Effective svc.yaml").waitFor();
    await page.waitForLoadState("networkidle");
    const html = await page.content();
    expect(answers.some((a) => a.includes("/api/config/source?raw=1 403"))).toBe(true);
    for (const s of SECRETS) {
      expect(html).not.toContain(s);
      for (const a of answers) expect(a).not.toContain(s);
    }
    await context.close();
  });

  it("an admin edits the file as written and a save keeps every secret; the redacted text is never saved over them", async () => {
    const { page, context } = await configPage(ADMIN);
    const editor = page.getByRole("textbox", { name: "svc.yaml" });
    await editor.waitFor();
    const raw = await editor.inputValue();
    expect(raw).toBe(SVC);

    // A user who pastes the text a viewer sees (secrets ***) and saves: refused at each placeholder's line.
    const redacted = await d.api<{ content: string }>("GET", "/api/config/source", undefined, { authorization: `Bearer ${ADMIN}` });
    await editor.fill(redacted.body.content.replace("Pull rows", "Pull rows (pasted)"));
    await page.getByRole("button", { name: "Save and reload" }).click();
    await page.getByText("Not saved").first().waitFor();
    const lineOf = (needle: string) => SVC.split("\n").findIndex((l) => l.includes(needle)) + 1;
    for (const needle of ["webhook_url", "DB_PASSWORD"]) {
      await page.locator("#editor-issues li.issue-error", { hasText: `svc.yaml:${lineOf(needle)}:` }).waitFor();
    }
    await page.locator(".gl-error", { hasText: String(lineOf("DB_PASSWORD")) }).waitFor();
    expect(readFileSync(join(dir, "svc.yaml"), "utf8")).toBe(SVC);

    // Editing the raw text keeps the secrets.
    await page.getByRole("button", { name: "Revert" }).click();
    await editor.fill(raw.replace("Pull rows", "Pull rows (edited)"));
    await page.getByRole("button", { name: "Save and reload" }).click();
    await page.getByText("svc.yaml saved and reloaded").waitFor();
    const saved = readFileSync(join(dir, "svc.yaml"), "utf8");
    expect(saved).toBe(SVC.replace("Pull rows", "Pull rows (edited)"));
    for (const s of SECRETS.slice(0, 3)) expect(saved).toContain(s);
    await context.close();
    // The raw read is in the daemon log with the principal, the text is not.
    expect(d.output()).toMatch(/config text with secrets read through the API \(\?raw=1\).*by token:[0-9a-f]{8} \(role admin\)/);
    for (const s of SECRETS) expect(d.output()).not.toContain(s);
  }, 60_000);
});

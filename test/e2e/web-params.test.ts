/**
 * The run dialog's params form in Debian's chromium against the built svcd
 * (CONTRACT §7.2): typed inputs from the declaration, an enum as a select,
 * required marked, the daemon's validation message beside its field, and a
 * run started with the typed values.
 */
import { createHash } from "node:crypto";
import { expect, it } from "vitest";
import { until } from "../helpers/daemonKit.js";
import { browserRig, NEEDS_CHROMIUM, poll, shot } from "../helpers/chromium.js";
import { describeUnless } from "../helpers/skip.js";

const YAML = `jobs:
  report:
    frequency: manual
    command: echo "day=$SVC_PARAM_DAY limit=$SVC_PARAM_LIMIT dry=$SVC_PARAM_DRY mode=$SVC_PARAM_MODE token_md5=$(printf %s "$SVC_PARAM_TOKEN" | md5sum | cut -c1-12)"
    params:
      day: {pattern: "[0-9]{4}-[0-9]{2}-[0-9]{2}", description: the day to report}
      limit: {type: integer, default: 10}
      dry: {type: boolean, default: false}
      mode: {type: enum, values: [full, incremental], default: full}
      token: {secret: true, default: tok-default-9f3a, description: the API token}
`;

const suite = (name: string, fn: () => void) => describeUnless(NEEDS_CHROMIUM, name, fn);

suite("the run dialog's params form", () => {
  const rig = browserRig("svc-web-params-", YAML);

  it("typed inputs, enum select, required marked; a bad value's message beside its field; then a run with the values", async () => {
    const context = await rig.browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    await page.goto(`${rig.d.base}/#/jobs/report`);
    await page.getByRole("button", { name: /^run…$/i }).click();
    const dialog = page.getByRole("dialog");
    await poll(() => dialog.locator("[data-param]").count()).toBe(5);
    expect(await dialog.locator("#param-day").getAttribute("type")).toBe("text");
    expect(await dialog.locator("#param-day").getAttribute("aria-required")).toBe("true");
    expect(await dialog.locator('[data-param="day"] .required').count()).toBe(1);
    expect(await dialog.locator('[data-param="limit"] .required').count()).toBe(0);
    expect(await dialog.locator("#param-limit").getAttribute("type")).toBe("number");
    expect(await dialog.locator("#param-limit").inputValue()).toBe("10");
    expect(await dialog.locator("#param-dry").getAttribute("type")).toBe("checkbox");
    expect(await dialog.locator("#param-mode").evaluate((e) => e.tagName)).toBe("SELECT");
    expect(await dialog.locator("#param-mode option").allTextContents()).toEqual(["full", "incremental"]);
    expect(await dialog.locator('[data-param="day"] .hint').last().textContent()).toBe("the day to report");
    // A secret param: a password input, its default never sent to the page.
    expect(await dialog.locator("#param-token").getAttribute("type")).toBe("password");
    expect(await dialog.locator("#param-token").inputValue()).toBe("");
    expect(await page.content()).not.toContain("tok-default-9f3a");

    await dialog.locator("#param-day").fill("soon");
    await dialog.getByRole("button", { name: /^run now$/i }).click();
    const err = dialog.locator("#param-day-error");
    await poll(() => err.textContent()).toMatch(/must match the pattern/);
    expect(await dialog.locator("#param-day").getAttribute("aria-invalid")).toBe("true");
    await shot(page, rig.shots, "run-params");
    const before = (await rig.d.api<{ total: number }>("GET", "/api/audit?job=report")).body.total;
    expect(before).toBe(0);

    await dialog.locator("#param-day").fill("2026-11-01");
    await dialog.locator("#param-limit").fill("25");
    await dialog.locator("#param-dry").check();
    await dialog.locator("#param-mode").selectOption("incremental");
    await dialog.locator("#param-token").fill("tok-typed-77c1");
    await dialog.getByRole("button", { name: /^run now$/i }).click();
    const run = await until("the run", async () => {
      const r = await rig.d.api<{ runs: { id: number; status: string; params: Record<string, unknown> }[] }>("GET", "/api/audit?job=report");
      return r.body.runs.find((x) => x.status === "SUCCESS");
    });
    expect(run.params).toEqual({ day: "2026-11-01", limit: 25, dry: true, mode: "incremental", token: "***" });
    // The typed secret reached the job (its log) and is shown nowhere on the run's page.
    const log = await rig.d.api<{ lines: { line: string }[] }>("GET", `/api/runs/${run.id}/logs`);
    expect(log.body.lines.map((l) => l.line).join("\n")).toContain(
      `day=2026-11-01 limit=25 dry=true mode=incremental token_md5=${createHash("md5").update("tok-typed-77c1").digest("hex").slice(0, 12)}`,
    );
    await page.goto(`${rig.d.base}/#/runs/${run.id}`);
    await poll(() => page.locator("[data-run-params]").textContent()).toContain("incremental");
    expect(await page.content()).not.toContain("tok-typed-77c1");

    // "Run again…" starts from this run's values (the secret one empty: its default is used). Until the job's
    // declarations are read, "Run now" waits: sent without them, the run would silently take the defaults.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const declarations = (url: URL) => url.pathname.endsWith("/api/jobs/report") && url.searchParams.get("runs") === "0";
    await page.route(declarations, async (route) => {
      await held;
      await route.continue();
    });
    await page.getByRole("button", { name: /^run again…$/i }).click();
    const again = page.getByRole("dialog", { name: "Run report now" });
    await again.waitFor();
    expect(await again.getByRole("button", { name: /^run now$/i }).isDisabled()).toBe(true);
    release();
    await poll(() => again.getByRole("button", { name: /^run now$/i }).isEnabled()).toBe(true);
    await page.unroute(declarations);
    await poll(() => again.locator("#param-day").inputValue()).toBe("2026-11-01");
    expect(await again.locator("#param-limit").inputValue()).toBe("25");
    expect(await again.locator("#param-dry").isChecked()).toBe(true);
    expect(await again.locator("#param-mode").inputValue()).toBe("incremental");
    expect(await again.locator("#param-token").inputValue()).toBe("");
    expect(await again.locator("[data-run-again]").textContent()).toContain(`run #${run.id}`);
    await again.locator("#param-limit").fill("30");
    await again.getByRole("button", { name: /^run now$/i }).click();
    const second = await until("the second run", async () => {
      const r = await rig.d.api<{ runs: { id: number; status: string; params: Record<string, unknown> }[] }>("GET", "/api/audit?job=report");
      return r.body.runs.find((x) => x.id !== run.id && x.status === "SUCCESS");
    });
    expect(second.params).toEqual({ day: "2026-11-01", limit: 30, dry: true, mode: "incremental", token: "***" });
    const log2 = await rig.d.api<{ lines: { line: string }[] }>("GET", `/api/runs/${second.id}/logs`);
    expect(log2.body.lines.map((l) => l.line).join("\n")).toContain(`limit=30 dry=true mode=incremental token_md5=${createHash("md5").update("tok-default-9f3a").digest("hex").slice(0, 12)}`);
    await context.close();
  });
});

/**
 * Backfills in the dashboard (CONTRACT §7.3, issue 21 item 6, issue 23 item 4)
 * in Debian's chromium against the built svcd: started from the job page
 * (preview with DST notes, the daemon's messages beside the fields, params
 * from the declaration), its own page (progress, its runs, cancel), reached
 * from the runs tables and the audit view, where `backfill` is a trigger
 * filter value and a param value filters the runs.
 */
import { createRequire } from "node:module";
import type { Page } from "playwright-core";
import { expect, it } from "vitest";
import { until } from "../helpers/daemonKit.js";
import { browserRig, NEEDS_CHROMIUM, poll, shot } from "../helpers/chromium.js";
import { describeUnless } from "../helpers/skip.js";

const YAML = `jobs:
  tick:
    command: echo "slot=$SVC_SCHEDULED_AT region=$SVC_PARAM_REGION"; sleep 3
    frequency: hourly
    timezone: UTC
    concurrency: forbid
    params:
      region: {type: enum, values: [eu, us], default: eu}
      token: {secret: true, default: bf-secret-default-51d0}
  nightly:
    command: "true"
    frequency: daily
    time: "0230"
    timezone: America/New_York
  later:
    command: "true"
    frequency: manual
`;

interface RunRow {
  id: number;
  status: string;
  trigger: string;
  scheduled_at: string | null;
  backfill_id: number | null;
  error: string | null;
  params: Record<string, unknown>;
}

const suite = (name: string, fn: () => void) => describeUnless(NEEDS_CHROMIUM, name, fn);

suite("backfills in the dashboard", () => {
  const rig = browserRig("svc-web-backfill-", YAML);

  async function page(): Promise<Page> {
    const context = await rig.browser.newContext({ viewport: { width: 1280, height: 1000 } });
    context.setDefaultTimeout(15_000);
    return context.newPage();
  }

  it("the job page's preview lists the slots with their DST notes; a manual job offers no backfill", async () => {
    const p = await page();
    await p.goto(`${rig.d.base}/#/jobs/nightly`);
    await p.getByRole("button", { name: /^backfill…$/i }).click();
    const dialog = p.getByRole("dialog", { name: /backfill nightly/i });
    await dialog.getByLabel("From (included)").fill("2025-03-07");
    await dialog.getByLabel("To (excluded)").fill("2025-03-11");
    await dialog.getByRole("button", { name: /preview slots/i }).click();
    const rows = dialog.locator("[data-preview] tr[data-slot]");
    await poll(() => rows.count()).toBe(4);
    const plan = await rig.d.api<{ slots: { utc: string; note: string | null }[] }>("POST", "/api/jobs/nightly/backfill", {
      from: "2025-03-07",
      to: "2025-03-11",
      dry_run: true,
    });
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-slot")))).toEqual(plan.body.slots.map((s) => s.utc));
    const gap = plan.body.slots.find((s) => s.note !== null)!;
    expect(gap.note).toMatch(/DST gap/);
    expect(await dialog.locator(`tr[data-slot="${gap.utc}"]`).textContent()).toContain(gap.note);
    await shot(p, rig.shots, "backfill-dialog");
    expect(await dialog.locator("[data-preview-after-now]").count()).toBe(0);
    // A range reaching past now: the past slots, and a note that the later ones are the scheduler's.
    const day = 86_400_000;
    const today = Math.floor(Date.now() / day) * day;
    await dialog.getByLabel("From (included)").fill(new Date(today - 3 * day).toISOString().slice(0, 10));
    await dialog.getByLabel("To (excluded)").fill(new Date(today + 4 * day).toISOString().slice(0, 10));
    await dialog.getByRole("button", { name: /preview slots/i }).click();
    await poll(() => dialog.locator("[data-preview-after-now]").textContent()).toMatch(/[1-9]\d* later slots? (is|are) still ahead: the scheduler runs (it|them) at (its|their) time\./);
    const times = await rows.evaluateAll((trs) => trs.map((tr) => Date.parse(tr.getAttribute("data-slot")!)));
    expect(times.length).toBeGreaterThan(0);
    expect(times.every((t) => t <= Date.now())).toBe(true);
    // A dry run creates nothing.
    expect((await rig.d.api<{ total: number }>("GET", "/api/backfills")).body.total).toBe(0);
    await p.context().close();

    const q = await page();
    await q.goto(`${rig.d.base}/#/jobs/later`);
    await q.getByRole("heading", { name: "later", level: 1 }).waitFor();
    expect(await q.getByRole("button", { name: /^backfill…$/i }).count()).toBe(0);
    await q.context().close();
  });

  it("start from the job page, follow it on its page, reach it from the runs and the audit view, cancel it", async () => {
    const p = await page();
    await p.goto(`${rig.d.base}/#/jobs/tick`);
    await p.getByRole("button", { name: /^backfill…$/i }).click();
    const dialog = p.getByRole("dialog", { name: /backfill tick/i });
    // The params form of the declaration, the secret one a password input with its default unsent.
    await poll(() => dialog.locator("[data-param]").count()).toBe(2);
    expect(await dialog.locator("#param-region").evaluate((e) => e.tagName)).toBe("SELECT");
    expect(await dialog.locator("#param-token").getAttribute("type")).toBe("password");
    expect(await p.content()).not.toContain("bf-secret-default-51d0");

    // The daemon's messages beside their fields; nothing created.
    await dialog.getByLabel("From (included)").fill("last tuesday");
    await dialog.getByLabel("To (excluded)").fill("2026-11-01T06:00:00Z");
    await dialog.getByRole("button", { name: /start backfill/i }).click();
    await poll(() => dialog.locator("#bf-from-error").textContent()).toMatch(/ISO 8601 date or instant/);
    expect(await dialog.locator("#bf-from").getAttribute("aria-invalid")).toBe("true");
    expect(await dialog.locator("#bf-to-error").count()).toBe(0);
    expect((await rig.d.api<{ total: number }>("GET", "/api/backfills")).body.total).toBe(0);

    await dialog.getByLabel("From (included)").fill("2026-11-01T00:00:00Z");
    await dialog.locator("#param-region").selectOption("us");
    await dialog.getByRole("button", { name: /start backfill/i }).click();

    // Its own page: the hash moves there, progress counts up while runs go one at a time.
    await p.waitForURL(/#\/backfills\/\d+$/);
    const id = Number(/#\/backfills\/(\d+)$/.exec(p.url())![1]);
    await p.getByRole("heading", { name: `Backfill #${id}`, level: 1 }).waitFor();
    const b = await rig.d.api<{ job: string; total: number; params: Record<string, unknown> }>("GET", `/api/backfills/${id}`);
    expect(b.body).toMatchObject({ job: "tick", total: 6, params: { region: "us", token: "***" } });
    await expect.poll(() => p.locator("[data-progress]").textContent(), { timeout: 20_000 }).toMatch(/^[1-5]\/6 finished$/);
    expect(await p.locator("progress").getAttribute("max")).toBe("6");
    const runRows = p.locator("table").filter({ has: p.locator("caption", { hasText: `Runs of backfill #${id}` }) }).locator("tbody tr");
    await poll(() => runRows.count()).toBe(6);
    expect(await runRows.first().textContent()).toContain("region=us");
    expect(await runRows.first().textContent()).toContain("token=***");
    await shot(p, rig.shots, "backfill");

    // Cancel: its waiting runs end SKIPPED, the running one finishes.
    await p.getByRole("button", { name: /cancel backfill…/i }).click();
    await p.getByRole("dialog", { name: `Cancel backfill #${id}?` }).getByRole("button", { name: /^cancel backfill$/i }).click();
    await expect.poll(() => p.locator(".view-head .badge").textContent(), { timeout: 20_000 }).toMatch(/cancelled/);
    const runs = await until("every run of the backfill ended", async () => {
      const r = await rig.d.api<{ runs: RunRow[] }>("GET", `/api/audit?backfill_id=${id}&limit=100`);
      return r.body.runs.every((x) => ["SUCCESS", "SKIPPED"].includes(x.status)) ? r.body.runs : null;
    });
    const skipped = runs.filter((x) => x.status === "SKIPPED");
    expect(skipped.length).toBeGreaterThan(0);
    expect(skipped.every((x) => x.error === "backfill cancelled")).toBe(true);
    const ok = runs.filter((x) => x.status === "SUCCESS").length;
    await poll(() => p.locator("[data-progress]").textContent()).toBe("6/6 finished");
    expect(await p.locator('[data-status="SKIPPED"] strong').textContent()).toBe(String(skipped.length));
    expect(await p.locator('[data-status="SUCCESS"] strong').textContent()).toBe(String(ok));
    expect(await p.getByRole("button", { name: /cancel backfill…/i }).count()).toBe(0);

    // A run's page: its slot, its params, the way back to the backfill.
    const first = runs.find((x) => x.status === "SUCCESS")!;
    await p.goto(`${rig.d.base}/#/runs/${first.id}`);
    await poll(() => p.locator("[data-run-params]").textContent()).toContain("region=us");
    const scheduledAt = p.locator("dt", { hasText: /^Scheduled at$/ }).locator("xpath=following-sibling::dd[1]//time");
    expect(await scheduledAt.getAttribute("datetime")).toBe(first.scheduled_at);
    await p.getByRole("link", { name: `backfill #${id}`, exact: true }).click();
    await p.waitForURL(new RegExp(`#/backfills/${id}$`));

    // The job page lists it; its row opens it.
    await p.goto(`${rig.d.base}/#/jobs/tick`);
    await p.getByRole("region", { name: "Backfills" }).getByRole("link", { name: `#${id}`, exact: true }).click();
    await p.waitForURL(new RegExp(`#/backfills/${id}$`));
    // The header's Backfills lists every backfill.
    await p.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Backfills" }).click();
    await p.waitForURL(/#\/backfills$/);
    await p.getByRole("link", { name: `#${id}`, exact: true }).click();
    await p.waitForURL(new RegExp(`#/backfills/${id}$`));

    // The audit view: trigger `backfill` is a filter value; the trigger cell links to the backfill.
    await p.goto(`${rig.d.base}/#/audit`);
    const trigger = p.getByRole("form", { name: "Audit filters" }).getByLabel("Trigger");
    expect(await trigger.locator("option").allTextContents()).toContain("backfill");
    await trigger.selectOption("backfill");
    await p.waitForURL(/trigger=backfill/);
    const auditRows = p.locator("table").filter({ has: p.locator("caption", { hasText: "Audit results" }) }).locator("tbody tr");
    await poll(() => auditRows.count()).toBe(6);
    await auditRows.first().getByRole("link", { name: `backfill #${id}`, exact: true }).click();
    await p.waitForURL(new RegExp(`#/backfills/${id}$`));
    await p.context().close();
  });

  it("the audit view filters by a param value; a secret param's value never matches", async () => {
    await rig.d.api("POST", "/api/jobs/tick/run", { params: { region: "eu", token: "bf-secret-typed-0a7e" } });
    await until("the eu run", async () => (await rig.d.api<{ total: number }>("GET", "/api/audit?job=tick&param=region=eu")).body.total === 1);
    const p = await page();
    await p.goto(`${rig.d.base}/#/audit?job=tick`);
    const form = p.getByRole("form", { name: "Audit filters" });
    await form.getByLabel("Param").fill("region=eu");
    await form.getByRole("button", { name: "Apply" }).click();
    await p.waitForURL(/param=region%3Deu|param=region=eu/);
    const rows = p.locator("table").filter({ has: p.locator("caption", { hasText: "Audit results" }) }).locator("tbody tr");
    await poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain("region=eu");
    expect(await rows.first().textContent()).toContain("manual");

    await form.getByLabel("Param").fill("token=bf-secret-typed-0a7e");
    await form.getByRole("button", { name: "Apply" }).click();
    await poll(() => p.getByText("No run matches these filters.").count()).toBe(1);
    await p.context().close();
  });
});

const AXE = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

/** axe-core's serious and critical WCAG 2 A/AA violations inside `include`, as in web-a11y.test.ts. */
async function axeViolations(page: Page, include: string): Promise<string[]> {
  await page.addScriptTag({ path: AXE });
  const result = (await page.evaluate(`axe.run({ include: [${JSON.stringify(include)}] }, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa"] } })`)) as {
    violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[];
  };
  return result.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id} (${v.help}): ${v.nodes.map((n) => n.target.join(" ")).join(" | ")}`);
}

suite("accessibility of the backfill page, the backfill dialog and the run dialog's params", () => {
  const rig = browserRig("svc-web-backfill-a11y-", YAML);

  for (const scheme of ["light", "dark"] as const) {
    it(`has no serious or critical axe violation in ${scheme} mode`, async () => {
      const started = await rig.d.api<{ backfill_id: number }>("POST", "/api/jobs/nightly/backfill", { from: "2025-03-07", to: "2025-03-11", rerun: true });
      const context = await rig.browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: scheme });
      context.setDefaultTimeout(15_000);
      const page = await context.newPage();
      const found: Record<string, string[]> = {};
      await page.goto(`${rig.d.base}/#/backfills/${started.body.backfill_id}`);
      await page.locator("[data-progress]").waitFor();
      await page.locator("tbody tr").first().waitFor();
      found.page = await axeViolations(page, "main");

      await page.goto(`${rig.d.base}/#/jobs/nightly`);
      await page.getByRole("button", { name: /^backfill…$/i }).click();
      const dialog = page.getByRole("dialog", { name: /backfill nightly/i });
      await dialog.getByLabel("From (included)").fill("yesterday");
      await dialog.getByLabel("To (excluded)").fill("2025-03-11");
      await dialog.getByRole("button", { name: /preview slots/i }).click();
      await dialog.locator("#bf-from-error").waitFor();
      await dialog.getByLabel("From (included)").fill("2025-03-07");
      await dialog.getByRole("button", { name: /preview slots/i }).click();
      await dialog.locator("[data-preview] tr[data-slot]").first().waitFor();
      found.backfillDialog = await axeViolations(page, "dialog[open]");
      await page.keyboard.press("Escape");

      await page.goto(`${rig.d.base}/#/jobs/tick`);
      await page.getByRole("button", { name: /^run…$/i }).click();
      await page.locator("dialog[open] [data-param]").first().waitFor();
      found.runDialog = await axeViolations(page, "dialog[open]");
      expect(found).toEqual({ page: [], backfillDialog: [], runDialog: [] });
      await context.close();
    });
  }
});

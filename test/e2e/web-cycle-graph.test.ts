/**
 * The graph view for one cycle (`#/graph?cycle=<id>`) in Debian's chromium
 * against the built svcd: reached from a run page, from a job's runs table
 * and from the timeline (G on a run); each node coloured and labelled by its
 * own run in that cycle, with its duration, a link to that run; the outputs
 * an upstream passed shown on its edge on hover and on keyboard focus.
 */
import type { Page } from "playwright-core";
import { beforeAll, expect, it } from "vitest";
import { until } from "../helpers/daemonKit.js";
import { browserRig, NEEDS_CHROMIUM, poll, shot } from "../helpers/chromium.js";
import { describeUnless } from "../helpers/skip.js";

const YAML = `jobs:
  extract:
    # 42 on the first run, 43 on the second: each cycle passes its own values
    command: |
      sleep 0.5
      n=$(cat n 2>/dev/null || echo 41); n=$((n+1)); echo $n > n
      printf '{"rows": %s, "file": "/data/orders-%s.csv"}\\n' $n $n
    output: {rows: "json_field:rows", file: "json_field:file"}
  transform:
    command: "echo transformed {{ outputs.extract.rows }} rows"
    frequency: after:extract
  report:
    command: "echo no printer >&2; exit 4"
    frequency: after:transform
  lonely:
    command: "true"
`;

interface RunLite {
  id: number;
  job_name: string;
  status: string;
  cycle_id: string;
}

const suite = (name: string, fn: () => void) => describeUnless(NEEDS_CHROMIUM, name, fn);

suite("cycle graph against a real daemon", () => {
  const rig = browserRig("svc-web-cycle-", YAML);
  let page: Page;
  let first: Record<string, RunLite>;

  /** Runs extract and waits for its chain to end; the chain's runs by job. */
  const chain = async (): Promise<Record<string, RunLite>> => {
    const started = await rig.d.api<{ run_id: number; cycle_id: string }>("POST", "/api/jobs/extract/run", {});
    const cycle = started.body.cycle_id;
    return until("the chain to end with report", async () => {
      const r = await rig.d.api<{ rows: RunLite[] }>("GET", `/api/db/job_runs?cycle_id=${cycle}&page_size=100`);
      const byJob = Object.fromEntries(r.body.rows.map((x) => [x.job_name, x]));
      return byJob.report && byJob.report.status === "FAILED" ? byJob : null;
    }, 30_000);
  };
  const node = (job: string) => page.locator(`svg.graph a.node[data-job="${job}"]`);

  beforeAll(async () => {
    const context = await rig.browser.newContext({ viewport: { width: 1280, height: 720 }, colorScheme: "light" });
    context.setDefaultTimeout(10_000);
    page = await context.newPage();
    first = await chain();
    await chain(); // a later cycle, which the first one's graph must not show
  }, 90_000);

  it("opens from a run page and colours each node by its run in that cycle, with its duration", async () => {
    await page.goto(`${rig.d.base}/#/runs/${first.transform!.id}`);
    await page.getByRole("link", { name: "Show this cycle's graph" }).click();
    await page.waitForURL(new RegExp(`#/graph\\?cycle=${first.extract!.cycle_id}$`));
    await node("report").waitFor();
    await poll(() => node("report").getAttribute("data-status")).toBe("FAILED");
    expect(await node("report").getAttribute("class")).toContain("tone-bad");
    expect(await node("extract").getAttribute("data-status")).toBe("SUCCESS");
    expect(await node("extract").locator(".node-status").textContent()).toMatch(/^✓ SUCCESS · [\d.]+ (ms|s)$/);
    expect(await node("lonely").getAttribute("class")).toContain("tone-none");
    expect(await node("lonely").textContent()).toContain("not in this cycle");
    // Each node opens its own run of this cycle, not the job's latest.
    for (const job of ["extract", "transform", "report"]) expect(await node(job).getAttribute("href")).toBe(`#/runs/${first[job]!.id}`);
    const error = (await rig.d.api<{ error: string }>("GET", `/api/runs/${first.report!.id}`)).body.error;
    expect(await node("report").getAttribute("aria-label")).toMatch(new RegExp(`^report: run #${first.report!.id} FAILED, took [\\d.]+ m?s, ${error}$`));
    await page.getByText(/Cycle [0-9a-f]{8}, started .* 3 jobs ran — .*1 failed/).waitFor();
  });

  it("shows the outputs an upstream passed on its edge, on hover and on keyboard focus", async () => {
    await page.goto(`${rig.d.base}/#/graph?cycle=${first.extract!.cycle_id}`);
    const passing = page.locator('g.edge-g[data-edge="extract>transform"]');
    await passing.locator(".edge-label").waitFor();
    expect(await passing.locator(".edge-label").textContent()).toBe("2 outputs");
    await passing.locator(".edge-label").hover();
    const card = page.getByTestId("edge-card");
    await poll(() => card.innerText()).toContain("extract → transform");
    expect(await card.innerText()).toMatch(/file\s+\/data\/orders-42\.csv/);
    expect(await card.innerText()).toMatch(/rows\s+42/);
    await shot(page, rig.shots, "graph-cycle");

    // transform captured nothing: no tag on its edge, and focus says so.
    const quiet = page.locator('g.edge-g[data-edge="transform>report"]');
    expect(await quiet.locator(".edge-label").count()).toBe(0);
    await page.mouse.move(0, 0);
    await quiet.focus();
    await poll(() => card.innerText()).toContain("transform captured no outputs in this cycle");
    expect(await quiet.getAttribute("aria-label")).toBe("transform → report (after): no outputs captured");
    expect(await passing.getAttribute("aria-label")).toBe("extract → transform (after): file = /data/orders-42.csv, rows = 42");
  });

  it("opens from a job's runs table and from the timeline (G on a run)", async () => {
    await page.goto(`${rig.d.base}/#/jobs/report`);
    const row = page.locator("table tbody tr", { has: page.getByRole("link", { name: `#${first.report!.id}`, exact: true }) });
    await row.getByRole("link", { name: first.extract!.cycle_id.slice(0, 8) }).click();
    await page.waitForURL(new RegExp(`#/graph\\?cycle=${first.extract!.cycle_id}$`));
    await poll(() => node("report").getAttribute("href")).toBe(`#/runs/${first.report!.id}`);

    // A window around that run only (the later cycle's transform, seconds after, would be grouped with it in a wide one).
    const t = Date.parse((await rig.d.api<{ started_at: string }>("GET", `/api/runs/${first.transform!.id}`)).body.started_at);
    const from = new Date(t - 1_000).toISOString();
    const to = new Date(t + 1_500).toISOString();
    await page.goto(`${rig.d.base}/#/timeline?from=${from}&to=${to}&q=transform`);
    const bar = page.locator(`a.tl-bar[data-run="${first.transform!.id}"]`);
    await bar.focus();
    await page.keyboard.press("g");
    await page.waitForURL(new RegExp(`#/graph\\?cycle=${first.extract!.cycle_id}$`));
    await poll(() => node("transform").getAttribute("href")).toBe(`#/runs/${first.transform!.id}`);

    // Shift+G too (the hint says "G"); a run that cannot be read says so instead of doing nothing.
    const timeline = `${rig.d.base}/#/timeline?from=${from}&to=${to}&q=transform`;
    await page.goto(timeline);
    await bar.focus();
    await page.keyboard.press("Shift+G");
    await page.waitForURL(new RegExp(`#/graph\\?cycle=${first.extract!.cycle_id}$`));
    await page.goto(timeline);
    await page.route(`**/api/runs/${first.transform!.id}`, (route) => route.fulfill({ status: 503, contentType: "application/json", body: '{"error":{"code":"unavailable","message":"restarting"}}' }));
    try {
      await bar.focus();
      await page.keyboard.press("g");
      await page.getByText(`Cannot open run #${first.transform!.id}'s cycle`).waitFor();
      expect(page.url()).toContain("#/timeline");
    } finally {
      await page.unroute(`**/api/runs/${first.transform!.id}`);
    }
  });

  it("a failed load of the cycle is tried again, and the graph then shows", async () => {
    let refused = 0;
    const runsOfCycle = (url: URL) => url.pathname.endsWith("/api/db/job_runs") && url.searchParams.get("cycle_id") === first.extract!.cycle_id;
    await page.route(runsOfCycle, (route) =>
      refused++ === 0 ? route.fulfill({ status: 503, contentType: "application/json", body: '{"error":{"code":"unavailable","message":"restarting"}}' }) : route.continue(),
    );
    try {
      await page.goto(`${rig.d.base}/#/graph?cycle=${first.extract!.cycle_id}`);
      await page.getByRole("alert").filter({ hasText: "503" }).waitFor();
      await poll(() => node("report").getAttribute("data-status")).toBe("FAILED");
      expect(refused).toBeGreaterThanOrEqual(2);
      expect(await page.getByText("could not be refreshed").count()).toBe(0);
    } finally {
      await page.unroute(runsOfCycle);
    }
  });
});

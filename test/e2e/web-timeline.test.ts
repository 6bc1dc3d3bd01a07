/**
 * The dashboard's timeline (`#/timeline`) in Debian's chromium against the
 * built svcd on a temp project: every job's runs over a window, retries as
 * segments, filters by tag and name, the hover card, a click that opens the
 * run, zoom and pan from buttons and keys, rows as Tab stops, and a run that
 * appears and grows live while it runs, learnt from the held
 * `/api/timeline/changes` request rather than polling.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { BrowserContext, Page, Request } from "playwright-core";
import { beforeAll, expect, it } from "vitest";
import { until } from "../helpers/daemonKit.js";
import { openStore } from "../../src/store/index.js";
import { browserRig, NEEDS_CHROMIUM, poll, shot } from "../helpers/chromium.js";
import { describeUnless } from "../helpers/skip.js";

const YAML = `defaults:
  timezone: Europe/Berlin
jobs:
  extract:
    description: Pull rows
    command: "echo extracted"
    tags: [etl]
  load:
    command: "sleep 0.3; echo loaded"
    frequency: after:extract
    tags: [etl]
  grow:
    description: Runs for a few seconds
    command: "for i in $(seq 1 50); do echo tick $i; sleep 0.1; done"
    sla: 2s
  flaky:
    command: test -f attempted || { touch attempted; echo first try fails >&2; exit 3; }
    retries: 1
    retry_delay: fixed:2s
  broken:
    command: "echo about to fail >&2; exit 2"
    tags: [ops]
`;

interface RunLite {
  id: number;
  status: string;
  started_at: string | null;
  finished_at: string | null;
}

const suite = (name: string, fn: () => void) => describeUnless(NEEDS_CHROMIUM, name, fn);

suite("timeline view against a real daemon", () => {
  const rig = browserRig("svc-web-tl-", YAML);
  let context: BrowserContext;
  let page: Page;
  const ids: Record<string, number> = {};

  const run = async (job: string) => {
    const r = await rig.d.api<{ run_id: number }>("POST", `/api/jobs/${job}/run`, {});
    expect(r.status).toBe(202);
    return r.body.run_id;
  };
  const runRecord = async (id: number) => (await rig.d.api<RunLite>("GET", `/api/runs/${id}`)).body;
  const finished = (id: number) => until(`run ${id} to finish`, async () => {
    const r = await runRecord(id);
    return ["SUCCESS", "FAILED", "SKIPPED"].includes(r.status) ? r : null;
  }, 30_000);
  const windowAround = (from: number, to: number) => `#/timeline?from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}`;
  const open = async (hash: string) => {
    await page.goto("about:blank");
    await page.goto(`${rig.d.base}/${hash}`);
  };
  const bar = (id: number) => page.locator(`a.tl-bar[data-run="${id}"]`);
  const rows = () => page.locator(".tl-row").evaluateAll((els) => els.map((e) => e.getAttribute("data-job")));

  beforeAll(async () => {
    context = await rig.browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: "light" });
    context.setDefaultTimeout(10_000);
    page = await context.newPage();
    ids.extract = await run("extract");
    ids.broken = await run("broken");
    ids.flaky = await run("flaky");
    for (const job of ["extract", "broken", "flaky"]) await finished(ids[job]!);
    ids.load = await until("load to run after extract", async () => {
      const r = await rig.d.api<{ runs: RunLite[] }>("GET", "/api/jobs/load?runs=1");
      const l = r.body.runs[0];
      return l && l.status === "SUCCESS" ? l.id : null;
    });
  }, 90_000);

  it("draws one row per job and each run as a bar coloured and shaped by status; retries show as segments", async () => {
    const flaky = await runRecord(ids.flaky!);
    const t0 = Date.parse((await runRecord(ids.extract!)).started_at!);
    await open(windowAround(t0 - 30_000, Date.parse(flaky.finished_at!) + 30_000));
    await bar(ids.broken!).waitFor();
    expect(await rows()).toEqual(["broken", "extract", "flaky", "grow", "load"]);
    expect(await bar(ids.broken!).getAttribute("class")).toContain("st-FAILED");
    expect(await bar(ids.extract!).getAttribute("class")).toContain("st-SUCCESS");
    expect(await bar(ids.load!).getAttribute("data-status")).toBe("SUCCESS");
    // Its label says it all in words: status, exit code, and each attempt.
    expect(await bar(ids.broken!).getAttribute("aria-label")).toMatch(new RegExp(`^Run #${ids.broken} of broken: failed, .*exit code 2`));
    expect(await bar(ids.flaky!).getAttribute("aria-label")).toMatch(/attempt 1: exit 3 after [\d.]+ m?s; waited [\d.]+ s; attempt 2: succeeded after/);
    // The load bar starts after extract's ends (it was triggered by it).
    const [e, l] = [await bar(ids.extract!).boundingBox(), await bar(ids.load!).boundingBox()];
    expect(l!.x).toBeGreaterThanOrEqual(e!.x);

    // Zoomed in on flaky's run, its two attempts and the wait between them are drawn apart.
    await open(windowAround(Date.parse(flaky.started_at!) - 1_000, Date.parse(flaky.finished_at!) + 1_000));
    const segs = bar(ids.flaky!).locator(".seg");
    await poll(() => segs.evaluateAll((els) => els.map((x) => x.className))).toEqual(["seg seg-attempt-failed", "seg seg-wait", "seg seg-attempt"]);
    const [failed, wait] = await Promise.all([segs.nth(0).boundingBox(), segs.nth(1).boundingBox()]);
    // 2 s of retry delay against well under a second of failed attempt
    expect(wait!.width).toBeGreaterThan(failed!.width);
  });

  it("filters by tag and by job name, shows a summary on hover, and opens the run on click", async () => {
    const t0 = Date.parse((await runRecord(ids.extract!)).started_at!);
    const hash = windowAround(t0 - 60_000, t0 + 120_000);
    await open(hash);
    await bar(ids.broken!).waitFor();
    await page.getByRole("button", { name: /^etl/ }).click();
    await page.waitForURL(/tag=etl/);
    await poll(rows).toEqual(["extract", "load"]);
    await page.getByRole("button", { name: "All", exact: true }).click();
    await poll(rows).toEqual(["broken", "extract", "flaky", "grow", "load"]);
    await page.getByLabel("Job name").fill("LOA");
    await page.getByLabel("Job name").press("Enter");
    await page.waitForURL(/q=LOA/);
    await poll(rows).toEqual(["load"]);

    await open(hash);
    await bar(ids.broken!).hover();
    const card = page.getByTestId("tl-card");
    await poll(() => card.innerText()).toContain(`#${ids.broken} broken`);
    expect(await card.innerText()).toMatch(/FAILED[\s\S]*exit code 2/);
    await shot(page, rig.shots, "timeline-hover");
    await bar(ids.broken!).click();
    await page.waitForURL(new RegExp(`#/runs/${ids.broken}$`));
    await page.getByRole("heading", { name: `Run #${ids.broken}` }).waitFor();
  });

  it("zooms and pans with the buttons and the keyboard; each row is one Tab stop and arrows move between runs and rows", async () => {
    const t0 = Date.parse((await runRecord(ids.extract!)).started_at!);
    const from = t0 - 60_000;
    const to = t0 + 60_000;
    await open(windowAround(from, to));
    await bar(ids.extract!).waitFor();
    const span = () => {
      const q = new URL(page.url().replace("#/", "")).searchParams;
      return Date.parse(q.get("to")!) - Date.parse(q.get("from")!);
    };
    await page.getByRole("button", { name: "Zoom out" }).click();
    await poll(span).toBe(4 * 60_000);
    await page.getByRole("button", { name: "Earlier" }).click();
    await poll(() => new URL(page.url().replace("#/", "")).searchParams.get("to")).toBe(new Date(t0).toISOString());

    await open(windowAround(from, to));
    await bar(ids.extract!).waitFor();
    // One Tab stop per row: the label link, then its latest run.
    await page.getByRole("button", { name: "Now" }).focus();
    // (a string: this file is compiled without DOM types)
    const focused = () =>
      page.evaluate<string>(`(() => {
        const el = document.activeElement;
        return el?.dataset.run ? "run " + el.dataset.run : el?.classList.contains("tl-label") ? "label " + el.textContent : (el?.tagName ?? "");
      })()`);
    const tabs: string[] = [];
    for (let i = 0; i < 12 && tabs.at(-1) !== `run ${ids.extract}`; i++) {
      await page.keyboard.press("Tab");
      tabs.push(await focused());
    }
    expect(tabs.slice(tabs.indexOf("label broken"))).toEqual(["label broken", `run ${ids.broken}`, "label extract", `run ${ids.extract}`]);
    // ↓ from extract's run goes to the nearest run of the next row (flaky), ↑ back.
    await page.keyboard.press("ArrowDown");
    await poll(focused).toBe(`run ${ids.flaky}`);
    await page.keyboard.press("ArrowUp");
    await poll(focused).toBe(`run ${ids.extract}`);
    await page.keyboard.press("-");
    await poll(span).toBe(4 * 60_000);
    await page.keyboard.press("Enter");
    await page.waitForURL(new RegExp(`#/runs/${ids.extract}$`));
  });

  it("grows while a job runs: the run appears, its bar widens with time and stops when it ends, all without polling", async () => {
    const now = Date.now();
    await open(windowAround(now - 10_000, now + 50_000));
    await page.locator(".tl-row").first().waitFor();
    const requests: string[] = [];
    const onRequest = (r: Request) => {
      const u = new URL(r.url());
      if (u.pathname.startsWith("/api/")) requests.push(u.pathname);
    };
    page.on("request", onRequest);
    const started = Date.now();
    const id = await run("grow");
    const growing = page.locator(`a.tl-bar[data-run="${id}"][data-status="RUNNING"]`);
    await growing.waitFor({ timeout: 10_000 });
    const w1 = (await growing.boundingBox())!.width;
    await page.waitForTimeout(1_500);
    const w2 = (await growing.boundingBox())!.width;
    // 60 s across ~1000 px is ~16 px a second
    expect(w2 - w1).toBeGreaterThan(10);
    await shot(page, rig.shots, "timeline-live");

    const done = page.locator(`a.tl-bar[data-run="${id}"][data-status="SUCCESS"]`);
    await done.waitFor({ timeout: 20_000 });
    const w3 = (await done.boundingBox())!.width;
    await page.waitForTimeout(1_000);
    expect((await done.boundingBox())!.width).toBe(w3);
    // It ran past its 2 s SLA: marked with a triangle, and said so.
    expect(await done.getAttribute("class")).toContain("sla");
    await done.locator(".tl-sla").waitFor();
    expect(await done.getAttribute("aria-label")).toContain("SLA breached");
    page.off("request", onRequest);

    // What the page asked for meanwhile: only held change requests (one per answer), no reload of the window.
    const seconds = (Date.now() - started) / 1000;
    expect(requests.filter((p) => p === "/api/timeline")).toEqual([]);
    const changes = requests.filter((p) => p === "/api/timeline/changes").length;
    expect(changes).toBeGreaterThanOrEqual(2);
    expect(changes).toBeLessThan(seconds);

    await page.emulateMedia({ colorScheme: "dark" });
    await shot(page, rig.shots, "timeline-dark");
    await page.emulateMedia({ colorScheme: "light" });
  });
});

const HISTORY_YAML = `defaults:
  timezone: Europe/Berlin
jobs:
  heartbeat: {command: "true", frequency: manual, tags: [ops]}
  extract: {command: "true", frequency: manual, tags: [etl]}
  load: {command: "true", frequency: after:extract, tags: [etl]}
  report: {command: "true", frequency: manual, sla: 15m}
  flaky: {command: "true", frequency: manual, retries: 1}
`;

/**
 * A day of history written into the project's database before the daemon
 * starts: a heartbeat every minute, an hourly extract -> load chain with
 * failures, a 6-hourly report that breaches its SLA, and runs that retried.
 */
function seedDay(dir: string, now: number): void {
  mkdirSync(join(dir, ".svc"), { recursive: true, mode: 0o700 });
  const store = openStore({ path: join(dir, ".svc", "svc.db"), busyTimeoutMs: 5000, walAutocheckpoint: 1000 });
  const iso = (t: number) => new Date(t).toISOString();
  const put = (job: string, start: number, ms: number, ok = true, sla = false) => {
    const r = store.runs.create({ job_name: job, trigger: "schedule", triggered_by: "scheduler", cycle_id: `c-${job}-${start}`, tags: [], created_at: iso(start) });
    store.runs.transition(r.id, "RUNNING", { started_at: iso(start), pid: 1 });
    store.runs.transition(r.id, ok ? "SUCCESS" : "FAILED", { finished_at: iso(start + ms), duration_ms: ms, exit_code: ok ? 0 : 1, pid: null, ...(sla ? { sla_breached: 1 } : {}) });
  };
  const MIN = 60_000;
  store.tx(() => {
    const day = now - 24 * 60 * MIN;
    for (let i = 0, t = day; t < now - MIN; i++, t += MIN) put("heartbeat", t, 800, i % 97 !== 50);
    for (let h = 0; h < 24; h++) {
      const t = day + h * 60 * MIN + 5 * MIN;
      const ok = h % 7 !== 3;
      put("extract", t, (3 + (h % 5)) * MIN, ok);
      if (ok) put("load", t + (3 + (h % 5)) * MIN + 2_000, 2 * MIN);
    }
    for (let q = 0; q < 4; q++) put("report", day + q * 360 * MIN + 30 * MIN, (10 + q * 4) * MIN, true, q === 2);
    for (let k = 0; k < 3; k++) {
      const t = day + (k * 8 + 2) * 60 * MIN;
      const r = store.runs.create({ job_name: "flaky", trigger: "schedule", triggered_by: "scheduler", cycle_id: `c-flaky-${k}`, tags: [], created_at: iso(t) });
      store.runs.transition(r.id, "RUNNING", { started_at: iso(t), attempt_started_at: iso(t), pid: 1 });
      store.runs.transition(r.id, "FAILED", { finished_at: iso(t + 4 * MIN), exit_code: 3, error: "exit 3", duration_ms: 4 * MIN }, "RUNNING");
      store.runs.transition(r.id, "RETRYING", { next_attempt_at: iso(t + 19 * MIN) }, "FAILED");
      store.runs.transition(r.id, "RUNNING", { attempt: 2, attempt_started_at: iso(t + 19 * MIN), exit_code: null, error: null }, "RETRYING");
      store.runs.transition(r.id, "SUCCESS", { finished_at: iso(t + 30 * MIN), exit_code: 0, duration_ms: 30 * MIN }, "RUNNING");
    }
  });
  store.close();
}

suite("timeline view over a day of history", () => {
  const rig = browserRig("svc-web-tl-day-", HISTORY_YAML, (dir) => seedDay(dir, Date.now()));

  it("shows the last 24 h live: close runs grouped, a group zooms in when selected, retried runs in segments", async () => {
    const context = await rig.browser.newContext({ viewport: { width: 1280, height: 640 }, colorScheme: "light" });
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    await page.goto(`${rig.d.base}/#/timeline`);
    const heartbeat = page.locator('.tl-row[data-job="heartbeat"]');
    await heartbeat.locator(".tl-cluster").first().waitFor();
    expect(await page.getByRole("button", { name: "Last 24h" }).getAttribute("aria-pressed")).toBe("true");
    // 1,440 heartbeats a day in ~1,000 pixels cannot be told apart: a few groups, not 1,440 elements.
    const groups = await heartbeat.locator(".tl-cluster").count();
    expect(groups).toBeGreaterThan(0);
    expect(await heartbeat.locator(".tl-cluster, .tl-bar").count()).toBeLessThan(300);
    // Hourly extracts are bars; every seventh failed.
    expect(await page.locator('.tl-row[data-job="extract"] a.tl-bar').count()).toBeGreaterThanOrEqual(23);
    expect(await page.locator('.tl-row[data-job="extract"] a.tl-bar.st-FAILED').count()).toBeGreaterThanOrEqual(3);
    expect(await page.locator('.tl-row[data-job="report"] a.tl-bar.sla').count()).toBe(1);
    expect(await page.locator('.tl-row[data-job="flaky"] a.tl-bar.has-segments').count()).toBe(3);
    expect(await page.getByTestId("tl-summary").innerText()).toMatch(/1 SLA breach\b/);
    await shot(page, rig.shots, "timeline");

    const first = heartbeat.locator(".tl-cluster").first();
    const label = (await first.getAttribute("aria-label"))!;
    expect(label).toMatch(/^\d+ runs of heartbeat from .* \(\d+ success.*\): zoom in$/);
    await first.click();
    await page.waitForURL(/from=.*to=/);
    // Zoomed in, the heartbeats are separate bars.
    await poll(() => heartbeat.locator("a.tl-bar").count()).toBeGreaterThan(5);
    await context.close();
  });
});

/**
 * The dashboard in real headless Chromium (Debian `chromium`, driven by
 * playwright-core) against real daemons started from bin/svcd.js on temp
 * projects: every view renders real data, a run started from the UI streams
 * its logs live, pause/resume, a config save round-trip, page sizes, the
 * token prompt under bearer auth, and daemon stop.
 *
 * Screenshots of every view go to a temp dir, or to docs/screenshots/ with
 * SVC_SCREENSHOTS=1 (how the committed ones are made).
 *
 * The browser is Debian's chromium (`apt-get install chromium`; .ci/run
 * installs it). Without it these tests are skipped, each saying why, and
 * under CI=true (.ci/run) the file fails.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ensureDashboardBuilt, launch, NEEDS_CHROMIUM, shot as shotIn, shotsDir } from "../helpers/chromium.js";
import { describeUnless } from "../helpers/skip.js";

const ROOT = resolve(import.meta.dirname, "../..");
/** SVCD_BIN: another svcd entry point (e.g. a build under test elsewhere). */
const SVCD = process.env.SVCD_BIN ?? join(ROOT, "bin", "svcd.js");

const TOKEN = "dash-token-4f9c2e7a";

// ---- helpers: daemon, HTTP, waiting --------------------------------------

interface Daemon {
  url: string;
  dir: string;
  proc: ChildProcess;
  output: () => string;
  stop: () => Promise<void>;
}

async function waitUntil<T>(what: string, fn: () => T | Promise<T>, timeoutMs = 15_000, everyMs = 100): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

async function startDaemon(dir: string): Promise<Daemon> {
  const proc = spawn(process.execPath, [SVCD, "-c", join(dir, "svc.yaml")], {
    cwd: dir,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, SVC_TOKEN: "", SVC_CONFIG: "", SVC_DATA_DIR: "" },
  });
  let output = "";
  proc.stdout?.on("data", (b: Buffer) => (output += b.toString()));
  proc.stderr?.on("data", (b: Buffer) => (output += b.toString()));
  const addrFile = join(dir, ".svc", "api.addr");
  const addr = await waitUntil(
    "svcd to write api.addr",
    () => {
      if (proc.exitCode !== null) throw new Error(`svcd exited ${proc.exitCode}: ${output}`);
      return existsSync(addrFile) ? readFileSync(addrFile, "utf8").trim() : null;
    },
    20_000,
  );
  return {
    url: `http://${addr}/`,
    dir,
    proc,
    output: () => output,
    stop: async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill("SIGTERM");
      const killer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
      await once(proc, "exit");
      clearTimeout(killer);
    },
  };
}

async function call<T = unknown>(d: Daemon, method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; body: T }> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(new URL(path, d.url), { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
}

interface RunLite {
  id: number;
  job_name: string;
  status: string;
}

async function runJob(d: Daemon, job: string, token?: string): Promise<number> {
  const r = await call<{ run_id: number }>(d, "POST", `api/jobs/${job}/run`, {}, token);
  expect(r.status).toBe(202);
  return r.body.run_id;
}

async function waitRun(d: Daemon, id: number, statuses: string[], token?: string, timeoutMs = 20_000): Promise<RunLite> {
  return waitUntil(
    `run ${id} to reach ${statuses.join("/")}`,
    async () => {
      const r = await call<RunLite>(d, "GET", `api/runs/${id}`, undefined, token);
      return statuses.includes(r.body.status) ? r.body : null;
    },
    timeoutMs,
  );
}

/** A local HTTP endpoint for the webhook integration: /ok answers 200, /fail answers 500. */
async function startReceiver(): Promise<{ server: Server; port: number; posts: string[] }> {
  const posts: string[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      posts.push(`${req.url} ${body}`);
      const ok = !req.url?.startsWith("/fail");
      res.writeHead(ok ? 200 : 500, { "content-type": "application/json" });
      res.end(JSON.stringify(ok ? { received: true } : { error: "receiver says no" }));
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { server, port: (server.address() as AddressInfo).port, posts };
}

function projectYaml(hookPort: number): string {
  return `defaults:
  timezone: Europe/Berlin
integrations:
  hooks:
    provider: webhook
    webhook_url: "http://127.0.0.1:${hookPort}/ok"
jobs:
  extract:
    description: Pull rows from the source
    command: "for i in 1 2 3; do echo extract line $i; sleep 0.1; done; echo '{\\"rows\\": 42}'"
    frequency: daily
    time: "0230"
    tags: [etl, nightly]
    output:
      rows: "json_field:rows"
  transform:
    description: Transform the extracted rows
    command: "echo transformed {{ outputs.extract.rows }} rows"
    frequency: after:extract
    tags: [etl]
  report:
    description: Weekly report
    command: "echo report"
    frequency: weekly
    time: "0900"
    depends_on: [transform]
    tags: [nightly]
  slow:
    description: Streams lines for a few seconds
    command: "for i in $(seq 1 40); do echo tick $i; if [ $((i % 10)) -eq 0 ]; then echo warn $i >&2; fi; sleep 0.1; done"
    frequency: manual
    sla: 1s
    timeout: 1m
    healthcheck:
      command: "echo healthy"
  sleeper:
    description: Sleeps until cancelled
    command: "sleep 30"
    frequency: manual
  flaky:
    description: Always fails
    command: "echo about to fail; echo boom >&2; exit 3"
    frequency: manual
    tags: [ops]
    notify:
      on_failure: "webhook:http://127.0.0.1:${hookPort}/fail"
  quick:
    description: Fast job for paging
    command: "echo hi"
    frequency: manual
    concurrency: allow
`;
}

// ---- the suite -------------------------------------------------------------

/** Skipped with the reason without chromium; under CI=true (.ci/run) a missing chromium fails the file. */
const suite = (name: string, fn: () => void) => describeUnless(NEEDS_CHROMIUM, name, fn);

suite("dashboard against a real daemon", () => {
  let tmp: string;
  let shots: string;
  let daemon: Daemon;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const seeded: Record<string, number> = {};

  const shot = (p: Page, name: string) => shotIn(p, shots, name);
  /** A fresh page load per view: a hash-only goto would keep the previous view's state. */
  const open = async (hash: string) => {
    await page.goto("about:blank");
    await page.goto(`${daemon.url}${hash}`);
  };

  beforeAll(async () => {
    ensureDashboardBuilt();
    tmp = mkdtempSync(join(tmpdir(), "svc-web-"));
    shots = shotsDir(join(tmp, "shots"));
    receiver = await startReceiver();
    const dir = join(tmp, "project");
    mkdirSync(dir);
    writeFileSync(join(dir, "svc.yaml"), projectYaml(receiver.port));
    writeFileSync(join(dir, "svcd.yaml"), "executor:\n  kill_grace: 500ms\n");
    daemon = await startDaemon(dir);
    browser = await launch();
    context = await browser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: "light" });
    context.setDefaultTimeout(10_000);
    page = await context.newPage();

    // Real history: a cycle with outputs (extract -> transform), a failure with a failed alert, paging material.
    seeded.extract = await runJob(daemon, "extract");
    seeded.flaky = await runJob(daemon, "flaky");
    for (let i = 0; i < 30; i++) await runJob(daemon, "quick");
    await waitRun(daemon, seeded.extract, ["SUCCESS"]);
    await waitRun(daemon, seeded.flaky, ["FAILED"]);
    seeded.transform = await waitUntil("transform to run in the extract cycle", async () => {
      const r = await call<{ runs: RunLite[] }>(daemon, "GET", "api/jobs/transform?runs=1");
      const run = r.body.runs[0];
      return run && run.status === "SUCCESS" ? run.id : null;
    });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await daemon?.stop();
    receiver?.server.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it("overview lists every job with state, last run, next run and tags; tag chips filter", async () => {
    await open("#/");
    const row = (job: string) => page.locator(`tr[data-job="${job}"]`);
    await expect.poll(() => page.locator("tr[data-job]").count()).toBe(7);
    await expect.poll(() => row("flaky").innerText()).toContain("FAILED");
    expect(await row("extract").innerText()).toContain("SUCCESS");
    expect(await row("extract").innerText()).toContain("active");
    expect(await row("extract").locator("time").last().getAttribute("title")).toContain("Europe/Berlin");
    expect(await page.getByTestId("version").innerText()).toMatch(/^v\d+\.\d+\.\d+/);
    await shot(page, "overview");

    await page.getByRole("button", { name: /^etl/ }).click();
    await page.waitForURL(/tag=etl/);
    await expect.poll(() => page.locator("tr[data-job]").count()).toBe(2);
    await page.getByRole("button", { name: "All", exact: true }).click();
    await expect.poll(() => page.locator("tr[data-job]").count()).toBe(7);

    await page.emulateMedia({ colorScheme: "dark" });
    await shot(page, "overview-dark");
    await page.emulateMedia({ colorScheme: "light" });
  });

  it("job view shows config, runs with load-more, the duration chart, SLA and healthcheck", async () => {
    await open("#/jobs/quick");
    await page.getByRole("heading", { name: "quick", level: 1 }).waitFor();
    await page.locator(".chart-box canvas").first().waitFor();
    const rows = page.locator("table:has(caption:text('Last')) tbody tr");
    await expect.poll(() => rows.count()).toBe(20);
    // The page polls every 5 s: the button keeps its label and stays enabled through a poll.
    await page.evaluate(`(() => {
      const seen = (window.__moreLabels = []);
      const b = document.querySelector("button.more");
      new MutationObserver(() => seen.push(b.textContent + (b.disabled ? " (disabled)" : ""))).observe(b, { subtree: true, childList: true, characterData: true, attributes: true });
    })()`);
    await new Promise((r) => setTimeout(r, 6_000));
    expect(await page.evaluate("window.__moreLabels")).toEqual([]);
    await page.getByRole("button", { name: "Load 20 more" }).click();
    await page.waitForURL(/runs=40/);
    await expect.poll(() => rows.count()).toBe(30);
    expect(await page.locator(".kv").last().innerText()).toContain("allow");
    await shot(page, "job");

    const slaRun = await runJob(daemon, "slow");
    await waitRun(daemon, slaRun, ["SUCCESS"]);
    await open("#/jobs/slow");
    const first = page.locator("table:has(caption:text('Last')) tbody tr").first();
    await expect.poll(() => first.innerText()).toContain("breached");
    expect(await first.innerText()).toContain("healthcheck pass");
    await page.locator(".chart-box canvas").first().waitFor();
  });

  it("run view shows the record, outputs, the cycle's other runs, and stored logs by stream", async () => {
    await open(`#/runs/${seeded.extract}`);
    await page.getByRole("heading", { name: `Run #${seeded.extract}` }).waitFor();
    const record = page.locator(".kv").first();
    await expect.poll(() => record.innerText()).toContain("SUCCESS");
    expect(await record.innerText()).toMatch(/Exit code\s+0/);
    expect(await record.innerText()).toMatch(/Trigger\s+manual/);
    await page.getByRole("cell", { name: "42", exact: true }).waitFor();
    await page.locator(".cycle-list").getByRole("link", { name: new RegExp(`#${seeded.transform} transform`) }).waitFor();
    await page.locator(".ln-stdout", { hasText: "extract line 3" }).waitFor();
    await shot(page, "run");

    await open(`#/runs/${seeded.flaky}`);
    await page.locator(".ln-stderr", { hasText: "boom" }).waitFor();
    expect(await page.locator(".ln-stderr .stream").first().textContent()).toMatch(/stderr/i);
    await page.getByRole("button", { name: "Retry" }).waitFor();
  });

  it("a run started from the UI appears and its logs stream live into the page", async () => {
    await open("#/");
    await page.getByRole("button", { name: "Run slow now" }).click();
    const dialog = page.getByRole("dialog", { name: "Run slow now" });
    await dialog.getByLabel("Reason (optional)").fill("started from the browser test");
    await dialog.getByRole("button", { name: "Run now" }).click();
    await dialog.waitFor({ state: "hidden" });
    await page.getByRole("link", { name: /^Open run #\d+$/ }).click();
    await page.waitForURL(/#\/runs\/\d+$/);
    const runId = Number(/runs\/(\d+)/.exec(page.url())?.[1]);

    // Live: early lines are on the page while the run is still going.
    await page.locator(".ln", { hasText: /^\s*\d+\s*stdout\s*tick 3$/i }).first().waitFor({ timeout: 10_000 });
    const whileRunning = await call<RunLite>(daemon, "GET", `api/runs/${runId}`);
    expect(whileRunning.body.status).toBe("RUNNING");
    expect(await page.locator(".ln", { hasText: "tick 40" }).count()).toBe(0);
    expect(await page.getByTestId("log-conn").getAttribute("data-state")).toBe("live");

    await page.locator(".ln", { hasText: "tick 40" }).waitFor({ timeout: 15_000 });
    await page.locator('[data-testid="log-conn"][data-state="ended"]').waitFor({ timeout: 10_000 });
    await page.locator(".ln-stderr", { hasText: "warn 10" }).waitFor();
    await page.locator(".ln-healthcheck", { hasText: "healthy" }).waitFor();
    await expect.poll(() => page.locator(".view-head").innerText()).toContain("SUCCESS");
    expect(await page.locator(".kv").first().innerText()).toContain("started from the browser test");

    // Auto-scroll followed the stream to the bottom; scrolling up stops it.
    const gap = "(() => { const b = document.querySelector('.log-box'); return b.scrollHeight - b.scrollTop - b.clientHeight; })()";
    expect(await page.evaluate(gap)).toBeLessThan(10);
    await page.evaluate("document.querySelector('.log-box').scrollTop = 0");
    await page.getByRole("button", { name: "Jump to latest ↓" }).click();
    await page.getByRole("button", { name: "Following ↓" }).waitFor();
  });

  it("pause and resume from the overview", async () => {
    await open("#/");
    await page.getByRole("button", { name: "Pause extract" }).click();
    await page.getByRole("button", { name: "Resume extract" }).waitFor();
    expect(await page.locator('tr[data-job="extract"]').innerText()).toContain("paused");
    const paused = await call<{ jobs: { name: string; paused: boolean }[] }>(daemon, "GET", "api/jobs");
    expect(paused.body.jobs.find((j) => j.name === "extract")?.paused).toBe(true);
    await shot(page, "overview-paused");

    await page.getByRole("button", { name: "Resume extract" }).click();
    await page.getByRole("button", { name: "Pause extract" }).waitFor();
    const resumed = await call<{ jobs: { name: string; paused: boolean }[] }>(daemon, "GET", "api/jobs");
    expect(resumed.body.jobs.find((j) => j.name === "extract")?.paused).toBe(false);
  });

  it("cancel from the run view, and clear_lock's 409 shown while the job runs", async () => {
    const id = await runJob(daemon, "sleeper");
    await waitRun(daemon, id, ["RUNNING"]);
    // A second run, refused at once (concurrency forbid), is the newest: the overview still says what the job is doing.
    const refused = await runJob(daemon, "sleeper");
    expect((await waitRun(daemon, refused, ["SKIPPED"])).status).toBe("SKIPPED");
    await open("#/");
    await expect.poll(() => page.locator('tr[data-job="sleeper"]').innerText()).toContain("running");
    // So do the graph's node and the job page's badge.
    await open("#/graph");
    const sleeperNode = page.locator('svg.graph a.node[data-job="sleeper"]');
    await expect.poll(() => sleeperNode.getAttribute("data-status")).toBe("RUNNING");
    expect(await sleeperNode.getAttribute("aria-label")).toBe("sleeper: now RUNNING");
    await open("#/jobs/sleeper");
    await expect.poll(() => page.locator(".view-head").innerText()).toContain("RUNNING");
    expect(await page.locator(".view-head").innerText()).not.toContain("SKIPPED");
    await open("#/db/job_state");
    const row = page.locator("tr", { has: page.getByRole("link", { name: "sleeper", exact: true }) });
    await expect.poll(() => row.getByRole("button", { name: "Clear lock" }).isEnabled()).toBe(true);
    await row.getByRole("button", { name: "Clear lock" }).click();
    await page.getByText("Refused: conflict (409)").waitFor();
    await shot(page, "db-job_state");

    await open(`#/runs/${id}`);
    await page.getByRole("button", { name: "Cancel run" }).click();
    const done = await waitRun(daemon, id, ["FAILED"]);
    expect(done.status).toBe("FAILED");
    await page.locator(".kv").first().getByText("cancelled").waitFor();
  });

  it("graph view lays out the DAG with nodes coloured by last status; a click opens the job", async () => {
    await open("#/graph");
    const node = page.locator("svg.graph a.node", { hasText: "extract" });
    await node.waitFor();
    expect(await page.locator("svg.graph a.node").count()).toBe(7);
    expect(await page.locator("svg.graph path.edge").count()).toBe(2);
    // The DAG is drawn first, the job states colour it when they arrive.
    await expect.poll(() => node.getAttribute("class")).toContain("tone-ok");
    await expect.poll(() => page.locator("svg.graph a.node", { hasText: "flaky" }).getAttribute("class")).toContain("tone-bad");
    await shot(page, "graph");
    await node.click();
    await page.waitForURL(/#\/jobs\/extract$/);
  });

  it("audit search filters, pages and exports RFC 4180 CSV", async () => {
    await open("#/audit?status=failed");
    const rows = page.locator("table tbody tr");
    await expect.poll(() => rows.count()).toBeGreaterThanOrEqual(2);
    for (const text of await rows.allInnerTexts()) expect(text).toContain("FAILED");
    await page.getByLabel("Job").selectOption("flaky");
    await page.waitForURL(/job=flaky/);
    await expect.poll(() => rows.count()).toBe(1);
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Export CSV" }).click()]);
    const csv = readFileSync(await download.path(), "utf8");
    const lines = csv.split("\r\n");
    expect(lines[0]).toBe(
      "id,job_name,status,trigger,triggered_by,reason,attempt,started_at,finished_at,duration_ms,exit_code,sla_breached,hc_status,cycle_id,error,params,scheduled_at,backfill_id",
    );
    expect(lines[1]).toMatch(new RegExp(`^${seeded.flaky},flaky,FAILED,manual,`));
    expect(lines.at(-1)).toBe("");

    // A select changed with the keyboard applies at once and keeps the focus, so the next arrow key goes on.
    await page.getByLabel("Trigger").focus();
    await page.keyboard.press("ArrowDown");
    await page.waitForURL(/trigger=manual/);
    expect(await page.evaluate("document.activeElement && document.activeElement.name")).toBe("trigger");
    await page.keyboard.press("ArrowDown");
    await page.waitForURL(/trigger=schedule/);
    expect(await page.evaluate("document.activeElement && document.activeElement.name")).toBe("trigger");
    // Clear filters resets the fields from the URL.
    await page.getByRole("button", { name: "Clear filters" }).click();
    await page.waitForURL((u) => !u.hash.includes("trigger="));
    await expect.poll(() => page.getByLabel("Trigger").inputValue()).toBe("");
    expect(await page.getByLabel("Job").inputValue()).toBe("");

    await open("#/audit?reason=browser");
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().innerText()).toContain("slow");
    await shot(page, "audit");
  });

  it("database views: job_runs page sizes 25/50/100 and sorting, logs search, outputs, alerts retry", async () => {
    await open("#/db/job_runs?job=quick");
    const rows = page.locator("table tbody tr");
    await expect.poll(() => rows.count()).toBe(30);
    await page.getByLabel("Rows per page").selectOption("25");
    await page.waitForURL(/page_size=25/);
    await expect.poll(() => rows.count()).toBe(25);
    expect(await page.locator(".pager-count").innerText()).toContain("1–25 of 30");
    await page.getByRole("button", { name: "Next ›" }).click();
    await page.waitForURL(/page=2/);
    await expect.poll(() => rows.count()).toBe(5);
    await page.getByLabel("Rows per page").selectOption("100");
    await expect.poll(() => rows.count()).toBe(30);
    await page.getByRole("button", { name: /^Run/ }).click();
    await page.waitForURL(/sort=id&order=desc/);
    await page.getByRole("button", { name: /^Run/ }).click();
    await page.waitForURL(/sort=id&order=asc/);
    const ids = async () => (await rows.allInnerTexts()).map((t) => Number(/#(\d+)/.exec(t)?.[1]));
    await expect.poll(async () => {
      const now = await ids();
      return now.length === 30 && now.every((id, i) => i === 0 || id > now[i - 1]!);
    }).toBe(true);
    await shot(page, "db-job_runs");

    await open("#/db/run_logs?q=boom");
    // The full-text index may trail the log writer a little; the view polls every 5 s.
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBeGreaterThanOrEqual(1);
    expect(await rows.first().innerText()).toContain("boom");
    await shot(page, "db-run_logs");

    await open("#/db/run_outputs");
    await page.getByRole("cell", { name: "42", exact: true }).waitFor();
    await shot(page, "db-run_outputs");

    await open("#/db/alerts");
    const failed = page.locator("tr", { hasText: "failed" }).filter({ has: page.getByRole("button", { name: "Retry" }) });
    await expect.poll(() => failed.count(), { timeout: 15_000 }).toBeGreaterThanOrEqual(1);
    await shot(page, "db-alerts");
    await failed.first().getByRole("button", { name: "Retry" }).click();
    await page.getByText(/Retry of alert \d+: done/).waitFor();

    await open("#/db/state");
    await page.getByRole("link", { name: "sleeper", exact: true }).waitFor();
  });

  it("integrations: credential status and a test delivery with the remote answer", async () => {
    await open("#/integrations");
    const card = page.locator("li.integration", { hasText: "hooks" });
    await card.getByText("configured").waitFor();
    const before = receiver.posts.length;
    await card.getByRole("button", { name: "Test" }).click();
    await card.locator(".answer").waitFor();
    expect(await card.locator(".answer").innerText()).toContain("delivered");
    expect(await card.locator(".answer").innerText()).toContain("received");
    expect(receiver.posts.length).toBeGreaterThan(before);
    await shot(page, "integrations");
  });

  it("config: validates as you type with errors at their line, 422 on save, then a saved round-trip", async () => {
    await open("#/config");
    const editor = page.getByRole("textbox", { name: "svc.yaml" });
    await editor.waitFor();
    const original = await editor.inputValue();
    expect(original).toContain("Pull rows from the source");
    await page.getByText("Effective svc.yaml").waitFor();

    const broken = original.replace('time: "0230"', 'time: "2730"');
    await editor.fill(broken);
    const badLine = broken.split("\n").findIndex((l) => l.includes('"2730"')) + 1;
    await page.locator(".gl-error", { hasText: String(badLine) }).waitFor();
    const issue = page.locator("#editor-issues li.issue-error").first();
    await issue.getByRole("button", { name: new RegExp(`svc.yaml:${badLine}:`) }).click();
    await expect.poll(() => editor.evaluate((el) => {
      const t = el as unknown as { value: string; selectionStart: number; selectionEnd: number };
      return t.value.slice(t.selectionStart, t.selectionEnd);
    })).toContain('"2730"');
    await shot(page, "config-errors");
    await page.getByRole("button", { name: "Save and reload" }).click();
    await page.getByText("Not saved: the config is invalid (422)").waitFor();
    expect(readFileSync(join(daemon.dir, "svc.yaml"), "utf8")).toBe(original);

    await editor.fill(original.replace("Pull rows from the source", "Pull rows (edited in the browser)"));
    await expect.poll(() => page.getByTestId("validation").innerText()).toMatch(/valid|0 errors/);
    await page.getByRole("button", { name: "Save and reload" }).click();
    await page.getByText("svc.yaml saved and reloaded").waitFor();
    expect(readFileSync(join(daemon.dir, "svc.yaml"), "utf8")).toContain("Pull rows (edited in the browser)");
    expect(existsSync(join(daemon.dir, "svc.yaml.bak"))).toBe(true);
    const jobs = await call<{ jobs: { name: string; description: string }[] }>(daemon, "GET", "api/jobs");
    expect(jobs.body.jobs.find((j) => j.name === "extract")?.description).toBe("Pull rows (edited in the browser)");
    // The effective config beside it follows the save, without a page reload.
    await expect.poll(() => page.locator(".card", { hasText: "Effective svc.yaml" }).innerText()).toContain("Pull rows (edited in the browser)");

    // Unsaved edits: the browser asks before the tab goes.
    const other = await context.newPage();
    await other.goto(`${daemon.url}#/config`);
    const box = other.getByRole("textbox", { name: "svc.yaml" });
    await box.waitFor();
    // Typed (a real user gesture: without one, browsers do not ask).
    await box.click();
    await other.keyboard.press("End");
    await other.keyboard.type(" # an edit not saved");
    // ... and the dashboard before it shows another view: declined, the editor and its text stay.
    const answers = [false, true];
    const asked: string[] = [];
    other.on("dialog", (d) => {
      asked.push(d.type() === "confirm" ? `confirm: ${d.message()}` : d.type());
      void (d.type() === "confirm" && answers.shift() === false ? d.dismiss() : d.accept());
    });
    await other.getByRole("link", { name: "Audit" }).first().click();
    await expect.poll(() => asked).toEqual(["confirm: svc.yaml has unsaved changes. Leave this page and lose them?"]);
    expect(new URL(other.url()).hash).toBe("#/config");
    expect(await box.inputValue()).toContain(" # an edit not saved");
    // Any change of the address asks (a typed URL, the back button): declined again.
    asked.length = 0;
    answers.splice(0, answers.length, false);
    await other.evaluate("location.hash = '#/audit'");
    await expect.poll(() => asked).toEqual(["confirm: svc.yaml has unsaved changes. Leave this page and lose them?"]);
    expect(await box.inputValue()).toContain(" # an edit not saved");
    asked.length = 0;
    await other.close({ runBeforeUnload: true });
    await expect.poll(() => asked).toEqual(["beforeunload"]);
    await page.reload();
    await expect.poll(() => page.getByRole("textbox", { name: "svc.yaml" }).inputValue()).toContain("edited in the browser");
    await shot(page, "config");

    // svcd.yaml broken by hand meanwhile: svc.yaml is saved but the reload is rejected. Said so, not "Not saved".
    const daemonYaml = readFileSync(join(daemon.dir, "svcd.yaml"), "utf8");
    writeFileSync(join(daemon.dir, "svcd.yaml"), "executor:\n  kill_grace: soon\n");
    try {
      const edited = page.getByRole("textbox", { name: "svc.yaml" });
      await edited.fill((await edited.inputValue()).replace("edited in the browser", "saved, not reloaded"));
      await page.getByRole("button", { name: "Save and reload" }).click();
      await page.getByText(/^Saved, but not reloaded: the daemon keeps its previous config\./).waitFor();
      expect(readFileSync(join(daemon.dir, "svc.yaml"), "utf8")).toContain("saved, not reloaded");
      expect(await page.getByText("Not saved: the config is invalid (422)").count()).toBe(0);
      await expect.poll(() => page.locator(".editor-bar").innerText()).toContain("saved");
      expect(await page.locator(".editor-bar").innerText()).not.toContain("unsaved changes");
    } finally {
      writeFileSync(join(daemon.dir, "svcd.yaml"), daemonYaml);
      await call(daemon, "POST", "api/daemon/reload");
    }
  });

  it("a run page offers Retry only on the job's newest run (the one retry acts on)", async () => {
    const older = await runJob(daemon, "flaky");
    await waitRun(daemon, older, ["FAILED"]);
    const newest = await runJob(daemon, "flaky");
    await waitRun(daemon, newest, ["FAILED"]);
    await open(`#/runs/${newest}`);
    await page.getByRole("button", { name: "Retry" }).waitFor();
    // Retried from here: the new run joins this run's cycle, and the page's "same cycle" list shows it.
    await page.getByRole("button", { name: "Retry" }).click();
    const retried = await waitUntil("the retry run", async () => (await call<{ runs: { id: number }[] }>(daemon, "GET", "api/jobs/flaky?runs=1")).body.runs.find((r) => r.id > newest)?.id);
    await page.locator("ul.cycle-list").getByRole("link", { name: `#${retried} flaky` }).waitFor();
    await open(`#/runs/${older}`);
    await page.getByRole("button", { name: "Run again…" }).waitFor();
    // Give the job's state a moment to load: the button must stay away, not just be late.
    await new Promise((r) => setTimeout(r, 500));
    expect(await page.getByRole("button", { name: "Retry" }).count()).toBe(0);
  });

  it("daemon view: info, status, reload; stop asks first and Escape cancels", async () => {
    await open("#/daemon");
    await page.getByText(String(daemon.proc.pid), { exact: true }).waitFor();
    await page.getByRole("button", { name: "Reload config" }).click();
    await page.getByText("Configuration reloaded").waitFor();
    await shot(page, "daemon");
    await page.getByRole("button", { name: "Stop daemon…" }).click();
    await page.getByRole("dialog", { name: "Stop the daemon?" }).waitFor();
    await page.keyboard.press("Escape");
    await page.getByRole("dialog").waitFor({ state: "hidden" });
    expect(daemon.proc.exitCode).toBeNull();

    await page.getByRole("button", { name: "Stop daemon…" }).click();
    await page.getByRole("dialog", { name: "Stop the daemon?" }).getByRole("button", { name: "Stop daemon" }).click();
    await page.getByText("Stop requested").waitFor();
    await waitUntil("svcd to exit", () => daemon.proc.exitCode !== null || daemon.proc.signalCode !== null, 20_000);
  });
});

suite("dashboard under bearer auth", () => {
  let tmp: string;
  let daemon: Daemon;
  let browser: Browser;

  beforeAll(async () => {
    ensureDashboardBuilt();
    tmp = mkdtempSync(join(tmpdir(), "svc-web-auth-"));
    const dir = join(tmp, "project");
    mkdirSync(dir);
    writeFileSync(join(tmp, "tokens"), `# dashboard test\n${TOKEN}\n`);
    writeFileSync(
      join(dir, "svc.yaml"),
      `jobs:\n  hello:\n    description: Says hello\n    command: "for i in 1 2 3 4 5; do echo hello $i; sleep 0.2; done"\n    frequency: manual\n`,
    );
    writeFileSync(join(dir, "svcd.yaml"), `auth:\n  type: bearer\n  bearer:\n    token_file: ${join(tmp, "tokens")}\n`);
    daemon = await startDaemon(dir);
    browser = await launch();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await daemon?.stop();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it("serves the page without a token, prompts on 401, rejects a wrong token, signs in and streams logs over the bearer subprotocol", async () => {
    expect((await call(daemon, "GET", "api/jobs")).status).toBe(401);
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${daemon.url}#/`);
    const dialog = page.getByRole("dialog", { name: "Sign in to svc" });
    await dialog.waitFor();
    await dialog.getByLabel("Access token").fill("not-the-token");
    await dialog.getByRole("button", { name: "Sign in" }).click();
    await dialog.getByText("The daemon refused the token").waitFor();
    if (process.env.SVC_SCREENSHOTS) await page.screenshot({ path: join(ROOT, "docs", "screenshots", "token-prompt.png") });
    await dialog.getByLabel("Access token").fill(TOKEN);
    await dialog.getByRole("button", { name: "Sign in" }).click();
    await dialog.waitFor({ state: "hidden" });
    await page.locator('tr[data-job="hello"]').waitFor();
    await page.getByTestId("version").waitFor();
    expect(await page.evaluate("sessionStorage.getItem('svc.token')")).toBe(TOKEN);

    await page.getByRole("button", { name: "Run hello now" }).click();
    await page.getByRole("dialog", { name: "Run hello now" }).getByRole("button", { name: "Run now" }).click();
    await page.getByRole("link", { name: /^Open run #\d+$/ }).click();
    await page.locator(".ln", { hasText: "hello 1" }).waitFor({ timeout: 10_000 });
    await page.locator(".ln", { hasText: "hello 5" }).waitFor({ timeout: 10_000 });
    // "ended" comes only from the WebSocket's end frame: the bearer subprotocol was accepted.
    await page.locator('[data-testid="log-conn"][data-state="ended"]').waitFor({ timeout: 10_000 });

    // The token survives a reload of the tab (sessionStorage): the run page loads again without a prompt.
    await page.reload();
    await page.locator(".ln", { hasText: "hello 5" }).waitFor();
    expect(await dialog.isVisible()).toBe(false);
    await context.close();
  }, 60_000);
});

suite("dashboard under api.base_path", () => {
  let tmp: string;
  let daemon: Daemon;
  let browser: Browser;

  beforeAll(async () => {
    ensureDashboardBuilt();
    tmp = mkdtempSync(join(tmpdir(), "svc-web-base-"));
    const dir = join(tmp, "project");
    mkdirSync(dir);
    writeFileSync(
      join(dir, "svc.yaml"),
      `jobs:\n  hello:\n    description: Says hello\n    command: "for i in 1 2 3; do echo hello $i; sleep 0.2; done"\n    frequency: manual\n`,
    );
    writeFileSync(join(dir, "svcd.yaml"), "api:\n  base_path: /svc\n");
    daemon = await startDaemon(dir);
    browser = await launch();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await daemon?.stop();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it("loads from /svc/, sends every API and WebSocket request under /svc/", async () => {
    expect((await call(daemon, "GET", "svc/api/status")).status, "svcd mounts the API under api.base_path").toBe(200);
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    const urls: string[] = [];
    page.on("request", (r) => urls.push(new URL(r.url()).pathname));
    page.on("websocket", (ws) => urls.push(new URL(ws.url()).pathname));
    await page.goto(`${daemon.url}svc/#/`);
    await page.locator('tr[data-job="hello"]').waitFor();
    await page.getByRole("button", { name: "Run hello now" }).click();
    await page.getByRole("dialog", { name: "Run hello now" }).getByRole("button", { name: "Run now" }).click();
    await page.getByRole("link", { name: /^Open run #\d+$/ }).click();
    await page.locator('[data-testid="log-conn"][data-state="ended"]').waitFor();
    expect(await page.locator(".ln", { hasText: "hello 3" }).count()).toBe(1);
    const served = urls.filter((u) => /\/(api|ws|assets)\//.test(u));
    expect(served.some((u) => u.startsWith("/svc/ws/logs/"))).toBe(true);
    expect(served.filter((u) => !u.startsWith("/svc/"))).toEqual([]);
    await context.close();
  }, 60_000);
});

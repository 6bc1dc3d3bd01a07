/**
 * GET /metrics against a real Prometheus (Debian's `prometheus` package,
 * which .ci/run installs): Prometheus scrapes the built svcd on loopback
 * every second while jobs run, and its HTTP API must give back exactly the
 * runs made (counts, duration buckets, dispatch delays) and svcd's resident
 * memory. `promtool check metrics` passes on the exposition, and
 * `promtool check rules` on the alert rules of docs/DEPLOY.md.
 *
 * Without the package the test is skipped with a printed reason, except
 * under CI=true, where a missing Prometheus is a failure.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { cleanup, project, startDaemon, until, type DaemonProc } from "../helpers/daemonKit.js";
import { freePort } from "../helpers/freePort.js";
import { parseExposition } from "../helpers/promText.js";
import { describeUnless, type Requirement } from "../helpers/skip.js";
import { ROOT } from "./helpers/cli.js";

const PROMETHEUS = "/usr/bin/prometheus";
const PROMTOOL = "/usr/bin/promtool";
const missing = [PROMETHEUS, PROMTOOL].filter((f) => !existsSync(f));
/** Skipped with the reason without Prometheus; under CI=true (.ci/run installs it) the file fails. */
const NEEDS_PROMETHEUS: Requirement = {
  missing: missing.length === 0 ? null : `needs ${missing.join(" and ")}: install Debian's prometheus package (apt-get install -y --no-install-recommends prometheus)`,
  requiredInCI: true,
};

const yaml = `
jobs:
  tick:
    command: "echo tick"
    frequency: "every:2s"
  ok:
    command: "echo ok; sleep 0.2"
  bad:
    command: "echo failing >&2; exit 4"
`;

interface Vector {
  metric: Record<string, string>;
  value: [number, string];
}

describeUnless(NEEDS_PROMETHEUS, "Prometheus scraping svcd", () => {
  let dir: string;
  let d: DaemonProc;
  let prom: ChildProcess;
  let promOut = "";
  let promBase: string;
  let tsdb: string;

  async function query(expr: string): Promise<Vector[]> {
    const res = await fetch(`${promBase}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = (await res.json()) as { status: string; data: { resultType: string; result: Vector[] }; error?: string };
    if (body.status !== "success") throw new Error(`query ${expr}: ${body.error}`);
    return body.data.result;
  }
  /** The value of a query that returns one series, or null when it returns none. */
  async function scalar(expr: string): Promise<number | null> {
    const r = await query(expr);
    if (r.length > 1) throw new Error(`query ${expr}: ${r.length} series`);
    return r.length === 0 ? null : Number(r[0]!.value[1]);
  }
  /** Waits until Prometheus has scraped a value equal to `want` (scrapes are 1 s apart). */
  async function eventually(expr: string, want: number): Promise<void> {
    let last: number | null = null;
    try {
      await until(`${expr} == ${want}`, async () => (last = await scalar(expr)) === want, 20_000);
    } catch {
      throw new Error(`Prometheus: ${expr} is ${last}, expected ${want}\n${promOut.slice(-2000)}`);
    }
  }

  beforeAll(async () => {
    dir = project(yaml);
    d = await startDaemon(dir);
    tsdb = mkdtempSync(join(tmpdir(), "svc-prom-"));
    const port = await freePort();
    promBase = `http://127.0.0.1:${port}`;
    const config = join(tsdb, "prometheus.yml");
    writeFileSync(
      config,
      `global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: svc\n    metrics_path: /metrics\n    static_configs:\n      - targets: ["${d.addr}"]\n`,
    );
    prom = spawn(PROMETHEUS, [`--config.file=${config}`, `--storage.tsdb.path=${join(tsdb, "data")}`, `--web.listen-address=127.0.0.1:${port}`, "--log.level=warn"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    prom.stdout!.on("data", (c: Buffer) => (promOut += c.toString()));
    prom.stderr!.on("data", (c: Buffer) => (promOut += c.toString()));
    await until("Prometheus to be ready", async () => {
      try {
        return (await fetch(`${promBase}/-/ready`)).status === 200;
      } catch {
        return false;
      }
    }, 30_000);
    await until("the first scrape of svcd to succeed", async () => (await scalar('up{job="svc"}')) === 1, 20_000);
  }, 60_000);

  afterAll(async () => {
    if (prom && prom.exitCode === null) {
      prom.kill("SIGTERM");
      await new Promise((r) => prom.once("exit", r));
    }
    await d?.stop();
    cleanup(dir);
    if (tsdb) rmSync(tsdb, { recursive: true, force: true });
  });

  it("gives back the runs made: counts by status and trigger, duration buckets, dispatch delays, resident memory", async () => {
    // One at a time: under concurrency: forbid a second run while one is RUNNING would be SKIPPED.
    for (const job of ["ok", "ok", "ok", "bad", "bad"]) {
      const id = (await d.api<{ run_id: number }>("POST", `/api/jobs/${job}/run`)).body.run_id;
      await until(`run ${id} to end`, async () => ["SUCCESS", "FAILED"].includes((await d.api<{ status: string }>("GET", `/api/runs/${id}`)).body.status));
    }
    // Let the scheduled job run a few times, then pause it so its count stops moving.
    await until("three scheduled runs of tick", async () => (await d.api<{ total: number }>("GET", "/api/audit?job=tick&status=success")).body.total >= 3, 20_000);
    expect((await d.api("POST", "/api/jobs/tick/pause")).status).toBe(200);
    await until("tick to be idle", async () => (await d.api<{ total: number }>("GET", "/api/audit?job=tick&status=running")).body.total === 0);
    const ticks = (await d.api<{ runs: { status: string; scheduled_for: string; started_at: string; triggered_by: string }[] }>("GET", "/api/audit?job=tick&limit=1000")).body.runs;
    expect(ticks.every((r) => r.status === "SUCCESS" && r.triggered_by === "scheduler")).toBe(true);

    await eventually('svc_runs_total{job="svc",job_name="ok",status="SUCCESS",trigger="manual"}', 3);
    await eventually('svc_runs_total{job_name="bad",status="FAILED",trigger="manual"}', 2);
    await eventually('svc_runs_total{job_name="tick",status="SUCCESS",trigger="schedule"}', ticks.length);
    expect(await scalar('svc_runs_total{job_name="ok",status="FAILED"}')).toBeNull();
    // Prometheus's own job label is "svc"; ours is job_name, so nothing was renamed to exported_job.
    expect(await query('{exported_job!=""}')).toEqual([]);

    await eventually('svc_run_duration_seconds_bucket{job_name="ok",le="+Inf"}', 3);
    expect(await scalar('svc_run_duration_seconds_bucket{job_name="ok",le="0.1"}')).toBe(0); // each slept 0.2 s
    expect(await scalar('svc_run_duration_seconds_bucket{job_name="ok",le="0.5"}')).toBe(3);

    await eventually("svc_dispatch_delay_seconds_count", ticks.length);
    await eventually('svc_dispatch_delay_seconds_bucket{le="+Inf"}', ticks.length);
    const delaySum = ticks.reduce((s, r) => s + (Date.parse(r.started_at) - Date.parse(r.scheduled_for)) / 1000, 0);
    expect(await scalar("svc_dispatch_delay_seconds_sum")).toBeCloseTo(delaySum, 6);

    const rss = await scalar('process_resident_memory_bytes{job="svc"}');
    const vmRss = Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${d.proc.pid}/status`, "utf8"))![1]) * 1024;
    expect(rss).toBeGreaterThan(vmRss * 0.5);
    expect(rss).toBeLessThan(vmRss * 2);
    // Prometheus's latest sample can predate the pause by up to a scrape interval: wait for it.
    await eventually('svc_job_paused{job_name="tick"}', 1);
  }, 90_000);

  it("the exposition passes promtool check metrics", async () => {
    const text = await (await fetch(`${d.base}/metrics`)).text();
    expect(parseExposition(text).length).toBeGreaterThan(50);
    const r = spawnSync(PROMTOOL, ["check", "metrics"], { input: text, encoding: "utf8" });
    expect(`${r.stdout}${r.stderr}`).toBe("");
    expect(r.status).toBe(0);
  });

  it("the alert rules in docs/DEPLOY.md pass promtool check rules", () => {
    const doc = readFileSync(join(ROOT, "docs", "DEPLOY.md"), "utf8");
    const block = /```yaml\n(groups:[\s\S]*?)```/.exec(doc);
    expect(block, "a ```yaml block starting with groups: in DEPLOY.md").not.toBeNull();
    const file = join(tsdb, "rules.yml");
    writeFileSync(file, block![1]!);
    const r = spawnSync(PROMTOOL, ["check", "rules", file], { encoding: "utf8" });
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
    expect(r.stdout).toContain("SUCCESS: 3 rules found");
  });
});

/**
 * Operations: what watching svc costs. A real svcd (bench/helpers/daemon.ts)
 * with 1,000 jobs and 1,000,000 runs of history, every job run once since
 * start (so every per-job counter and histogram exists), then:
 *
 * 1. `GET /metrics` latency: one client, sequential requests (what
 *    Prometheus does), p50/p99 and the size of the answer.
 * 2. The tick with and without a real Prometheus scraping `/metrics` every
 *    second: a job `heartbeat` runs `every:1s`, and each of its runs records
 *    its scheduled instant and when it started; start minus slot is how late
 *    the tick that fired it was, plus its dispatch. Three phases of equal
 *    length, no scraping / scraping / no scraping; the figure is the p99
 *    while scraping over the p99 of the two quiet phases together.
 *    Skipped (with a note) when Debian's prometheus package is absent.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { openStore } from "../src/store/index.js";
import { cpuMs, startDaemon, type Daemon } from "./helpers/daemon.js";
import { fillRuns } from "./helpers/fillRuns.js";
import { svcYaml, writeTempProject } from "./helpers/projectGen.js";
import { median, pct, quick, round, sleep, sleepUntil } from "./helpers/stats.js";
import type { BenchResult, BenchSection } from "./types.js";
import { freePort } from "../test/helpers/freePort.js";

const JOBS = 1_000;
const RUNS = 1_000_000;
const SCRAPES = quick() ? 100 : 300;
const PHASE_S = quick() ? 20 : 60;
const TARGET_METRICS_P99_MS = 50;
/** The tick while scraping may be this much later at p99 than without (noise on a shared machine). */
const TARGET_TICK_RATIO = 1.25;
const PROMETHEUS = "/usr/bin/prometheus";

/** The project: 1,000 generated jobs, the heartbeat, and 1,000,000 runs of history. */
function makeProject(): { dir: string; fillMs: number } {
  const heartbeat = '  heartbeat:\n    command: "true"\n    frequency: "every:1s"\n';
  const daemon = "executor:\n  pool_size: 16\nscheduler:\n  max_concurrent_jobs: 64\nlog:\n  level: warn\napi:\n  addr: 127.0.0.1:0\n";
  const dir = writeTempProject(svcYaml(JOBS, heartbeat), daemon, "svc-ops-bench-");
  writeFileSync(join(dir, "step.sh"), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
  mkdirSync(join(dir, ".svc"), { mode: 0o700 });
  const file = join(dir, ".svc", "svc.db");
  openStore({ path: file, busyTimeoutMs: 5000, walAutocheckpoint: 1000 }).close();
  const t0 = performance.now();
  fillRuns(file, RUNS, JOBS, `printf('job-%04d', i % ${JOBS} + 1)`);
  return { dir, fillMs: performance.now() - t0 };
}

async function idle(d: Daemon): Promise<void> {
  for (;;) {
    const s = await d.get<{ jobs: { running: number } }>("/api/status");
    const pending = await d.get<{ total: number }>("/api/audit?status=pending&limit=1");
    if (s.body.jobs.running === 0 && pending.body.total === 0) return;
    await sleep(200);
  }
}

/** Start minus slot of the heartbeat's runs whose slot is in [from, to), ms. */
function heartbeatDelays(dbFile: string, from: number, to: number): number[] {
  const db = new Database(dbFile, { readonly: true });
  try {
    const rows = db
      .prepare("SELECT scheduled_for AS s, started_at AS t FROM job_runs WHERE job_name = 'heartbeat' AND scheduled_for >= ? AND scheduled_for < ? AND started_at IS NOT NULL")
      .all(new Date(from).toISOString(), new Date(to).toISOString()) as { s: string; t: string }[];
    return rows.map((r) => Date.parse(r.t) - Date.parse(r.s));
  } finally {
    db.close();
  }
}

async function startPrometheus(addr: string, dir: string): Promise<{ proc: ChildProcess; base: string; stop(): Promise<void> }> {
  const port = await freePort();
  const config = join(dir, "prometheus.yml");
  writeFileSync(config, `global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: svc\n    static_configs:\n      - targets: ["${addr}"]\n`);
  const proc = spawn(PROMETHEUS, [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, "tsdb")}`, `--web.listen-address=127.0.0.1:${port}`, "--log.level=warn"], { stdio: "ignore" });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`${base}/-/ready`)).status === 200) break;
    } catch {
      // not yet
    }
    await sleep(100);
  }
  return {
    proc,
    base,
    stop: () =>
      new Promise((r) => {
        if (proc.exitCode !== null) return r();
        proc.once("exit", () => r());
        proc.kill("SIGTERM");
      }),
  };
}

export default async function opsBench(): Promise<BenchSection> {
  const { dir, fillMs } = makeProject();
  const results: BenchResult[] = [];
  const notes: string[] = [];
  const d = await startDaemon(dir, { keepData: true, timeoutMs: 300_000 });
  let prometheus: Awaited<ReturnType<typeof startPrometheus>> | null = null;
  try {
    // Every job once (dependents of the after: chains follow), so every per-job series exists.
    const jobs = (await d.get<{ jobs: { name: string }[] }>("/api/jobs")).body.jobs.map((j) => j.name).filter((n) => n !== "heartbeat");
    for (const name of jobs) await d.post(`/api/jobs/${name}/run`);
    await idle(d);

    // 1. /metrics, sequentially.
    const first = await d.get<string>("/metrics");
    const text = String(first.body);
    const series = text.split("\n").filter((l) => l !== "" && !l.startsWith("#")).length;
    const times: number[] = [];
    const cpu0 = cpuMs(d.pid);
    for (let i = 0; i < SCRAPES; i++) times.push((await d.get("/metrics")).ms);
    const cpuPerScrape = ((cpuMs(d.pid) ?? 0) - (cpu0 ?? 0)) / SCRAPES;
    const p99 = pct(times, 99);
    results.push(
      {
        name: `GET /metrics p99, ${JOBS.toLocaleString("en")} jobs, ${RUNS.toLocaleString("en")} runs in history`,
        value: round(p99, 1),
        unit: "ms",
        target: `< ${TARGET_METRICS_P99_MS} ms`,
        ok: p99 < TARGET_METRICS_P99_MS,
        notes: `median ${round(median(times), 1)} ms over ${SCRAPES} sequential requests; ${round(text.length / 1024)} KiB, ${series.toLocaleString("en")} samples`,
      },
      { name: "svcd CPU time per /metrics scrape", value: round(cpuPerScrape, 1), unit: "ms", notes: "user + system time of the daemon over the sequential requests, divided by their number (load-independent)" },
    );

    // 2. The tick (heartbeat lateness) without / with / without a real Prometheus scraping every second.
    if (!existsSync(PROMETHEUS)) {
      notes.push(`The tick comparison was skipped: ${PROMETHEUS} is missing (apt-get install prometheus).`);
    } else {
      const dbFile = join(dir, ".svc", "svc.db");
      const phases: { label: string; from: number; to: number }[] = [];
      let at = Math.ceil(Date.now() / 1000) * 1000 + 2_000;
      const phase = async (label: string, scraping: boolean) => {
        if (scraping) prometheus = await startPrometheus(d.addr, dir);
        const from = Math.max(at, Math.ceil(Date.now() / 1000) * 1000 + 1_000);
        const to = from + PHASE_S * 1000;
        await sleepUntil(to + 1_500);
        phases.push({ label, from, to });
        if (scraping && prometheus) {
          const scrapes = await (await fetch(`${prometheus.base}/api/v1/query?query=${encodeURIComponent(`count_over_time(scrape_duration_seconds{job="svc"}[${PHASE_S}s])`)}`)).json() as { data: { result: { value: [number, string] }[] } };
          const durP = await (await fetch(`${prometheus.base}/api/v1/query?query=${encodeURIComponent(`max_over_time(scrape_duration_seconds{job="svc"}[${PHASE_S}s])`)}`)).json() as { data: { result: { value: [number, string] }[] } };
          notes.push(`Prometheus scraped ${scrapes.data.result[0]?.value[1] ?? "?"} times in the ${PHASE_S} s phase; its longest scrape took ${round(Number(durP.data.result[0]?.value[1] ?? NaN) * 1000, 1)} ms.`);
          await prometheus.stop();
          prometheus = null;
        }
        at = to;
      };
      await phase("quiet", false);
      await phase("scraping", true);
      await phase("quiet again", false);
      const quiet = [...heartbeatDelays(dbFile, phases[0]!.from, phases[0]!.to), ...heartbeatDelays(dbFile, phases[2]!.from, phases[2]!.to)];
      const scraped = heartbeatDelays(dbFile, phases[1]!.from, phases[1]!.to);
      const ratio = pct(scraped, 99) / pct(quiet, 99);
      results.push(
        { name: "tick lateness p99 (heartbeat start - slot), no scraping", value: round(pct(quiet, 99), 1), unit: "ms", notes: `median ${round(median(quiet), 1)} ms, ${quiet.length} runs in 2 phases of ${PHASE_S} s` },
        { name: "tick lateness p99, Prometheus scraping /metrics every second", value: round(pct(scraped, 99), 1), unit: "ms", notes: `median ${round(median(scraped), 1)} ms, ${scraped.length} runs` },
        {
          name: "tick lateness p99 while scraped / not scraped",
          value: round(ratio, 2),
          unit: "ratio",
          target: `<= ${TARGET_TICK_RATIO}x`,
          ok: ratio <= TARGET_TICK_RATIO,
        },
      );
    }
  } finally {
    if (prometheus) await (prometheus as { stop(): Promise<void> }).stop();
    await d.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    title: "Operations: /metrics and the tick under Prometheus",
    method:
      `A real svcd (the bin/svcd launcher) on ${JOBS.toLocaleString("en")} generated jobs plus a \`heartbeat\` job (\`every:1s\`, \`true\`), ` +
      `with ${RUNS.toLocaleString("en")} runs of history written with SQL before it starts (${round(fillMs / 1000, 1)} s), and every job run once through the API ` +
      `so that every per-job counter and histogram exists. \`GET /metrics\`: ${SCRAPES} sequential requests from this process over a kept-alive connection. ` +
      `The tick: the heartbeat's runs record their slot and their start; start minus slot is how late the tick fired plus the dispatch. ` +
      `Three ${PHASE_S} s phases: quiet, Debian's Prometheus 2.42 scraping /metrics every 1 s, quiet again; p99 of the scraped phase over the p99 of both quiet phases. ` +
      notes.join(" "),
    results,
  };
}

import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { openStore } from "../src/store/index.js";
import { svcYaml, writeTempProject } from "./helpers/projectGen.js";
import { sig } from "./helpers/stats.js";
import type { BenchResult, BenchSection } from "./types.js";

/**
 * The API under load, through the real `svcd` binary: autocannon against
 * `GET /api/status` and `GET /api/jobs` of a daemon with 1,000 jobs (every
 * job with 20 runs of history, so `last_run` is real), first idle, then while
 * 50 jobs run and each write 100 log lines a second. The load generator runs
 * in this process on the same 2 cores as the daemon and the jobs.
 *
 * Each measurement: 10 connections sending as fast as answers come back
 * (the latency includes queueing behind the other 9), 3 runs of 5 s, the
 * median run's p99 and throughput. Autocannon's fixed-rate mode was tried
 * and dropped: it sends each second's quota in a burst, which measures the
 * burst, not the server.
 */

const ROOT = resolve(import.meta.dirname, "..");
const JOBS = 1_000;
const LOGGERS = 50;
const RUNS_PER_JOB = 20;
const CONNECTIONS = 10;
const DURATION_S = 3;
const REPEATS = 3;
const TARGET_STATUS_P99_MS = 10;
const TARGET_JOBS_P99_MS = 50;
const TARGET_RSS_MB = 120;

interface CannonResult {
  latency: { p50: number; p99: number; average: number };
  requests: { average: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}
type Cannon = (opts: { url: string; connections: number; duration: number }) => Promise<CannonResult>;
const autocannon = createRequire(import.meta.url)("autocannon") as Cannon;

const LOGGER_CMD = `perl -e '$|=1; for my $i (1..20000) { print "log line $i of a running job, with some text\\n"; select(undef, undef, undef, 0.01) }'`;

function project(): string {
  const loggers = Array.from({ length: LOGGERS }, (_, i) => `  log-${String(i).padStart(2, "0")}:\n    command: |\n      ${LOGGER_CMD}\n    tags: [logger]\n`).join("");
  const daemon = "executor:\n  pool_size: 64\nscheduler:\n  max_concurrent_jobs: 64\nlog:\n  level: warn\n";
  return writeTempProject(svcYaml(JOBS - LOGGERS, loggers), daemon, "svc-api-bench-");
}

/** 20 finished runs per job, written before the daemon starts. */
function seedHistory(dir: string, jobNames: string[]): void {
  const store = openStore({ path: join(dir, ".svc", "svc.db"), busyTimeoutMs: 5000, walAutocheckpoint: 1000 });
  try {
    const t0 = Date.now() - 30 * 86_400_000;
    store.tx(() => {
      for (let r = 0; r < RUNS_PER_JOB; r++) {
        for (const [j, job] of jobNames.entries()) {
          const at = new Date(t0 + (r * jobNames.length + j) * 60_000).toISOString();
          const run = store.runs.create({ job_name: job, trigger: "schedule", triggered_by: "scheduler", cycle_id: `00000000-0000-4000-8000-${String(r * 10_000 + j).padStart(12, "0")}`, tags: [], created_at: at });
          store.runs.transition(run.id, "RUNNING", { started_at: at, pid: 1 });
          const ok = (r + j) % 7 !== 0;
          store.runs.transition(run.id, ok ? "SUCCESS" : "FAILED", { finished_at: at, exit_code: ok ? 0 : 1, duration_ms: 1234, pid: null, error: ok ? null : "exit 1" });
        }
      }
    });
  } finally {
    store.close();
  }
}

interface Daemon {
  proc: ChildProcess;
  base: string;
}

async function startDaemon(dir: string): Promise<Daemon> {
  const svcd = process.env.SVCD_BIN ?? join(ROOT, "bin", "svcd.js");
  const proc = spawn(process.execPath, [svcd, "-c", join(dir, "svc.yaml")], { cwd: dir, stdio: "ignore" });
  const addrFile = join(dir, ".svc", "api.addr");
  const deadline = Date.now() + 60_000;
  while (!existsSync(addrFile)) {
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error("svcd did not start");
    await new Promise((r) => setTimeout(r, 100));
  }
  return { proc, base: `http://${readFileSync(addrFile, "utf8").trim()}` };
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

async function json<T>(url: string, init?: RequestInit): Promise<T> {
  const res = await fetch(url, init);
  if (!res.ok) throw new Error(`${init?.method ?? "GET"} ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** CPU seconds (user + system) the process has used. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (100/s)
}

async function cannon(url: string, duration: number, connections = CONNECTIONS): Promise<CannonResult> {
  const r = await autocannon({ url, connections, duration });
  if (r.non2xx > 0 || r.errors > 0 || r.timeouts > 0) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts`);
  return r;
}

interface Load {
  median: CannonResult;
  /** The daemon's CPU use during the measured runs, in cores (1 = one core busy). */
  daemonCores: number;
}

/** Warm-up, then REPEATS runs; the run with the median p99. */
async function load(url: string, pid: number, connections = CONNECTIONS): Promise<Load> {
  await cannon(url, 2, connections);
  const runs: CannonResult[] = [];
  const cpu0 = cpuSeconds(pid);
  const t0 = Date.now();
  for (let i = 0; i < REPEATS; i++) runs.push(await cannon(url, DURATION_S, connections));
  const daemonCores = (cpuSeconds(pid) - cpu0) / ((Date.now() - t0) / 1000);
  runs.sort((a, b) => a.latency.p99 - b.latency.p99);
  return { median: runs[Math.floor(runs.length / 2)]!, daemonCores };
}

function results(label: string, status: Load, jobs: Load, single: Load, withTargets: boolean): BenchResult[] {
  const rows = (route: string, l: Load, targetMs: number): BenchResult[] => [
    {
      name: `${route} p99, ${label}`,
      value: sig(l.median.latency.p99),
      unit: "ms",
      ...(withTargets ? { target: `< ${targetMs} ms`, ok: l.median.latency.p99 < targetMs } : {}),
      notes: `p50 ${sig(l.median.latency.p50)} ms, ${CONNECTIONS} connections`,
    },
    {
      name: `${route} throughput, ${label}`,
      value: Math.round(l.median.requests.average),
      unit: "req/s",
      notes: `daemon CPU ${Math.round(l.daemonCores * 100)}% of one core`,
    },
  ];
  return [
    ...rows("GET /api/status", status, TARGET_STATUS_P99_MS),
    ...rows("GET /api/jobs (1,000 jobs)", jobs, TARGET_JOBS_P99_MS),
    {
      name: `GET /api/jobs (1,000 jobs) p99, one connection, ${label}`,
      value: sig(single.median.latency.p99),
      unit: "ms",
      notes: `p50 ${sig(single.median.latency.p50)} ms, ${Math.round(single.median.requests.average)} req/s: a single poller, no queueing`,
    },
  ];
}

export default async function bench(): Promise<BenchSection> {
  const dir = project();
  const names = [...readFileSync(join(dir, "svc.yaml"), "utf8").matchAll(/^ {2}([A-Za-z0-9][\w.-]*):$/gm)].map((m) => m[1]!);
  seedHistory(dir, names);
  const d = await startDaemon(dir);
  try {
    const jobsBody = await json<{ jobs: unknown[] }>(`${d.base}/api/jobs`);
    if (jobsBody.jobs.length !== JOBS) throw new Error(`expected ${JOBS} jobs, got ${jobsBody.jobs.length}`);
    const jobsBytes = JSON.stringify(jobsBody).length;
    await new Promise((r) => setTimeout(r, 2_000));
    const idleRss = rssMb(d.proc.pid!);

    const pid = d.proc.pid!;
    const idleStatus = await load(`${d.base}/api/status`, pid);
    const idleJobs = await load(`${d.base}/api/jobs`, pid);
    const idleSingle = await load(`${d.base}/api/jobs`, pid, 1);

    const runIds: number[] = [];
    for (let i = 0; i < LOGGERS; i++) {
      const r = await json<{ run_id: number }>(`${d.base}/api/jobs/log-${String(i).padStart(2, "0")}/run`, { method: "POST" });
      runIds.push(r.run_id);
    }
    const deadline = Date.now() + 30_000;
    for (;;) {
      const status = await json<{ jobs: { running: number } }>(`${d.base}/api/status`);
      if (status.jobs.running === LOGGERS) break;
      if (Date.now() > deadline) throw new Error(`only ${status.jobs.running} of ${LOGGERS} loggers running`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const linesAt = async () => {
      let n = 0;
      for (const id of runIds) n += (await json<{ total: number }>(`${d.base}/api/runs/${id}/logs?limit=1`)).total;
      return n;
    };
    const lines0 = await linesAt();
    const t0 = Date.now();
    const busyStatus = await load(`${d.base}/api/status`, pid);
    const busyJobs = await load(`${d.base}/api/jobs`, pid);
    const busySingle = await load(`${d.base}/api/jobs`, pid, 1);
    const linesPerS = ((await linesAt()) - lines0) / ((Date.now() - t0) / 1000);
    const busyRss = rssMb(d.proc.pid!);

    return {
      title: "HTTP API under load",
      method:
        `Real svcd (bin/svcd.js) with ${JOBS} jobs and ${RUNS_PER_JOB} finished runs per job in the database; autocannon in the bench ` +
        `process on the same 2 cores as the daemon, ${CONNECTIONS} connections sending as fast as answers come, ` +
        `${REPEATS} runs of ${DURATION_S} s after a 2 s warm-up, the median run reported. ` +
        `"busy": ${LOGGERS} jobs running, each printing 100 lines/s (perl), while measured. GET /api/jobs answers ${Math.round(jobsBytes / 1024)} KB.`,
      results: [
        ...results("busy", busyStatus, busyJobs, busySingle, true),
        ...results("idle", idleStatus, idleJobs, idleSingle, false),
        { name: "log lines ingested per second while measuring (busy)", value: Math.round(linesPerS), unit: "lines/s", notes: `${LOGGERS} jobs x 100 lines/s offered` },
        { name: `daemon RSS idle, ${JOBS} jobs`, value: sig(idleRss), unit: "MB", target: `< ${TARGET_RSS_MB} MB`, ok: idleRss < TARGET_RSS_MB },
        { name: "daemon RSS after the busy measurements", value: sig(busyRss), unit: "MB" },
      ],
    };
  } finally {
    // A forced stop kills every job's process group, then the daemon exits.
    const exited = new Promise((r) => (d.proc.exitCode !== null ? r(undefined) : d.proc.once("exit", r)));
    await fetch(`${d.base}/api/daemon/stop`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"force":true}' }).catch(() => undefined);
    const killer = setTimeout(() => d.proc.kill("SIGKILL"), 20_000);
    await exited;
    clearTimeout(killer);
    rmSync(dir, { recursive: true, force: true });
  }
}

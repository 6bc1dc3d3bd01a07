/**
 * The soak (issue 24): a real svcd with 1,000 jobs under a steady, mixed
 * load for 30 minutes (`npm run bench -- soak --minutes N` for another
 * length), sampled every 10 s: what users of schedulers complain about over
 * days (memory that grows, loops that slow down as history grows).
 *
 * The load, all at once for the whole run:
 * - 20 jobs every 5 s printing four 1 KB lines, four at each second of the
 *   five (`every:5s`, `cron:1/5 * * * * *` ... `cron:4/5 * * * * *`): with
 *   pool_size 8, 20 at one instant would measure the pool's queue, not svc;
 *   two of them fail every third run and alert a local webhook receiver;
 * - 5 dependency chains: a root on `cron:3/6 * * * * *` (every 6 s, the
 *   6-field form) and two `after:` jobs behind it, four 1 KB lines each;
 * - 25 jobs once a minute (5 on `cron:* * * * *`, 20 at their own second
 *   with the 6-field form), one short line;
 * - 10 manual jobs triggered through the HTTP API, 2 triggers a second;
 * - 20 WebSocket followers, each following one `every:5s` job's runs as
 *   they come (GET /api/jobs/:name?runs=1 each second, then
 *   /ws/logs/:run_id until the run ends), as a dashboard tab does;
 * - retention with `max_runs_per_job: 100` every 2 minutes
 *   (`storage.retention.interval`); every job that runs reaches its cap
 *   within ~10 minutes: the every-minute ones, which would take 100 minutes,
 *   start with 100 runs each (manual runs through the API before the clock
 *   starts), as in a daemon with days of history; the database reaches its
 *   steady state only once their scheduled runs have replaced those (~102
 *   minutes), and its file is judged from then (MIN_STEADY_S);
 * - 930 idle jobs (the scale section's mix), for 1,000 in all.
 *
 * Every 10 s (at :x2.5 of the wall clock, between the schedules' bursts):
 * svcd's RSS and open descriptors from /proc, heap used and event-loop lag
 * p99 (prom-client's, reset at each scrape: the 10 s since the last one)
 * from GET /metrics, runs/s from its svc_runs_total, the database and WAL
 * file sizes, the dispatch delay p99 of the scheduled runs that started in
 * the window (started_at - scheduled_for, read back through
 * GET /api/db/job_runs), and the load average of the machine.
 */
import Database from "better-sqlite3";
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { loadavg } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { cpuMs, memMb, ROOT, startDaemon, type Daemon } from "./helpers/daemon.js";
import { idleJobsYaml, writeTempProject } from "./helpers/projectGen.js";
import { median, pct, round, sig, sleep, sleepUntil } from "./helpers/stats.js";
import { writePanels } from "./helpers/svg.js";
import type { BenchResult, BenchSection } from "./types.js";

const JOBS = 1_000;
const EVERY5 = 20;
const ALERTING = 2;
const CHAINS = 5;
const CHAIN_LEN = 3;
const MINUTELY = 25;
const MINUTELY_AT_00 = 5;
const API_JOBS = 10;
const TRIGGERS_PER_S = 2;
const FOLLOWERS = 20;
const KEEP = 100;
const RETENTION_EVERY = "2m";
const SAMPLE_MS = 10_000;
/** Every this many samples (once a minute), what each table and index of svc.db holds (SQLite's dbstat). */
const DBSTAT_EVERY = 6;
const LINE_BYTES = 1_000;
const PERF_DIR = join(ROOT, "docs", "perf");

const TARGET_RSS_MB = 5;
const TARGET_HEAP_MB = 2;
const TARGET_DISPATCH_RATIO = 1.2;
const TARGET_WAL_MB = 64;
/**
 * SQLite's page cache of svcd's one connection (`cache_size = -16384` in src/store/open.ts): up to 16 MiB of pages,
 * ~17.5 MB of malloc'd memory with their headers once full. It fills as the database grows (in ~4.5 minutes in
 * the soak), a bounded rise of RSS, not a leak (docs/perf/NOTES.md, Soak).
 */
const PAGE_CACHE_MIB = 16;
/**
 * "Flat": the last window's median descriptor count at most this many above the first's. One-sided: a
 * leak only grows the count, while the pipes and pidfd of each running job (three) make it swing both
 * ways with the runs in flight at a sample (a 40-minute soak ended 3 below its first window).
 */
const TARGET_FD_DRIFT = 2;
/** "Bounded": growth of the database file over the stretch where retention holds the database at its steady state. */
const TARGET_DB_GROWTH = 0.02;
/**
 * The database reaches its steady state only once every run made before the clock started is gone. The every-minute
 * jobs start at their cap with manual runs (most of them SKIPPED, their ids together), which their scheduled runs
 * replace one a minute, for KEEP minutes; those are spread among every other job's runs, so the same count of kept rows
 * takes more pages of job_runs and its indexes (the 115-minute soak: the contents' peaks rose from 41.2 to 42.0 MB until
 * ~100 minutes and stayed there; docs/perf/NOTES.md). The file is judged from then on, over at least this long.
 */
const MIN_STEADY_S = 20 * 60;

/** Deterministic words for the 1 KB lines (mulberry32), so every soak writes the same text. */
function padText(): string {
  const words = ["scheduler", "retention", "backup", "invoice", "ledger", "extract", "transform", "load", "report", "sync", "ingest", "archive", "metrics", "alpha", "beta", "gamma", "delta", "epsilon", "orders", "customers"];
  let a = 0x5eed;
  const rand = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  let s = "";
  while (s.length < LINE_BYTES - 40) s += `${words[Math.floor(rand() * words.length)]}-${Math.floor(rand() * 10_000)} `;
  return s.trim();
}

/** emit.sh N [K]: N lines of about 1 KB; exits 1 when the run id is a multiple of K. */
function emitScript(): string {
  return [
    "#!/bin/sh",
    `PAD='${padText()}'`,
    "i=0",
    'while [ "$i" -lt "$1" ]; do',
    '  echo "run $SVC_RUN_ID line $i $PAD"',
    "  i=$((i + 1))",
    "done",
    'if [ -n "$2" ] && [ $((SVC_RUN_ID % $2)) -eq 0 ]; then exit 1; fi',
    "",
  ].join("\n");
}

const pad2 = (i: number) => String(i).padStart(2, "0");
const every5 = (i: number) => `every-${pad2(i)}`;

function activeJobs(hookUrl: string): string {
  const out: string[] = [];
  for (let i = 0; i < EVERY5; i++) {
    // Every 5 s, a fifth of them at each second of the five: `every:5s` (= `cron:*/5 * * * * *`), then `cron:1/5 ...` to `4/5`.
    const freq = i % 5 === 0 ? "every:5s" : `cron:${i % 5}/5 * * * * *`;
    out.push(`  ${every5(i)}:`, `    command: ./emit.sh 4${i < ALERTING ? " 3" : ""}`, `    frequency: "${freq}"`, "    tags: [soak, every]");
    if (i < ALERTING) out.push(`    notify: {on_failure: "webhook:${hookUrl}"}`);
  }
  for (let c = 0; c < CHAINS; c++) {
    for (let k = 0; k < CHAIN_LEN; k++) {
      const name = `chain-${c}-${k}`;
      out.push(`  ${name}:`, "    command: ./emit.sh 4", k === 0 ? `    frequency: "cron:3/6 * * * * *"` : `    frequency: after:chain-${c}-${k - 1}`, "    tags: [soak, chain]");
    }
  }
  for (let i = 0; i < MINUTELY; i++) {
    // Once a minute: a few at :00 (`cron:* * * * *`), the others at their own second.
    const freq = i < MINUTELY_AT_00 ? "cron:* * * * *" : `cron:${(7 + 3 * i) % 60} * * * * *`;
    out.push(`  minutely-${pad2(i)}:`, "    command: echo minutely $SVC_RUN_ID", `    frequency: "${freq}"`, "    tags: [soak]");
  }
  for (let i = 0; i < API_JOBS; i++) out.push(`  api-${pad2(i)}:`, "    command: ./emit.sh 2", "    frequency: manual", "    tags: [soak, api]");
  return out.join("\n") + "\n";
}

const ACTIVE = EVERY5 + CHAINS * CHAIN_LEN + MINUTELY + API_JOBS;

interface Sample {
  /** Seconds since svcd answered. */
  t: number;
  rssMb: number;
  /** RSS by kind (/proc/<pid>/status): anonymous, and file-backed plus shared memory (the node binary, the WAL index). */
  anonMb: number;
  fileMb: number;
  /** Resident part of malloc's main arena (the [heap] mapping; one arena): SQLite's page cache, Buffers, native objects. */
  mallocMb: number;
  /** V8's heap committed (nodejs_heap_size_total_bytes) and memory outside it that V8 tracks (nodejs_external_memory_bytes). */
  v8TotalMb: number;
  /** V8's new space committed (nodejs_heap_space_size_total_bytes{space="new"}): 2 MB while svcd's young-generation flag holds, 32 MB without it. */
  newSpaceMb: number;
  externalMb: number;
  heapMb: number;
  fds: number;
  lagP99Ms: number;
  /** p99 of the scheduled runs that started in this window (NaN when none did). */
  dispatchP99Ms: number;
  dbMb: number;
  walMb: number;
  runsPerS: number;
  cpuPct: number;
  load1: number;
  /** GET /api/status and GET /api/jobs (1,000 jobs), answered while sampling. */
  statusMs: number;
  jobsMs: number;
}

/** Connection errors on an idle keep-alive socket, retried once (the request never reached svcd's handlers). */
const RESETS = { count: 0 };

/** GET, retried once when the connection was reset or closed before an answer. */
async function get<T = unknown>(d: Daemon, path: string): Promise<{ status: number; body: T; ms: number }> {
  try {
    return await d.get<T>(path);
  } catch (e) {
    if (!/ECONNRESET|EPIPE|socket hang up/.test((e as Error).message)) throw e;
    RESETS.count++;
    return d.get<T>(path);
  }
}

interface Counters {
  triggers: number;
  triggerErrors: string[];
  wsRuns: number;
  wsLines: number;
  wsErrors: string[];
  alerts: number;
  pollErrors: string[];
}

/** A local webhook receiver: counts what svcd posts. */
function receiver(counters: Counters): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      counters.alerts++;
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/alert` })));
}

/** The first sample of a metric, or of the one with `label` (plain text: `space="new"`) among its labels. */
function metricValue(text: string, name: string, label?: string): number {
  const labels = label === undefined ? "(?:\\{[^}]*\\})?" : `\\{[^}]*${label}[^}]*\\}`;
  const m = new RegExp(`^${name}${labels} (\\S+)$`, "m").exec(text);
  return m ? Number(m[1]) : NaN;
}

function metricSum(text: string, name: string): number {
  let sum = 0;
  for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "gm"))) sum += Number(m[1]);
  return sum;
}

function fileMb(path: string): number {
  try {
    return statSync(path).size / 1024 / 1024;
  } catch {
    return 0;
  }
}

/** One reading of svc.db's pages: each table's and index's size, and the free list. */
interface DbStat {
  t: number;
  pageSize: number;
  freePages: number;
  /** Per b-tree (table, index, FTS5 shadow table): its pages' bytes, and the bytes of them that hold no cell. */
  objects: Map<string, { bytes: number; unused: number }>;
}

/**
 * Reads svc.db's dbstat (aggregate: one row per b-tree) from a read-only connection of the bench's own, in one read
 * transaction: a reader in WAL mode does not block svcd's writers.
 */
function readDbStat(file: string, t: number): DbStat {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db.transaction((): DbStat => {
      const objects = new Map<string, { bytes: number; unused: number }>();
      for (const r of db.prepare("SELECT name, pgsize, unused FROM dbstat WHERE aggregate = TRUE").all() as Array<{ name: string; pgsize: number; unused: number }>) {
        objects.set(r.name, { bytes: r.pgsize, unused: r.unused });
      }
      const pragma = (name: string) => Number(db.pragma(name, { simple: true }));
      return { t, pageSize: pragma("page_size"), freePages: pragma("freelist_count"), objects };
    })();
  } finally {
    db.close();
  }
}

const mb = (bytes: number) => bytes / 1024 / 1024;

/** Each b-tree of the later reading with its bytes in the earlier one, the one that grew most first. */
function grownObjects(from: DbStat, to: DbStat): Array<{ name: string; o: { bytes: number; unused: number }; before: number }> {
  return [...to.objects].map(([name, o]) => ({ name, o, before: from.objects.get(name)?.bytes ?? 0 })).sort((a, b) => b.o.bytes - b.before - (a.o.bytes - a.before));
}

/** The b-trees that grew most between two readings, and the free list's change: "name +x MB (a -> b MB, c % unused)". */
function dbGrowthByObject(from: DbStat | undefined, to: DbStat | undefined, top = 5): string {
  if (!from || !to) return "no dbstat readings";
  const free = (s: DbStat) => mb(s.freePages * s.pageSize);
  return (
    grownObjects(from, to)
      .slice(0, top)
      .map((r) => `${r.name} ${r.o.bytes >= r.before ? "+" : ""}${sig(mb(r.o.bytes - r.before))} MB (${sig(mb(r.before))} -> ${sig(mb(r.o.bytes))} MB, ${Math.round((100 * r.o.unused) / Math.max(1, r.o.bytes))} % unused)`)
      .join(", ") + `; free list ${sig(free(from))} -> ${sig(free(to))} MB`
  );
}

/** Bytes in b-trees (every table's and index's pages: the file without its free list). */
const usedBytes = (s: DbStat) => [...s.objects.values()].reduce((a, o) => a + o.bytes, 0);

/**
 * The contents' largest and smallest readings in the two halves of [from, end] (from a 30-minute run on, each half
 * holds several retention passes; at 20 minutes about one each), their ratio (second half's peak / first half's),
 * and the free list's range. Null when a half has no reading (a run that ends before the caps, failed dbstat reads).
 */
function contentPeaks(stats: readonly DbStat[], from: number, end: number) {
  const mid = (from + end) / 2;
  const first = stats.filter((x) => x.t >= from && x.t < mid).map(usedBytes);
  const last = stats.filter((x) => x.t >= mid).map(usedBytes);
  if (first.length === 0 || last.length === 0) return null;
  const free = stats.filter((x) => x.t >= from).map((x) => mb(x.freePages * x.pageSize));
  const firstMb = mb(Math.max(...first));
  const lastMb = mb(Math.max(...last));
  return {
    mid,
    firstMb,
    lastMb,
    firstLowMb: mb(Math.min(...first)),
    lastLowMb: mb(Math.min(...last)),
    ratio: lastMb / firstMb,
    freeMinMb: Math.min(...free),
    freeMaxMb: Math.max(...free),
  };
}

/**
 * The file's size over `samples`, first to last, and each move of more than 0.1 MB from the last level reported
 * (so that a slow creep is reported too, once it adds up).
 */
function fileSteps(samples: readonly Sample[]): string {
  if (samples.length === 0) return "no samples";
  const steps: string[] = [];
  let level = samples[0]!.dbMb;
  for (const s of samples.slice(1)) {
    if (Math.abs(s.dbMb - level) <= 0.1) continue;
    steps.push(`${sig(level)} -> ${sig(s.dbMb)} MB at ${round(s.t / 60, 1)} min`);
    level = s.dbMb;
  }
  const span = `${sig(samples[0]!.dbMb)} -> ${sig(samples[samples.length - 1]!.dbMb)} MB`;
  if (steps.length === 0) return `${span}, no move over 0.1 MB`;
  return `${span}, ${steps.length} move${steps.length === 1 ? "" : "s"} over 0.1 MB (${steps.slice(0, 6).join(", ")}${steps.length > 6 ? ", ..." : ""})`;
}

function openFds(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return NaN;
  }
}

/** RSS by kind: anonymous, file-backed + shared (from /proc/<pid>/status), and the resident [heap] mapping (from smaps). */
function memParts(pid: number): { anon: number; file: number; malloc: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? NaN);
    const smaps = readFileSync(`/proc/${pid}/smaps`, "utf8");
    const heap = /^[0-9a-f]+-[0-9a-f]+ [^\n]*\[heap\]\n(?:[^\n]*\n)*?Rss:\s+(\d+) kB/m.exec(smaps);
    return { anon: kb("RssAnon") / 1024, file: (kb("RssFile") + kb("RssShmem")) / 1024, malloc: heap ? Number(heap[1]) / 1024 : 0 };
  } catch {
    return { anon: NaN, file: NaN, malloc: NaN };
  }
}

/** Least-squares slope of y over x. */
function slope(points: Array<[number, number]>): number {
  const p = points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  if (p.length < 2) return NaN;
  const mx = p.reduce((a, [x]) => a + x, 0) / p.length;
  const my = p.reduce((a, [, y]) => a + y, 0) / p.length;
  let num = 0;
  let den = 0;
  for (const [x, y] of p) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? NaN : num / den;
}

interface RunRow {
  id: number;
  trigger: string;
  scheduled_for: string | null;
  started_at: string | null;
  status: string;
}

/**
 * Reads back the scheduled runs created since `since` (page by page) and returns the dispatch delays of those
 * that started and were not seen before, with the instant each started.
 */
async function newDispatches(d: Daemon, since: string, seen: Set<number>, errors: string[]): Promise<Array<{ at: number; delay: number }>> {
  const out: Array<{ at: number; delay: number }> = [];
  for (let page = 1; page <= 20; page++) {
    const r = await get<{ rows: RunRow[] }>(d, `/api/db/job_runs?trigger=schedule&since=${encodeURIComponent(since)}&sort=id&order=asc&page_size=100&page=${page}`);
    if (r.status !== 200) {
      errors.push(`GET /api/db/job_runs: ${r.status}`);
      break;
    }
    for (const row of r.body.rows) {
      if (seen.has(row.id) || row.started_at === null || row.scheduled_for === null) continue;
      seen.add(row.id);
      const at = Date.parse(row.started_at);
      out.push({ at, delay: at - Date.parse(row.scheduled_for) });
    }
    if (r.body.rows.length < 100) break;
  }
  return out;
}

/** Follows `job`'s runs as they come, each through its WebSocket until it ends. */
async function follow(d: Daemon, job: string, stopAt: number, c: Counters): Promise<void> {
  let last = 0;
  while (Date.now() < stopAt) {
    let runId = 0;
    try {
      const r = await get<{ runs: Array<{ id: number }> }>(d, `/api/jobs/${job}?runs=1`);
      if (r.status !== 200) c.pollErrors.push(`GET /api/jobs/${job}: ${r.status}`);
      else runId = r.body.runs[0]?.id ?? 0;
    } catch (e) {
      c.pollErrors.push((e as Error).message);
    }
    if (runId <= last) {
      await sleep(1_000);
      continue;
    }
    last = runId;
    await new Promise<void>((resolve) => {
      const ws = new WebSocket(`ws://${d.addr}/ws/logs/${runId}`);
      const timer = setTimeout(() => {
        c.wsErrors.push(`run ${runId}: no end within 60 s`);
        ws.terminate();
      }, 60_000);
      ws.on("message", (data) => {
        const frame = JSON.parse(String(data)) as { type: string; message?: string };
        if (frame.type === "line") c.wsLines++;
        else if (frame.type === "end") c.wsRuns++;
        else if (frame.type === "error" && !/no longer exists \(retention\)/.test(frame.message ?? "")) c.wsErrors.push(`run ${runId}: ${frame.message}`);
      });
      ws.on("error", (e) => c.wsErrors.push(`run ${runId}: ${e.message}`));
      ws.on("close", () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

/** Triggers the API jobs round robin at TRIGGERS_PER_S, at absolute instants (no drift); at most 32 requests in flight. */
async function triggers(d: Daemon, stopAt: number, c: Counters): Promise<void> {
  const every = 1_000 / TRIGGERS_PER_S;
  const t0 = Date.now();
  let inFlight = 0;
  for (let k = 0; ; k++) {
    const at = t0 + k * every;
    if (at >= stopAt) break;
    await sleepUntil(at);
    if (inFlight >= 32) {
      c.triggerErrors.push(`trigger ${k}: 32 requests already waiting`);
      continue;
    }
    inFlight++;
    d.post(`/api/jobs/api-${pad2(k % API_JOBS)}/run`, { reason: "soak" })
      .then((r) => {
        if (r.status === 202) c.triggers++;
        else c.triggerErrors.push(`POST /api/jobs/api-${pad2(k % API_JOBS)}/run: ${r.status}`);
      })
      .catch((e: Error) => c.triggerErrors.push(e.message))
      .finally(() => inFlight--);
  }
}

/**
 * Before the clock starts: KEEP manual runs of each every-minute job through the API (most of them SKIPPED under
 * `concurrency: forbid`, still rows that retention counts), then waits until none is PENDING or RUNNING.
 */
async function prefill(d: Daemon): Promise<number> {
  let n = 0;
  for (let i = 0; i < MINUTELY; i++) {
    for (let k = 0; k < KEEP; k++) {
      const r = await d.post(`/api/jobs/minutely-${pad2(i)}/run`, { reason: "soak prefill" });
      if (r.status !== 202) throw new Error(`prefill: POST /api/jobs/minutely-${pad2(i)}/run answered ${r.status}`);
      n++;
    }
  }
  for (const end = Date.now() + 120_000; ; ) {
    const pending = await get<{ total: number }>(d, "/api/db/job_runs?trigger=manual&status=PENDING&page_size=25");
    const running = await get<{ total: number }>(d, "/api/db/job_runs?trigger=manual&status=RUNNING&page_size=25");
    if (pending.status !== 200 || running.status !== 200) throw new Error(`prefill: GET /api/db/job_runs answered ${pending.status}, ${running.status}`);
    if (pending.body.total + running.body.total === 0) return n;
    if (Date.now() > end) throw new Error(`prefill: runs still waiting after 2 minutes (${pending.body.total} PENDING, ${running.body.total} RUNNING)`);
    await sleep(500);
  }
}

function windowed(samples: Sample[], from: number, to: number): Sample[] {
  return samples.filter((s) => s.t > from && s.t <= to);
}

export default async function soakBench(): Promise<BenchSection> {
  const minutes = Number(process.env.SVC_SOAK_MINUTES ?? 30);
  if (!(minutes > 0)) throw new Error(`SVC_SOAK_MINUTES must be a number of minutes > 0, got ${process.env.SVC_SOAK_MINUTES}`);
  const total = minutes * 60;
  // The issue's windows are 5 minutes; a short development run scales them to a third of its length.
  const win = Math.min(300, total / 3);
  const counters: Counters = { triggers: 0, triggerErrors: [], wsRuns: 0, wsLines: 0, wsErrors: [], alerts: 0, pollErrors: [] };
  const rx = await receiver(counters);
  const svcYaml = `defaults:\n  timezone: UTC\njobs:\n${idleJobsYaml(JOBS - ACTIVE)}${activeJobs(rx.url)}`;
  const daemonYaml = [
    "executor:\n  pool_size: 8",
    "scheduler:\n  max_concurrent_jobs: 32",
    `storage:\n  retention:\n    max_runs_per_job: ${KEEP}\n    interval: ${RETENTION_EVERY}`,
    "",
  ].join("\n");
  const dir = writeTempProject(svcYaml, daemonYaml, "svc-soak-");
  writeFileSync(join(dir, "emit.sh"), emitScript(), { mode: 0o755 });
  const db = join(dir, ".svc", "svc.db");
  let d: Daemon | null = null;
  let pid = 0;
  let t0 = Date.now();
  const gcs: Gc[] = [];
  let partial = "";
  // V8's --trace-gc lines: "[pid:0x...]  1234 ms: Mark-Compact 48.1 (80.6) -> 24.7 (58.5) MB, ..."
  const onOutput = (chunk: string) => {
    const lines = (partial + chunk).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
      const m = /: Mark-Compact(?: \(reduce\))? [\d.]+ \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB/.exec(line);
      if (m && pid !== 0) gcs.push({ t: (Date.now() - t0) / 1_000, heapMb: Number(m[1]), rssMb: memMb(pid)?.rss ?? NaN });
    }
  };
  const samples: Sample[] = [];
  const dbstats: DbStat[] = [];
  const dispatches: Array<{ t: number; delay: number }> = [];
  try {
    d = await startDaemon(dir, { nodeArgs: ["--trace-gc"], onOutput });
    const daemon = d;
    pid = daemon.pid;
    const prefilled = await prefill(daemon);
    t0 = Date.now();
    const beforeClock = `/api/db/job_runs?until=${encodeURIComponent(new Date(t0).toISOString())}&page_size=25`;
    const older: Array<{ t: number; runs: number }> = [];
    const stopAt = t0 + total * 1_000;
    const load = [triggers(daemon, stopAt, counters), ...Array.from({ length: FOLLOWERS }, (_, i) => follow(daemon, every5(i % EVERY5), stopAt, counters))];

    const seen = new Set<number>();
    let since = new Date(t0 - 60_000).toISOString();
    let prev = { at: t0, runs: 0, cpu: cpuMs(daemon.pid) ?? 0 };
    // Wall-clock :x2.5, between the 5 s and 6 s schedules' bursts.
    let next = Math.ceil((t0 - 2_500) / SAMPLE_MS) * SAMPLE_MS + 2_500;
    if (next - t0 < 5_000) next += SAMPLE_MS;
    const sample = async (prev: { at: number; runs: number; cpu: number }): Promise<{ at: number; runs: number; cpu: number }> => {
      const now = Date.now();
      const mem = memMb(daemon.pid);
      const parts = memParts(daemon.pid);
      const cpu = cpuMs(daemon.pid) ?? NaN;
      const fds = openFds(daemon.pid);
      const status = await get(daemon, "/api/status");
      const jobs = await get(daemon, "/api/jobs");
      const metrics = await get<string>(daemon, "/metrics");
      const text = typeof metrics.body === "string" ? metrics.body : "";
      if (status.status !== 200 || jobs.status !== 200 || metrics.status !== 200) {
        counters.pollErrors.push(`sample at ${Math.round((now - t0) / 1_000)} s: status ${status.status}, jobs ${jobs.status}, metrics ${metrics.status}`);
      }
      const runs = metricSum(text, "svc_runs_total");
      const fresh = await newDispatches(daemon, since, seen, counters.pollErrors);
      // The next read starts a minute before the newest start seen: runs created earlier but started late are still found.
      if (fresh.length > 0) since = new Date(Math.max(...fresh.map((f) => f.at)) - 60_000).toISOString();
      const windowStart = now - SAMPLE_MS;
      const inWindow = fresh.filter((f) => f.at > windowStart - 2_000).map((f) => f.delay);
      for (const f of fresh) dispatches.push({ t: (f.at - t0) / 1_000, delay: f.delay });
      samples.push({
        t: Math.round((now - t0) / 1_000),
        rssMb: mem?.rss ?? NaN,
        anonMb: parts.anon,
        fileMb: parts.file,
        mallocMb: parts.malloc,
        v8TotalMb: metricValue(text, "nodejs_heap_size_total_bytes") / 1024 / 1024,
        newSpaceMb: metricValue(text, "nodejs_heap_space_size_total_bytes", 'space="new"') / 1024 / 1024,
        externalMb: metricValue(text, "nodejs_external_memory_bytes") / 1024 / 1024,
        heapMb: metricValue(text, "nodejs_heap_size_used_bytes") / 1024 / 1024,
        fds,
        lagP99Ms: metricValue(text, "nodejs_eventloop_lag_p99_seconds") * 1_000,
        dispatchP99Ms: inWindow.length > 0 ? pct(inWindow, 99) : NaN,
        dbMb: fileMb(db),
        walMb: fileMb(`${db}-wal`),
        runsPerS: ((runs - prev.runs) * 1_000) / (now - prev.at),
        cpuPct: (100 * (cpu - prev.cpu)) / (now - prev.at),
        load1: loadavg()[0]!,
        statusMs: status.ms,
        jobsMs: jobs.ms,
      });
      const s = samples[samples.length - 1]!;
      if (samples.length % DBSTAT_EVERY === 0) {
        try {
          dbstats.push(readDbStat(db, s.t));
        } catch (e) {
          counters.pollErrors.push(`dbstat at ${s.t} s: ${(e as Error).message}`);
        }
        // Until none is left: the runs made before the clock started that retention has not replaced yet.
        if (older.at(-1)?.runs !== 0) {
          const r = await get<{ total: number }>(daemon, beforeClock);
          if (r.status === 200) older.push({ t: s.t, runs: r.body.total });
          else counters.pollErrors.push(`runs before the clock at ${s.t} s: GET /api/db/job_runs answered ${r.status}`);
        }
      }
      process.stdout.write(
        `soak ${s.t}s: rss ${s.rssMb.toFixed(1)} MB, heap ${s.heapMb.toFixed(1)} MB, fds ${s.fds}, lag p99 ${s.lagP99Ms.toFixed(1)} ms, dispatch p99 ${s.dispatchP99Ms.toFixed(0)} ms, db ${s.dbMb.toFixed(1)} MB, wal ${s.walMb.toFixed(1)} MB, ${s.runsPerS.toFixed(1)} runs/s, cpu ${s.cpuPct.toFixed(0)} %, load ${s.load1.toFixed(1)}\n`,
      );
      return { at: now, runs, cpu };
    };
    while (next <= stopAt) {
      await sleepUntil(next);
      next += SAMPLE_MS;
      try {
        prev = await sample(prev);
      } catch (e) {
        counters.pollErrors.push(`sample at ${Math.round((Date.now() - t0) / 1_000)} s: ${(e as Error).message}`);
      }
    }
    await Promise.all(load);
    // What the daemon says about the whole run, before it stops.
    const finished = await get<{ total: number }>(daemon, "/api/db/job_runs?status=SUCCESS&page_size=25");
    const failed = await get<{ total: number }>(daemon, "/api/db/job_runs?status=FAILED&page_size=25");
    const alertRows = await get<{ total: number }>(daemon, "/api/db/alerts?page_size=25");
    const stuck = await get<{ total: number }>(daemon, "/api/db/job_runs?status=RUNNING&page_size=25");
    await daemon.stop();
    return report({ minutes, win, samples, dbstats, gcs, dispatches, counters, prefilled, older, kept: { success: finished.body.total, failed: failed.body.total, alerts: alertRows.body.total, running: stuck.body.total } });
  } finally {
    await d?.stop();
    await new Promise((r) => rx.server.close(r));
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One of V8's full collections (Mark-Compact): the heap used after it, and svcd's RSS then. */
interface Gc {
  t: number;
  heapMb: number;
  rssMb: number;
}

interface Outcome {
  minutes: number;
  gcs: Gc[];
  /** The comparison windows, s (300 from a 15-minute run on). */
  win: number;
  samples: Sample[];
  /** svc.db's pages by table and index, once a minute. */
  dbstats: DbStat[];
  dispatches: Array<{ t: number; delay: number }>;
  counters: Counters;
  /** Manual runs of the every-minute jobs made before the clock started. */
  prefilled: number;
  /** Runs made before the clock started still in the database, once a minute until none is left. */
  older: Array<{ t: number; runs: number }>;
  /** Rows left in the database at the end. */
  kept: { success: number; failed: number; alerts: number; running: number };
}

function report(o: Outcome): BenchSection {
  const { samples, win, counters } = o;
  const end = samples[samples.length - 1]?.t ?? 0;
  const after = samples.filter((s) => s.t > win);
  const gcsAfter = o.gcs.filter((g) => g.t > win);
  // Per hour, fitted over the full collections after the warm-up (and, for the notes, over every sample).
  const perHour = (k: "rssMb" | "heapMb") => slope(gcsAfter.map((g) => [g.t, g[k]])) * 3_600;
  const samplesPerHour = (k: "rssMb" | "heapMb") => slope(after.map((s) => [s.t, s[k]])) * 3_600;
  const rise = (k: "rssMb" | "heapMb") => (perHour(k) * (end - win)) / 3_600;
  // Every job that runs has reached KEEP runs after ~10 minutes (the every:5s and API jobs at ~8.3, the chains at 10; the
  // every-minute ones start there) and the next retention pass (2 minutes later) trims them: from 15 minutes on, rows come
  // and go (the database's steady state comes later: dbAt below).
  const capped = Math.max(900, end / 2);
  // SQLite's page cache fills to cache_size and the ring of recent run changes to its capacity, retention caps the
  // database: the RSS that should stay flat is the RSS from then on. Same target, as a rate: TARGET_RSS_MB over the span after the warm-up.
  const cappedPerHour = slope(o.gcs.filter((g) => g.t > capped).map((g) => [g.t, g.rssMb])) * 3_600;
  const cappedTargetPerHour = (TARGET_RSS_MB * 3_600) / (end - win);
  const grew = (k: "rssMb" | "anonMb" | "fileMb" | "mallocMb" | "v8TotalMb" | "externalMb") => median(last.map((s) => s[k])) - median(firstAfter.map((s) => s[k]));
  const gcRange = (k: "rssMb" | "heapMb") =>
    gcsAfter.length === 0 ? "no full collection after the warm-up" : `${gcsAfter.length} full collections after the warm-up, ${sig(Math.min(...gcsAfter.map((g) => g[k])))}-${sig(Math.max(...gcsAfter.map((g) => g[k])))} MB after them`;
  const first = windowed(samples, 0, win);
  const firstAfter = windowed(samples, win, 2 * win);
  const last = windowed(samples, end - win, end);
  const dFirst = o.dispatches.filter((x) => x.t <= win).map((x) => x.delay);
  const dLast = o.dispatches.filter((x) => x.t > end - win).map((x) => x.delay);
  const dRatio = pct(dLast, 99) / pct(dFirst, 99);
  const fdDrift = median(last.map((s) => s.fds)) - median(firstAfter.map((s) => s.fds));
  const walMax = Math.max(...samples.map((s) => s.walMb));
  const mins = (s: number) => `${round(s / 60, 1)} min`;
  // The database's steady state: from the first reading with no run made before the clock started left.
  const steadyAt = o.older.find((x) => x.runs === 0)?.t;
  const steady = steadyAt !== undefined && end - steadyAt >= MIN_STEADY_S;
  const dbAt = steady ? Math.max(capped, steadyAt) : capped;
  const olderNote = steadyAt !== undefined ? `none left from ${mins(steadyAt)}` : `${o.older.at(-1)?.runs ?? "?"} left at ${mins(o.older.at(-1)?.t ?? NaN)}`;
  const dbFrom = samples.find((s) => s.t >= dbAt);
  const dbTo = samples[samples.length - 1];
  const dbGrowth = dbFrom && dbTo ? (dbTo.dbMb - dbFrom.dbMb) / dbFrom.dbMb : NaN;
  const short = o.minutes < 20;
  const statFrom = short ? o.dbstats[0] : o.dbstats.find((x) => x.t >= dbAt);
  const statTo = o.dbstats[o.dbstats.length - 1];
  const top = statFrom && statTo ? grownObjects(statFrom, statTo)[0] : undefined;
  const peaks = contentPeaks(o.dbstats, dbAt, end);
  const topGrowthMb = top ? mb(top.o.bytes - top.before) : NaN;
  const load = samples.map((s) => s.load1);
  const loadNote = `machine load average (1 min) median ${round(median(load), 1)}, max ${round(Math.max(...load), 1)} on 2 cores`;
  const results: BenchResult[] = [
    {
      name: `RSS growth after the first ${mins(win)} (fitted at full collections)`,
      value: sig(rise("rssMb")),
      unit: "MB",
      target: `< ${TARGET_RSS_MB} MB`,
      ok: rise("rssMb") < TARGET_RSS_MB,
      notes: `slope ${sig(perHour("rssMb"))} MB/h over ${mins(end - win)} (${gcRange("rssMb")}); over every 10 s sample ${sig(samplesPerHour("rssMb"))} MB/h; RSS ${sig(median(firstAfter.map((s) => s.rssMb)))} MB just after the warm-up, ${sig(median(last.map((s) => s.rssMb)))} MB in the last ${mins(win)} (medians), peak ${sig(Math.max(...samples.map((s) => s.rssMb)))} MB; what grew: see the next two lines`,
    },
    {
      name: short
        ? "RSS slope once retention caps the database (not evaluated: a run under 20 minutes ends before the caps)"
        : `RSS slope from ${mins(capped)} (kept runs at their caps, SQLite's page cache full) to the end (fitted at full collections)`,
      value: sig(cappedPerHour),
      unit: "MB/h",
      ...(short ? {} : { target: `< ${sig(cappedTargetPerHour)} MB/h (${TARGET_RSS_MB} MB per ${mins(end - win)})`, ok: cappedPerHour < cappedTargetPerHour }),
      notes: `${o.gcs.filter((g) => g.t > capped).length} full collections; ${sig((cappedPerHour * 24) / 1_000)} GB a day at that slope; the RSS line above also counts the warm-up, which lasts until retention caps the kept runs: SQLite's page cache filling to cache_size ${PAGE_CACHE_MIB} MiB (~17.5 MB of malloc) and the ring of recent run changes (src/api/runChanges.ts, each run's latest of the last 10,000 changes, ~1-2 MB since de56c0a; ~14-17 MB before) filling (docs/perf/NOTES.md)`,
    },
    {
      name: `RSS growth by kind, last ${mins(win)} minus the ${mins(win)} after the warm-up (medians): malloc's arena`,
      value: sig(grew("mallocMb")),
      unit: "MB",
      notes:
        `RSS ${sig(grew("rssMb"))} MB = anonymous ${sig(grew("anonMb"))} MB + file-backed and shared ${sig(grew("fileMb"))} MB; of the anonymous: malloc's main arena ([heap], one arena: SQLite's page cache of at most ${PAGE_CACHE_MIB} MiB, Buffers, native objects) ` +
        `${sig(median(firstAfter.map((s) => s.mallocMb)))} -> ${sig(median(last.map((s) => s.mallocMb)))} MB, V8's committed heap ${sig(grew("v8TotalMb"))} MB (its new space ${sig(Math.min(...after.map((s) => s.newSpaceMb)))}-${sig(Math.max(...after.map((s) => s.newSpaceMb)))} MB), V8's external memory ${sig(grew("externalMb"))} MB`,
    },
    {
      name: `heap used growth after the first ${mins(win)} (fitted at full collections)`,
      value: sig(rise("heapMb")),
      unit: "MB",
      target: `< ${TARGET_HEAP_MB} MB`,
      ok: rise("heapMb") < TARGET_HEAP_MB,
      notes: `slope ${sig(perHour("heapMb"))} MB/h (${gcRange("heapMb")}); over every 10 s sample ${sig(samplesPerHour("heapMb"))} MB/h (heap used saws between ${sig(Math.min(...after.map((s) => s.heapMb)))} and ${sig(Math.max(...after.map((s) => s.heapMb)))} MB)`,
    },
    {
      name: "open file descriptors: last window's median minus the first's after warm-up",
      value: fdDrift,
      unit: "fds",
      target: `flat (at most ${TARGET_FD_DRIFT} more)`,
      ok: fdDrift <= TARGET_FD_DRIFT,
      notes: `min ${Math.min(...samples.map((s) => s.fds))}, median ${median(samples.map((s) => s.fds))}, max ${Math.max(...samples.map((s) => s.fds))} over the run (pipes of running jobs and keep-alive connections come and go)`,
    },
    {
      name: `dispatch delay p99, last ${mins(win)} / first ${mins(win)}`,
      value: round(dRatio, 2),
      unit: "ratio",
      target: `<= ${TARGET_DISPATCH_RATIO}x`,
      ok: dRatio <= TARGET_DISPATCH_RATIO,
      notes: `first ${sig(pct(dFirst, 99))} ms (${dFirst.length} starts, median ${sig(median(dFirst))} ms), last ${sig(pct(dLast, 99))} ms (${dLast.length} starts, median ${sig(median(dLast))} ms); started_at - scheduled_for of every scheduled run, pool_size 8 (50 jobs share the :00 second)`,
    },
    {
      name: short
        ? "database growth once retention caps it (not evaluated: a run under 20 minutes ends before the caps)"
        : steady
          ? `database growth from ${mins(dbAt)} (every run made before the clock started replaced) to the end`
          : `database growth from ${mins(dbAt)} to the end (not evaluated: the database reaches its steady state once every run made before the clock started is replaced, ~${KEEP + 2} minutes, and is judged over ${mins(MIN_STEADY_S)} from then)`,
      value: round(dbGrowth * 100, 1),
      unit: "%",
      ...(steady ? { target: `< ${TARGET_DB_GROWTH * 100} % (bounded)`, ok: dbGrowth < TARGET_DB_GROWTH } : {}),
      notes: `svc.db ${sig(dbFrom?.dbMb ?? NaN)} MB at ${mins(dbFrom?.t ?? NaN)}, ${sig(dbTo?.dbMb ?? NaN)} MB at the end, peak ${sig(Math.max(...samples.map((s) => s.dbMb)))} MB; every job that runs at its cap of ${KEEP} from ~12 minutes on (the ${MINUTELY} every-minute jobs from the start: ${o.prefilled} manual runs before the clock started, replaced by their scheduled runs one a minute); runs made before the clock: ${o.older[0]?.runs ?? "?"} at ${mins(o.older[0]?.t ?? NaN)}, ${olderNote}; ${o.kept.success + o.kept.failed} finished runs kept at the end`,
    },
    {
      // Not a target of its own: what the file-size line above counts. The file is a high-water mark (SQLite reuses
      // freed pages but never returns them), so one retention pass that needs more pages than the free list holds steps
      // it up for good; whether retention bounds the data is whether the contents' peaks stop rising.
      name: short
        ? "database contents' peak, second half / first half (not evaluated: a run under 20 minutes ends before the caps)"
        : `database contents' peak (b-trees' pages, free list excluded) from ${mins(peaks?.mid ?? NaN)} to the end / from ${mins(dbAt)} to ${mins(peaks?.mid ?? NaN)}`,
      value: round(peaks?.ratio ?? NaN, 3),
      unit: "ratio",
      notes:
        peaks === null
          ? `no dbstat reading in one of the halves from ${mins(dbAt)}; the file's size from there: ${fileSteps(samples.filter((s) => s.t >= dbAt))}`
          : `peaks ${sig(peaks.firstMb)} and ${sig(peaks.lastMb)} MB (troughs ${sig(peaks.firstLowMb)} and ${sig(peaks.lastLowMb)} MB: retention every ${RETENTION_EVERY} trims what the runs add); free list ${sig(peaks.freeMinMb)}-${sig(peaks.freeMaxMb)} MB over those readings; the file's size from ${mins(dbAt)}: ${fileSteps(samples.filter((s) => s.t >= dbAt))}`,
    },
    {
      name: short ? "database by table and index, first reading to the last (dbstat)" : `database by table and index from ${mins(statFrom?.t ?? NaN)} to the end (dbstat): the b-tree that grew most`,
      value: sig(topGrowthMb),
      unit: "MB",
      notes: `${dbGrowthByObject(statFrom, statTo)}; over the whole run: ${dbGrowthByObject(o.dbstats[0], statTo, 3)}; every reading (once a minute): [perf/soak-dbstat.csv](perf/soak-dbstat.csv)`,
    },
    {
      name: "WAL size, largest sample",
      value: sig(walMax),
      unit: "MB",
      target: `< ${TARGET_WAL_MB} MB`,
      ok: walMax < TARGET_WAL_MB,
      notes: `median ${sig(median(samples.map((s) => s.walMb)))} MB (wal_autocheckpoint 1,000 pages)`,
    },
    {
      name: "runs completed per second (median of samples)",
      value: sig(median(samples.map((s) => s.runsPerS))),
      unit: "runs/s",
      notes: `svcd CPU median ${sig(median(samples.map((s) => s.cpuPct)))} % of a core; ${counters.triggers} API triggers answered 202; ${loadNote}`,
    },
    {
      name: "event-loop lag p99 (10 s windows): median / max",
      value: sig(median(samples.map((s) => s.lagP99Ms))),
      unit: "ms",
      notes: `prom-client's, which counts its own 10 ms sampling interval (an idle loop reads ~10.5 ms): the lag itself is the figure minus ~10 ms; max ${sig(Math.max(...samples.map((s) => s.lagP99Ms)))} ms; first ${mins(win)} median ${sig(median(first.map((s) => s.lagP99Ms)))} ms, last ${sig(median(last.map((s) => s.lagP99Ms)))} ms`,
    },
    {
      name: "GET /api/jobs (1,000 jobs) while sampling: last window / first window (medians)",
      value: round(median(last.map((s) => s.jobsMs)) / median(first.map((s) => s.jobsMs)), 2),
      unit: "ratio",
      notes: `first ${sig(median(first.map((s) => s.jobsMs)))} ms, last ${sig(median(last.map((s) => s.jobsMs)))} ms; GET /api/status ${sig(median(first.map((s) => s.statusMs)))} -> ${sig(median(last.map((s) => s.statusMs)))} ms`,
    },
    {
      name: "errors: API, WebSocket, pollers",
      value: counters.triggerErrors.length + counters.wsErrors.length + counters.pollErrors.length + o.kept.running,
      unit: "count",
      notes:
        `${RESETS.count} GETs retried after a reset keep-alive connection; ${counters.wsRuns} runs followed to their end over WebSocket (${counters.wsLines} lines); ${counters.alerts} alerts received by the webhook receiver, ${o.kept.alerts} alert rows kept; runs RUNNING at the end: ${o.kept.running}` +
        [...counters.triggerErrors, ...counters.wsErrors, ...counters.pollErrors].slice(0, 3).map((e) => `; ${e}`).join(""),
    },
  ];
  plot(o);
  writeFileSync(
    join(PERF_DIR, "soak-samples.csv"),
    ["t_s,rss_mb,heap_mb,fds,lag_p99_ms,dispatch_p99_ms,db_mb,wal_mb,runs_per_s,cpu_pct,load1,status_ms,jobs_ms,rss_anon_mb,rss_file_mb,malloc_heap_mb,v8_heap_total_mb,external_mb,v8_new_space_mb"]
      .concat(samples.map((s) => [s.t, s.rssMb, s.heapMb, s.fds, s.lagP99Ms, s.dispatchP99Ms, s.dbMb, s.walMb, s.runsPerS, s.cpuPct, s.load1, s.statusMs, s.jobsMs, s.anonMb, s.fileMb, s.mallocMb, s.v8TotalMb, s.externalMb, s.newSpaceMb].map((v) => (Number.isInteger(v) ? v : round(v, 2))).join(",")))
      .join("\n") + "\n",
  );
  writeFileSync(
    join(PERF_DIR, "soak-dbstat.csv"),
    ["t_s,object,bytes,unused_bytes"]
      .concat(o.dbstats.flatMap((x) => [`${x.t},(free list),${x.freePages * x.pageSize},${x.freePages * x.pageSize}`, ...[...x.objects].map(([name, b]) => `${x.t},${name},${b.bytes},${b.unused}`)]))
      .join("\n") + "\n",
  );
  return {
    title: `Soak: ${o.minutes} minutes of mixed load`,
    method:
      `A real svcd (the bin/svcd build, started by node with --trace-gc and one malloc arena) with ${JOBS} jobs: ${EVERY5} jobs every 5 s printing four 1 KB lines, a fifth at each second of the five ` +
      `(\`every:5s\`, \`cron:1/5 * * * * *\` ...; ${ALERTING} of them fail every third run and alert a local webhook receiver), ` +
      `${CHAINS} chains of ${CHAIN_LEN} (a root on \`cron:3/6 * * * * *\`, then \`after:\` jobs, four 1 KB lines each), ${MINUTELY} jobs once a minute (${MINUTELY_AT_00} \`cron:* * * * *\`, the rest at their own second; one short line), ` +
      `${API_JOBS} manual jobs triggered through the API ${TRIGGERS_PER_S} times a second, and ${JOBS - ACTIVE} idle jobs; ${FOLLOWERS} WebSocket followers each follow one every:5s job's runs as they come; ` +
      `executor.pool_size 8; retention \`max_runs_per_job: ${KEEP}\` every ${RETENTION_EVERY} (\`storage.retention.interval\`); before the clock starts, ${o.prefilled} manual runs of the every-minute jobs through the API (${KEEP} each), so that they too are at their cap, as after days of history, instead of reaching it after ${KEEP} minutes. ` +
      `Sampled every 10 s for ${o.minutes} minutes (${samples.length} samples): RSS (and its anonymous and file-backed parts, and the resident part of malloc's arena, [heap] in /proc/<pid>/smaps) and open descriptors from /proc, V8's committed heap and external memory, heap used and event-loop lag p99 (reset at each scrape) from GET /metrics, ` +
      "runs/s from svc_runs_total, database and WAL file sizes (and once a minute each table's and index's bytes, from SQLite's dbstat on a read-only connection), and the dispatch delay (started_at - scheduled_for) of every scheduled run read back through GET /api/db/job_runs. " +
      "Heap and RSS saw up and down by tens of MB between V8's full collections, so growth is measured where the heap is comparable: after each full collection " +
      "(the heap used that V8's --trace-gc prints for every Mark-Compact, and RSS read from /proc when the line arrives). " +
      `Growth is the least-squares slope of those after the first ${round(win / 60, 1)} minutes times the rest of the run (the slope over every 10 s sample is in the notes); ` +
      `RSS is also fitted from ${round(capped / 60, 1)} minutes (at least 15, at most half the run), when the warm-up is over (SQLite's page cache, cache_size ${PAGE_CACHE_MIB} MiB, full; the kept runs capped), against the same target as a rate; the dispatch ratio compares the p99 of all starts in the first and last ${round(win / 60, 1)} minutes. ` +
      `The database file is judged from the first minute at which no run made before the clock started is left (GET /api/db/job_runs?until=<start>, once a minute), if at least ${round(MIN_STEADY_S / 60)} minutes remain: until then the every-minute jobs' scheduled runs, spread among the others', replace their prefilled ones, and the same rows take more pages. ` +
      `Plot: [perf/soak.svg](perf/soak.svg); every sample: [perf/soak-samples.csv](perf/soak-samples.csv).`,
    results,
  };
}

function plot(o: Outcome): void {
  const s = o.samples;
  const m = (t: number) => round(t / 60, 2);
  const series = (name: string, k: keyof Sample) => ({ name, points: s.map((x): [number, number] => [m(x.t), x[k]]) });
  writePanels(join(PERF_DIR, "soak.svg"), {
    title: `Soak: svcd with ${JOBS} jobs, ${o.minutes} minutes`,
    subtitle: `~${sig(median(s.map((x) => x.runsPerS)))} runs/s, ${FOLLOWERS} WebSocket followers, retention every ${RETENTION_EVERY}; load average median ${round(median(s.map((x) => x.load1)), 1)} on 2 cores`,
    xLabel: "minutes since svcd answered",
    panels: [
      {
        yLabel: "MB",
        series: [
          series("RSS", "rssMb"),
          series("heap used", "heapMb"),
          series("RSS anonymous", "anonMb"),
          series("malloc arena ([heap])", "mallocMb"),
          series("V8 heap committed", "v8TotalMb"),
          { name: "heap after full GC", points: o.gcs.map((g): [number, number] => [m(g.t), g.heapMb]) },
        ],
      },
      { yLabel: "open fds", series: [series("open fds", "fds")] },
      { yLabel: "ms", series: [series("event-loop lag p99 (counts the 10 ms sampling interval)", "lagP99Ms"), series("dispatch delay p99", "dispatchP99Ms")] },
      { yLabel: "MB", series: [series("svc.db", "dbMb"), series("WAL", "walMb")], target: { y: TARGET_WAL_MB, label: "WAL limit" } },
      { yLabel: "runs/s", series: [series("runs/s", "runsPerS")] },
    ],
  });
}

// `tsx bench/soak.bench.ts` prints this section alone.
if (import.meta.url === `file://${process.argv[1]}`) {
  const section = await soakBench();
  console.log(section.title);
  for (const r of section.results) {
    console.log(`  ${r.name}: ${r.value} ${r.unit}${r.target ? ` (target ${r.target}: ${r.ok ? "ok" : "MISSED"})` : ""}  ${r.notes ?? ""}`);
  }
}

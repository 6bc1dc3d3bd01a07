/**
 * Storage benchmark (issue 3). Everything is measured in one process, on
 * real files in a temp directory, and compared as ratios where a physical
 * limit can be measured in the same run:
 *
 * 1. raw better-sqlite3 batched insert (1,000 rows per transaction, ~95-byte
 *    rows, WAL, synchronous=NORMAL) vs svc's logs.append + flush (durable
 *    when the onFlushed listener sees the line): rates and ratio;
 * 2. a 1,000,000-line burst through logs.append with the event loop turning
 *    (the background full-text indexer runs): how far the index trails and
 *    how long it takes to catch up, and when a search finds the last line;
 * 3. a paginated, filtered job_runs query over 1,000,000 runs (median, p99);
 * 4. database size after 1,000,000 runs.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { openStore } from "../src/store/index.js";
import type { RunQuery, Store } from "../src/store/index.js";
import type { BenchResult, BenchSection } from "./types.js";

const RATE_ROWS = 100_000;
const REPEATS = 5;
const BURST_LINES = 1_000_000;
const RUNS = 1_000_000;
const JOBS = 200;
const TS = "2026-11-21T10:00:00.000Z";

/** ~95 bytes per row in all: ts (24) + stream (6) + two integers + a ~55-character line. */
function logLine(i: number): string {
  return `worker ${i % 16} processed batch ${i} status ok rows ${(i * 7919) % 100000}`.padEnd(55, ".");
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const tick = (): Promise<void> => new Promise((r) => setImmediate(r));
const round = (n: number, d = 0): number => Math.round(n * 10 ** d) / 10 ** d;

interface Rate {
  wall: number; // rows per wall-clock second
  cpu: number; // rows per CPU second of this process (robust to other load on a shared machine)
}

function measure(n: number, fn: () => void): Rate {
  const c = process.cpuUsage();
  const t = performance.now();
  fn();
  const wallMs = performance.now() - t;
  const u = process.cpuUsage(c);
  return { wall: (n / wallMs) * 1_000, cpu: (n / ((u.user + u.system) / 1_000)) * 1_000 };
}

function rawRate(dir: string, n: number): Rate {
  const file = path.join(dir, `raw-${process.hrtime.bigint()}.db`);
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, run_id INTEGER, seq INTEGER, ts TEXT, stream TEXT, line TEXT)");
  const ins = db.prepare("INSERT INTO t (run_id, seq, ts, stream, line) VALUES (?, ?, ?, ?, ?)");
  const batch = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) ins.run(1 + (i % 50), i, TS, "stdout", logLine(i));
  });
  const rate = measure(n, () => {
    for (let i = 0; i < n; i += 1_000) batch(i, Math.min(n, i + 1_000));
  });
  db.close();
  return rate;
}

function svcRate(dir: string, n: number): Rate {
  const store = openStore({
    path: path.join(dir, `svc-${process.hrtime.bigint()}.db`),
    busyTimeoutMs: 5_000,
    walAutocheckpoint: 1_000,
    logFlushLines: 1_000,
  });
  const runIds = makeRuns(store, 50);
  let acked = 0;
  store.logs.onFlushed((lines) => {
    acked += lines.length;
  });
  const rate = measure(n, () => {
    for (let i = 0; i < n; i++) store.logs.append(runIds[i % runIds.length]!, "stdout", logLine(i), TS);
    store.logs.flush();
  });
  if (acked !== n) throw new Error(`only ${acked} of ${n} lines acknowledged`);
  store.close();
  return rate;
}

function makeRuns(store: Store, n: number): number[] {
  return store.tx(() =>
    Array.from(
      { length: n },
      (_, i) =>
        store.runs.create({
          job_name: `job-${i}`,
          trigger: "schedule",
          triggered_by: "scheduler",
          cycle_id: `c-${i}`,
          tags: [],
          created_at: TS,
        }).id,
    ),
  );
}

async function burst(dir: string): Promise<BenchResult[]> {
  const store = openStore({ path: path.join(dir, "burst.db"), busyTimeoutMs: 5_000, walAutocheckpoint: 1_000 });
  const runIds = makeRuns(store, 20);
  let maxLag = 0;
  const turns: number[] = [];
  let last = performance.now();
  const t0 = performance.now();
  const chunk = 1_000; // lines per event-loop turn, as if read from pipes
  for (let i = 0; i < BURST_LINES; i += chunk) {
    for (let j = i; j < i + chunk; j++) store.logs.append(runIds[j % runIds.length]!, "stdout", logLine(j), TS);
    await tick();
    const now = performance.now();
    turns.push(now - last);
    last = now;
    maxLag = Math.max(maxLag, store.logs.ftsLag());
  }
  const lastLine = `burst finished marker zq${process.pid}x`;
  store.logs.append(runIds[0]!, "stdout", lastLine, TS);
  store.logs.flush();
  const burstMs = performance.now() - t0;
  const lagAtEnd = store.logs.ftsLag();
  const end = performance.now();
  let foundMs = -1;
  while (performance.now() - end < 60_000) {
    if (foundMs < 0 && store.logs.search({ q: `zq${process.pid}x` }, 1, 0).total === 1) foundMs = performance.now() - end;
    if (store.logs.ftsLag() === 0 && foundMs >= 0) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const catchUpMs = performance.now() - end;
  const reads: BenchResult[] = [
    ...timeQuery("logs.forRun: 100 lines at a random offset of a 50,000-line run", 200, (i) =>
      store.logs.forRun(runIds[i % runIds.length]!, { limit: 100, offset: (i * 7_919) % 49_900 }),
    20),
    ...timeQuery("logs.forRun stdout+stderr (stream filter), first page", 50, (i) =>
      store.logs.forRun(runIds[i % runIds.length]!, { limit: 100, offset: 0, streams: ["stdout", "stderr"] }),
    ),
    ...timeQuery("logs.tail: last 100 lines", 200, (i) => store.logs.tail(runIds[i % runIds.length]!, 100), 20),
    ...timeQuery("logs.search q=<rare word> over 1,000,000 lines", 100, (i) => store.logs.search({ q: `batch ${(i * 7_919) % BURST_LINES}` }, 50, 0), 20),
    ...timeQuery("logs.search run_id=X, newest 50", 100, (i) => store.logs.search({ run_id: runIds[i % runIds.length]! }, 50, 0), 20),
  ];
  store.close();
  return [
    { name: "burst: durable ingestion with the indexer running", value: round(((BURST_LINES + 1) / burstMs) * 1_000), unit: "lines/s", notes: `${BURST_LINES} lines, ${chunk} per event-loop turn, 20 runs` },
    { name: "burst: max FTS lag during the burst", value: maxLag, unit: "lines" },
    { name: "burst: FTS lag when the burst ended", value: lagAtEnd, unit: "lines" },
    { name: "burst: FTS catch-up after the burst", value: round(catchUpMs), unit: "ms" },
    { name: "burst: last line found by search after", value: round(foundMs), unit: "ms", target: "< 2000 ms", ok: foundMs >= 0 && foundMs < 2_000 },
    { name: "burst: event-loop turn p99", value: round(pct(turns, 99), 1), unit: "ms", notes: `median ${round(median(turns), 1)} ms, max ${round(Math.max(...turns), 1)} ms; one turn = 1,000 appends + a flush + at most one index slice` },
    ...reads,
  ];
}

/**
 * 1,000,000 runs written straight into the store's schema with SQL (through
 * runs.create/transition they take minutes; their rate is measured
 * separately on a sample). 200 jobs, one year of history, 80 % SUCCESS,
 * 10 % FAILED, 10 % SKIPPED, 2 % manual with a reason, 1 % SLA breaches.
 */
function fillRuns(file: string): void {
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("cache_size = -65536");
  // Bulk-load pattern: drop the secondary indexes, insert, build them again (sorted builds are much faster).
  const indexes = db.prepare("SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN ('job_runs', 'run_tags')").all() as { name: string; sql: string }[];
  for (const ix of indexes) db.exec(`DROP INDEX ${ix.name}`);
  const start = Date.parse("2025-11-21T00:00:00.000Z");
  const step = (365 * 86_400_000) / RUNS;
  const chunk = db.transaction((from: number, to: number) => {
    db.prepare(
      `WITH RECURSIVE n (i) AS (SELECT CAST(? AS INTEGER) UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?),
       r AS (SELECT i, ? + i * ? AS t,
               CASE (i / ${JOBS}) % 10 WHEN 8 THEN 'FAILED' WHEN 9 THEN 'SKIPPED' ELSE 'SUCCESS' END AS st,
               1000 + (i * 7919) % 600000 AS dur FROM n)
       INSERT INTO job_runs (job_name, status, attempt, "trigger", triggered_by, reason, cycle_id, tags, created_at,
                             started_at, finished_at, exit_code, sla_breached, duration_ms)
       SELECT 'job-' || (i % ${JOBS}), st, 1,
              CASE WHEN (i / ${JOBS}) % 50 = 0 THEN 'manual' ELSE 'schedule' END,
              CASE WHEN (i / ${JOBS}) % 50 = 0 THEN 'cli' ELSE 'scheduler' END,
              CASE WHEN (i / ${JOBS}) % 50 = 0 THEN 'backfill after incident ' || (i % 97) END,
              'cycle-' || (i / 4),
              CASE WHEN i % 3 = 0 THEN '["etl","nightly"]' ELSE '["etl"]' END,
              strftime('%Y-%m-%dT%H:%M:%fZ', t / 1000.0, 'unixepoch'),
              CASE WHEN st <> 'SKIPPED' THEN strftime('%Y-%m-%dT%H:%M:%fZ', (t + 1000) / 1000.0, 'unixepoch') END,
              strftime('%Y-%m-%dT%H:%M:%fZ', (t + 1000 + CASE WHEN st = 'SKIPPED' THEN 0 ELSE dur END) / 1000.0, 'unixepoch'),
              CASE st WHEN 'SUCCESS' THEN 0 WHEN 'FAILED' THEN 1 END,
              CASE WHEN i % 101 = 0 THEN 1 ELSE 0 END,
              CASE WHEN st <> 'SKIPPED' THEN dur END
       FROM r`,
    ).run(from, to, start, step);
  });
  for (let i = 0; i < RUNS; i += 100_000) chunk(i, Math.min(RUNS, i + 100_000));
  db.exec(`INSERT INTO run_tags (tag, run_id) SELECT 'etl', id FROM job_runs;
           INSERT INTO run_tags (tag, run_id) SELECT 'nightly', id FROM job_runs WHERE (id - 1) % 3 = 0;`);
  for (const ix of indexes) db.exec(ix.sql);
  db.close();
}

/** runs.create + RUNNING + SUCCESS through the store API, one transaction per run as the engine does it. */
function apiRunRate(dir: string): number {
  const store = openStore({ path: path.join(dir, "api-runs.db"), busyTimeoutMs: 5_000, walAutocheckpoint: 1_000 });
  const n = 5_000;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const run = store.runs.create({ job_name: `job-${i % JOBS}`, trigger: "schedule", triggered_by: "scheduler", cycle_id: `c-${i}`, tags: ["etl"], created_at: TS });
    store.runs.transition(run.id, "RUNNING", { started_at: TS, pid: 100 + i });
    store.runs.transition(run.id, "SUCCESS", { finished_at: TS, exit_code: 0, duration_ms: 5 });
  }
  const ms = performance.now() - t0;
  store.close();
  return (n / ms) * 1_000;
}

function timeQuery(label: string, runs: number, fn: (i: number) => void, target?: number): BenchResult[] {
  for (let i = 0; i < 5; i++) fn(i); // warm the cache and the statement
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    fn(i);
    ms.push(performance.now() - t);
  }
  const p50 = median(ms);
  const p99 = pct(ms, 99);
  return [
    { name: `${label}: median`, value: round(p50, 2), unit: "ms", ...(target ? { target: `< ${target} ms`, ok: p50 < target } : {}) },
    { name: `${label}: p99`, value: round(p99, 2), unit: "ms", ...(target ? { target: `< ${target} ms`, ok: p99 < target } : {}) },
  ];
}

function queries(dir: string): BenchResult[] {
  const file = path.join(dir, "runs.db");
  openStore({ path: file, busyTimeoutMs: 5_000, walAutocheckpoint: 1_000 }).close(); // the schema
  const t0 = performance.now();
  fillRuns(file);
  const fillMs = performance.now() - t0;
  const s = openStore({ path: file, busyTimeoutMs: 5_000, walAutocheckpoint: 1_000 }); // runs PRAGMA optimize (ANALYZE)
  s.close(); // checkpoints the WAL into the file
  const sizeMb = fs.statSync(file).size / 1024 / 1024;
  const store = openStore({ path: file, busyTimeoutMs: 5_000, walAutocheckpoint: 1_000 });
  const page = (q: RunQuery, i: number, sort = "id", order: "asc" | "desc" = "desc") =>
    store.runs.page(q, { page: 1 + (i % 20), page_size: 50, sort, order });
  const results: BenchResult[] = [
    { name: "job_runs: database size after 1,000,000 runs", value: round(sizeMb, 1), unit: "MB", notes: `${round((sizeMb * 1024 * 1024) / RUNS)} bytes per run with its run_tags rows and 14 indexes; filled with SQL in ${round(fillMs / 1_000, 1)} s` },
    ...timeQuery("page: job=X, status=FAILED, pages 1-20 of 50, id desc", 200, (i) => page({ job: `job-${i % JOBS}`, status: "FAILED" }, i), 20),
    ...timeQuery("page: job=X, pages 1-20 of 50, id desc", 200, (i) => page({ job: `job-${i % JOBS}` }, i), 20),
    ...timeQuery("page: job=X, since 30 days, sort duration_ms desc", 200, (i) => page({ job: `job-${i % JOBS}`, since: "2026-10-21T00:00:00.000Z" }, i, "duration_ms"), 20),
    ...timeQuery("page: status=FAILED, since 30 days", 100, (i) => page({ status: "FAILED", since: "2026-10-21T00:00:00.000Z" }, i), 20),
    ...timeQuery("page: sla_breached=1", 100, (i) => page({ sla_breached: 1 }, i), 20),
    ...timeQuery("page: trigger=manual", 100, (i) => page({ trigger: "manual" }, i), 20),
    ...timeQuery("page: no filter, sort started_at desc", 50, (i) => page({}, i, "started_at", "desc"), 20),
    ...timeQuery("page: no filter, id desc (total = 1,000,000)", 50, (i) => page({}, i)),
    ...timeQuery("page: status=SUCCESS (total = 800,000)", 20, (i) => page({ status: "SUCCESS" }, i)),
    ...timeQuery("page: trigger=manual, sla_breached=0", 50, (i) => page({ trigger: "manual", sla_breached: 0 }, i)),
    ...timeQuery("audit: job=X, reason~'incident 4', limit 100", 100, (i) => store.runs.audit({ job: `job-${(i * 50) % JOBS}`, reason: "incident 4" }, 100, 0)),
    ...timeQuery("audit: reason~'incident 4' (all jobs), limit 100", 20, () => store.runs.audit({ reason: "incident 4" }, 100, 0)),
    ...timeQuery("audit: tag=nightly, status=FAILED, limit 100", 20, () => store.runs.audit({ tag: "nightly", status: "FAILED" }, 100, 0)),
  ];
  store.close();
  return results;
}

export default async function storeBench(): Promise<BenchSection> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-store-bench-"));
  try {
    rawRate(dir, 50_000); // warm up the JIT and the page cache
    svcRate(dir, 50_000);
    const pairs: { raw: Rate; svc: Rate }[] = [];
    for (let r = 0; r < REPEATS; r++) pairs.push({ raw: rawRate(dir, RATE_ROWS), svc: svcRate(dir, RATE_ROWS) });
    const ratio = median(pairs.map((p) => p.svc.wall / p.raw.wall));
    const cpuRatio = median(pairs.map((p) => p.svc.cpu / p.raw.cpu));
    const results: BenchResult[] = [
      { name: "raw better-sqlite3 insert, 1,000 rows/transaction", value: round(median(pairs.map((p) => p.raw.wall))), unit: "rows/s", notes: `median of ${REPEATS} x ${RATE_ROWS} rows; per CPU second ${round(median(pairs.map((p) => p.raw.cpu)))}` },
      { name: "svc logs.append + flush, durable (acknowledged)", value: round(median(pairs.map((p) => p.svc.wall))), unit: "lines/s", notes: `median of ${REPEATS} x ${RATE_ROWS} lines over 50 runs, flush every 1,000; per CPU second ${round(median(pairs.map((p) => p.svc.cpu)))}` },
      { name: "svc / raw ingestion ratio (wall clock)", value: round(ratio, 2), unit: "ratio", target: ">= 0.40", ok: ratio >= 0.4, notes: `each repeat runs raw then svc; ratios ${pairs.map((p) => round(p.svc.wall / p.raw.wall, 2)).join(", ")}` },
      { name: "svc / raw ingestion ratio (CPU time)", value: round(cpuRatio, 2), unit: "ratio", target: ">= 0.40", ok: cpuRatio >= 0.4, notes: `ratios ${pairs.map((p) => round(p.svc.cpu / p.raw.cpu, 2)).join(", ")}; insensitive to other processes on the shared cores` },
      { name: "runs.create + 2 transitions through the API", value: round(apiRunRate(dir)), unit: "runs/s", notes: "one IMMEDIATE transaction per call, as the engine does" },
      ...(await burst(dir)),
      ...queries(dir),
    ];
    return {
      title: "Storage (SQLite)",
      method:
        "One process, real files in a temp dir, WAL + synchronous=NORMAL. Raw: a 6-column table without secondary indexes, " +
        "prepared INSERT, 1,000 rows per transaction. svc: logs.append over 50 runs with logFlushLines=1000; the rate counts " +
        "lines acknowledged by onFlushed (committed). Burst: 1,000,000 lines, 1,000 per event-loop turn, the FTS indexer " +
        "running in the background. Queries: 1,000,000 runs over 200 jobs and a year, each query repeated with pages 1-20.",
      results,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Storage benchmark (issue 3). Everything runs in one process on real files
 * in a temp directory, and is compared as a ratio wherever a physical limit
 * can be measured in the same run:
 *
 * 1. raw better-sqlite3 batched insert (1,000 rows per transaction, ~95-byte
 *    rows, WAL, synchronous=NORMAL) against svc's logs.append + flush, counted
 *    when onFlushed acknowledges the lines (committed): rates and ratio;
 * 2. a 1,000,000-line burst through logs.append with the event loop turning
 *    between chunks, the full-text indexer running in the background: how far
 *    the index trails, how long it takes to catch up, when a search finds the
 *    burst's last line; then log reads on the result;
 * 3. paginated, filtered job_runs queries over 1,000,000 runs (median, p99);
 * 4. the database size after 1,000,000 runs.
 *
 * `--quick` (SVC_BENCH_QUICK=1) uses a fifth of the rows and fewer repeats.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { openStore } from "../src/store/index.js";
import type { RunQuery, Store } from "../src/store/index.js";
import { fillRuns } from "./helpers/fillRuns.js";
import { median, pct, quick, round, sleep } from "./helpers/stats.js";
import type { BenchResult, BenchSection } from "./types.js";

const Q = quick();
const RATE_ROWS = Q ? 50_000 : 100_000;
const REPEATS = Q ? 3 : 5;
const BURST_LINES = Q ? 200_000 : 1_000_000;
const RUNS = Q ? 200_000 : 1_000_000;
const JOBS = 200;
const TS = "2026-11-21T10:00:00.000Z";
const n = (x: number): string => x.toLocaleString("en-US");

/** ~95 bytes per row in all: ts (24) + stream (6) + two integers + a ~55-character line. */
function logLine(i: number): string {
  return `worker ${i % 16} processed batch ${i} status ok rows ${(i * 7919) % 100000}`.padEnd(55, ".");
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

function open(file: string): Store {
  return openStore({ path: file, busyTimeoutMs: 5_000, walAutocheckpoint: 1_000 });
}

interface Rate {
  wall: number; // rows per wall-clock second
  cpu: number; // rows per CPU second of this process: robust to other load on shared cores
}

function measure(rows: number, fn: () => void): Rate {
  const c = process.cpuUsage();
  const t = performance.now();
  fn();
  const wallMs = performance.now() - t;
  const u = process.cpuUsage(c);
  return { wall: (rows / wallMs) * 1_000, cpu: (rows / ((u.user + u.system) / 1_000)) * 1_000 };
}

function rawRate(dir: string, rows: number): Rate {
  const db = new Database(path.join(dir, `raw-${process.hrtime.bigint()}.db`));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, run_id INTEGER, seq INTEGER, ts TEXT, stream TEXT, line TEXT)");
  const ins = db.prepare("INSERT INTO t (run_id, seq, ts, stream, line) VALUES (?, ?, ?, ?, ?)");
  const batch = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) ins.run(1 + (i % 50), i, TS, "stdout", logLine(i));
  });
  const rate = measure(rows, () => {
    for (let i = 0; i < rows; i += 1_000) batch(i, Math.min(rows, i + 1_000));
  });
  db.close();
  return rate;
}

function svcRate(dir: string, rows: number): Rate {
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
  const rate = measure(rows, () => {
    for (let i = 0; i < rows; i++) store.logs.append(runIds[i % runIds.length]!, "stdout", logLine(i), TS);
    store.logs.flush();
  });
  if (acked !== rows) throw new Error(`only ${acked} of ${rows} lines acknowledged`);
  store.close();
  return rate;
}

function makeRuns(store: Store, count: number): number[] {
  return store.tx(() =>
    Array.from(
      { length: count },
      (_, i) =>
        store.runs.create({ job_name: `job-${i}`, trigger: "schedule", triggered_by: "scheduler", cycle_id: `c-${i}`, tags: [], created_at: TS })
          .id,
    ),
  );
}

function ingestion(dir: string): BenchResult[] {
  rawRate(dir, RATE_ROWS / 2); // warm up the JIT and the page cache
  svcRate(dir, RATE_ROWS / 2);
  const pairs: { raw: Rate; svc: Rate }[] = [];
  for (let r = 0; r < REPEATS; r++) pairs.push({ raw: rawRate(dir, RATE_ROWS), svc: svcRate(dir, RATE_ROWS) });
  const wall = pairs.map((p) => p.svc.wall / p.raw.wall);
  const cpu = pairs.map((p) => p.svc.cpu / p.raw.cpu);
  const list = (xs: number[]) => xs.map((x) => round(x, 2)).join(", ");
  return [
    {
      name: "raw better-sqlite3 insert, 1,000 rows/transaction",
      value: round(median(pairs.map((p) => p.raw.wall))),
      unit: "rows/s",
      notes: `median of ${REPEATS} x ${n(RATE_ROWS)} rows; ${n(round(median(pairs.map((p) => p.raw.cpu))))} per CPU second`,
    },
    {
      name: "svc logs.append + flush, acknowledged (committed)",
      value: round(median(pairs.map((p) => p.svc.wall))),
      unit: "lines/s",
      notes: `median of ${REPEATS} x ${n(RATE_ROWS)} lines over 50 runs, a flush per 1,000; ${n(round(median(pairs.map((p) => p.svc.cpu))))} per CPU second`,
    },
    { name: "svc / raw ingestion (wall clock)", value: round(median(wall), 2), unit: "ratio", target: ">= 0.40", ok: median(wall) >= 0.4, notes: `raw then svc per repeat: ${list(wall)}` },
    { name: "svc / raw ingestion (CPU time)", value: round(median(cpu), 2), unit: "ratio", target: ">= 0.40", ok: median(cpu) >= 0.4, notes: `${list(cpu)}; not skewed by other processes on the shared cores` },
  ];
}

async function burst(dir: string): Promise<BenchResult[]> {
  const store = open(path.join(dir, "burst.db"));
  const runIds = makeRuns(store, 20);
  const perRun = BURST_LINES / runIds.length;
  let maxLag = 0;
  const turns: number[] = [];
  const chunk = 1_000; // lines per event-loop turn, as if read from pipes
  const t0 = performance.now();
  let last = t0;
  for (let i = 0; i < BURST_LINES; i += chunk) {
    for (let j = i; j < i + chunk; j++) store.logs.append(runIds[j % runIds.length]!, "stdout", logLine(j), TS);
    await tick();
    const now = performance.now();
    turns.push(now - last);
    last = now;
    maxLag = Math.max(maxLag, store.logs.ftsLag());
  }
  const marker = `zq${process.pid}x`;
  store.logs.append(runIds[0]!, "stdout", `burst finished ${marker}`, TS);
  store.logs.flush();
  const burstMs = performance.now() - t0;
  const lagAtEnd = store.logs.ftsLag();
  const end = performance.now();
  let foundMs = -1;
  while (performance.now() - end < 60_000) {
    if (foundMs < 0 && store.logs.search({ q: marker }, 1, 0).total === 1) foundMs = performance.now() - end;
    if (foundMs >= 0 && store.logs.ftsLag() === 0) break;
    await sleep(20);
  }
  const catchUpMs = performance.now() - end;
  const run = (i: number) => runIds[i % runIds.length]!;
  const results: BenchResult[] = [
    {
      name: "burst: ingestion with the indexer running",
      value: round(((BURST_LINES + 1) / burstMs) * 1_000),
      unit: "lines/s",
      notes: `${n(BURST_LINES)} lines over 20 runs, ${n(chunk)} per event-loop turn`,
    },
    { name: "burst: most lines not yet searchable during the burst", value: maxLag, unit: "lines" },
    { name: "burst: lines not yet searchable when it ended", value: lagAtEnd, unit: "lines" },
    { name: "burst: index caught up after the burst", value: round(catchUpMs), unit: "ms" },
    { name: "burst: last line found by search after", value: round(foundMs), unit: "ms", target: "< 2000 ms", ok: foundMs >= 0 && foundMs < 2_000 },
    {
      name: "burst: event-loop turn, p99",
      value: round(pct(turns, 99), 1),
      unit: "ms",
      notes: `median ${round(median(turns), 1)} ms, max ${round(Math.max(...turns), 1)} ms; a turn = 1,000 appends, a flush, at most one index slice`,
    },
    ...timeQuery(`logs.forRun: 100 lines at a random offset of a ${n(perRun)}-line run`, 200, (i) =>
      store.logs.forRun(run(i), { limit: 100, offset: (i * 7_919) % (perRun - 100) }), 20),
    ...timeQuery("logs.forRun: stdout+stderr filter, page at offset 1,000", 100, (i) =>
      store.logs.forRun(run(i), { limit: 100, offset: 1_000, streams: ["stdout", "stderr"] }), 20),
    ...timeQuery("logs.tail: last 100 lines", 200, (i) => store.logs.tail(run(i), 100), 20),
    ...timeQuery(`logs.search: q=<rare words> over ${n(BURST_LINES)} lines`, 100, (i) =>
      store.logs.search({ q: `batch ${(i * 7_919) % BURST_LINES}` }, 50, 0), 20),
    ...timeQuery("logs.search: run_id=X, newest 50", 100, (i) => store.logs.search({ run_id: run(i) }, 50, 0), 20),
    ...timeQuery("logs.search: job=X, stream=stdout, newest 50", 100, (i) => store.logs.search({ job: `job-${i % 20}`, stream: "stdout" }, 50, 0), 20),
  ];
  store.close();
  return results;
}

/** runs.create + RUNNING + SUCCESS through the API, one IMMEDIATE transaction per call as the engine does it. */
function apiRunRate(dir: string): number {
  const store = open(path.join(dir, "api-runs.db"));
  const count = Q ? 1_000 : 5_000;
  const t0 = performance.now();
  for (let i = 0; i < count; i++) {
    const run = store.runs.create({ job_name: `job-${i % JOBS}`, trigger: "schedule", triggered_by: "scheduler", cycle_id: `c-${i}`, tags: ["etl"], created_at: TS });
    store.runs.transition(run.id, "RUNNING", { started_at: TS, pid: 100 + i });
    store.runs.transition(run.id, "SUCCESS", { finished_at: TS, exit_code: 0, duration_ms: 5 });
  }
  const ms = performance.now() - t0;
  store.close();
  return (count / ms) * 1_000;
}

function timeQuery(label: string, times: number, fn: (i: number) => void, target?: number): BenchResult[] {
  for (let i = 0; i < 5; i++) fn(i); // warm the page cache and the statement
  const ms: number[] = [];
  for (let i = 0; i < times; i++) {
    const t = performance.now();
    fn(i);
    ms.push(performance.now() - t);
  }
  const met = (x: number) => (target === undefined ? {} : { target: `< ${target} ms`, ok: x < target });
  return [
    { name: `${label}: median`, value: round(median(ms), 2), unit: "ms", ...met(median(ms)) },
    { name: `${label}: p99`, value: round(pct(ms, 99), 2), unit: "ms", ...met(pct(ms, 99)), notes: `n=${times}` },
  ];
}

function queries(dir: string): BenchResult[] {
  const file = path.join(dir, "runs.db");
  open(file).close(); // the schema
  const t0 = performance.now();
  fillRuns(file, RUNS, JOBS);
  const fillMs = performance.now() - t0;
  open(file).close(); // a clean close checkpoints the WAL into the file
  const sizeMb = fs.statSync(file).size / 1024 / 1024;
  const store = open(file);
  // Pages 1-20, or as many as the filter has (every job has the same mix): an empty page past the end would flatter the figures.
  const paged = (q: (i: number) => RunQuery, sort = "id", order: "asc" | "desc" = "desc") => {
    const total = store.runs.page(q(0), { page: 1, page_size: 50, sort: "id", order: "desc" }).total;
    const last = Math.max(1, Math.min(20, Math.ceil(total / 50)));
    return (i: number) => store.runs.page(q(i), { page: 1 + (i % last), page_size: 50, sort, order });
  };
  const job = (i: number) => `job-${(i * 7) % JOBS}`;
  const recent = "2026-10-21T00:00:00.000Z"; // the last 30 days
  const results: BenchResult[] = [
    {
      name: `job_runs: database size after ${n(RUNS)} runs`,
      value: round(sizeMb, 1),
      unit: "MB",
      notes: `${round((sizeMb * 1024 * 1024) / RUNS)} bytes per run with its run_tags rows and all indexes; loaded with SQL in ${round(fillMs / 1_000, 1)} s`,
    },
    ...timeQuery("page: job=X, status=FAILED", 200, paged((i) => ({ job: job(i), status: "FAILED" })), 20),
    ...timeQuery("page: job=X", 200, paged((i) => ({ job: job(i) })), 20),
    ...timeQuery("page: job=X, last 30 days, sort duration_ms desc", 200, paged((i) => ({ job: job(i), since: recent }), "duration_ms"), 20),
    ...timeQuery("page: status=FAILED, last 30 days", 100, paged(() => ({ status: "FAILED", since: recent })), 20),
    ...timeQuery("page: sla_breached=1", 100, paged(() => ({ sla_breached: 1 })), 20),
    ...timeQuery("page: trigger=manual", 100, paged(() => ({ trigger: "manual" })), 20),
    ...timeQuery("page: trigger=manual, sla_breached=0", 100, paged(() => ({ trigger: "manual", sla_breached: 0 })), 20),
    ...timeQuery("page: no filter, sort started_at desc", 50, paged(() => ({}), "started_at", "desc"), 20),
    ...timeQuery(`page: no filter (total ${n(RUNS)})`, 50, paged(() => ({})), 20),
    ...timeQuery(`page: status=SUCCESS (total ${n(RUNS * 0.8)}; an exact count over most of the table)`, 20, paged(() => ({ status: "SUCCESS" }))),
    ...timeQuery("audit: job=X, reason~'incident 4', limit 100", 100, (i) => store.runs.audit({ job: job(i), reason: "incident 4" }, 100, 0), 20),
    ...timeQuery("audit: reason~'incident 4', all jobs, limit 100 (substring scan of the runs with a reason)", 20, () => store.runs.audit({ reason: "incident 4" }, 100, 0)),
    ...timeQuery(`audit: tag=nightly, limit 100 (total ${n(Math.ceil(RUNS / 3))})`, 20, () => store.runs.audit({ tag: "nightly" }, 100, 0)),
    ...timeQuery("audit: tag=nightly, status=FAILED, limit 100", 20, () => store.runs.audit({ tag: "nightly", status: "FAILED" }, 100, 0)),
  ];
  store.close();
  return results;
}

export default async function storeBench(): Promise<BenchSection> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-store-bench-"));
  try {
    const results: BenchResult[] = [
      ...ingestion(dir),
      { name: "runs.create + 2 transitions through the API", value: round(apiRunRate(dir)), unit: "runs/s", notes: "one IMMEDIATE transaction per call, as the engine does" },
      ...(await burst(dir)),
      ...queries(dir),
    ];
    return {
      title: "Storage (SQLite)",
      method:
        "One process, real files in a temp dir, WAL, synchronous=NORMAL. Raw: a 6-column table without secondary indexes, a " +
        "prepared INSERT, 1,000 rows per transaction. svc: logs.append over 50 runs, logFlushLines=1000, counted when onFlushed " +
        `acknowledges the lines; raw and svc alternate, ${REPEATS} pairs, median of the per-pair ratios. Burst: ${n(BURST_LINES)} ` +
        "lines, 1,000 per event-loop turn, the full-text indexer running; then reads of that log. Queries: " +
        `${n(RUNS)} runs over ${JOBS} jobs and a year, each query repeated over pages 1-20 of 50 rows, or as many as it has (median, p99). ` +
        "Figures on a shared 2-core machine; the CPU-time ratio is the one other load does not skew.",
      results,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

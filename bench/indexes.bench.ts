/**
 * Which of job_runs' indexes earn their keep (issue 24 item 2), opt-in:
 * `npx tsx bench/indexes.bench.ts` (or `npm run bench -- indexes`).
 *
 * 1,000,000 runs over 200 jobs (bench/helpers/fillRuns.ts, as store.bench.ts).
 * Every store call that reads job_runs is made once through the store while
 * its statements are captured (Statement.prototype is wrapped), and each
 * captured statement's EXPLAIN QUERY PLAN says which indexes it uses. Then, per
 * index: DROP it, measure (a) the write cost of one run (runs.create,
 * transition RUNNING, transition SUCCESS: three IMMEDIATE transactions, as
 * the engine records a scheduled run) in CPU µs per run, and (b) the reads that
 * used it, re-run with their captured parameters; CREATE it again and measure
 * the same with every index, right after (ratios within one run; the machine
 * is shared). `--quick` uses 200,000 runs.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { openStore } from "../src/store/index.js";
import type { Store } from "../src/store/index.js";
import { fillRuns } from "./helpers/fillRuns.js";
import { median, quick, round } from "./helpers/stats.js";
import type { BenchResult, BenchSection } from "./types.js";

const Q = quick();
const RUNS = Q ? 200_000 : 1_000_000;
const JOBS = 200;
const WRITES = Q ? 500 : 2_000;
const ROUNDS = Q ? 1 : 3;

interface Captured {
  sql: string;
  args: unknown[];
}

// Capture the statements a store call runs: every Statement method that executes.
const probe = new Database(":memory:");
const StatementProto = Object.getPrototypeOf(probe.prepare("SELECT 1")) as Record<string, unknown>;
probe.close();
let capturing: Captured[] | null = null;
for (const m of ["get", "all", "run", "iterate"]) {
  const orig = StatementProto[m] as (...a: unknown[]) => unknown;
  StatementProto[m] = function (this: { source: string }, ...args: unknown[]) {
    if (capturing) capturing.push({ sql: this.source, args });
    return orig.apply(this, args);
  };
}

/** The store calls that read job_runs: dashboard/API pages, audit, engine queries, timeline, retention, backfills. */
function calls(store: Store): [string, () => unknown][] {
  const job = "job-7";
  const recent = "2026-10-21T00:00:00.000Z";
  const page = (q: object, sort = "id", order: "asc" | "desc" = "desc") => () =>
    store.runs.page(q, { page: 2, page_size: 50, sort, order });
  const sorts = ["id", "job_name", "status", "trigger", "created_at", "started_at", "finished_at", "duration_ms", "cycle_id", "scheduled_for", "scheduled_at", "backfill_id"];
  return [
    ["page: no filter", page({})],
    ...sorts.filter((s) => s !== "id").map((s): [string, () => unknown] => [`page: no filter, sort ${s} desc`, page({}, s)]),
    ["page: job=X", page({ job })],
    ["page: job=X, sort started_at", page({ job }, "started_at")],
    ["page: job=X, sort created_at", page({ job }, "created_at")],
    ["page: job=X, sort duration_ms", page({ job }, "duration_ms")],
    ["page: job=X, status=FAILED", page({ job, status: "FAILED" })],
    ["page: job=X, last 30 days", page({ job, since: recent })],
    ["page: job=X, last 30 days, sort duration_ms", page({ job, since: recent }, "duration_ms")],
    ["page: jobs=[X,Y]", page({ jobs: [job, "job-8"] })],
    ["page: status=FAILED", page({ status: "FAILED" })],
    ["page: status=FAILED, last 30 days", page({ status: "FAILED", since: recent })],
    ["page: status=FAILED, sort created_at", page({ status: "FAILED" }, "created_at")],
    ["page: statuses=[FAILED,SKIPPED]", page({ statuses: ["FAILED", "SKIPPED"] })],
    ["page: last 30 days", page({ since: recent })],
    ["page: until", page({ until: "2026-01-01T00:00:00.000Z" })],
    ["page: trigger=manual", page({ trigger: "manual" })],
    ["page: trigger=manual, sla_breached=0", page({ trigger: "manual", sla_breached: 0 })],
    ["page: sla_breached=1", page({ sla_breached: 1 })],
    ["page: cycle_id", page({ cycle_id: "cycle-4242" })],
    ["page: backfill_id", page({ backfill_id: 1 })],
    ["page: tag=nightly, status=FAILED", page({ tag: "nightly", status: "FAILED" })],
    ["audit: job=X, reason", () => store.runs.audit({ job, reason: "incident 4" }, 100, 0)],
    ["audit: reason, all jobs", () => store.runs.audit({ reason: "incident 4" }, 100, 0)],
    ["audit: no filter", () => store.runs.audit({}, 100, 0)],
    ["engine: get", () => store.runs.get(4242)],
    ["engine: recent", () => store.runs.recent(job, 10)],
    ["engine: lastFinished", () => store.runs.lastFinished(job)],
    ["engine: byStatus active", () => store.runs.byStatus(["PENDING", "RUNNING", "RETRYING"])],
    ["engine: inCycle", () => store.runs.inCycle("cycle-4242")],
    ["cli: cyclesStartingWith", () => store.runs.cyclesStartingWith("cycle-424", 10)],
    ["timeline: last hour, all jobs", () => store.timeline.range({ from: "2026-11-20T09:00:00.000Z", to: "2026-11-20T10:00:00.000Z", limit: 10_000 })],
    ["timeline: last day, one job", () => store.timeline.range({ from: "2026-11-19T10:00:00.000Z", to: "2026-11-20T10:00:00.000Z", jobs: [job], limit: 10_000 })],
    ["timeline: match", () => store.timeline.range({ from: "2026-11-20T09:00:00.000Z", to: "2026-11-20T10:00:00.000Z", match: "job-1", limit: 10_000 })],
    ["logs: job=X", () => store.logs.search({ job }, 50, 0)],
    ["nonRuns: record (last run of a job)", () => store.nonRuns.record({ job_name: job, reason: "paused", detail: "bench", at: "2026-11-20T10:00:00.000Z", slot: "2026-11-20T10:00:00.000Z" })],
    ["backfills: runsForSlots", () => store.backfills.runsForSlots(job, ["2026-11-20T10:00:00.000Z", "2026-11-20T11:00:00.000Z"])],
    ["backfills: openIds", () => store.backfills.openIds()],
    ["backfills: unfinishedSlotRuns", () => store.backfills.unfinishedSlotRuns(1, job)],
    ["backfills: waitingRuns", () => store.backfills.waitingRuns(1)],
    ["backfills: list", () => store.backfills.list({ job }, 20, 0)],
    // Retention, reading only: an age before all history, a cap above every job's count.
    ["retention: max_age + max_runs_per_job (nothing to delete)", () => store.vacuum({ maxAgeMs: 2 * 365 * 86_400_000, maxRunsPerJob: 100_000 }, Date.parse("2026-11-21T00:00:00.000Z"))],
  ];
}

/** Retention statements that only run when something is deleted: explained, and timed as reads. */
const RETENTION_READS: Captured[] = [
  { sql: "SELECT id FROM job_runs WHERE job_name = ? AND status IN ('SUCCESS', 'FAILED', 'SKIPPED') ORDER BY id DESC LIMIT 1 OFFSET ?", args: ["job-7", 100] },
  { sql: "SELECT id FROM job_runs WHERE job_name = ? AND id < ? AND status IN ('SUCCESS', 'FAILED', 'SKIPPED') ORDER BY id LIMIT 500", args: ["job-7", 900_000] },
  {
    sql: "SELECT id FROM job_runs WHERE created_at < ? AND coalesce(finished_at, created_at) < ? AND status IN ('SUCCESS', 'FAILED', 'SKIPPED') ORDER BY created_at LIMIT 500",
    args: ["2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z"],
  },
];

const isRead = (sql: string) => /^\s*(SELECT|WITH)\b/i.test(sql) && /\bjob_runs\b/.test(sql);

function plan(db: Database.Database, c: Captured): string[] {
  try {
    return (db.prepare(`EXPLAIN QUERY PLAN ${c.sql}`).all(...c.args) as { detail: string }[]).map((r) => r.detail);
  } catch (e) {
    return [`ERROR ${(e as Error).message}`];
  }
}

const indexesIn = (details: string[], names: string[]) => names.filter((n) => details.some((d) => new RegExp(`\\b${n}\\b`).test(d)));

/** CPU µs per run of create + RUNNING + SUCCESS, as the engine records a scheduled run. */
let slotSeq = 0;
function writeCost(store: Store, n: number): number {
  const base = Date.parse("2026-11-21T00:00:00.000Z");
  const c = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const at = new Date(base + ++slotSeq * 1000).toISOString();
    const run = store.runs.create({
      job_name: `job-${i % JOBS}`,
      trigger: "schedule",
      triggered_by: "scheduler",
      cycle_id: `w-${slotSeq}`,
      tags: [],
      created_at: at,
      scheduled_for: at,
      scheduled_at: at,
    });
    store.runs.transition(run.id, "RUNNING", { started_at: at, pid: 1000 + i, pid_start: "1" }, "PENDING");
    store.runs.transition(run.id, "SUCCESS", { finished_at: at, exit_code: 0, duration_ms: 5 }, "RUNNING");
  }
  const u = process.cpuUsage(c);
  return (u.user + u.system) / n;
}

/** Median ms of the captured reads run back to back (a fresh statement each: the schema changed). */
function readCost(db: Database.Database, reads: Captured[], times = 7): number | string {
  try {
    const sts = reads.map((r) => ({ st: db.prepare(r.sql), args: r.args }));
    const once = () => {
      for (const { st, args } of sts) {
        if (st.reader) st.all(...args);
      }
    };
    once();
    const ms: number[] = [];
    for (let i = 0; i < times; i++) {
      const t = performance.now();
      once();
      ms.push(performance.now() - t);
    }
    return median(ms);
  } catch (e) {
    return `fails: ${(e as Error).message}`;
  }
}

export interface IndexRow {
  name: string;
  sql: string;
  calls: string[];
  writeWith: number;
  writeWithout: number;
  /** Per call that uses it: median ms of its reads with the index and without. */
  reads: { label: string; with: number | string; without: number | string }[];
}

export async function measureIndexes(dir: string): Promise<{ rows: IndexRow[]; noIndexWrite: number; allWrite: number; plans: Record<string, string[]> }> {
  const file = path.join(dir, "runs.db");
  openStore({ path: file, busyTimeoutMs: 5_000, walAutocheckpoint: 1_000 }).close();
  fillRuns(file, RUNS, JOBS);
  const store = openStore({ path: file, busyTimeoutMs: 5_000, walAutocheckpoint: 1_000 });
  const db = new Database(file);
  const indexes = db
    .prepare("SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'job_runs' AND sql IS NOT NULL ORDER BY name")
    .all() as { name: string; sql: string }[];
  const names = indexes.map((i) => i.name);

  // Which statements each call runs, and their plans.
  const byCall = new Map<string, Captured[]>();
  for (const [label, fn] of calls(store)) {
    capturing = [];
    try {
      fn();
    } catch (e) {
      console.error(`${label}: ${(e as Error).message}`);
    }
    byCall.set(label, capturing.filter((c) => /\bjob_runs\b/.test(c.sql)));
    capturing = null;
  }
  byCall.set("retention: nthFinished, byCap, byAge (when deleting)", RETENTION_READS);
  const plans: Record<string, string[]> = {};
  const users = new Map<string, { label: string; reads: Captured[] }[]>(names.map((n) => [n, []]));
  for (const [label, caps] of byCall) {
    const seen = new Set<string>();
    for (const c of caps) {
      if (seen.has(c.sql)) continue;
      seen.add(c.sql);
      const p = plan(db, c);
      plans[`${label} :: ${c.sql.replace(/\s+/g, " ").slice(0, 160)}`] = p;
      for (const ix of indexesIn(p, names)) {
        const list = users.get(ix)!;
        let entry = list.find((e) => e.label === label);
        if (!entry) list.push((entry = { label, reads: [] }));
        if (isRead(c.sql)) entry.reads.push(c);
      }
    }
  }

  // Write cost, then per index with and without.
  writeCost(store, WRITES); // warm
  const rows: IndexRow[] = [];
  const acc = new Map<string, { ww: number[]; wo: number[]; rw: Map<string, (number | string)[]>; ro: Map<string, (number | string)[]> }>();
  const push = (m: Map<string, (number | string)[]>, k: string, v: number | string) => m.set(k, [...(m.get(k) ?? []), v]);
  for (let r = 0; r < ROUNDS; r++) {
    for (const ix of indexes) {
      const us = users.get(ix.name)!.filter((u) => u.reads.length > 0);
      const a = acc.get(ix.name) ?? { ww: [] as number[], wo: [] as number[], rw: new Map<string, (number | string)[]>(), ro: new Map<string, (number | string)[]>() };
      acc.set(ix.name, a);
      a.ww.push(writeCost(store, WRITES));
      for (const u of us) push(a.rw, u.label, readCost(db, u.reads));
      db.exec(`DROP INDEX ${ix.name}`);
      a.wo.push(writeCost(store, WRITES));
      for (const u of us) push(a.ro, u.label, readCost(db, u.reads));
      db.exec(ix.sql);
      console.error(`round ${r + 1} ${ix.name}: write ${round(a.ww.at(-1)!)} -> ${round(a.wo.at(-1)!)} µs`);
    }
  }
  for (const ix of indexes) {
    const a = acc.get(ix.name)!;
    const med = (xs: (number | string)[]) => (xs.some((x) => typeof x === "string") ? xs.find((x) => typeof x === "string")! : median(xs as number[]));
    rows.push({
      name: ix.name,
      sql: ix.sql,
      calls: users.get(ix.name)!.map((u) => u.label),
      writeWith: median(a.ww),
      writeWithout: median(a.wo),
      reads: [...a.rw.keys()].map((label) => ({ label, with: med(a.rw.get(label)!), without: med(a.ro.get(label)!) })),
    });
  }
  // Every secondary index of job_runs at once: the bound on what indexes cost a run.
  const allWrite = writeCost(store, WRITES);
  for (const ix of indexes) db.exec(`DROP INDEX ${ix.name}`);
  const noIndexWrite = writeCost(store, WRITES);
  for (const ix of indexes) db.exec(ix.sql);
  db.close();
  store.close();
  return { rows, noIndexWrite, allWrite, plans };
}

export default async function indexesBench(): Promise<BenchSection> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-indexes-bench-"));
  try {
    const { rows, noIndexWrite, allWrite } = await measureIndexes(dir);
    const fmt = (x: number | string) => (typeof x === "number" ? `${round(x, 2)} ms` : x);
    const results: BenchResult[] = [
      { name: "write cost of one run, every index", value: round(allWrite), unit: "CPU µs/run", notes: "create + RUNNING + SUCCESS, 3 transactions" },
      { name: "write cost of one run, no secondary index on job_runs", value: round(noIndexWrite), unit: "CPU µs/run" },
      ...rows.map((r) => ({
        name: `${r.name}: write cost without / with`,
        value: round(r.writeWithout / r.writeWith, 3),
        unit: "ratio",
        notes: r.reads.map((x) => `${x.label}: ${fmt(x.with)} with, ${fmt(x.without)} without`).join("; ") || "no query reads with it",
      })),
    ];
    return {
      title: "job_runs indexes at 1,000,000 runs (opt-in)",
      method: `${RUNS.toLocaleString("en-US")} runs over ${JOBS} jobs (fillRuns). Per index, ${ROUNDS} rounds: ${WRITES} runs written with every index, then with the index dropped (CPU µs per run, median); the reads whose EXPLAIN QUERY PLAN names it, median of 7, with and without.`,
      results,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-indexes-bench-"));
  const out = process.argv.includes("--json") ? process.argv[process.argv.indexOf("--json") + 1] : undefined;
  measureIndexes(dir)
    .then((r) => {
      if (out) fs.writeFileSync(out, JSON.stringify(r, null, 2));
      console.log(`write cost, every index: ${round(r.allWrite)} µs/run; no secondary index: ${round(r.noIndexWrite)} µs/run`);
      const f = (v: number | string) => (typeof v === "number" ? round(v, 2) : v);
      for (const x of r.rows) {
        console.log(`${x.name}  write ${round(x.writeWith)} -> ${round(x.writeWithout)} µs/run (${round(x.writeWithout / x.writeWith, 3)})`);
        for (const c of x.reads) console.log(`    ${c.label}: ${f(c.with)} -> ${f(c.without)} ms`);
        for (const c of x.calls.filter((l) => !x.reads.some((y) => y.label === l))) console.log(`    ${c}: (writes only)`);
      }
    })
    .finally(() => fs.rmSync(dir, { recursive: true, force: true }));
}

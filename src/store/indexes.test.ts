/**
 * Every index of job_runs is kept for a query (src/store/README.md, "Which
 * job_runs indexes earn their keep", measured at 1,000,000 runs by
 * bench/indexes.bench.ts). Here each of those queries is run through the
 * store, its statements are captured as they execute, and their EXPLAIN QUERY
 * PLAN must name the index kept for it: an edit to a query or to the schema
 * that loses the index fails here, not as a slow page at a user's. The store
 * runs without ANALYZE statistics (open.ts), so plans on this small database
 * are the plans at any size.
 */
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempStore } from "../../test/helpers/tempStore.js";
import type { Store } from "./api.js";
import { newRun } from "./testkit.js";
import { registerFunctions } from "./open.js";

const store = tempStore("file");

interface Captured {
  sql: string;
  args: unknown[];
}

const Statement = Object.getPrototypeOf(new Database(":memory:").prepare("SELECT 1")) as Record<string, (...a: unknown[]) => unknown>;
const METHODS = ["get", "all", "run", "iterate"] as const;
const originals = new Map(METHODS.map((m) => [m, Statement[m]!]));
let capturing: Captured[] | null = null;

beforeAll(() => {
  for (const m of METHODS) {
    const orig = originals.get(m)!;
    Statement[m] = function (this: { source: string }, ...args: unknown[]) {
      capturing?.push({ sql: this.source, args });
      return orig.apply(this, args);
    };
  }
});
afterAll(() => {
  for (const m of METHODS) Statement[m] = originals.get(m)!;
});

/** The EXPLAIN QUERY PLAN lines of every job_runs statement `fn` runs through the store. */
function plansOf(fn: () => unknown): string[] {
  const caps: Captured[] = [];
  capturing = caps;
  try {
    fn();
  } finally {
    capturing = null;
  }
  const db = new Database(store.path, { readonly: true });
  registerFunctions(db);
  try {
    return caps
      .filter((c) => /\bjob_runs\b/.test(c.sql) && /^\s*(SELECT|WITH)\b/i.test(c.sql))
      .flatMap((c) => (db.prepare(`EXPLAIN QUERY PLAN ${c.sql}`).all(...c.args) as { detail: string }[]).map((r) => r.detail));
  } finally {
    db.close();
  }
}

const JOB = "extract";
const SINCE = "2026-10-21T00:00:00.000Z";
const page = (s: Store, q: object, sort = "id") => s.runs.page(q, { page: 1, page_size: 50, sort, order: "desc" });

/** index -> the query it is kept for (README table), run through the store. */
const KEPT: Record<string, [string, (s: Store) => unknown]> = {
  job_runs_job: ["engine: a job's newest runs (recent)", (s) => s.runs.recent(JOB, 1)],
  job_runs_job_created: ["page: job=X, last 30 days", (s) => page(s, { job: JOB, since: SINCE })],
  job_runs_job_status: ["engine: lastFinished", (s) => s.runs.lastFinished(JOB)],
  job_runs_job_started: ["page: job=X, sort started_at", (s) => page(s, { job: JOB }, "started_at")],
  job_runs_job_reason: ["audit: job=X, reason~text", (s) => s.runs.audit({ job: JOB, reason: "incident" }, 100, 0)],
  job_runs_status: ["page: status=FAILED", (s) => page(s, { status: "FAILED" })],
  job_runs_status_created: ["page: status=FAILED, last 30 days", (s) => page(s, { status: "FAILED", since: SINCE })],
  job_runs_trigger: ["page: trigger=manual", (s) => page(s, { trigger: "manual" })],
  job_runs_created: ["page: last 30 days", (s) => page(s, { since: SINCE })],
  job_runs_cycle: ["engine: inCycle", (s) => s.runs.inCycle("cycle-1")],
  job_runs_sla: ["page: sla_breached=1", (s) => page(s, { sla_breached: 1 })],
  job_runs_reason: ["audit: reason~text, all jobs", (s) => s.runs.audit({ reason: "incident" }, 100, 0)],
  job_runs_started: ["timeline: all jobs", (s) => s.timeline.range({ from: "2026-11-01T09:00:00.000Z", to: "2026-11-01T11:00:00.000Z", limit: 100 })],
  job_runs_finished: ["page: sort finished_at", (s) => page(s, {}, "finished_at")],
  job_runs_duration: ["page: sort duration_ms", (s) => page(s, {}, "duration_ms")],
  job_runs_instants: ["timeline: runs that ended without starting", (s) => s.timeline.range({ from: "2026-11-01T09:00:00.000Z", to: "2026-11-01T11:00:00.000Z", limit: 100 })],
  job_runs_scheduled: ["backfill: which slots have a run", (s) => s.backfills.runsForSlots(JOB, ["2026-11-01T10:00:00.000Z"])],
  job_runs_backfill: ["page: backfill_id=N", (s) => page(s, { backfill_id: 1 })],
};
/** Kept for a constraint, not a query. */
const CONSTRAINTS = ["job_runs_slot"];

describe("job_runs indexes", () => {
  beforeAll(() => {
    // A few runs of each kind, so every query has rows to find (plans do not depend on them).
    const a = store.runs.create(newRun({ job_name: JOB, scheduled_for: "2026-11-01T10:00:00.000Z", scheduled_at: "2026-11-01T10:00:00.000Z" }));
    store.runs.transition(a.id, "RUNNING", { started_at: "2026-11-01T10:00:01.000Z" });
    store.runs.transition(a.id, "FAILED", { finished_at: "2026-11-01T10:00:02.000Z", exit_code: 1, duration_ms: 1_000, sla_breached: 1 });
    store.runs.create(newRun({ job_name: JOB, trigger: "manual", triggered_by: "cli", reason: "incident 4", status: "SKIPPED" }));
  });

  it("every index of job_runs is either kept for a query below or for a constraint", () => {
    const db = new Database(store.path, { readonly: true });
    const names = (db.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'job_runs' AND sql IS NOT NULL").pluck().all() as string[]).sort();
    db.close();
    expect(names).toEqual([...Object.keys(KEPT), ...CONSTRAINTS].sort());
  });

  it.each(Object.entries(KEPT).map(([index, [query]]) => [index, query]))("%s serves %s", (index, query) => {
    const plans = plansOf(() => KEPT[index]![1](store));
    expect(plans.length, query).toBeGreaterThan(0);
    expect(plans.some((d) => new RegExp(`\\bUSING (COVERING )?INDEX ${index}\\b`).test(d)), `${index} not in:\n${plans.join("\n")}`).toBe(true);
  });

  it("job_runs_slot keeps one run per (job, slot)", () => {
    expect(() => store.runs.create(newRun({ job_name: JOB, scheduled_for: "2026-11-01T10:00:00.000Z" }))).toThrow(/already/i);
  });
});

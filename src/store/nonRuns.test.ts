/** non_runs: traces of runs that did not happen, on a real database file. */
import { describe, expect, it } from "vitest";
import { NON_RUNS_PER_JOB } from "./nonRuns.js";
import { tempStore } from "../../test/helpers/tempStore.js";
import { runTo } from "./testkit.js";

const store = tempStore();

const slot = (s: number) => new Date(Date.UTC(2026, 10, 24, 10, 0, s)).toISOString();
const paused = (s: number) => ({ job_name: "tick", reason: "paused" as const, detail: "paused: scheduled slot skipped", slot: slot(s), at: slot(s) });

describe("non_runs", () => {
  it("consecutive skipped slots of one reason are one row: count, first and last slot", () => {
    for (let s = 0; s < 5; s++) store.nonRuns.record(paused(s));
    const { rows, total } = store.nonRuns.search({ job: "tick" }, 50, 0);
    expect(total).toBe(1);
    expect(rows[0]).toMatchObject({ reason: "paused", count: 5, first_slot: slot(0), last_slot: slot(4), first_at: slot(0), last_at: slot(4), cycle_id: null });
  });

  it("a run of the job, another reason or another detail opens a new row", () => {
    store.nonRuns.record(paused(0));
    store.nonRuns.record(paused(1));
    runTo(store, "SUCCESS", { job_name: "tick" });
    store.nonRuns.record(paused(2));
    store.nonRuns.record({ ...paused(3), reason: "excluded", detail: "excluded: 2026-11-24 in exclude.dates" });
    store.nonRuns.record({ ...paused(4), reason: "excluded", detail: "excluded: 2026-11-25 in exclude.dates" });
    const rows = store.nonRuns.search({ job: "tick" }, 50, 0).rows;
    expect(rows.map((r) => [r.reason, r.count, r.first_slot])).toEqual([
      ["excluded", 1, slot(4)],
      ["excluded", 1, slot(3)],
      ["paused", 1, slot(2)],
      ["paused", 2, slot(0)],
    ]);
  });

  it("a cycle trace is never merged, and is found by its cycle", () => {
    const e = { job_name: "load", reason: "upstream_failed" as const, detail: "upstream transform FAILED (run 7)", upstream: "transform", upstream_run_id: 7, at: slot(0) };
    store.nonRuns.record({ ...e, cycle_id: "c-1" });
    store.nonRuns.record({ ...e, cycle_id: "c-2" });
    expect(store.nonRuns.search({ job: "load" }, 50, 0).total).toBe(2);
    expect(store.nonRuns.search({ cycle_id: "c-2" }, 50, 0).rows).toEqual([
      expect.objectContaining({ job_name: "load", cycle_id: "c-2", upstream: "transform", upstream_run_id: 7, count: 1, first_slot: null }),
    ]);
    expect(store.nonRuns.search({ reason: "paused" }, 50, 0).total).toBe(0);
  });

  it(`keeps the newest ${NON_RUNS_PER_JOB} rows per job`, () => {
    const e = { job_name: "load", reason: "upstream_failed" as const, detail: "upstream x FAILED", at: slot(0) };
    for (let i = 0; i < NON_RUNS_PER_JOB + 7; i++) store.nonRuns.record({ ...e, cycle_id: `c-${i}` });
    store.nonRuns.record({ ...e, job_name: "other", cycle_id: "c-x" });
    const rows = store.nonRuns.search({ job: "load" }, 1000, 0);
    expect(rows.total).toBe(NON_RUNS_PER_JOB);
    expect(rows.rows[0]!.cycle_id).toBe(`c-${NON_RUNS_PER_JOB + 6}`);
    expect(rows.rows[rows.rows.length - 1]!.cycle_id).toBe("c-7");
    expect(store.nonRuns.search({ job: "other" }, 10, 0).total).toBe(1);
  });
});

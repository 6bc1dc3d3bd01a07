/**
 * The timeline's range query (timeline.ts) against an independent model of
 * "which runs overlap a window", and the attempt records of retried runs
 * (attempts.ts), on real database files.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { tempStore } from "../../test/helpers/tempStore.js";
import { InvalidQueryError } from "./errors.js";
import { newRun } from "./testkit.js";
import { TIMELINE_COLUMNS, toTimelineRun, type TimelineRun } from "./timeline.js";
import type { AttemptSpan, RunRecord, RunStatus } from "./types.js";

const T0 = Date.parse("2026-11-01T00:00:00.000Z");
const MIN = 60_000;
const iso = (minutes: number) => new Date(T0 + minutes * MIN).toISOString();

const store = tempStore();

/** A run that started at `start` minutes and is in `status`, finished at `end` minutes when terminal. */
function put(job: string, status: RunStatus, start: number | null, end: number | null, created = start ?? end ?? 0): RunRecord {
  if (status === "SKIPPED" && start === null) return store.runs.create(newRun({ job_name: job, status: "SKIPPED", created_at: iso(created), error: "concurrency forbid" }));
  let run = store.runs.create(newRun({ job_name: job, created_at: iso(created) }));
  if (status === "PENDING") return run;
  if (start === null) {
    // never started, ended anyway: a dispatch error
    return store.runs.transition(run.id, "FAILED", { finished_at: iso(end ?? created), duration_ms: 0, error: "dispatch: no value" });
  }
  run = store.runs.transition(run.id, "RUNNING", { started_at: iso(start) });
  if (status === "RUNNING") return run;
  if (status === "RETRYING") {
    run = store.runs.transition(run.id, "FAILED", { finished_at: iso(end ?? start), exit_code: 1 });
    return store.runs.transition(run.id, "RETRYING", { next_attempt_at: iso((end ?? start) + 1) });
  }
  const ended = { finished_at: iso(end!), duration_ms: (end! - start) * MIN, exit_code: status === "SUCCESS" ? 0 : 1 };
  // A failure under the `skip` policy: RUNNING -> FAILED -> SKIPPED.
  if (status === "SKIPPED") return store.runs.transition(store.runs.transition(run.id, "FAILED", ended).id, "SKIPPED");
  return store.runs.transition(run.id, status, ended);
}

const ids = (runs: ({ id: number } | TimelineRun)[]) => runs.map((r) => (Array.isArray(r) ? r[0] : r.id)).sort((a, b) => a - b);
/** A timeline row as an object, by TIMELINE_COLUMNS. */
const obj = (r: TimelineRun) => Object.fromEntries(TIMELINE_COLUMNS.map((c, i) => [c, r[i]]));

describe("timeline.range", () => {
  it("finds runs inside, across either edge and across the whole window, and active runs; not those outside", () => {
    const inside = put("a", "SUCCESS", 100, 110);
    const acrossStart = put("a", "FAILED", 50, 105);
    const acrossEnd = put("b", "SUCCESS", 190, 260);
    const covering = put("c", "SUCCESS", 10, 400);
    const running = put("d", "RUNNING", 20, null);
    const retrying = put("d", "RETRYING", 30, 40);
    const pending = put("e", "PENDING", null, null, 150);
    const skippedInside = put("f", "SKIPPED", null, null, 120);
    const dispatchError = put("f", "FAILED", null, 130);
    const endsAtFrom = put("g", "SUCCESS", 90, 100);
    put("g", "SUCCESS", 10, 99); // ends before the window
    put("g", "SUCCESS", 200, 210); // starts at `to`: outside
    put("h", "PENDING", null, null, 250); // created after the window
    put("h", "SKIPPED", null, null, 99);

    const { runs, truncated } = store.timeline.range({ from: iso(100), to: iso(200), limit: 100 });
    expect(truncated).toBe(false);
    expect(ids(runs)).toEqual(
      ids([inside, acrossStart, acrossEnd, covering, running, retrying, pending, skippedInside, dispatchError, endsAtFrom]),
    );
    // oldest start first
    const starts = runs.map((r) => obj(r).start as string);
    expect([...starts].sort()).toEqual(starts);
    const row = (run: RunRecord) => obj(runs.find((r) => r[0] === run.id)!);
    expect(row(covering)).toMatchObject({ job_name: "c", status: "SUCCESS", start: iso(10), end: iso(400), exit_code: 0, sla_breached: 0, attempts: null });
    // a waiting run spans from its creation, an active one has no end, one that never started is an instant
    expect(row(pending)).toMatchObject({ start: iso(150), end: null });
    expect(row(running)).toMatchObject({ start: iso(20), end: null });
    expect(row(retrying)).toMatchObject({ status: "RETRYING", start: iso(30), end: null });
    expect(row(skippedInside)).toMatchObject({ start: iso(120), end: iso(120) });
    expect(row(dispatchError)).toMatchObject({ start: iso(130), end: iso(130) });
    // The API turns records from run events into the same rows.
    for (const r of runs) expect(toTimelineRun(store.runs.get(r[0])!, null)).toEqual(r);
  });

  it("keeps the latest-starting runs over the limit and says so", () => {
    const made = Array.from({ length: 30 }, (_, i) => put("a", "SUCCESS", i * 10, i * 10 + 5));
    const { runs, truncated } = store.timeline.range({ from: iso(0), to: iso(1000), limit: 12 });
    expect(truncated).toBe(true);
    expect(runs.map((r) => r[0])).toEqual(made.slice(-12).map((r) => r.id));
    expect(store.timeline.range({ from: iso(0), to: iso(1000), limit: 30 }).truncated).toBe(false);
  });

  it("filters by a list of jobs and by a substring of the name", () => {
    const a = put("extract-orders", "SUCCESS", 10, 20);
    const b = put("load-orders", "SUCCESS", 10, 20);
    const c = put("report", "SUCCESS", 10, 20);
    const w = { from: iso(0), to: iso(100), limit: 100 };
    expect(ids(store.timeline.range({ ...w, jobs: ["report", "extract-orders"] }).runs)).toEqual(ids([a, c]));
    expect(ids(store.timeline.range({ ...w, jobs: [] }).runs)).toEqual([]);
    expect(ids(store.timeline.range({ ...w, match: "ORDERS" }).runs)).toEqual(ids([a, b]));
    expect(ids(store.timeline.range({ ...w, match: "%" }).runs)).toEqual([]);
    expect(ids(store.timeline.range({ ...w, match: "load", jobs: ["extract-orders", "load-orders"] }).runs)).toEqual(ids([b]));
  });

  it("refuses an empty or reversed window and a limit out of range", () => {
    expect(() => store.timeline.range({ from: iso(10), to: iso(10), limit: 10 })).toThrow(InvalidQueryError);
    expect(() => store.timeline.range({ from: iso(10), to: iso(5), limit: 10 })).toThrow(/must be before/);
    expect(() => store.timeline.range({ from: "yesterday", to: iso(5), limit: 10 })).toThrow(/ISO 8601/);
    expect(() => store.timeline.range({ from: iso(0), to: iso(5), limit: 0 })).toThrow(/limit/);
    expect(() => store.timeline.range({ from: iso(0), to: iso(5), limit: 50_001 })).toThrow(/limit/);
  });

  it("matches a plain model of interval overlap on random histories and windows", () => {
    type Spec = { status: RunStatus; start: number | null; len: number; created: number };
    const spec: fc.Arbitrary<Spec> = fc
      .record({
        status: fc.constantFrom<RunStatus>("SUCCESS", "FAILED", "SKIPPED", "RUNNING", "PENDING", "RETRYING"),
        start: fc.integer({ min: 0, max: 500 }),
        len: fc.integer({ min: 0, max: 300 }),
        neverStarted: fc.boolean(),
      })
      .map(({ status, start, len, neverStarted }) => ({
        status,
        start: status === "PENDING" || (neverStarted && (status === "SKIPPED" || status === "FAILED")) ? null : start,
        len,
        created: start,
      }));
    let caseNo = 0;
    fc.assert(
      fc.property(fc.array(spec, { maxLength: 40 }), fc.integer({ min: 0, max: 600 }), fc.integer({ min: 1, max: 400 }), (specs, from, width) => {
        // Each case is its own job: earlier cases' runs stay in the table, as a history would.
        const job = `case-${++caseNo}`;
        const made = specs.map((s) => ({ s, run: put(job, s.status, s.start, s.start === null ? s.created : s.start + s.len, s.created) }));
        const to = from + width;
        const model = made
          .filter(({ s }) => {
            const active = s.status === "PENDING" || s.status === "RUNNING" || s.status === "RETRYING";
            const begin = s.start ?? s.created;
            const end = active ? Infinity : s.start === null ? s.created : s.start + s.len;
            return begin < to && end >= from;
          })
          .map(({ run }) => run);
        const got = store.timeline.range({ from: iso(from), to: iso(to), jobs: [job], limit: 1000 }).runs;
        expect(ids(got)).toEqual(ids(model));
      }),
      { numRuns: 80 },
    );
  });
});

describe("attempts of retried runs", () => {
  /** RUNNING -> FAILED -> RETRYING -> RUNNING (attempt 2) ... as the engine drives it, with the times it passes. */
  function retry(run: RecordLike, failAt: number, exit: number, nextAt: number, startAt: number | null): RecordLike {
    let r = store.runs.transition(run.id, "FAILED", { finished_at: iso(failAt), exit_code: exit, error: `exit ${exit}`, duration_ms: 1 }, "RUNNING");
    r = store.runs.transition(r.id, "RETRYING", { next_attempt_at: iso(nextAt) }, "FAILED");
    if (startAt === null) return r;
    return store.runs.transition(
      r.id,
      "RUNNING",
      { attempt: r.attempt + 1, started_at: r.started_at!, attempt_started_at: iso(startAt), exit_code: null, error: null, next_attempt_at: null },
      "RETRYING",
    );
  }
  type RecordLike = Pick<RunRecord, "id" | "attempt" | "started_at">;

  it("records each attempt's start, end, exit code and error; the last one ends with the run", () => {
    let run: RecordLike = store.runs.transition(store.runs.create(newRun({ created_at: iso(0) })).id, "RUNNING", { started_at: iso(1), attempt_started_at: iso(1) });
    run = retry(run, 3, 2, 4, 5);
    run = retry(run, 8, 3, 10, 12);
    expect(store.timeline.attempts([run.id]).get(run.id)).toEqual([
      { attempt: 1, started_at: iso(1), finished_at: iso(3), exit_code: 2, error: "exit 2" },
      { attempt: 2, started_at: iso(5), finished_at: iso(8), exit_code: 3, error: "exit 3" },
      { attempt: 3, started_at: iso(12), finished_at: null, exit_code: null, error: null },
    ]);
    store.runs.transition(run.id, "SUCCESS", { finished_at: iso(15), exit_code: 0 }, "RUNNING");
    const tl = obj(store.timeline.range({ from: iso(0), to: iso(20), limit: 10 }).runs[0]!);
    expect(tl).toMatchObject({ id: run.id, status: "SUCCESS", attempt: 3, start: iso(1), end: iso(15) });
    expect((tl.attempts as AttemptSpan[]).map((a) => [a.attempt, a.started_at, a.finished_at])).toEqual([
      [1, iso(1), iso(3)],
      [2, iso(5), iso(8)],
      [3, iso(12), null],
    ]);
  });

  it("closes the attempt when a waiting retry is cancelled, and uses the retry instant when no start is given", () => {
    let run: RecordLike = store.runs.transition(store.runs.create(newRun({ created_at: iso(0) })).id, "RUNNING", { started_at: iso(1) });
    run = retry(run, 2, 1, 30, null);
    store.runs.transition(run.id, "FAILED", { finished_at: iso(20), error: "cancelled" }, "RETRYING");
    expect(store.timeline.attempts([run.id]).get(run.id)).toEqual([{ attempt: 1, started_at: iso(1), finished_at: iso(2), exit_code: 1, error: "exit 1" }]);

    let other: RecordLike = store.runs.transition(store.runs.create(newRun({ created_at: iso(0) })).id, "RUNNING", { started_at: iso(1) });
    other = store.runs.transition(other.id, "FAILED", { finished_at: iso(2), exit_code: 1 }, "RUNNING");
    other = store.runs.transition(other.id, "RETRYING", { next_attempt_at: iso(7) }, "FAILED");
    store.runs.transition(other.id, "RUNNING", { attempt: 2 }, "RETRYING");
    expect(store.timeline.attempts([other.id]).get(other.id)?.[1]).toMatchObject({ attempt: 2, started_at: iso(7), finished_at: null });
  });

  it("writes nothing for runs that never retried, and goes with its run", () => {
    const once = put("a", "FAILED", 1, 2);
    expect(store.timeline.attempts([once.id]).size).toBe(0);
    let run: RecordLike = store.runs.transition(store.runs.create(newRun({ created_at: iso(0) })).id, "RUNNING", { started_at: iso(1) });
    run = retry(run, 2, 1, 3, 3);
    store.runs.transition(run.id, "SUCCESS", { finished_at: iso(4) }, "RUNNING");
    expect(store.timeline.attempts([run.id]).get(run.id)).toHaveLength(2);
    store.vacuum({ maxAgeMs: 0, maxRunsPerJob: null }, Date.now() + 365 * 86_400_000);
    expect(store.runs.get(run.id)).toBeNull();
    expect(store.timeline.attempts([run.id]).size).toBe(0);
  });
});

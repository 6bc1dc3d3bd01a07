/**
 * Time faults: random walks of the clock over several days (FakeClock,
 * the real engine, real SQLite and real subprocesses), mixing continuous
 * time with jumps forward and back of an hour or more, across DST changes,
 * for hourly and daily jobs with and without catch-up. test/engine/
 * schedule.test.ts has single jumps; this checks the invariants for any
 * walk against a model of CONTRACT §3:
 *
 * - a slot crossed (above the highest time seen so far) and noticed within
 *   60 s runs once, `triggered_by: scheduler`;
 * - slots crossed by a jump and noticed later are missed: with `catchup:
 *   true` the latest of them runs once (`triggered_by: catchup`), with
 *   `catchup: false` none does; a slot the same jump lands within 60 s of
 *   is not missed and runs as above, after the catch-up run;
 * - after a jump back nothing runs again; no run is early; every
 *   scheduled_for is a real slot of the job.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { nextRun } from "../../src/schedule/nextRun.js";
import { LATE_AFTER_MS } from "../../src/engine/planner.js";
import { FakeClock } from "../helpers/fakeClock.js";
import { engineKit, type Kit } from "../helpers/engineKit.js";
import { FULL, pick, report } from "./helpers/relKit.js";

const kits: Kit[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const k of kits.splice(0)) await k.close({ keepDir: true });
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const YAML = `
jobs:
  hourly_utc:
    command: "true"
    frequency: hourly
    timezone: UTC
    catchup: true
    concurrency: allow
  hourly_ny:
    command: "true"
    frequency: hourly
    timezone: America/New_York
    catchup: false
    concurrency: allow
  hourly_kolkata:
    command: "true"
    frequency: hourly
    timezone: Asia/Kolkata
    catchup: true
    concurrency: allow
  daily_berlin:
    command: "true"
    frequency: daily
    time: "0230"
    timezone: Europe/Berlin
    catchup: true
    concurrency: allow
  daily_ny:
    command: "true"
    frequency: daily
    time: "0130"
    timezone: America/New_York
    catchup: false
    concurrency: allow
`;

const HOUR = 3_600_000;
/** Walk starts: plain days, Berlin's and New York's spring-forward, New York's fall-back. */
const STARTS = ["2027-01-10T00:00:00.000Z", "2027-03-12T20:00:00.000Z", "2027-03-27T12:00:00.000Z", "2027-11-05T18:00:00.000Z"].map(Date.parse);

type Step =
  | { kind: "glide"; minutes: number } // continuous time, noticed every 30 s
  | { kind: "forward"; ms: number }
  | { kind: "back"; ms: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("glide" as const), minutes: fc.integer({ min: 1, max: 240 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("forward" as const), ms: fc.oneof(fc.constant(HOUR), fc.integer({ min: 61_000, max: 6 * HOUR })) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("back" as const), ms: fc.oneof(fc.constant(HOUR), fc.integer({ min: 1_000, max: 2 * HOUR })) }) },
);

interface Move {
  from: number;
  to: number;
}

/** The clock positions a walk produces, as (from, to) moves between engine ticks. */
function moves(start: number, steps: Step[]): Move[] {
  const out: Move[] = [];
  let t = start;
  const go = (to: number) => {
    out.push({ from: t, to });
    t = to;
  };
  for (const s of steps) {
    if (s.kind === "glide") for (let i = 0; i < s.minutes * 2; i++) go(t + 30_000);
    else if (s.kind === "forward") go(t + s.ms);
    else go(t - s.ms);
  }
  return out;
}

type Expected = { slot: number; by: "scheduler" | "catchup" };

/** What CONTRACT §3 says must run, for one job, given the clock moves. */
function model(schedule: Parameters<typeof nextRun>[0], catchup: boolean, start: number, path: Move[], windowMs = 24 * HOUR): Expected[] {
  const out: Expected[] = [];
  let high = start;
  for (const { to } of path) {
    if (to <= high) continue; // below the highest time seen: those slots were handled
    const crossed: number[] = [];
    for (let s = nextRun(schedule, high); s && s.at <= to; s = nextRun(schedule, s.at)) crossed.push(s.at);
    high = to;
    // Each slot on its own: noticed more than LATE_AFTER_MS after it is missed, else on time.
    // One jump can cross missed slots and land within a minute of the next one: the latest
    // missed slot is caught up, then the on-time slot runs as usual.
    const missed = crossed.filter((s) => to - s > LATE_AFTER_MS);
    const onTime = crossed.filter((s) => to - s <= LATE_AFTER_MS);
    if (missed.length > 0 && catchup) {
      const latest = missed.filter((s) => s >= to - windowMs).at(-1);
      if (latest !== undefined) out.push({ slot: latest, by: "catchup" });
    }
    for (const s of onTime) out.push({ slot: s, by: "scheduler" });
  }
  return out;
}

async function walk(start: number, steps: Step[]): Promise<{ runs: number; moves: number; days: number }> {
  const dir = mkdtempSync(join(tmpdir(), "svc-timewalk-"));
  dirs.push(dir);
  const clock = new FakeClock(start);
  const kit = await engineKit(YAML, { clock, dir, random: () => 0.5 });
  kits.push(kit);
  const path = moves(start, steps);
  for (const m of path) {
    clock.set(m.to);
    kit.engine.testSeam().tick(); // a real daemon ticks every second whatever the wall clock does
  }
  let total = 0;
  for (const job of kit.engine.testSeam().ctx.project.jobs.values()) {
    const runs = kit.runsOf(job.name);
    total += runs.length;
    const actual = runs.map((r) => `${r.scheduled_for} ${r.triggered_by}`);
    const expected = model(job.schedule, job.catchup, start, path).map((e) => `${new Date(e.slot).toISOString()} ${e.by}`);
    expect(actual, `runs of ${job.name}`).toEqual(expected);
    for (const r of runs) {
      const slot = Date.parse(r.scheduled_for!);
      expect(nextRun(job.schedule, slot - 1)?.at, `${job.name}: ${r.scheduled_for} is a slot`).toBe(slot);
      expect(Date.parse(r.created_at), `${job.name}: run ${r.id} created before its slot`).toBeGreaterThanOrEqual(slot);
    }
  }
  // let the subprocesses finish before the engine is closed
  await kit.waitFor("runs to finish", () => kit.store.runs.byStatus(["PENDING", "RUNNING", "RETRYING"]).length === 0, 60_000);
  const span = Math.max(...path.map((m) => m.to)) - start;
  return { runs: total, moves: path.length, days: span / (24 * HOUR) };
}

describe("clock jumps while the engine runs", () => {
  it("the model agrees with the single-jump cases of schedule.test.ts", () => {
    const h = { frequency: "hourly", timezone: "UTC", time: null, weekday: null, dayOfMonth: null } as const;
    const t = Date.parse("2027-01-10T02:59:59.000Z");
    // forward 2h20m: one catch-up at 05:00, or nothing without catch-up
    expect(model(h, true, t, [{ from: t, to: t + 1_000 }, { from: t + 1_000, to: Date.parse("2027-01-10T05:20:00.000Z") }])).toEqual([
      { slot: Date.parse("2027-01-10T03:00:00.000Z"), by: "scheduler" },
      { slot: Date.parse("2027-01-10T05:00:00.000Z"), by: "catchup" },
    ]);
    // back an hour after 03:00 and forward again: 03:00 once, then 04:00
    const back = [t + 1_000, Date.parse("2027-01-10T02:10:00.000Z"), Date.parse("2027-01-10T03:00:30.000Z"), Date.parse("2027-01-10T04:00:00.000Z")];
    const path = back.map((to, i) => ({ from: i === 0 ? t : back[i - 1]!, to }));
    expect(model(h, false, t, path).map((e) => e.by)).toEqual(["scheduler", "scheduler"]);
  });

  it("regression (fast-check seed -1507114650, path 0): a jump that crosses missed slots and lands within a minute of the next one", { timeout: 120_000 }, async () => {
    const g = (minutes: number): Step => ({ kind: "glide", minutes });
    const f = (ms: number): Step => ({ kind: "forward", ms });
    const b = (ms: number): Step => ({ kind: "back", ms });
    // forward 17532901 ms lands at 23:00:31.365 from 18:08:18.464: 19:00-22:00 are missed, 23:00 is 31 s old (on time).
    const steps = [g(128), g(173), g(45), b(HOUR), f(HOUR), g(52), g(98), f(6160547), g(14), f(15817917), g(212), f(17532901), g(171), f(4800559), g(43), b(HOUR), b(HOUR), g(21), g(12), g(28), b(HOUR), g(65), g(32), g(101), b(HOUR), f(300447)];
    const start = Date.parse("2027-01-10T00:00:00.000Z");
    const h = { frequency: "hourly", timezone: "UTC", time: null, weekday: null, dayOfMonth: null } as const;
    const expected = model(h, true, start, moves(start, steps)).map((e) => `${new Date(e.slot).toISOString()} ${e.by}`);
    expect(expected).toContain("2027-01-10T22:00:00.000Z catchup");
    expect(expected).toContain("2027-01-10T23:00:00.000Z scheduler");
    await walk(start, steps);
  });

  it(`random walks over days with jumps of an hour and more (${pick(4, 40)} walks)`, { timeout: pick(180_000, 1_800_000) }, async () => {
    const figures = { walks: 0, runs: 0, moves: 0, days: 0 };
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...STARTS), fc.array(step, { minLength: 20, maxLength: pick(40, 80) }), async (start, steps) => {
        try {
          const r = await walk(start, steps);
          figures.walks++;
          figures.runs += r.runs;
          figures.moves += r.moves;
          figures.days += r.days;
        } finally {
          for (const k of kits.splice(0)) await k.close({ keepDir: true });
        }
      }),
      { numRuns: pick(4, 40), endOnFailure: !FULL },
    );
    report("clock walks", figures);
  });
});

describe("durations across a clock jump back", () => {
  it("a retry delay is a duration: a step back of the wall clock does not stretch it", { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-timewalk-"));
    dirs.push(dir);
    const clock = new FakeClock(Date.parse("2027-01-10T12:00:00.000Z"));
    const kit = await engineKit(`jobs:\n  flaky:\n    command: "test -f again || { touch again; exit 1; }"\n    retries: 1\n    retry_delay: "fixed:30s"\n`, { clock, dir, random: () => 0.5 });
    kits.push(kit);
    const run = kit.engine.runNow("flaky", { triggeredBy: "cli" });
    await kit.waitRun(run.id, ["RETRYING"]);
    kit.engine.testSeam().tick(); // the daemon ticks every second: the tick before the step
    clock.set(clock.now() - HOUR); // NTP steps the clock back an hour during the delay
    kit.engine.testSeam().tick();
    for (let i = 0; i < 40; i++) {
      clock.advance(1_000);
      kit.engine.testSeam().tick();
    }
    const done = await kit.waitRun(run.id, ["SUCCESS", "FAILED"]);
    expect(done.status).toBe("SUCCESS");
    expect(done.attempt).toBe(2);
    expect(done.duration_ms).toBeGreaterThanOrEqual(0);
  });
});

/**
 * Backfill through the real engine, store and subprocesses (CONTRACT §7.3):
 * the slots are svc next's; runs start oldest first, at most `parallel` at
 * once and only while no other run of the job is RUNNING; they wait instead
 * of being SKIPPED by forbid; slots with a run are left alone unless rerun;
 * cancel skips the waiting ones; a restart resumes without losing or doubling
 * a slot; a chain downstream runs in each slot's cycle.
 */
import { describe, expect, it } from "vitest";
import { EngineError } from "../../src/engine/errors.js";
import { nextRuns } from "../../src/schedule/nextRun.js";
import { systemClock, type Clock } from "../../src/shared/clock.js";
import type { RunRecord } from "../../src/store/types.js";
import { EXTRACT_TRANSFORM_JOBS } from "../helpers/backfillJobs.js";
import { engineKits, type Kit } from "../helpers/engineKit.js";


const startKit = engineKits("svc-backfill-");
const kit = (yaml: string, dir?: string, clock?: Clock): Promise<Kit> => startKit(yaml, { dir, clock });

/** svc.yaml with one hourly job `j` in UTC running `command`, and `extra` lines of it (`key: value`). */
const hourlyJob = (command: string, ...extra: string[]) =>
  `jobs:\n  j:\n    command: ${command}\n    frequency: hourly\n    timezone: UTC\n${extra.map((line) => `    ${line}\n`).join("")}`;

const by = (k: Kit, job: string) => k.runsOf(job).filter((r) => r.trigger === "backfill");

async function allDone(k: Kit, job: string, n: number, ms = 30_000): Promise<RunRecord[]> {
  return k.waitFor(
    `${n} finished backfill runs of ${job}`,
    () => {
      const runs = by(k, job);
      return runs.length === n && runs.every((r) => ["SUCCESS", "FAILED", "SKIPPED"].includes(r.status)) ? runs : null;
    },
    ms,
  );
}

/** No two runs overlap in time (started_at..finished_at). */
function sequential(runs: RunRecord[]): boolean {
  const sorted = [...runs].sort((a, b) => Date.parse(a.started_at!) - Date.parse(b.started_at!));
  return sorted.every((r, i) => i === 0 || Date.parse(r.started_at!) >= Date.parse(sorted[i - 1]!.finished_at!));
}

const NY = `
jobs:
  nightly:
    command: echo "slot=$SVC_SCHEDULED_AT"; sleep 0.1
    frequency: daily
    time: "0230"
    timezone: America/New_York
    concurrency: forbid
`;

describe("backfill", () => {
  it("over a DST week in New York: svc next's slots, oldest first, one at a time, each with its own SVC_SCHEDULED_AT", async () => {
    const k = await kit(NY);
    const from = "2025-03-05T00:00:00Z";
    const to = "2025-03-12T00:00:00Z";
    const { plan, backfill } = k.engine.backfill("nightly", { from, to, triggeredBy: "test" });
    const expected = nextRuns(k.engine.testSeam().ctx.project.jobs.get("nightly")!.schedule, Date.parse(from) - 1, 20).filter((s) => s.at < Date.parse(to));
    expect(plan.slots.map((s) => s.utc)).toEqual(expected.map((s) => s.utc));
    expect(plan.slots).toHaveLength(7);
    expect(plan.slots.find((s) => s.utc === "2025-03-09T07:00:00.000Z")!.note).toMatch(/does not exist/);
    expect(backfill!.total).toBe(7);
    const runs = await allDone(k, "nightly", 7);
    expect(runs.map((r) => r.scheduled_at)).toEqual(expected.map((s) => s.utc));
    expect(runs.every((r) => r.status === "SUCCESS" && r.backfill_id === backfill!.id && r.trigger === "backfill")).toBe(true);
    expect(new Set(runs.map((r) => r.cycle_id)).size).toBe(7);
    expect(sequential(runs)).toBe(true);
    // oldest first: start order is slot order
    const starts = [...runs].sort((a, b) => Date.parse(a.started_at!) - Date.parse(b.started_at!)).map((r) => r.scheduled_at);
    expect(starts).toEqual(expected.map((s) => s.utc));
    for (const r of runs) expect(k.lines(r.id)).toContain(`slot=${r.scheduled_at}`);
    const record = k.store.backfills.get(backfill!.id)!;
    expect(record).toMatchObject({ job: "nightly", total: 7, done: true, cancelled: false });
    expect(record.by_status.SUCCESS).toBe(7);
  });

  it("waits while another run of the job is RUNNING (never SKIPPED by forbid), then runs", async () => {
    const k = await kit(hourlyJob("sleep 0.6", "concurrency: forbid"));
    const manual = k.engine.runNow("j", { triggeredBy: "test" });
    await k.waitRun(manual.id, ["RUNNING"]);
    k.engine.backfill("j", { from: "2025-01-01T00:00:00Z", to: "2025-01-01T02:00:00Z", triggeredBy: "test" });
    const runs = await allDone(k, "j", 2);
    const first = k.store.runs.get(manual.id)!;
    expect(first.status).toBe("SUCCESS");
    expect(runs.every((r) => r.status === "SUCCESS")).toBe(true);
    expect(Date.parse(runs[0]!.started_at!)).toBeGreaterThanOrEqual(Date.parse(first.finished_at!));
  });

  it("parallel 2: two at once, never three", async () => {
    const k = await kit(hourlyJob("sleep 0.3"));
    let running = 0;
    let most = 0;
    k.bus.on("run:status", ({ run, from }) => {
      if (run.job_name !== "j") return;
      if (run.status === "RUNNING" && from !== "RUNNING") most = Math.max(most, ++running);
      if (from === "RUNNING" && run.status !== "RUNNING") running--;
    });
    k.engine.backfill("j", { from: "2025-01-01T00:00:00Z", to: "2025-01-01T06:00:00Z", parallel: 2, triggeredBy: "test" });
    // Only `parallel` of them are in front of the dispatcher; the rest wait in the backfill's queue.
    expect(k.engine.testSeam().ctx.waiting.size + k.engine.testSeam().ctx.attempts.size).toBe(2);
    expect(k.engine.testSeam().ctx.backfills.waitingCount()).toBe(4);
    const runs = await allDone(k, "j", 6);
    expect(runs.every((r) => r.status === "SUCCESS")).toBe(true);
    expect(most).toBe(2);
  });

  it("leaves slots that have a run alone; rerun runs them again; dry_run says which", async () => {
    const k = await kit(hourlyJob('"true"'));
    const range = { from: "2025-01-01T00:00:00Z", to: "2025-01-01T03:00:00Z", triggeredBy: "test" };
    const first = k.engine.backfill("j", { ...range, to: "2025-01-01T02:00:00Z" });
    await allDone(k, "j", 2);
    const dry = k.engine.backfill("j", { ...range, dryRun: true });
    expect(dry.backfill).toBeNull();
    expect(dry.plan.slots.map((s) => [s.utc.slice(11, 16), s.existing_run !== null, s.will_run])).toEqual([
      ["00:00", true, false],
      ["01:00", true, false],
      ["02:00", false, true],
    ]);
    expect(by(k, "j")).toHaveLength(2); // a dry run creates nothing
    const second = k.engine.backfill("j", range);
    expect(second.backfill!.total).toBe(1);
    await allDone(k, "j", 3);
    const rerun = k.engine.backfill("j", { ...range, rerun: true });
    expect(rerun.backfill!.total).toBe(3);
    const runs = await allDone(k, "j", 6);
    const again = runs.filter((r) => r.backfill_id === rerun.backfill!.id);
    // a slot that had a run keeps its claim on the original; the new runs only carry scheduled_at
    expect(again.map((r) => r.scheduled_for)).toEqual([null, null, null]);
    expect(runs.filter((r) => r.backfill_id === first.backfill!.id).map((r) => r.scheduled_for)).toEqual(["2025-01-01T00:00:00.000Z", "2025-01-01T01:00:00.000Z"]);
  });

  it("cancel: the waiting runs end SKIPPED (backfill cancelled), the running one finishes", async () => {
    const k = await kit(hourlyJob("sleep 0.5"));
    const { backfill } = k.engine.backfill("j", { from: "2025-01-01T00:00:00Z", to: "2025-01-01T05:00:00Z", triggeredBy: "test" });
    const running = await k.waitFor("the first run to start", () => by(k, "j").find((r) => r.status === "RUNNING"));
    const { skipped, backfill: after } = k.engine.cancelBackfill(backfill!.id, { by: "test" });
    expect(skipped).toBe(4);
    expect(after.cancelled).toBe(true);
    const runs = await allDone(k, "j", 5);
    expect(runs.find((r) => r.id === running.id)!.status).toBe("SUCCESS");
    expect(runs.filter((r) => r.status === "SKIPPED").map((r) => r.error)).toEqual(Array(4).fill("backfill cancelled"));
    expect(() => k.engine.cancelBackfill(backfill!.id, { by: "test" })).toThrow(/already cancelled/);
  });

  it("cancel while the first run's process is being started: that run runs and finishes, the others end SKIPPED", async () => {
    const k = await kit(hourlyJob("sleep 0.2"));
    const { backfill } = k.engine.backfill("j", { from: "2025-01-01T00:00:00Z", to: "2025-01-01T03:00:00Z", triggeredBy: "test" });
    // In the same turn: the first slot's start was dispatched, its RUNNING not yet recorded.
    const { skipped } = k.engine.cancelBackfill(backfill!.id, { by: "test" });
    expect(skipped).toBe(2);
    const runs = await allDone(k, "j", 3);
    expect(runs.map((r) => r.status)).toEqual(["SUCCESS", "SKIPPED", "SKIPPED"]);
    expect(k.log.entries.filter((e) => e.level === "error")).toEqual([]);
  });

  it("a restart mid-backfill resumes it: every slot ends with exactly one run", async () => {
    const yaml = hourlyJob("sleep 0.2");
    const k = await kit(yaml);
    const { backfill } = k.engine.backfill("j", { from: "2025-01-01T00:00:00Z", to: "2025-01-01T06:00:00Z", triggeredBy: "test" });
    await k.waitFor("two runs done", () => by(k, "j").filter((r) => r.status === "SUCCESS").length >= 2);
    await startKit.stop(k);
    const again = await kit(yaml, k.dir);
    const runs = await allDone(again, "j", 6);
    expect(runs.map((r) => r.scheduled_at)).toEqual(Array.from({ length: 6 }, (_, i) => `2025-01-01T0${i}:00:00.000Z`));
    expect(new Set(runs.map((r) => r.scheduled_at)).size).toBe(6);
    expect(again.store.backfills.get(backfill!.id)!.done).toBe(true);
  });

  it("extract -> transform over 5 days: 5 cycles, each transform sees its own extract's output and slot", async () => {
    const k = await kit(`jobs:\n${EXTRACT_TRANSFORM_JOBS}`);
    k.engine.backfill("extract", { from: "2025-01-01", to: "2025-01-06", triggeredBy: "test" });
    await allDone(k, "extract", 5);
    const transforms = await k.waitFor("5 transforms", () => {
      const t = k.runsOf("transform");
      return t.length === 5 && t.every((r) => r.status === "SUCCESS") ? t : null;
    });
    for (const t of transforms) {
      const root = k.runsOf("extract").find((r) => r.cycle_id === t.cycle_id)!;
      expect(t.scheduled_at).toBe(root.scheduled_at);
      expect(t.backfill_id).toBe(root.backfill_id);
      expect(k.lines(t.id)).toContain(`transform of ${root.scheduled_at} at ${root.scheduled_at}`);
    }
  });

  it("refuses what cannot be a backfill with validation errors naming the field", async () => {
    const k = await kit(`
jobs:
  j:
    command: "true"
    frequency: every:1m
    timezone: UTC
    params:
      n: {type: integer, default: 1}
  m:
    command: "true"
`);
    const fail = (name: string, req: Record<string, unknown>) => {
      try {
        k.engine.backfill(name, { from: "2025-01-01", to: "2025-01-02", triggeredBy: "t", ...req });
      } catch (e) {
        expect(e).toBeInstanceOf(EngineError);
        return (e as EngineError).details as { path: string; message: string }[];
      }
      throw new Error("accepted");
    };
    expect(fail("j", { from: "yesterday" })[0]).toMatchObject({ path: "from" });
    expect(fail("j", { from: "2025-01-01T00:00:00" })[0]).toMatchObject({ path: "from" }); // no zone
    expect(fail("j", { to: "2024-12-31" })[0]).toMatchObject({ path: "to", message: /later than from/ });
    expect(fail("j", { parallel: 0 })[0]).toMatchObject({ path: "parallel" });
    expect(fail("j", { params: { n: "x" } })[0]).toMatchObject({ path: "params.n" });
    expect(fail("m", {})[0]).toMatchObject({ path: "job", message: /no schedule/ });
    // every:1m over 7 days is 10,080 slots: over the limit
    expect(fail("j", { to: "2025-01-08" })[0]).toMatchObject({ path: "to", message: /more than 10,000 slots/ });
    expect(k.store.backfills.list({}, 10, 0).total).toBe(0);
    expect(k.engine.backfill("j", { from: "2025-01-01", to: "2025-01-07T22:40:00Z", triggeredBy: "t", dryRun: true }).plan.slots).toHaveLength(10_000);
  });

  it("leaves the slots still ahead to the scheduler: a range past now runs up to now and counts the rest; a range all ahead is a 422 at from", async () => {
    // The engine's "now" is 10:30 on 2026-06-15 (a clock of the test's own: the slots are judged by it).
    const clock: Clock = { ...systemClock, now: () => Date.parse("2026-06-15T10:30:00Z") };
    const k = await kit(hourlyJob("exit 0"), undefined, clock);
    const { plan } = k.engine.backfill("j", { from: "2026-06-15T07:00:00Z", to: "2026-06-15T15:00:00Z", triggeredBy: "t", dryRun: true });
    expect(plan.slots.map((s) => s.utc)).toEqual(["07", "08", "09", "10"].map((h) => `2026-06-15T${h}:00:00.000Z`));
    expect(plan.after_now).toBe(4); // 11:00 to 14:00: the scheduler's
    expect(plan.to).toBe("2026-06-15T15:00:00.000Z"); // the range as asked
    const { backfill } = k.engine.backfill("j", { from: "2026-06-15T07:00:00Z", to: "2026-06-15T15:00:00Z", triggeredBy: "t" });
    expect(backfill!.total).toBe(4);
    const runs = await allDone(k, "j", 4);
    expect(runs.map((r) => r.scheduled_at).sort()).toEqual(plan.slots.map((s) => s.utc));
    expect(k.runsOf("j").some((r) => Date.parse(r.scheduled_at ?? "") > Date.parse("2026-06-15T10:30:00Z"))).toBe(false);

    let details: { path: string; message: string }[] = [];
    try {
      k.engine.backfill("j", { from: "2026-06-15T11:00:00Z", to: "2026-06-15T13:00:00Z", triggeredBy: "t" });
    } catch (e) {
      details = (e as EngineError).details as typeof details;
    }
    expect(details).toEqual([{ path: "from", message: expect.stringMatching(/every slot of the range is still ahead \(the first: 2026-06-15T11:00:00.000Z\)/) }]);
    // A range with no slot at all is no error: nothing to run, nothing ahead.
    expect(k.engine.backfill("j", { from: "2026-06-15T11:10:00Z", to: "2026-06-15T11:20:00Z", triggeredBy: "t", dryRun: true }).plan).toMatchObject({ slots: [], after_now: 0 });
  });
});

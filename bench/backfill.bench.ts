/**
 * Backfill (CONTRACT §7.3): how long a 10,000-slot backfill of /bin/true takes
 * to be accepted (engine.backfill: the plan, the existing-run check and one
 * transaction writing the backfill and its 10,000 runs), and the rate its runs
 * then complete at, against manual runs of the same job recorded by the same
 * engine with as many in flight as the backfill's `parallel` (the engine
 * section's throughput measure), measured in blocks before and after it.
 */
import { engineRate, engineRig, WarpClock, type Rig } from "./helpers/engineRig.js";
import { median } from "./helpers/stats.js";
import type { BenchResult, BenchSection } from "./types.js";

const TERMINAL = new Set(["SUCCESS", "FAILED", "SKIPPED"]);
const SLOTS = 10_000;
const HOUR = 3_600_000;

/** A 10,000-slot backfill from `from`: its acceptance time and its completion rate. */
async function backfill(rig: Rig, from: number, parallel: number): Promise<{ acceptMs: number; rate: number; ok: number }> {
  let finished = 0;
  let ok = 0;
  let id = -1;
  let t0 = 0;
  const done = new Promise<number>((resolve) => {
    const off = rig.bus.on("run:status", ({ run }) => {
      if (run.backfill_id !== id || !TERMINAL.has(run.status)) return;
      finished++;
      if (run.status === "SUCCESS") ok++;
      if (finished === SLOTS) {
        off();
        resolve(performance.now() - t0);
      }
    });
  });
  t0 = performance.now();
  const { backfill: b } = rig.engine.backfill("t", {
    from: new Date(from).toISOString(),
    to: new Date(from + SLOTS * HOUR).toISOString(),
    parallel,
    triggeredBy: "bench",
  });
  const acceptMs = performance.now() - t0;
  id = b!.id;
  const ms = await done;
  return { acceptMs, rate: (SLOTS * 1_000) / ms, ok };
}

export default async function run(): Promise<BenchSection> {
  const results: BenchResult[] = [];
  for (const [parallel, from] of [
    [1, Date.UTC(2020, 0, 1)],
    [8, Date.UTC(2023, 0, 1)],
  ] as const) {
    const daemon = `executor:\n  pool_size: ${parallel}\nscheduler:\n  max_concurrent_jobs: ${parallel}\n`;
    const rig = await engineRig(`jobs:\n  t:\n    command: ["/bin/true"]\n    frequency: hourly\n    timezone: UTC\n    concurrency: allow\n`, daemon, new WarpClock());
    try {
      await engineRate(rig, parallel, 500); // warm-up
      const before = [await engineRate(rig, parallel, 2_000), await engineRate(rig, parallel, 2_000)];
      const b = await backfill(rig, from, parallel);
      const after = [await engineRate(rig, parallel, 2_000), await engineRate(rig, parallel, 2_000)];
      const manual = median([...before, ...after]);
      results.push(
        {
          name: `10,000-slot backfill accepted (parallel ${parallel})`,
          value: Math.round(b.acceptMs),
          unit: "ms",
          target: "< 2000 ms",
          ok: b.acceptMs < 2_000,
          notes: "engine.backfill: plan, existing-run check, one transaction of 10,000 runs",
        },
        { name: `backfill runs completed, parallel ${parallel}`, value: Math.round(b.rate), unit: "runs/s", notes: `${b.ok} of ${SLOTS} SUCCESS` },
        { name: `manual runs completed, ${parallel} in flight`, value: Math.round(manual), unit: "runs/s", notes: `median of 4 blocks of 2 s: ${[...before, ...after].map((x) => Math.round(x)).join(", ")}` },
        {
          name: `backfill / manual run throughput, parallel ${parallel}`,
          value: Number((b.rate / manual).toFixed(2)),
          unit: "ratio",
          target: ">= 0.6x",
          ok: b.rate / manual >= 0.6 && b.ok === SLOTS,
        },
      );
    } finally {
      await rig.close();
    }
  }
  return {
    title: "Backfill: acceptance and run throughput",
    method:
      "In this process: the real Engine on a SQLite file in a temp directory, real subprocesses. A job `t` (argv `/bin/true`, hourly, UTC, " +
      "concurrency allow) is backfilled over 10,000 hourly slots with `parallel` 1, then (a fresh engine, pool_size 8) 8. Accepted: the " +
      "time of `engine.backfill` (plan, existing-run lookup, one transaction writing the backfill and its 10,000 runs, their events). " +
      "Throughput: 10,000 / the time from acceptance to the last run recorded. Against it, manual runs of the same job kept `parallel` in " +
      "flight through `engine.runNow` (as the engine section measures), two 2 s blocks before and two after the backfill; ratio = " +
      "backfill rate / their median.",
    results,
  };
}

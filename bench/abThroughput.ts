/**
 * `npx tsx <this checkout>/bench/abThroughput.ts LABEL`, run from the root of
 * any checkout (this one or an older commit's worktree): recorded manual runs
 * of /bin/true per second at 8 and 32 in flight through that checkout's
 * engine, alternated with raw posix_spawn in the same process (3 rounds of
 * raw, svc, svc, raw; medians), and their ratio. Comparing commits by this
 * ratio, alternately, is how the issue-19 bisect in docs/perf/NOTES.md was
 * made ("Recorded-run throughput before and after this round"): it imports
 * the checkout's own bench/helpers, so the commit under test needs only
 * engineRig and rawRun (both exist since before `c16139b`).
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

interface RigLike {
  engine: { runNow(job: string, opts: { triggeredBy: string }): unknown };
  bus: { on(event: "run:status", fn: (e: { run: { job_name: string; status: string } }) => void): () => void };
  close(): Promise<void>;
}

const root = process.cwd();
const rigModule = (await import(pathToFileURL(resolve(root, "bench/helpers/engineRig.ts")).href)) as {
  engineRig(yaml: string, daemonYaml: string, clock: unknown): Promise<RigLike>;
  WarpClock: new () => unknown;
};
const rawModule = (await import(pathToFileURL(resolve(root, "bench/helpers/raw.ts")).href)) as {
  closedLoopRate(start: () => Promise<unknown>, inFlight: number, ms: number): Promise<number>;
  rawRun(cmd: string[], cwd: string, way: "posix_spawn"): Promise<string>;
};

const TERMINAL = new Set(["SUCCESS", "FAILED", "SKIPPED"]);

/** Manual runs of t kept `inFlight` at a time for `ms`; SUCCESS runs per second (the same loop as engineRate). */
function engineRate(rig: RigLike, inFlight: number, ms: number): Promise<number> {
  return new Promise((done) => {
    const t0 = performance.now();
    let ok = 0;
    let running = 0;
    const submit = () => {
      running++;
      rig.engine.runNow("t", { triggeredBy: "bench" });
    };
    const off = rig.bus.on("run:status", ({ run }) => {
      if (run.job_name !== "t" || !TERMINAL.has(run.status)) return;
      running--;
      if (run.status === "SUCCESS") ok++;
      if (performance.now() < t0 + ms) submit();
      else if (running === 0) {
        off();
        done((ok * 1_000) / (performance.now() - t0));
      }
    });
    for (let i = 0; i < inFlight; i++) submit();
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const out = [process.argv[2] ?? root];
for (const inFlight of [8, 32]) {
  const daemon = `executor:\n  pool_size: ${inFlight}\nscheduler:\n  max_concurrent_jobs: ${inFlight}\n`;
  const rig = await rigModule.engineRig(`jobs:\n  t:\n    command: ["/bin/true"]\n    concurrency: allow\n`, daemon, new rigModule.WarpClock());
  const raw = () => rawModule.rawRun(["/bin/true"], "/", "posix_spawn");
  await rawModule.closedLoopRate(raw, inFlight, 300);
  await engineRate(rig, inFlight, 500);
  const svc: number[] = [];
  const floor: number[] = [];
  for (let round = 0; round < 3; round++) {
    floor.push(await rawModule.closedLoopRate(raw, inFlight, 1_000));
    svc.push(await engineRate(rig, inFlight, 1_000), await engineRate(rig, inFlight, 1_000));
    floor.push(await rawModule.closedLoopRate(raw, inFlight, 1_000));
  }
  await rig.close();
  out.push(`${inFlight} in flight: svc ${Math.round(median(svc))} runs/s, raw ${Math.round(median(floor))} spawns/s, ratio ${(median(svc) / median(floor)).toFixed(3)}`);
}
console.log(out.join("  "));
process.exit(0);

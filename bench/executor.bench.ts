import { startProcess } from "../src/executor/index.js";
import { spawnMethod } from "../src/executor/posixSpawn.js";
import { closedLoop, rawRun } from "./helpers/raw.js";
import type { BenchResult, BenchSection } from "./types.js";

/**
 * Cost of the executor over the physical spawn limit: raw
 * `child_process.spawn('/bin/true')` with pipes and `detached: true`, awaited
 * until 'close' (exit + pipes ended), and the same through posix_spawn (how
 * startProcess starts jobs on Linux, src/executor/posixSpawn.ts), against
 * `startProcess` of `/bin/true` (line splitting, pid start time, group
 * checks) in the same loops. The target compares startProcess with raw
 * child_process.spawn; the ratio to raw posix_spawn is reported beside it.
 */

const QUADS = 8;
const BLOCK_MS = 300;
const TARGET_RATIO = 0.9;

type Starter = () => Promise<unknown>;

const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };

const raw: Starter = () => rawRun(["/bin/true"]);
const rawPosix: Starter = () => rawRun(["/bin/true"], "/", "posix_spawn");

const executor: Starter = () =>
  startProcess({ command: ["/bin/true"], shell: "/bin/sh", cwd: "/", env }, { killGraceMs: 1_000, onLine: () => {} })
    .exited;

interface Block {
  /** Completed spawns per second of wall time. */
  rate: number;
  /** CPU time of this process (all threads, children excluded) per spawn, µs. */
  cpuUs: number;
}

/** Run `start` with `inFlight` kept running for `ms`. */
async function rate(start: Starter, inFlight: number, ms: number): Promise<Block> {
  const cpu0 = process.cpuUsage();
  const { done, ms: took } = await closedLoop(start, inFlight, ms);
  const cpu = process.cpuUsage(cpu0);
  return { rate: (done * 1_000) / took, cpuUs: (cpu.user + cpu.system) / done };
}

const round2 = (x: number): number => Math.round(x * 100) / 100;

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

export default async function executorBench(): Promise<BenchSection> {
  const results: BenchResult[] = [];
  const posix = spawnMethod === "posix_spawn";
  // Warm up the paths (module loading, JIT) before measuring.
  await rate(raw, 8, 300);
  if (posix) await rate(rawPosix, 8, 300);
  await rate(executor, 8, 300);
  for (const inFlight of [1, 8]) {
    const posixRates: number[] = [];
    const posixCpu: number[] = [];
    const rawRates: number[] = [];
    const ourRates: number[] = [];
    const ratios: number[] = [];
    const rawCpu: number[] = [];
    const ourCpu: number[] = [];
    // ABBA blocks: load changes on the shared machine and drift hit both alike.
    for (let i = 0; i < QUADS; i++) {
      const r1 = await rate(raw, inFlight, BLOCK_MS);
      const o1 = await rate(executor, inFlight, BLOCK_MS);
      const o2 = await rate(executor, inFlight, BLOCK_MS);
      const r2 = await rate(raw, inFlight, BLOCK_MS);
      if (posix && i % 2 === 0) {
        const p = await rate(rawPosix, inFlight, BLOCK_MS);
        posixRates.push(p.rate);
        posixCpu.push(p.cpuUs);
      }
      rawRates.push(r1.rate, r2.rate);
      ourRates.push(o1.rate, o2.rate);
      rawCpu.push(r1.cpuUs, r2.cpuUs);
      ourCpu.push(o1.cpuUs, o2.cpuUs);
      ratios.push((o1.rate + o2.rate) / (r1.rate + r2.rate));
    }
    const label = inFlight === 1 ? "sequential" : `${inFlight} in flight`;
    const ratio = median(ratios);
    // CPU overhead over a raw spawn of the same method startProcess uses.
    const cpuRaw = posix ? median(posixCpu) : median(rawCpu);
    const cpuOurs = median(ourCpu);
    results.push(
      { name: `raw spawn /bin/true, ${label}`, value: Math.round(median(rawRates)), unit: "spawns/s", notes: "child_process.spawn (fork)" },
      ...(posix
        ? [
            {
              name: `raw posix_spawn /bin/true, ${label}`,
              value: Math.round(median(posixRates)),
              unit: "spawns/s",
              notes: `svc's posixSpawn without line handling; startProcess / this ${round2(median(ourRates) / median(posixRates))}x`,
            },
          ]
        : []),
      { name: `startProcess /bin/true, ${label}`, value: Math.round(median(ourRates)), unit: "spawns/s", notes: `starts with ${spawnMethod}` },
      {
        name: `startProcess / raw, ${label}`,
        value: round2(ratio),
        unit: "ratio",
        target: `>= ${TARGET_RATIO}x raw spawn`,
        ok: ratio >= TARGET_RATIO,
        notes: `per-quad ratios ${ratios.map((x) => x.toFixed(2)).join(", ")}`,
      },
      {
        name: `daemon CPU per spawn, ${label}`,
        value: Math.round(cpuOurs),
        unit: "µs",
        notes:
          `raw ${spawnMethod} ${Math.round(cpuRaw)} µs: executor overhead ${Math.round(cpuOurs - cpuRaw)} µs (${round2(cpuOurs / cpuRaw)}x)` +
          `${posix ? `; raw child_process.spawn ${Math.round(median(rawCpu))} µs` : ""}; less sensitive to other load than wall rates`,
      },
    );
  }
  return {
    title: "Executor: spawn rate",
    method:
      `/bin/true with stdout/stderr piped and detached: true, awaited until exit and both pipes ended. ` +
      `Raw child_process.spawn vs startProcess (which starts with ${spawnMethod}) in ${QUADS} ABBA quads of ${BLOCK_MS} ms blocks (raw, ours, ours, raw), ` +
      `${spawnMethod === "posix_spawn" ? `with a block of raw posix_spawn (svc's posixSpawn) after every other quad, ` : ""}` +
      `sequential and with 8 in flight, after a warm-up. Medians of block rates and of per-quad ratios; ` +
      `CPU per spawn is this process's user+system time (process.cpuUsage) divided by spawns.`,
    results,
  };
}

// `tsx bench/executor.bench.ts` prints this section alone.
if (import.meta.url === `file://${process.argv[1]}`) {
  const section = await executorBench();
  console.log(section.title);
  for (const r of section.results) {
    console.log(`  ${r.name}: ${r.value} ${r.unit}${r.target ? ` (target ${r.target}: ${r.ok ? "ok" : "MISSED"})` : ""}  ${r.notes ?? ""}`);
  }
}

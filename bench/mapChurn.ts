/**
 * What a long-lived map churned by every run costs the garbage collector: a Map against the
 * engine's IdMap (src/engine/idMap.ts), with the engine's pattern: one entry set per run, deleted
 * when the run ends, 8 in flight, each value a run-sized graph (~5 KB of objects and closures).
 * The map lives through two scavenges first, as a daemon's does.
 *
 *   node --expose-gc --import tsx bench/mapChurn.ts [--seconds 3]
 *
 * For each kind, in a fresh Node process: runs per second, young-generation collections
 * (scavenges) and full collections (mark-compact) per 1,000 runs, and the garbage collector's
 * pauses in ms per 1,000 runs (PerformanceObserver "gc" entries). Not part of `npm run bench`: it
 * measures one data structure, not svcd; the runcost section measures the engine.
 */
import { execFileSync } from "node:child_process";
import { PerformanceObserver } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { IdMap } from "../src/engine/idMap.js";

const { values, positionals } = parseArgs({ options: { seconds: { type: "string", default: "3" } }, allowPositionals: true });
const seconds = Number(values.seconds);

/** A run's objects: ~5 KB of small objects and closures. */
function runGraph(id: number): { id: number; parts: Array<{ i: number; s: string; f: () => number }> } {
  const parts = [];
  for (let i = 0; i < 40; i++) parts.push({ i, s: `run ${id} part ${i}`, f: () => i + id });
  return { id, parts };
}

interface Churned {
  set(id: number, v: unknown): unknown;
  delete(id: number): boolean;
}

async function child(kind: string): Promise<void> {
  const gc = (globalThis as { gc?: (o?: { type: string }) => void }).gc;
  if (!gc) throw new Error("run with node --expose-gc");
  const map: Churned = kind === "Map" ? new Map<number, unknown>() : new IdMap<unknown>();
  const live: number[] = [];
  let next = 1;
  for (; next <= 8; next++) {
    map.set(next, runGraph(next));
    live.push(next);
  }
  gc({ type: "minor" });
  gc({ type: "minor" }); // the map and its table are in the old generation now, as a daemon's are
  let minor = 0;
  let major = 0;
  let pauseMs = 0;
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if ((e as { detail?: { kind?: number } }).detail?.kind === 1) minor++;
      else major++;
      pauseMs += e.duration;
    }
  });
  obs.observe({ entryTypes: ["gc"] });
  const t0 = performance.now();
  let runs = 0;
  while (performance.now() - t0 < seconds * 1_000) {
    for (let k = 0; k < 50; k++, runs++) {
      map.set(next, runGraph(next));
      live.push(next++);
      map.delete(live.shift()!);
    }
    await new Promise((r) => setImmediate(r));
  }
  const ms = performance.now() - t0;
  await new Promise((r) => setTimeout(r, 20));
  obs.disconnect();
  const per = (n: number) => ((n * 1_000) / runs).toFixed(2);
  console.log(`${kind}\t${Math.round((runs * 1_000) / ms)} runs/s\tscavenges ${per(minor)}\tfull ${per(major)}\tpauses ${per(pauseMs)} ms (per 1,000 runs)`);
}

if (positionals[0] === "child") {
  await child(positionals[1]!);
} else {
  const self = fileURLToPath(import.meta.url);
  for (const kind of ["Map", "IdMap", "Map", "IdMap"]) {
    process.stdout.write(execFileSync(process.execPath, ["--expose-gc", "--import", "tsx", self, "child", kind, "--seconds", String(seconds)], { encoding: "utf8" }));
  }
}

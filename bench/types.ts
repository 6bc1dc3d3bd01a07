/**
 * Benchmark convention: every `bench/*.bench.ts` default-exports an async
 * function returning one section. `bench/run.ts` runs them all, prints a
 * table and writes docs/PERFORMANCE.md. Targets are compared as ratios to
 * physical limits measured in the same run wherever possible.
 */
export interface BenchResult {
  name: string;
  value: number;
  unit: string; // "ms", "ops/s", "lines/s", "MB", "ratio", ...
  /** Human-readable target, e.g. "< 300 ms" or ">= 0.6x raw spawn". */
  target?: string;
  /** Whether the target was met (omit when there is no target). */
  ok?: boolean;
  notes?: string;
}

export interface BenchSection {
  title: string;
  /** How it was measured: inputs, repetitions, what is timed. */
  method: string;
  results: BenchResult[];
}

export type Bench = () => Promise<BenchSection>;

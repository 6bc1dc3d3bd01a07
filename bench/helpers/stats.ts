/**
 * Small statistics for benchmarks: nearest-rank percentiles (p99 of 50
 * samples is the 50th, i.e. the maximum), medians and rounding.
 */

export function sorted(xs: readonly number[]): number[] {
  return [...xs].sort((a, b) => a - b);
}

/** Nearest-rank percentile, p in [0, 100]. */
export function pct(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = sorted(xs);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = sorted(xs);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function mean(xs: readonly number[]): number {
  return xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length;
}

export function round(x: number, digits = 0): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** Rounds to about three significant digits (0.0123, 1.23, 123, 12,300). */
export function sig(x: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  const d = Math.max(0, 2 - Math.floor(Math.log10(Math.abs(x))));
  return round(x, Math.min(d, 4));
}

export interface Summary {
  n: number;
  median: number;
  p99: number;
  min: number;
  max: number;
}

export function summarize(xs: readonly number[]): Summary {
  return { n: xs.length, median: median(xs), p99: pct(xs, 99), min: Math.min(...xs), max: Math.max(...xs) };
}

/** "median 1.23 / p99 4.56 (n=50)" for notes. */
export function describe(xs: readonly number[], unit = ""): string {
  const s = summarize(xs);
  return `median ${sig(s.median)}${unit} / p99 ${sig(s.p99)}${unit} / max ${sig(s.max)}${unit} (n=${s.n})`;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Sleeps until the absolute epoch-ms instant `at`. */
export async function sleepUntil(at: number): Promise<void> {
  for (;;) {
    const left = at - Date.now();
    if (left <= 0) return;
    await sleep(Math.min(left, 1_000));
  }
}

/** True when the bench runs in `--quick` mode (set by bench/run.ts, or SVC_BENCH_QUICK=1). */
export function quick(): boolean {
  return process.env.SVC_BENCH_QUICK === "1";
}

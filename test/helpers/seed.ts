/**
 * The randomness of a randomized test, from one printed seed. SVC_SEED=<n>
 * replays a run's draws (which kill point, how long to wait before the
 * kill...); the machine's own timing still varies between runs, so a replay
 * repeats the choices, not every instant. Like SVC_FUZZ_SEED of
 * test/reliability/hostile.test.ts.
 */
import { relative } from "node:path";
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import { ROOT } from "./daemonKit.js";

export interface Seeded {
  readonly seed: number;
  /** In [0, 1), like Math.random, drawn from the seed. */
  random(): number;
  /** A whole number in [min, max]. */
  int(min: number, max: number): number;
  /** The command that replays this file with this seed. */
  readonly replay: string;
}

/**
 * The seed is SVC_SEED when set, else a fresh one. It is printed at once
 * (put it in the test's title too, so a failure report names it).
 */
export function seeded(testFile: string): Seeded {
  const fromEnv = process.env.SVC_SEED;
  if (fromEnv !== undefined && !/^\d+$/.test(fromEnv)) throw new Error(`SVC_SEED must be a whole number, got ${JSON.stringify(fromEnv)}`);
  const seed = fromEnv !== undefined ? Number(fromEnv) : Date.now() % 1_000_000;
  const rng = xoroshiro128plus(seed);
  const random = () => uniformFloat64(rng);
  const replay = `SVC_SEED=${seed} npx vitest run ${relative(ROOT, testFile)}`;
  process.stdout.write(`[seed] ${relative(ROOT, testFile)}: seed ${seed} (replay: ${replay})\n`);
  return { seed, random, int: (min, max) => min + Math.floor(random() * (max - min + 1)), replay };
}

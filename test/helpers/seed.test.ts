import { afterEach, describe, expect, it, vi } from "vitest";
import { seeded } from "./seed.js";

const FILE = import.meta.filename;
afterEach(() => {
  delete process.env.SVC_SEED;
  vi.restoreAllMocks();
});

const draws = (n: number) => {
  const s = seeded(FILE);
  return { seed: s.seed, values: Array.from({ length: n }, () => s.random()), ints: Array.from({ length: n }, () => s.int(150, 1_649)) };
};

describe("seeded", () => {
  it("prints the seed with the command that replays it, and SVC_SEED replays the same draws", () => {
    const out = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    process.env.SVC_SEED = "424242";
    const a = draws(50);
    const b = draws(50);
    expect(out.mock.calls.map((c) => c[0])).toEqual([
      "[seed] test/helpers/seed.test.ts: seed 424242 (replay: SVC_SEED=424242 npx vitest run test/helpers/seed.test.ts)\n",
      "[seed] test/helpers/seed.test.ts: seed 424242 (replay: SVC_SEED=424242 npx vitest run test/helpers/seed.test.ts)\n",
    ]);
    expect(a).toEqual(b);
    expect(a.seed).toBe(424242);
    expect(a.values.every((v) => v >= 0 && v < 1)).toBe(true);
    expect(a.ints.every((v) => Number.isInteger(v) && v >= 150 && v <= 1_649)).toBe(true);
    expect(new Set(a.values).size).toBe(50);
    process.env.SVC_SEED = "424243";
    expect(draws(50).values).not.toEqual(a.values);
  });

  it("without SVC_SEED draws a fresh seed; a malformed one is an error that says what it got", () => {
    vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    const s = seeded(FILE);
    expect(Number.isInteger(s.seed) && s.seed >= 0 && s.seed < 1_000_000).toBe(true);
    expect(s.replay).toBe(`SVC_SEED=${s.seed} npx vitest run test/helpers/seed.test.ts`);
    process.env.SVC_SEED = "12ab";
    expect(() => seeded(FILE)).toThrow('SVC_SEED must be a whole number, got "12ab"');
  });
});

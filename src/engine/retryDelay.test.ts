import { describe, expect, it } from "vitest";
import { retryDelayMs } from "./retryDelay.js";

const exp = { kind: "exponential" } as const;

describe("retryDelayMs", () => {
  it("doubles from 30 s without jitter at the midpoint", () => {
    expect([1, 2, 3, 4].map((n) => retryDelayMs(exp, n, () => 0.5))).toEqual([30_000, 60_000, 120_000, 240_000]);
  });

  it("stays within +-25 %", () => {
    expect(retryDelayMs(exp, 1, () => 0)).toBe(22_500);
    expect(retryDelayMs(exp, 1, () => 0.999999)).toBeCloseTo(37_500, -1);
    for (let i = 0; i < 200; i++) {
      const d = retryDelayMs(exp, 3);
      expect(d).toBeGreaterThanOrEqual(90_000);
      expect(d).toBeLessThanOrEqual(150_000);
    }
  });

  it("caps at one hour, jitter included", () => {
    expect(retryDelayMs(exp, 50, () => 0.999)).toBe(3_600_000);
    expect(retryDelayMs(exp, 8, () => 0.5)).toBe(3_600_000);
  });

  it("uses the fixed delay as given", () => {
    expect(retryDelayMs({ kind: "fixed", ms: 5_000 }, 1)).toBe(5_000);
    expect(retryDelayMs({ kind: "fixed", ms: 5_000 }, 9)).toBe(5_000);
  });
});

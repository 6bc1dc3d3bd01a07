import { describe, expect, it } from "vitest";
import { MAX_ATTEMPTS, withRetries } from "./deliver.js";
import type { AttemptResult } from "./providers/types.js";
import { DeliveryInterrupted } from "./transport.js";

const ok: AttemptResult = { ok: true, status: 200, response: "", error: null, retryable: false };
const e500: AttemptResult = { ok: false, status: 500, response: "", error: "HTTP 500", retryable: true };
const e404: AttemptResult = { ok: false, status: 404, response: "", error: "HTTP 404", retryable: false };

/** Runs withRetries against a script of results with a fake sleep; records waits and attempts. */
async function play(script: AttemptResult[], stop = new AbortController()) {
  const waits: number[] = [];
  const attempts: { n: number; final: boolean; ok: boolean }[] = [];
  let i = 0;
  const result = await withRetries(async () => script[Math.min(i++, script.length - 1)]!, {
    sleep: async (ms) => {
      waits.push(ms);
    },
    stop: stop.signal,
    onAttempt: (r, n, final) => attempts.push({ n, final, ok: r.ok }),
  });
  return { result, waits, attempts };
}

describe("withRetries", () => {
  it("stops at the first success", async () => {
    const { result, waits, attempts } = await play([ok]);
    expect(result.ok).toBe(true);
    expect(waits).toEqual([]);
    expect(attempts).toEqual([{ n: 1, final: true, ok: true }]);
  });

  it("waits 1 s then 2 s and makes at most 3 attempts", async () => {
    const { result, waits, attempts } = await play([e500, e500, e500, ok]);
    expect(MAX_ATTEMPTS).toBe(3);
    expect(result.status).toBe(500);
    expect(waits).toEqual([1000, 2000]);
    expect(attempts.map((a) => a.final)).toEqual([false, false, true]);
  });

  it("retries then succeeds", async () => {
    const { result, waits } = await play([e500, ok]);
    expect(result.ok).toBe(true);
    expect(waits).toEqual([1000]);
  });

  it("does not retry a permanent failure", async () => {
    const { result, waits, attempts } = await play([e404, ok]);
    expect(result.status).toBe(404);
    expect(waits).toEqual([]);
    expect(attempts).toHaveLength(1);
  });

  it("is interrupted between attempts when stopping", async () => {
    const stop = new AbortController();
    stop.abort();
    await expect(play([e500, ok], stop)).rejects.toBeInstanceOf(DeliveryInterrupted);
  });
});

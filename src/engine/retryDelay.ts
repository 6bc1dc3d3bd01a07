import type { RetryDelay } from "../config/types.js";

const BASE_MS = 30_000;
const CAP_MS = 60 * 60_000;
const JITTER = 0.25;

/**
 * Delay before retry number `retry` (1 = the first retry, after attempt 1
 * failed). Exponential: 30 s, 60 s, 120 s ... capped at 1 h, each +-25 %
 * jitter (SPEC rule 5, CONTRACT §2). `random` returns [0, 1) and is injected
 * so tests can pin the jitter.
 */
export function retryDelayMs(policy: RetryDelay, retry: number, random: () => number = Math.random): number {
  if (policy.kind === "fixed") return policy.ms;
  const exponent = Math.max(0, retry - 1);
  const base = Math.min(CAP_MS, BASE_MS * 2 ** Math.min(exponent, 20));
  const factor = 1 - JITTER + 2 * JITTER * random();
  return Math.round(Math.min(CAP_MS, base * factor));
}

import type { AttemptResult } from "./providers/types.js";
import { DeliveryInterrupted } from "./transport.js";

/** At most this many attempts per dispatch (CONTRACT §6). */
export const MAX_ATTEMPTS = 3;
/** Waits before attempt 2 and attempt 3. */
export const RETRY_DELAYS_MS: readonly number[] = [1000, 2000];

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** setTimeout-based sleep that ends early (resolves) when `signal` aborts. */
export const realSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });

export interface RetryOptions {
  sleep: Sleep;
  /** Aborted when the notifier stops: no further attempt starts. */
  stop: AbortSignal;
  /** Called after every attempt; `final` is true for the last one of this dispatch. */
  onAttempt(result: AttemptResult, attempt: number, final: boolean): void;
}

/**
 * Runs `attempt` until it succeeds, fails permanently (4xx other than 429,
 * missing credentials...) or MAX_ATTEMPTS are used, sleeping RETRY_DELAYS_MS
 * between attempts. Throws DeliveryInterrupted when stopped between attempts
 * (the alert stays pending and is resumed at the next start).
 */
export async function withRetries(
  attempt: () => Promise<AttemptResult>,
  opts: RetryOptions,
): Promise<AttemptResult> {
  for (let n = 1; ; n++) {
    const result = await attempt();
    const final = result.ok || !result.retryable || n >= MAX_ATTEMPTS;
    opts.onAttempt(result, n, final);
    if (final) return result;
    await opts.sleep(RETRY_DELAYS_MS[n - 1] ?? RETRY_DELAYS_MS[RETRY_DELAYS_MS.length - 1]!, opts.stop);
    if (opts.stop.aborted) throw new DeliveryInterrupted();
  }
}

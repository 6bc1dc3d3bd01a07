/**
 * Failed password sign-ins per client address. After `maxFailures` failures
 * within `windowMs`, the address is refused at once (no bcrypt) until the
 * window that began with its first failure is over. A success never counts,
 * and a cached success is let in even while an address is refused, so a
 * brute-force loop from one address costs bcrypt time only `maxFailures`
 * times a window and does not lock out a user who already signed in.
 */
export interface LimiterOptions {
  maxFailures: number;
  windowMs: number;
  /** Addresses remembered at most (oldest dropped first). */
  maxEntries: number;
}

export const DEFAULT_LIMITS: LimiterOptions = { maxFailures: 10, windowMs: 60_000, maxEntries: 10_000 };

interface Entry {
  since: number;
  failures: number;
}

export class FailureLimiter {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly opts: LimiterOptions = DEFAULT_LIMITS) {}

  /** Milliseconds until `key` may try again, or 0 when it may try now. */
  blockedFor(key: string, now: number): number {
    const e = this.entries.get(key);
    if (!e) return 0;
    const end = e.since + this.opts.windowMs;
    if (now >= end) {
      this.entries.delete(key);
      return 0;
    }
    return e.failures >= this.opts.maxFailures ? end - now : 0;
  }

  /** Records a failure; true when this one reached the limit (log it once). */
  fail(key: string, now: number): boolean {
    let e = this.entries.get(key);
    if (!e || now >= e.since + this.opts.windowMs) {
      if (e) this.entries.delete(key);
      e = { since: now, failures: 0 };
      if (this.entries.size >= this.opts.maxEntries) this.evict(now);
      this.entries.set(key, e);
    }
    e.failures++;
    return e.failures === this.opts.maxFailures;
  }

  clear(): void {
    this.entries.clear();
  }

  private evict(now: number): void {
    for (const [k, e] of this.entries) {
      if (now >= e.since + this.opts.windowMs) this.entries.delete(k);
    }
    // Still full: drop the oldest (Map keeps insertion order).
    while (this.entries.size >= this.opts.maxEntries) {
      const first = this.entries.keys().next();
      if (first.done) break;
      this.entries.delete(first.value);
    }
  }
}

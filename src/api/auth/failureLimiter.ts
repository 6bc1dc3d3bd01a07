/**
 * Failed password sign-ins per client address. After `maxFailures` failures
 * within `windowMs`, the address is refused at once (no bcrypt) until the
 * window that began with its first failure is over. Checks still running
 * count against the budget too, so sending many guesses at once does not
 * get more of them checked. A success never counts. While an address is
 * refused, even the right password (remembered or not) is refused from it:
 * a brute-force loop from one address gets `maxFailures` guesses a window.
 * Other addresses are not affected.
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
  /** Checks of this address still running. */
  pending: number;
}

export class FailureLimiter {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly opts: LimiterOptions = DEFAULT_LIMITS) {}

  /** Milliseconds until `key` may try again, or 0 when it may try now. */
  blockedFor(key: string, now: number): number {
    const e = this.entries.get(key);
    if (!e) return 0;
    const end = e.since + this.opts.windowMs;
    if (now >= end && e.pending === 0) {
      this.entries.delete(key);
      return 0;
    }
    if (e.failures + e.pending < this.opts.maxFailures) return 0;
    return Math.max(end - now, 1_000);
  }

  /** A check of `key` begins: it counts as a failure until `end` says otherwise. */
  begin(key: string, now: number): void {
    this.current(key, now).pending++;
  }

  /** The check ends; true when this failure reached the limit (log it once). */
  end(key: string, failed: boolean, now: number): boolean {
    const e = this.current(key, now);
    e.pending = Math.max(0, e.pending - 1);
    if (!failed) return false;
    e.failures++;
    return e.failures === this.opts.maxFailures;
  }

  /** The entry of `key`, a fresh one once its window is over (checks still running carry over). */
  private current(key: string, now: number): Entry {
    let e = this.entries.get(key);
    if (!e || now >= e.since + this.opts.windowMs) {
      const pending = e?.pending ?? 0;
      if (e) this.entries.delete(key);
      e = { since: now, failures: 0, pending };
      if (this.entries.size >= this.opts.maxEntries) this.evict(now);
      this.entries.set(key, e);
    }
    return e;
  }

  clear(): void {
    this.entries.clear();
  }

  private evict(now: number): void {
    for (const [k, e] of this.entries) {
      if (now >= e.since + this.opts.windowMs && e.pending === 0) this.entries.delete(k);
    }
    // Still full: drop the oldest (Map keeps insertion order).
    while (this.entries.size >= this.opts.maxEntries) {
      const first = this.entries.keys().next();
      if (first.done) break;
      this.entries.delete(first.value);
    }
  }
}

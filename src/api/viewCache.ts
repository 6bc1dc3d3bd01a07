import type { EventBus } from "../engine/events.js";

/**
 * Memoises the read views that dashboards poll (`/api/jobs`, the job counts
 * of `/api/status`): with 1,000 jobs a fresh `/api/jobs` costs ~20 ms of
 * SQLite reads, and many pollers would each pay it.
 *
 * Invariant: a cached view is dropped on every event that can change it
 * (`run:status`: runs created, started, finished, which also moves
 * job_state's last_success/last_failure/lock_pid/next_run; `config:reloaded`;
 * and the API's own writes through `invalidate()`: pause, resume,
 * clear_lock). The one change without an event, a paused job's slot
 * passing (the scheduler moves to the next one silently), is covered by
 * the view's own expiry: `/api/jobs` expires at its earliest `next_run`.
 * `maxAgeMs` is a safety bound on top.
 */
const MAX_ENTRIES = 64;

export class ViewCache {
  private version = 0;
  private readonly entries = new Map<string, { version: number; expires: number; value: unknown }>();
  private readonly unsubscribe: (() => void)[];

  constructor(
    bus: EventBus,
    private readonly maxAgeMs = 30_000,
    private readonly now: () => number = Date.now,
  ) {
    this.unsubscribe = [bus.on("run:status", () => this.invalidate()), bus.on("config:reloaded", () => this.invalidate())];
  }

  invalidate(): void {
    this.version++;
    this.entries.clear();
  }

  /** The cached view, or a fresh one from `build` (which may say when it goes stale, epoch ms). */
  get<T>(key: string, build: () => { value: T; expiresAt?: number }): T {
    const hit = this.entries.get(key);
    const now = this.now();
    if (hit && hit.version === this.version && now < hit.expires) return hit.value as T;
    const version = this.version;
    const { value, expiresAt } = build();
    const expires = Math.min(now + this.maxAgeMs, expiresAt ?? Infinity);
    // A build is synchronous (SQLite reads), so no event can slip in between; keep the check anyway.
    if (version === this.version) {
      // Keys come from requests (`?tag=`): bound the map.
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(key, { version, expires, value });
    }
    return value;
  }

  close(): void {
    for (const u of this.unsubscribe.splice(0)) u();
    this.entries.clear();
  }
}

/**
 * The one seam for time. Engine code never calls Date.now() directly; tests
 * pass a fake clock. `setTimer` schedules at an absolute epoch-ms instant so
 * wake-ups do not drift the way counted intervals do.
 */
export interface Clock {
  now(): number;
  /** Calls fn at (or just after) the absolute instant `at` (epoch ms). */
  setTimer(at: number, fn: () => void): TimerHandle;
}

export interface TimerHandle {
  cancel(): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(at, fn) {
    let handle: NodeJS.Timeout | null = null;
    const arm = () => {
      const delay = at - Date.now();
      // Long timers are re-armed in steps: Node clamps delays above 2^31-1 ms,
      // and the system clock may move while we sleep.
      if (delay > 60_000) {
        handle = setTimeout(arm, 60_000);
      } else {
        handle = setTimeout(fn, Math.max(0, delay));
      }
      handle.unref?.();
    };
    arm();
    return {
      cancel() {
        if (handle) clearTimeout(handle);
      },
    };
  },
};

/** ISO 8601 UTC with milliseconds, the only timestamp format we store. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

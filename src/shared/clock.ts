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

/** A wall clock this much earlier than when a timer was armed went back (a timer's own error is milliseconds). */
const STEPPED_BACK_MS = 1_000;

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(at, fn) {
    let handle: NodeJS.Timeout | null = null;
    // Long timers are re-armed in steps: Node clamps delays above 2^31-1 ms,
    // and the system clock may move while we sleep. A timer is also re-armed
    // when it fires before `at` by the wall clock: Node counts a delay from
    // the event loop's cached millisecond, so about 2 in 100 timers fire up
    // to a millisecond early, and a tick run then would see a slot due at
    // `at` as not yet due and start it a whole second late. `fn` is always
    // called from a timer, never from inside setTimer. When the wall clock
    // went back while it waited (NTP, a manual change), `fn` is called at
    // once instead of waiting for the clock to come back to `at` (an hour's
    // step stopped the engine's tick for an hour): the caller reads the
    // clock again and sets its next timer from there.
    let armedAt = Date.now();
    const arm = (fromTimer: boolean) => {
      const now = Date.now();
      const delay = at - now;
      if (fromTimer && (delay <= 0 || now < armedAt - STEPPED_BACK_MS)) {
        fn();
        return;
      }
      armedAt = now;
      handle = setTimeout(() => arm(true), Math.min(Math.max(0, delay), 60_000));
      handle.unref?.();
    };
    arm(false);
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

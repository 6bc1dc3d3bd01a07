import type { Clock, TimerHandle } from "../../src/shared/clock.js";

/**
 * A clock that only moves when told. Timers fire when `advance` or `set`
 * passes their instant, in instant order.
 */
export class FakeClock implements Clock {
  private timers: { at: number; fn: () => void; live: boolean }[] = [];

  constructor(private current: number) {}

  now(): number {
    return this.current;
  }

  setTimer(at: number, fn: () => void): TimerHandle {
    const t = { at, fn, live: true };
    this.timers.push(t);
    return { cancel: () => void (t.live = false) };
  }

  set(ms: number): void {
    this.current = ms;
    this.fireDue();
  }

  advance(ms: number): void {
    this.set(this.current + ms);
  }

  private fireDue(): void {
    for (;;) {
      const due = this.timers.filter((t) => t.live && t.at <= this.current).sort((a, b) => a.at - b.at)[0];
      if (!due) return;
      due.live = false;
      due.fn();
    }
  }
}

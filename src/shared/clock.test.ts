import { afterEach, describe, expect, it, vi } from "vitest";
import { systemClock } from "./clock.js";

describe("systemClock.setTimer", () => {
  it("never calls back before its instant by the wall clock (Node's timers can fire a millisecond early)", async () => {
    // Each timer is armed for the next 5 ms boundary, as the engine arms its tick for the next
    // whole second. Without the re-arm about 2 in 100 fire with Date.now() < at (measured on
    // Node 20: 10 of 500), so 400 timers all on time is the fix, not luck (0.98^400 < 0.1 %).
    const early: number[] = [];
    for (let i = 0; i < 400; i++) {
      const at = (Math.floor(Date.now() / 5) + 1) * 5;
      const firedAt = await new Promise<number>((resolve) => systemClock.setTimer(at, () => resolve(Date.now())));
      if (firedAt < at) early.push(at - firedAt);
    }
    expect(early).toEqual([]);
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it("calls back when the wall clock goes back while it waits, instead of waiting for the clock to come back", () => {
    // Fake timers with a settable wall clock: the step back of an hour, then the timer's own second.
    vi.useFakeTimers({ now: Date.parse("2027-01-10T10:00:00.000Z") });
    const fired: number[] = [];
    systemClock.setTimer(Date.now() + 1_000, () => fired.push(Date.now()));
    vi.setSystemTime(Date.parse("2027-01-10T09:00:00.000Z"));
    vi.advanceTimersByTime(1_000);
    expect(fired).toEqual([Date.parse("2027-01-10T09:00:01.000Z")]);
    // A clock that only moves forward waits for the instant as before.
    const later: number[] = [];
    systemClock.setTimer(Date.now() + 5_000, () => later.push(Date.now()));
    vi.advanceTimersByTime(4_999);
    expect(later).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(later).toEqual([Date.parse("2027-01-10T09:00:06.000Z")]);
  });

  it("calls back soon (from a timer, not inside setTimer) for an instant already past; cancel stops a pending timer", async () => {
    const fired: string[] = [];
    const past = new Promise<void>((resolve) => systemClock.setTimer(Date.now() - 1_000, () => resolve(void fired.push("past"))));
    expect(fired).toEqual([]);
    await past;
    const handle = systemClock.setTimer(Date.now() + 20, () => fired.push("cancelled"));
    handle.cancel();
    await new Promise((r) => setTimeout(r, 60));
    expect(fired).toEqual(["past"]);
  });
});

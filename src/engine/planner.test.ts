import { describe, expect, it } from "vitest";
import { plan, type ScheduleEntry } from "./planner.js";

const T = Date.parse("2027-03-14T07:00:00.000Z");
const entry = (job: string, slotAt: number, extra: Partial<ScheduleEntry> = {}): ScheduleEntry => ({
  job,
  slotAt,
  dueAt: slotAt,
  paused: false,
  excluded: false,
  ...extra,
});

describe("plan", () => {
  it("returns nothing before the slot and the run at it", () => {
    const entries = [entry("a", T)];
    expect(plan(T - 1, entries)).toEqual([]);
    expect(plan(T, entries)).toEqual([{ job: "a", slotAt: T, action: "run" }]);
  });

  it("waits for the jittered due time", () => {
    const entries = [entry("a", T, { dueAt: T + 4_000 })];
    expect(plan(T + 3_999, entries)).toEqual([]);
    expect(plan(T + 4_000, entries)).toEqual([{ job: "a", slotAt: T, action: "run" }]);
  });

  it("marks paused and late slots", () => {
    const entries = [entry("p", T, { paused: true }), entry("late", T - 3_600_000)];
    expect(plan(T, entries)).toEqual([
      { job: "late", slotAt: T - 3_600_000, action: "late" },
      { job: "p", slotAt: T, action: "paused" },
    ]);
  });

  it("an excluded slot is excluded, even when paused or late", () => {
    const entries = [entry("x", T, { excluded: true, paused: true }), entry("y", T - 3_600_000, { excluded: true })];
    expect(plan(T, entries)).toEqual([
      { job: "y", slotAt: T - 3_600_000, action: "excluded" },
      { job: "x", slotAt: T, action: "excluded" },
    ]);
  });

  it("orders by due time, then name", () => {
    const entries = [entry("b", T), entry("a", T), entry("c", T - 1_000)];
    expect(plan(T, entries).map((p) => p.job)).toEqual(["c", "a", "b"]);
  });

  it("plans 10,000 entries without touching the ones not due", () => {
    const entries = Array.from({ length: 10_000 }, (_, i) => entry(`j${i}`, T + (i % 2) * 60_000));
    expect(plan(T, entries)).toHaveLength(5_000);
  });
});

import fc from "fast-check";
import { IANAZone } from "luxon";
import { beforeAll, describe, expect, it } from "vitest";
import type { FrequencyKind, ScheduleSpec, Weekday } from "../config/types.js";
import { nextRun, nextRuns } from "./nextRun.js";

/**
 * Property tests of the schedule math (issue 12, item 4). The oracle is
 * independent of the code under test: it reads raw luxon offsets, walks the
 * zone's clock minute by minute, and applies CONTRACT §3 in its plainest
 * form: a calendar slot is the first instant at which the local clock reads
 * at least the job's time on a matching day (that is "first valid instant
 * after a gap" and "first occurrence in an overlap" in one rule); an hourly
 * slot is every instant at which the clock reads minute 00.
 *
 * Oracle assumptions (true of the tz data for 2024-2030): offsets change on
 * whole minutes, and at most once per hour.
 */

const ZONES = [
  "UTC",
  "America/New_York",
  "America/St_Johns", // -03:30 with DST
  "America/Santiago", // transitions at midnight
  "America/Havana", // transitions at midnight, 00:00 -> 01:00
  "America/Sao_Paulo", // DST abolished in 2019
  "Europe/Berlin",
  "Europe/London",
  "Europe/Dublin", // "negative DST" in the tz source
  "Africa/Casablanca", // DST suspended each Ramadan: four transitions a year
  "Asia/Kolkata", // +05:30, no DST
  "Asia/Kathmandu", // +05:45
  "Australia/Lord_Howe", // 30-minute DST
  "Australia/Sydney", // southern hemisphere
  "Pacific/Chatham", // +12:45 / +13:45
  "Pacific/Kiritimati", // +14
] as const;
const CALENDAR: FrequencyKind[] = ["daily", "weekly", "monthly", "weekdays", "weekends"];
const WEEKDAYS: Weekday[] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]; // index = getUTCDay()
const MIN = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const RANGE_FROM = Date.UTC(2024, 0, 1);
const RANGE_TO = Date.UTC(2030, 0, 1);
/** Oracle window after afterMs: long enough to hold at least one slot. */
const WINDOW: Record<string, number> = {
  hourly: 30 * HOUR,
  daily: 3 * DAY,
  weekdays: 5 * DAY,
  weekends: 8 * DAY,
  weekly: 8 * DAY,
  monthly: 32 * DAY,
};

const rawOffset = (zone: string, t: number): number => Math.round(IANAZone.create(zone).offset(t) * 60_000);

interface Transition {
  zone: string;
  at: number; // first instant with the new offset
  before: number; // offset ms
  after: number;
}

/** Every offset change 2024-2030 in ZONES, from raw luxon (day steps, then bisection to the second). */
function findTransitions(): Transition[] {
  const out: Transition[] = [];
  for (const zone of ZONES) {
    let prev = rawOffset(zone, RANGE_FROM);
    for (let t = RANGE_FROM + DAY; t <= RANGE_TO; t += DAY) {
      const cur = rawOffset(zone, t);
      if (cur === prev) continue;
      let lo = t - DAY;
      let hi = t;
      while (hi - lo > 1000) {
        const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
        if (rawOffset(zone, mid) === prev) lo = mid;
        else hi = mid;
      }
      out.push({ zone, at: hi, before: prev, after: cur });
      prev = cur;
    }
  }
  return out;
}

/** The zone's wall clock ("local time as if UTC") at each whole minute from `from` to `to`. */
function clockWalk(zone: string, from: number, to: number): { start: number; walls: Float64Array } {
  const start = Math.ceil(from / MIN) * MIN;
  const walls = new Float64Array(Math.floor((to - start) / MIN) + 1);
  let hour = Math.floor(start / HOUR) * HOUR;
  let atHour = rawOffset(zone, hour);
  let atNext = rawOffset(zone, hour + HOUR);
  for (let i = 0; i < walls.length; i++) {
    const t = start + i * MIN;
    while (t >= hour + HOUR) {
      hour += HOUR;
      atHour = atNext;
      atNext = rawOffset(zone, hour + HOUR);
    }
    walls[i] = t + (atHour === atNext ? atHour : rawOffset(zone, t));
  }
  return { start, walls };
}

function runsOnDay(spec: ScheduleSpec, day: number): boolean {
  const d = new Date(day * DAY);
  const dow = d.getUTCDay();
  switch (spec.frequency) {
    case "daily":
      return true;
    case "weekdays":
      return dow >= 1 && dow <= 5;
    case "weekends":
      return dow === 0 || dow === 6;
    case "weekly":
      return WEEKDAYS[dow] === spec.weekday;
    case "monthly": {
      const lastDay = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
      return d.getUTCDate() === Math.min(spec.dayOfMonth!, lastDay);
    }
    default:
      throw new Error(`not a calendar frequency: ${spec.frequency}`);
  }
}

/** Brute-force slots in (afterMs, afterMs + window]. */
function oracle(spec: ScheduleSpec, afterMs: number, window: number): number[] {
  const end = afterMs + window;
  const { start, walls } = clockWalk(spec.timezone, afterMs - 2 * DAY, end);
  const slots: number[] = [];
  if (spec.frequency === "hourly") {
    for (let i = 0; i < walls.length; i++) if (walls[i]! % HOUR === 0) slots.push(start + i * MIN);
  } else {
    const timeMs = spec.time!.hour * HOUR + spec.time!.minute * MIN;
    const lastDay = Math.floor(walls[walls.length - 1]! / DAY);
    let i = 0;
    for (let day = Math.floor(walls[0]! / DAY) - 1; day <= lastDay && i < walls.length; day++) {
      if (!runsOnDay(spec, day)) continue;
      const target = day * DAY + timeMs;
      while (i < walls.length && walls[i]! < target) i++;
      if (i < walls.length) slots.push(start + i * MIN);
    }
  }
  return slots.filter((s) => s > afterMs && s <= end);
}

function makeSpec(zone: string, frequency: FrequencyKind, hour: number, minute: number, weekday: Weekday, dom: number): ScheduleSpec {
  return {
    frequency,
    timezone: zone,
    time: frequency === "hourly" ? null : { hour, minute },
    weekday: frequency === "weekly" ? weekday : null,
    dayOfMonth: frequency === "monthly" ? dom : null,
  };
}

/** A spec that runs on the local day of `wall`, at its clock time. */
function specForWall(zone: string, wall: number, pick: number): ScheduleSpec {
  const d = new Date(wall);
  const dow = d.getUTCDay();
  const options: FrequencyKind[] = ["daily", "weekly", "monthly", dow === 0 || dow === 6 ? "weekends" : "weekdays"];
  return makeSpec(zone, options[pick % options.length]!, d.getUTCHours(), d.getUTCMinutes(), WEEKDAYS[dow]!, d.getUTCDate());
}

const ms = (slots: Array<{ at: number }>) => slots.map((s) => s.at);
const iso = (ts: number[]) => ts.map((t) => new Date(t).toISOString());

let transitions: Transition[] = [];
beforeAll(() => {
  transitions = findTransitions();
});

/**
 * A random case: zone, spec, and an instant that is uniform over 2024-2030,
 * or shortly before an offset change (with the job's time sometimes placed
 * right around the change), or exactly on a slot.
 */
const caseArb = fc.record({
  zone: fc.constantFrom(...ZONES),
  frequency: fc.constantFrom<FrequencyKind>("hourly", ...CALENDAR),
  hour: fc.oneof(fc.integer({ min: 0, max: 23 }), fc.constantFrom(0, 1, 2, 3)),
  minute: fc.oneof(fc.integer({ min: 0, max: 59 }), fc.constantFrom(0, 30, 45, 59)),
  weekday: fc.constantFrom(...WEEKDAYS),
  dom: fc.oneof(fc.integer({ min: 1, max: 31 }), fc.constantFrom(29, 30, 31)),
  mode: fc.constantFrom("uniform", "near-change", "time-at-change", "on-slot"),
  u: fc.double({ min: 0, max: 1, noNaN: true }),
  pick: fc.nat(),
  deltaMin: fc.integer({ min: -90, max: 90 }),
  jitter: fc.integer({ min: 0, max: MIN - 1 }),
});
type Case = typeof caseArb extends fc.Arbitrary<infer T> ? T : never;

function build(c: Case): { spec: ScheduleSpec; afterMs: number; window: number } {
  let spec = makeSpec(c.zone, c.frequency, c.hour, c.minute, c.weekday, c.dom);
  const window = WINDOW[c.frequency]!;
  const near = transitions.filter((t) => t.zone === c.zone);
  let afterMs = Math.floor(RANGE_FROM + c.u * (RANGE_TO - RANGE_FROM - 40 * DAY)) + c.jitter;
  if (c.mode !== "uniform" && near.length > 0) {
    const change = near[c.pick % near.length]!;
    afterMs = change.at - Math.floor(c.u * window * 0.9) - c.jitter;
    if (c.mode === "time-at-change" && c.frequency !== "hourly") {
      const wall = change.at + change.before + c.deltaMin * MIN;
      const d = new Date(wall);
      spec = { ...spec, time: { hour: d.getUTCHours(), minute: d.getUTCMinutes() } };
    }
  }
  if (c.mode === "on-slot") afterMs = nextRun(spec, afterMs)!.at;
  return { spec, afterMs, window };
}

describe("schedule properties (fast-check)", () => {
  it("the next run is always strictly in the future, within one period, with consistent fields", () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const { spec, afterMs, window } = build(c);
        const slot = nextRun(spec, afterMs)!;
        expect(slot.at).toBeGreaterThan(afterMs);
        expect(slot.at - afterMs).toBeLessThanOrEqual(window);
        expect(slot.utc).toBe(new Date(slot.at).toISOString());
        // local = ISO with offset + " " + abbreviation, naming the same instant.
        expect(slot.local.endsWith(` ${slot.zoneAbbr}`)).toBe(true);
        expect(Date.parse(slot.local.slice(0, slot.local.length - slot.zoneAbbr.length - 1))).toBe(slot.at);
        expect(slot.zoneAbbr.length).toBeGreaterThan(0);
      }),
      { numRuns: 1000 },
    );
  });

  it("nextRuns is strictly increasing and each slot is the nextRun after the previous one", () => {
    fc.assert(
      fc.property(caseArb, fc.integer({ min: 1, max: 12 }), (c, count) => {
        const { spec, afterMs } = build(c);
        const runs = nextRuns(spec, afterMs, count);
        expect(runs).toHaveLength(count);
        let prev = afterMs;
        for (const r of runs) {
          expect(r.at).toBeGreaterThan(prev);
          expect(nextRun(spec, prev)).toEqual(r);
          prev = r.at;
        }
      }),
      { numRuns: 300 },
    );
  });

  it("never skips a valid slot: nextRuns equals a minute-by-minute walk of the zone's clock", () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const { spec, afterMs, window } = build(c);
        const expected = oracle(spec, afterMs, window);
        expect(expected.length).toBeGreaterThan(0);
        const actual = ms(nextRuns(spec, afterMs, expected.length + 1));
        expect(iso(actual.slice(0, expected.length))).toEqual(iso(expected));
        if (actual.length > expected.length) expect(actual[expected.length]!).toBeGreaterThan(afterMs + window);
      }),
      { numRuns: 300 },
    );
  });

  it("a time inside a DST gap runs at the first valid instant after the gap, with a note", () => {
    const gaps = () => transitions.filter((t) => t.after > t.before);
    expect(gaps().length).toBeGreaterThan(20);
    fc.assert(
      fc.property(fc.nat(), fc.nat(), fc.nat(), fc.double({ min: 0, max: 1, noNaN: true }), (g, k, pick, u) => {
        const gap = gaps()[g % gaps().length]!;
        const gapMinutes = (gap.after - gap.before) / MIN;
        const wall = gap.at + gap.before + (k % gapMinutes) * MIN; // a clock reading the zone skips
        const spec = specForWall(gap.zone, wall, pick);
        const afterMs = gap.at - 1 - Math.floor(u * 20 * HOUR);
        const slot = nextRun(spec, afterMs)!;
        // The instant the clock jumps: just before it the clock reads less than the
        // job's time, from it on more. Nothing earlier after afterMs qualifies.
        expect(new Date(slot.at).toISOString()).toBe(new Date(gap.at).toISOString());
        expect(gap.at - 1000 + rawOffset(gap.zone, gap.at - 1000)).toBeLessThan(wall);
        expect(gap.at + rawOffset(gap.zone, gap.at)).toBeGreaterThan(wall);
        expect(slot.note).toMatch(/^\d\d:\d\d does not exist \(DST gap\): runs at \d\d:\d\d$/);
      }),
      { numRuns: 200 },
    );
  });

  it("a time inside a DST overlap runs once, at its first occurrence; hourly runs at both :00s", () => {
    const overlaps = () => transitions.filter((t) => t.after < t.before);
    expect(overlaps().length).toBeGreaterThan(20);
    fc.assert(
      fc.property(fc.nat(), fc.nat(), fc.nat(), fc.double({ min: 0, max: 1, noNaN: true }), (o, k, pick, u) => {
        const overlap = overlaps()[o % overlaps().length]!;
        const repeatedMinutes = (overlap.before - overlap.after) / MIN;
        const wall = overlap.at + overlap.after + (k % repeatedMinutes) * MIN; // a clock reading seen twice
        const first = wall - overlap.before;
        const second = wall - overlap.after;
        expect(first + rawOffset(overlap.zone, first)).toBe(wall);
        expect(second + rawOffset(overlap.zone, second)).toBe(wall);

        const spec = specForWall(overlap.zone, wall, pick);
        const afterMs = first - 1 - Math.floor(u * 20 * HOUR);
        const runs = nextRuns(spec, afterMs, 3);
        expect(runs[0]!.at).toBe(first);
        expect(runs[0]!.note).toMatch(/^\d\d:\d\d occurs twice \(DST overlap\): runs once, at the first \(.+\)$/);
        expect(ms(runs)).not.toContain(second);
        // From anywhere between the two occurrences, the second is never returned.
        const between = first + Math.floor(u * (second - first));
        expect(nextRun(spec, between)!.at).toBeGreaterThan(second);

        const hourly = ms(nextRuns(makeSpec(overlap.zone, "hourly", 0, 0, "mon", 1), first - 1, 4));
        const wholeHour = wall % HOUR === 0;
        expect(hourly.includes(first) && hourly.includes(second)).toBe(wholeHour);
      }),
      { numRuns: 200 },
    );
  });
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { OracleZone, oracleSlots, readCron } from "../../test/helpers/cronOracle.js";
import { nextRun, nextSlot, slotsBetween } from "./nextRun.js";
import { cronSpec } from "./testkit.js";

/**
 * Properties of cron:/every: slots over random expressions, zones and
 * instants of 2026-2028, against the brute-force oracle:
 * - the next slot is strictly after `from`;
 * - it is the oracle's first slot: no matching slot is ever skipped;
 * - with excluded dates, it is the oracle's first slot on a date not
 *   excluded, and never on an excluded date;
 * - slotsBetween lists exactly the oracle's slots, excluded ones marked.
 */

const ZONES = ["UTC", "Asia/Kolkata", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "America/Santiago", "Pacific/Chatham", "Africa/Casablanca"];
const FROM = Date.UTC(2026, 0, 1);
const TO = Date.UTC(2029, 0, 1);
const DAY = 86_400_000;
const oracleZones = new Map<string, OracleZone>();
const zoneOf = (name: string) => {
  let z = oracleZones.get(name);
  if (!z) oracleZones.set(name, (z = new OracleZone(name, FROM - 2 * DAY, TO + 800 * DAY)));
  return z;
};

/** One cron field: `*`, a value, a range, a step, or a list of two of them. */
function field(min: number, max: number, star: boolean): fc.Arbitrary<string> {
  const v = fc.integer({ min, max });
  const item = fc.oneof(
    v.map(String),
    fc.tuple(v, v).map(([a, b]) => `${Math.min(a, b)}-${Math.max(a, b)}`),
    fc.tuple(v, fc.integer({ min: 1, max: Math.max(1, Math.floor((max - min) / 2)) })).map(([a, s]) => `${a}/${s}`),
  );
  const restricted = fc.oneof(item, fc.tuple(item, item).map(([a, b]) => `${a},${b}`));
  if (!star) return restricted;
  return fc.oneof(fc.constant("*"), fc.integer({ min: 1, max: Math.max(1, Math.floor((max - min + 1) / 2)) }).map((s) => `*/${s}`), restricted);
}

const dow = fc.oneof(
  field(0, 7, true),
  fc.integer({ min: 0, max: 6 }).map((d) => `${d}L`),
  fc.tuple(fc.integer({ min: 0, max: 6 }), fc.integer({ min: 1, max: 4 })).map(([d, n]) => `${d}#${n}`),
);
const dom = fc.oneof(field(1, 28, true), fc.constant("L"));

const expression = fc.oneof(
  // 5 fields; time fields weighted toward DST hours (0-3).
  fc.tuple(field(0, 59, true), fc.oneof(field(0, 3, true), field(0, 23, true)), dom, fc.oneof(fc.constant("*"), field(1, 12, false)), dow).map((f) => f.join(" ")),
  // 6 fields with seconds.
  fc.tuple(field(0, 59, false), field(0, 59, true), field(0, 3, true)).map(([s, m, h]) => `${s} ${m} ${h} * * *`),
  fc.constantFrom("every:10s", "every:15m", "every:2h", "every:1h", "@daily", "@hourly", "@weekly", "@monthly"),
);

const instant = fc.integer({ min: FROM, max: TO - 40 * DAY });

/** Generated expressions the loader accepts (some, like `0 0 30 2 *`, never match). */
function usable(expr: string): boolean {
  try {
    cronSpec(expr, "UTC");
    return true;
  } catch {
    return false;
  }
}

describe("cron: slots: properties against the oracle", () => {
  // Each property takes 1-3 s alone; the timeouts leave room for a loaded machine.
  it("the next slot is strictly after from and is the oracle's first (none skipped)", { timeout: 120_000 }, () => {
    let compared = 0;
    fc.assert(
      fc.property(expression.filter(usable), fc.constantFrom(...ZONES), instant, (expr, zone, from) => {
        const got = nextRun(cronSpec(expr, zone), from);
        const want = oracleSlots(readCron(expr), zoneOf(zone), from, 1, from + 400 * DAY)[0];
        if (want === undefined) return; // sparse expression: nothing within the oracle's window
        compared++;
        expect(got!.at).toBeGreaterThan(from);
        expect(new Date(got!.at).toISOString()).toBe(new Date(want).toISOString());
      }),
      { numRuns: 250, seed: 20_2026 },
    );
    expect(compared).toBeGreaterThan(200);
  });

  it("with excluded dates: never an excluded date, and the first slot that is not excluded", { timeout: 120_000 }, () => {
    fc.assert(
      fc.property(
        fc.constantFrom("0 2 * * *", "30 2 * * *", "*/30 * * * *", "every:6h", "0 0 * * 1-5", "0 9 L * *", "15 1 * * 0"),
        fc.constantFrom(...ZONES),
        instant,
        fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 12 }),
        (expr, zone, from, offsets) => {
          const dates = [...new Set(offsets.map((o) => new Date(from + o * DAY).toISOString().slice(0, 10)))].sort();
          const spec = cronSpec(expr, zone, { dates, calendars: [] });
          const got = nextRun(spec, from);
          const oz = zoneOf(zone);
          const want = oracleSlots(readCron(expr), oz, from, 1, from + 120 * DAY, new Set(dates))[0];
          expect(got?.at ?? null).toBe(want ?? null);
          if (got) {
            expect(got.at).toBeGreaterThan(from);
            expect(dates).not.toContain(new Date(oz.wall(got.at)).toISOString().slice(0, 10));
            expect(nextSlot(spec, got.at - 1)!.excluded).toBeNull();
          }
        },
      ),
      { numRuns: 150, seed: 25_12 },
    );
  });

  it("slotsBetween lists the oracle's slots in [from, to), excluded ones marked with their date", { timeout: 120_000 }, () => {
    fc.assert(
      fc.property(fc.constantFrom("*/30 * * * *", "0 2 * * *", "every:4h", "30 1 * * *"), fc.constantFrom(...ZONES), instant, (expr, zone, from) => {
        const to = from + 5 * DAY;
        const excludedDate = new Date(from + 2 * DAY).toISOString().slice(0, 10);
        const spec = cronSpec(expr, zone, { dates: [excludedDate], calendars: [] });
        const { slots, truncated } = slotsBetween(spec, from, to);
        expect(truncated).toBe(false);
        const oz = zoneOf(zone);
        const want = oracleSlots(readCron(expr), oz, from - 1, 10_000, to);
        expect(slots.map((s) => s.at)).toEqual(want);
        for (const s of slots) {
          const date = new Date(oz.wall(s.at)).toISOString().slice(0, 10);
          expect(s.excluded).toBe(date === excludedDate ? `${date} in exclude.dates` : null);
        }
      }),
      { numRuns: 60, seed: 7 },
    );
  });
});

import { describe, expect, it } from "vitest";
import { OracleZone, oracleSlots, readCron } from "../../test/helpers/cronOracle.js";
import { nextRuns } from "./nextRun.js";
import { cronSpec } from "./testkit.js";

/**
 * CONTRACT §7.1 against the brute-force oracle (test/helpers/cronOracle.ts)
 * at every DST change of 2026-2028 in the zones the issue names. For each
 * change, expressions aimed at the walls of its gap or fold (fixed-time and
 * periodic, with and without seconds, day fields included), from instants
 * before, at and after it; the next four slots must be the oracle's.
 * test/e2e/cron-next.test.ts runs a sample of the same through the built
 * `svc next --json`.
 */

export const DST_ZONES = [
  "America/New_York",
  "Europe/Berlin",
  "Australia/Sydney",
  "Australia/Lord_Howe", // 30-minute shift
  "America/Santiago", // changes at midnight
  "Pacific/Chatham", // +12:45 / +13:45
  "Africa/Casablanca", // DST suspended for Ramadan: four changes a year
] as const;

const FROM = Date.UTC(2026, 0, 1);
const TO = Date.UTC(2029, 0, 1);
const MIN = 60_000;
const HOUR = 3_600_000;

/** hh:mm of a wall value. */
function hm(wall: number): [number, number] {
  const d = new Date(wall);
  return [d.getUTCHours(), d.getUTCMinutes()];
}

/** Expressions aimed at one DST change: its gap (or fold) walls, and periodic ones across it. */
export function expressionsFor(at: number, before: number, after: number): string[] {
  const lo = Math.min(at + before, at + after);
  const hi = Math.max(at + before, at + after);
  const mid = lo + Math.floor((hi - lo) / 2 / MIN) * MIN;
  const [h0, m0] = hm(lo);
  const [hm1, mm1] = hm(mid);
  const [hl, ml] = hm(hi - MIN);
  const [hb, mb] = hm(lo - MIN);
  const date = new Date(lo);
  const dow = date.getUTCDay();
  const month = date.getUTCMonth() + 1;
  return [
    `${m0} ${h0} * * *`, // the first wall of the gap/fold
    `${mm1} ${hm1} * * *`, // its middle
    `${ml} ${hl} * * *`, // its last minute
    `${mb} ${hb} * * *`, // the minute before it
    `0,30 ${h0},${hm1} * * *`, // fixed, several walls at once
    `*/20 ${mm1} ${hm1} * * *`, // fixed with seconds: several walls in one minute
    `${mm1} ${hm1} * ${month} ${dow}`, // day fields: dow restricted, dom not (AND)
    `${mm1} ${hm1} 1 ${month} ${dow}`, // both restricted: OR
    "*/15 * * * *", // periodic
    `${m0} * * * *`, // periodic at the gap's minute
    `*/10 ${h0} * * *`, // periodic, minute `*/10` in one hour
    "0 */2 * * *",
    "every:30m",
    "every:20s",
  ];
}

describe("cron: and every: against the brute-force oracle at every DST change 2026-2028", () => {
  for (const zoneName of DST_ZONES) {
    // ~1.5-3 s alone on 2 cores; the timeout leaves room for a machine loaded tenfold.
    it(`${zoneName}: the next 4 slots from before, at and after each change`, { timeout: 120_000 }, () => {
      const zone = new OracleZone(zoneName, FROM - 2 * 86_400_000, TO + 800 * 86_400_000);
      const changes = zone.transitions().filter(([at]) => at >= FROM && at < TO);
      expect(changes.length).toBeGreaterThanOrEqual(zoneName === "Africa/Casablanca" ? 6 : 6);
      let cases = 0;
      const mismatches: string[] = [];
      for (const [at, before, after] of changes) {
        for (const expr of expressionsFor(at, before, after)) {
          const c = readCron(expr.startsWith("every:") ? expr : expr);
          const spec = cronSpec(expr, zoneName);
          for (const from of [at - 3 * HOUR - 17_000, at - MIN, at, at + 30 * MIN + 1]) {
            const want = oracleSlots(c, zone, from, 4).map((t) => new Date(t).toISOString());
            const got = nextRuns(spec, from, 4).map((s) => s.utc);
            cases++;
            if (JSON.stringify(got) !== JSON.stringify(want)) {
              mismatches.push(`${expr} from ${new Date(from).toISOString()}: got ${got.join(",")} want ${want.join(",")}`);
            }
          }
        }
      }
      expect(mismatches.slice(0, 5)).toEqual([]);
      expect(cases).toBeGreaterThan(300);
    });
  }

  it("the contract's own examples (America/New_York)", () => {
    const ny = "America/New_York";
    const utc = (expr: string, from: string, n: number) => nextRuns(cronSpec(expr, ny), Date.parse(from), n).map((s) => s.utc);
    expect(utc("30 2 * * *", "2027-03-14T00:00:00Z", 1)).toEqual(["2027-03-14T07:00:00.000Z"]);
    expect(utc("30 1 * * *", "2026-11-01T00:00:00Z", 2)).toEqual(["2026-11-01T05:30:00.000Z", "2026-11-02T06:30:00.000Z"]);
    expect(utc("*/30 * * * *", "2026-11-01T04:45:00Z", 5)).toEqual([
      "2026-11-01T05:00:00.000Z",
      "2026-11-01T05:30:00.000Z",
      "2026-11-01T06:00:00.000Z",
      "2026-11-01T06:30:00.000Z",
      "2026-11-01T07:00:00.000Z",
    ]);
    expect(utc("*/30 * * * *", "2027-03-14T06:15:00Z", 2)).toEqual(["2027-03-14T06:30:00.000Z", "2027-03-14T07:00:00.000Z"]);
  });
});

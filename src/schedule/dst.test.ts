import { DateTime } from "luxon";
import { describe, expect, it } from "vitest";
import { nextRun, nextRuns } from "./nextRun.js";
import { at, cronSpec, spec } from "./testkit.js";

/**
 * DST rules of CONTRACT §3 on the 2027 transition days:
 * - America/New_York: spring forward 2027-03-14 02:00 EST -> 03:00 EDT (07:00 UTC),
 *   fall back 2027-11-07 02:00 EDT -> 01:00 EST (06:00 UTC).
 * - Europe/Berlin: 2027-03-28 02:00 -> 03:00 (01:00 UTC), 2027-10-31 03:00 -> 02:00 (01:00 UTC).
 *   Berlin's abbreviations are CET / CEST (en-GB's names: en-US has no letters for it).
 * - Australia/Lord_Howe (30-minute DST): 2027-10-03 02:00 -> 02:30 (15:30 UTC on 10-02),
 *   2027-04-04 02:00 -> 01:30 (15:00 UTC on 04-03).
 */

function runs(s: ReturnType<typeof spec>, from: string, n: number): Array<[string, string, string | null]> {
  return nextRuns(s, at(from), n).map((r) => [r.utc, r.local, r.note]);
}

describe("why the rules are ours: luxon's defaults differ", () => {
  it("luxon moves 02:30 to 03:30 and picks the second 01:30; svc runs at 03:00 and at the first", () => {
    const zone = "America/New_York";
    expect(DateTime.fromObject({ year: 2027, month: 3, day: 14, hour: 2, minute: 30 }, { zone }).toISO()).toBe(
      "2027-03-14T03:30:00.000-04:00",
    );
    expect(nextRun(spec("daily", zone, "0230"), at("2027-03-13T12:00:00Z"))?.local).toBe("2027-03-14T03:00:00-04:00 EDT");
    expect(DateTime.fromObject({ year: 2027, month: 11, day: 7, hour: 1, minute: 30 }, { zone }).toISO()).toBe(
      "2027-11-07T01:30:00.000-05:00",
    );
    expect(nextRun(spec("daily", zone, "0130"), at("2027-11-06T12:00:00Z"))?.local).toBe("2027-11-07T01:30:00-04:00 EDT");
  });
});

describe("America/New_York", () => {
  const zone = "America/New_York";

  it("spring forward: a time in the gap runs at 03:00 EDT with a note, then normally", () => {
    expect(runs(spec("daily", zone, "0230"), "2027-03-13T12:00:00Z", 2)).toEqual([
      ["2027-03-14T07:00:00.000Z", "2027-03-14T03:00:00-04:00 EDT", "02:30 does not exist (DST gap): runs at 03:00"],
      ["2027-03-15T06:30:00.000Z", "2027-03-15T02:30:00-04:00 EDT", null],
    ]);
    // 02:00 itself is in the gap; 01:59 and 03:00 are not.
    expect(nextRun(spec("daily", zone, "0200"), at("2027-03-13T12:00:00Z"))?.note).toBe("02:00 does not exist (DST gap): runs at 03:00");
    expect(runs(spec("daily", zone, "0159"), "2027-03-13T12:00:00Z", 1)).toEqual([
      ["2027-03-14T06:59:00.000Z", "2027-03-14T01:59:00-05:00 EST", null],
    ]);
    expect(runs(spec("daily", zone, "0300"), "2027-03-13T12:00:00Z", 1)).toEqual([
      ["2027-03-14T07:00:00.000Z", "2027-03-14T03:00:00-04:00 EDT", null],
    ]);
  });

  it("spring forward: afterMs exactly on the gap slot gives the next day", () => {
    expect(nextRun(spec("daily", zone, "0230"), at("2027-03-14T07:00:00Z"))?.utc).toBe("2027-03-15T06:30:00.000Z");
  });

  it("spring forward applies to weekly, monthly, weekdays and weekends alike", () => {
    const note = "02:30 does not exist (DST gap): runs at 03:00";
    for (const s of [
      spec("weekly", zone, "0230", { weekday: "sun" }),
      spec("monthly", zone, "0230", { dayOfMonth: 14 }),
      spec("weekends", zone, "0230"),
    ]) {
      expect(runs(s, "2027-03-13T12:00:00Z", 1), s.frequency).toEqual([["2027-03-14T07:00:00.000Z", "2027-03-14T03:00:00-04:00 EDT", note]]);
    }
    // Sunday is not a weekday: Monday runs at 02:30 EDT with no note.
    expect(runs(spec("weekdays", zone, "0230"), "2027-03-13T12:00:00Z", 1)).toEqual([
      ["2027-03-15T06:30:00.000Z", "2027-03-15T02:30:00-04:00 EDT", null],
    ]);
  });

  it("fall back: an ambiguous time runs once, at its first occurrence (EDT)", () => {
    const note = "01:30 occurs twice (DST overlap): runs once, at the first (EDT)";
    expect(runs(spec("daily", zone, "0130"), "2027-11-06T12:00:00Z", 2)).toEqual([
      ["2027-11-07T05:30:00.000Z", "2027-11-07T01:30:00-04:00 EDT", note],
      ["2027-11-08T06:30:00.000Z", "2027-11-08T01:30:00-05:00 EST", null],
    ]);
    // Between the two occurrences, and exactly on the second one: never 01:30 EST that day.
    for (const from of ["2027-11-07T05:30:00Z", "2027-11-07T06:00:00Z", "2027-11-07T06:29:59.999Z", "2027-11-07T06:30:00Z"]) {
      expect(nextRun(spec("daily", zone, "0130"), at(from))?.utc, from).toBe("2027-11-08T06:30:00.000Z");
    }
  });

  it("fall back: the edges of the repeated hour", () => {
    expect(nextRun(spec("daily", zone, "0100"), at("2027-11-06T12:00:00Z"))).toMatchObject({
      utc: "2027-11-07T05:00:00.000Z",
      note: "01:00 occurs twice (DST overlap): runs once, at the first (EDT)",
    });
    expect(nextRun(spec("daily", zone, "0159"), at("2027-11-06T12:00:00Z"))?.utc).toBe("2027-11-07T05:59:00.000Z");
    // 02:00 happens once (EST), 00:59 once (EDT).
    expect(runs(spec("daily", zone, "0200"), "2027-11-06T12:00:00Z", 1)).toEqual([
      ["2027-11-07T07:00:00.000Z", "2027-11-07T02:00:00-05:00 EST", null],
    ]);
    expect(runs(spec("daily", zone, "0059"), "2027-11-06T12:00:00Z", 1)).toEqual([
      ["2027-11-07T04:59:00.000Z", "2027-11-07T00:59:00-04:00 EDT", null],
    ]);
  });

  it("hourly on the spring-forward day: no 02:00 run, noted on the 03:00 run", () => {
    expect(runs(spec("hourly", zone), "2027-03-14T05:30:00Z", 3)).toEqual([
      ["2027-03-14T06:00:00.000Z", "2027-03-14T01:00:00-05:00 EST", null],
      ["2027-03-14T07:00:00.000Z", "2027-03-14T03:00:00-04:00 EDT", "02:00 does not exist (DST gap): no run for that hour"],
      ["2027-03-14T08:00:00.000Z", "2027-03-14T04:00:00-04:00 EDT", null],
    ]);
  });

  it("a periodic cron expression: the gap's note names the gap's date, on the first slot after it, even days later", () => {
    const note = "2027-03-14 02:00-03:00 does not exist (DST gap): no runs in it";
    expect(runs(cronSpec("*/30 * * * *", zone), "2027-03-14T06:15:00Z", 2)).toEqual([
      ["2027-03-14T06:30:00.000Z", "2027-03-14T01:30:00-05:00 EST", null],
      ["2027-03-14T07:00:00.000Z", "2027-03-14T03:00:00-04:00 EDT", note],
    ]);
    // 02:xx from the 8th to the 14th: the 14th's are swallowed; the note goes on the 15th's 02:00, which runs.
    expect(runs(cronSpec("*/30 2 8-14,15 3 *", zone), "2027-03-13T08:00:00Z", 2)).toEqual([
      ["2027-03-15T06:00:00.000Z", "2027-03-15T02:00:00-04:00 EDT", note],
      ["2027-03-15T06:30:00.000Z", "2027-03-15T02:30:00-04:00 EDT", null],
    ]);
  });

  it("hourly on the fall-back day: both 01:00s run", () => {
    const note = "01:00 occurs twice (DST overlap): hourly runs at both (EDT and EST)";
    expect(runs(spec("hourly", zone), "2027-11-07T04:30:00Z", 4)).toEqual([
      ["2027-11-07T05:00:00.000Z", "2027-11-07T01:00:00-04:00 EDT", note],
      ["2027-11-07T06:00:00.000Z", "2027-11-07T01:00:00-05:00 EST", note],
      ["2027-11-07T07:00:00.000Z", "2027-11-07T02:00:00-05:00 EST", null],
      ["2027-11-07T08:00:00.000Z", "2027-11-07T03:00:00-05:00 EST", null],
    ]);
    // afterMs exactly on the first 01:00: the second one comes next.
    expect(nextRun(spec("hourly", zone), at("2027-11-07T05:00:00Z"))?.utc).toBe("2027-11-07T06:00:00.000Z");
  });
});

describe("Europe/Berlin", () => {
  const zone = "Europe/Berlin";

  it("spring forward: 02:30 runs at 03:00 (CEST)", () => {
    expect(runs(spec("daily", zone, "0230"), "2027-03-27T12:00:00Z", 2)).toEqual([
      ["2027-03-28T01:00:00.000Z", "2027-03-28T03:00:00+02:00 CEST", "02:30 does not exist (DST gap): runs at 03:00"],
      ["2027-03-29T00:30:00.000Z", "2027-03-29T02:30:00+02:00 CEST", null],
    ]);
  });

  it("fall back: 02:30 runs once, at the first (CEST)", () => {
    expect(runs(spec("daily", zone, "0230"), "2027-10-30T12:00:00Z", 2)).toEqual([
      ["2027-10-31T00:30:00.000Z", "2027-10-31T02:30:00+02:00 CEST", "02:30 occurs twice (DST overlap): runs once, at the first (CEST)"],
      ["2027-11-01T01:30:00.000Z", "2027-11-01T02:30:00+01:00 CET", null],
    ]);
  });

  it("hourly: 02:00 twice in October, never in March", () => {
    expect(nextRuns(spec("hourly", zone), at("2027-10-30T23:30:00Z"), 3).map((r) => r.local)).toEqual([
      "2027-10-31T02:00:00+02:00 CEST",
      "2027-10-31T02:00:00+01:00 CET",
      "2027-10-31T03:00:00+01:00 CET",
    ]);
    expect(nextRuns(spec("hourly", zone), at("2027-03-27T23:30:00Z"), 3).map((r) => r.local)).toEqual([
      "2027-03-28T01:00:00+01:00 CET",
      "2027-03-28T03:00:00+02:00 CEST",
      "2027-03-28T04:00:00+02:00 CEST",
    ]);
  });
});

describe("Australia/Lord_Howe (30-minute DST)", () => {
  const zone = "Australia/Lord_Howe";

  it("spring forward 02:00 -> 02:30: a time in the gap runs at 02:30", () => {
    expect(runs(spec("daily", zone, "0215"), "2027-10-02T00:00:00Z", 2)).toEqual([
      ["2027-10-02T15:30:00.000Z", "2027-10-03T02:30:00+11:00 LHDT", "02:15 does not exist (DST gap): runs at 02:30"],
      ["2027-10-03T15:15:00.000Z", "2027-10-04T02:15:00+11:00 LHDT", null],
    ]);
    expect(runs(spec("daily", zone, "0230"), "2027-10-02T00:00:00Z", 1)).toEqual([
      ["2027-10-02T15:30:00.000Z", "2027-10-03T02:30:00+11:00 LHDT", null],
    ]);
    expect(nextRun(spec("daily", zone, "0200"), at("2027-10-02T00:00:00Z"))?.note).toBe("02:00 does not exist (DST gap): runs at 02:30");
  });

  it("fall back 02:00 -> 01:30: 01:30-01:59 run once, at the first (+11)", () => {
    expect(runs(spec("daily", zone, "0145"), "2027-04-03T00:00:00Z", 2)).toEqual([
      ["2027-04-03T14:45:00.000Z", "2027-04-04T01:45:00+11:00 LHDT", "01:45 occurs twice (DST overlap): runs once, at the first (LHDT)"],
      ["2027-04-04T15:15:00.000Z", "2027-04-05T01:45:00+10:30 LHST", null],
    ]);
    // 01:29 and 02:00 occur once.
    expect(nextRun(spec("daily", zone, "0129"), at("2027-04-03T00:00:00Z"))).toMatchObject({ utc: "2027-04-03T14:29:00.000Z", note: null });
    expect(nextRun(spec("daily", zone, "0200"), at("2027-04-03T00:00:00Z"))).toMatchObject({ utc: "2027-04-03T15:30:00.000Z", note: null });
  });

  it("hourly, spring forward: the gap swallows 02:00, so that hour has no run", () => {
    expect(runs(spec("hourly", zone), "2027-10-02T13:00:00Z", 4)).toEqual([
      ["2027-10-02T13:30:00.000Z", "2027-10-03T00:00:00+10:30 LHST", null],
      ["2027-10-02T14:30:00.000Z", "2027-10-03T01:00:00+10:30 LHST", null],
      ["2027-10-02T16:00:00.000Z", "2027-10-03T03:00:00+11:00 LHDT", "02:00 does not exist (DST gap): no run for that hour"],
      ["2027-10-02T17:00:00.000Z", "2027-10-03T04:00:00+11:00 LHDT", null],
    ]);
  });

  it("hourly, fall back: the repeated half hour holds no :00, so 90 minutes pass between two runs", () => {
    expect(runs(spec("hourly", zone), "2027-04-03T13:00:00Z", 3)).toEqual([
      ["2027-04-03T14:00:00.000Z", "2027-04-04T01:00:00+11:00 LHDT", null],
      ["2027-04-03T15:30:00.000Z", "2027-04-04T02:00:00+10:30 LHST", null],
      ["2027-04-03T16:30:00.000Z", "2027-04-04T03:00:00+10:30 LHST", null],
    ]);
  });
});

describe("zones without DST", () => {
  it("Asia/Kolkata and UTC: a year of hourly runs, one hour apart, never a note", () => {
    for (const zone of ["Asia/Kolkata", "UTC"]) {
      const year = nextRuns(spec("hourly", zone), at("2027-01-01T00:00:00Z"), 8760);
      expect(year[0]!.utc.slice(14), zone).toBe(zone === "UTC" ? "00:00.000Z" : "30:00.000Z");
      const gaps = new Set(year.slice(1).map((r, i) => r.at - year[i]!.at));
      expect([...gaps]).toEqual([3_600_000]);
      expect(year.every((r) => r.note === null)).toBe(true);
    }
  });

  it("Asia/Kolkata: a daily job keeps 02:30 local (21:00 UTC) on New York's and Berlin's DST days", () => {
    for (const from of ["2027-03-13T12:00:00Z", "2027-03-27T12:00:00Z", "2027-10-30T12:00:00Z", "2027-11-06T12:00:00Z"]) {
      const slot = nextRun(spec("daily", "Asia/Kolkata", "0230"), at(from))!;
      expect(slot.utc.slice(11)).toBe("21:00:00.000Z");
      expect(slot.note).toBeNull();
    }
  });
});

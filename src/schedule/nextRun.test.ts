import { describe, expect, it } from "vitest";
import type { Weekday } from "../config/types.js";
import { describeSlot, isValidZone, nextRun, nextRuns, systemZone } from "./nextRun.js";
import { at, cronSpec, spec } from "./testkit.js";

/** The UTC instants of the next `n` runs, as ISO strings. */
function utcRuns(s: ReturnType<typeof spec>, from: string, n: number): string[] {
  return nextRuns(s, at(from), n).map((r) => r.utc);
}

describe("calendar frequencies (no DST involved)", () => {
  it("daily runs at the time in the job's zone, strictly after afterMs", () => {
    const daily = spec("daily", "Asia/Kolkata", "0900"); // 03:30 UTC
    expect(nextRun(daily, at("2027-05-01T00:00:00Z"))?.utc).toBe("2027-05-01T03:30:00.000Z");
    expect(nextRun(daily, at("2027-05-01T03:29:59.999Z"))?.utc).toBe("2027-05-01T03:30:00.000Z");
    // afterMs exactly on a slot: the next one.
    expect(nextRun(daily, at("2027-05-01T03:30:00.000Z"))?.utc).toBe("2027-05-02T03:30:00.000Z");
    expect(nextRun(daily, at("2027-05-01T03:30:00.001Z"))?.utc).toBe("2027-05-02T03:30:00.000Z");
  });

  it("daily at 00:00 and 23:59 keeps to the local date, not the UTC date", () => {
    // 00:00 IST is 18:30 UTC the day before.
    expect(utcRuns(spec("daily", "Asia/Kolkata", "0000"), "2027-05-01T12:00:00Z", 2)).toEqual([
      "2027-05-01T18:30:00.000Z",
      "2027-05-02T18:30:00.000Z",
    ]);
    expect(nextRun(spec("daily", "America/Los_Angeles", "2359"), at("2027-05-02T06:58:00Z"))?.local).toBe(
      "2027-05-01T23:59:00-07:00 PDT",
    );
  });

  it("crosses year boundaries", () => {
    expect(utcRuns(spec("daily", "UTC", "2330"), "2027-12-31T23:45:00Z", 2)).toEqual([
      "2028-01-01T23:30:00.000Z",
      "2028-01-02T23:30:00.000Z",
    ]);
    expect(nextRun(spec("hourly", "UTC"), at("2027-12-31T23:59:59.999Z"))?.utc).toBe("2028-01-01T00:00:00.000Z");
    expect(nextRun(spec("monthly", "UTC", "0800", { dayOfMonth: 15 }), at("2027-12-20T00:00:00Z"))?.utc).toBe(
      "2028-01-15T08:00:00.000Z",
    );
    // 2027-12-31 is a Friday: the next Monday is in 2028.
    expect(nextRun(spec("weekly", "UTC", "0800", { weekday: "mon" }), at("2027-12-31T12:00:00Z"))?.utc).toBe(
      "2028-01-03T08:00:00.000Z",
    );
    // New Year in New York happens at 05:00 UTC: 23:30 on Dec 31 is 04:30 UTC on Jan 1.
    expect(nextRun(spec("daily", "America/New_York", "2330"), at("2027-12-31T12:00:00Z"))?.local).toBe(
      "2027-12-31T23:30:00-05:00 EST",
    );
    expect(nextRun(spec("daily", "America/New_York", "0015"), at("2028-01-01T04:00:00Z"))?.utc).toBe(
      "2028-01-01T05:15:00.000Z",
    );
    // Kiritimati (UTC+14) enters the new year first.
    expect(nextRun(spec("monthly", "Pacific/Kiritimati", "0000", { dayOfMonth: 1 }), at("2027-12-15T00:00:00Z"))?.utc).toBe(
      "2027-12-31T10:00:00.000Z",
    );
  });

  it("weekly runs on each weekday", () => {
    // From Wednesday 2027-03-10 12:00 UTC, time 09:00 UTC (already past that day).
    const expected: Record<Weekday, string> = {
      mon: "2027-03-15",
      tue: "2027-03-16",
      wed: "2027-03-17",
      thu: "2027-03-11",
      fri: "2027-03-12",
      sat: "2027-03-13",
      sun: "2027-03-14",
    };
    for (const [weekday, date] of Object.entries(expected) as Array<[Weekday, string]>) {
      const runs = utcRuns(spec("weekly", "UTC", "0900", { weekday }), "2027-03-10T12:00:00Z", 2);
      expect(runs, weekday).toEqual([`${date}T09:00:00.000Z`, new Date(at(`${date}T09:00:00Z`) + 7 * 86_400_000).toISOString()]);
    }
    // Later that Wednesday: same day.
    expect(nextRun(spec("weekly", "UTC", "1300", { weekday: "wed" }), at("2027-03-10T12:00:00Z"))?.utc).toBe(
      "2027-03-10T13:00:00.000Z",
    );
  });

  it("weekly without a weekday runs on Monday (the loader's default)", () => {
    const s = { ...spec("weekly", "UTC", "0900"), weekday: null };
    expect(nextRun(s, at("2027-03-10T12:00:00Z"))?.utc).toBe("2027-03-15T09:00:00.000Z");
  });

  it("weekdays skip the weekend, weekends skip the week", () => {
    // Friday 2027-11-05, after the time.
    expect(utcRuns(spec("weekdays", "UTC", "0700"), "2027-11-05T08:00:00Z", 6)).toEqual([
      "2027-11-08T07:00:00.000Z", // Mon
      "2027-11-09T07:00:00.000Z",
      "2027-11-10T07:00:00.000Z",
      "2027-11-11T07:00:00.000Z",
      "2027-11-12T07:00:00.000Z", // Fri
      "2027-11-15T07:00:00.000Z", // Mon
    ]);
    expect(utcRuns(spec("weekends", "UTC", "0700"), "2027-11-05T08:00:00Z", 4)).toEqual([
      "2027-11-06T07:00:00.000Z", // Sat
      "2027-11-07T07:00:00.000Z", // Sun
      "2027-11-13T07:00:00.000Z",
      "2027-11-14T07:00:00.000Z",
    ]);
    // The local day decides: 2027-11-06 20:00 UTC (a Saturday) is already Sunday 01:30 in
    // Kolkata, past Sunday's 01:00 run, so the weekend job waits for next Saturday.
    expect(nextRun(spec("weekends", "Asia/Kolkata", "0100"), at("2027-11-06T20:00:00Z"))?.local).toBe(
      "2027-11-13T01:00:00+05:30 IST",
    );
    expect(nextRun(spec("weekdays", "Asia/Kolkata", "0100"), at("2027-11-06T20:00:00Z"))?.local).toBe(
      "2027-11-08T01:00:00+05:30 IST",
    );
  });

  it("monthly runs on day_of_month, or the last day of a shorter month", () => {
    expect(utcRuns(spec("monthly", "UTC", "0600", { dayOfMonth: 31 }), "2027-01-01T00:00:00Z", 12).map((u) => u.slice(0, 10))).toEqual([
      "2027-01-31",
      "2027-02-28",
      "2027-03-31",
      "2027-04-30",
      "2027-05-31",
      "2027-06-30",
      "2027-07-31",
      "2027-08-31",
      "2027-09-30",
      "2027-10-31",
      "2027-11-30",
      "2027-12-31",
    ]);
    // After the short month's stand-in day, the next run is the real day 31 of the next month.
    expect(nextRun(spec("monthly", "UTC", "0600", { dayOfMonth: 31 }), at("2027-04-30T06:00:00Z"))?.utc).toBe(
      "2027-05-31T06:00:00.000Z",
    );
    // Day 1 when unset.
    const s = { ...spec("monthly", "UTC", "0600"), dayOfMonth: null };
    expect(nextRun(s, at("2027-04-30T06:00:00Z"))?.utc).toBe("2027-05-01T06:00:00.000Z");
  });

  it("monthly 29/30/31 in leap and non-leap Februaries", () => {
    const feb = (dayOfMonth: number, year: number) =>
      nextRun(spec("monthly", "UTC", "1200", { dayOfMonth }), at(`${year}-02-01T00:00:00Z`))?.utc.slice(0, 10);
    expect([feb(28, 2027), feb(29, 2027), feb(30, 2027), feb(31, 2027)]).toEqual(["2027-02-28", "2027-02-28", "2027-02-28", "2027-02-28"]);
    expect([feb(28, 2028), feb(29, 2028), feb(30, 2028), feb(31, 2028)]).toEqual(["2028-02-28", "2028-02-29", "2028-02-29", "2028-02-29"]);
    // Century rules: 2000 was a leap year, 2100 is not.
    expect(feb(29, 2000)).toBe("2000-02-29");
    expect(feb(31, 2100)).toBe("2100-02-28");
  });

  it("leap days: daily passes through Feb 29, weekly lands on it", () => {
    expect(utcRuns(spec("daily", "Europe/Berlin", "1200"), "2028-02-28T12:00:00Z", 2).map((u) => u.slice(0, 10))).toEqual([
      "2028-02-29",
      "2028-03-01",
    ]);
    expect(utcRuns(spec("daily", "Europe/Berlin", "1200"), "2027-02-28T12:00:00Z", 1)).toEqual(["2027-03-01T11:00:00.000Z"]);
    expect(nextRun(spec("weekly", "UTC", "0000", { weekday: "tue" }), at("2028-02-23T00:00:00Z"))?.utc).toBe(
      "2028-02-29T00:00:00.000Z",
    );
    // A monthly day-29 job after Feb 29 2028 next runs on March 29.
    expect(nextRun(spec("monthly", "UTC", "0000", { dayOfMonth: 29 }), at("2028-02-29T00:00:00Z"))?.utc).toBe(
      "2028-03-29T00:00:00.000Z",
    );
  });

  it("hourly runs at :00 local, which is :30 UTC in a half-hour zone and :15 UTC in Kathmandu", () => {
    expect(utcRuns(spec("hourly", "Asia/Kolkata"), "2027-06-01T10:00:00Z", 3)).toEqual([
      "2027-06-01T10:30:00.000Z",
      "2027-06-01T11:30:00.000Z",
      "2027-06-01T12:30:00.000Z",
    ]);
    expect(nextRun(spec("hourly", "Asia/Kolkata"), at("2027-06-01T10:30:00Z"))?.utc).toBe("2027-06-01T11:30:00.000Z");
    expect(nextRun(spec("hourly", "Asia/Kathmandu"), at("2027-06-01T10:00:00Z"))?.local).toBe(
      "2027-06-01T16:00:00+05:45 GMT+5:45",
    );
    expect(nextRun(spec("hourly", "UTC"), at("2027-06-01T10:00:00Z"))?.utc).toBe("2027-06-01T11:00:00.000Z");
  });

  it("manual and after: never schedule", () => {
    for (const frequency of ["manual", "after"] as const) {
      expect(nextRun(spec(frequency, "UTC"), at("2027-06-01T10:00:00Z"))).toBeNull();
      expect(nextRuns(spec(frequency, "UTC"), at("2027-06-01T10:00:00Z"), 5)).toEqual([]);
    }
  });

  it("nextRuns returns count slots, each the nextRun after the one before", () => {
    const s = spec("weekdays", "Europe/Berlin", "0815");
    const runs = nextRuns(s, at("2027-03-20T00:00:00Z"), 20);
    expect(runs).toHaveLength(20);
    for (let i = 1; i < runs.length; i++) {
      expect(runs[i]!.at).toBeGreaterThan(runs[i - 1]!.at);
      expect(nextRun(s, runs[i - 1]!.at)).toEqual(runs[i]);
    }
    expect(nextRuns(s, at("2027-03-20T00:00:00Z"), 0)).toEqual([]);
  });

  it("fills every field of the slot", () => {
    expect(nextRun(spec("daily", "America/New_York", "0900"), at("2027-06-01T00:00:00Z"))).toEqual({
      at: at("2027-06-01T13:00:00Z"),
      utc: "2027-06-01T13:00:00.000Z",
      local: "2027-06-01T09:00:00-04:00 EDT",
      zoneAbbr: "EDT",
      note: null,
      excluded: null,
    });
    expect(nextRun(spec("daily", "UTC", "0900"), at("2027-06-01T00:00:00Z"))?.local).toBe("2027-06-01T09:00:00+00:00 UTC");
  });

  it("describeSlot gives one log line: UTC, local clock and zone, then any note", () => {
    const slot = nextRun(spec("daily", "America/New_York", "0230"), at("2027-03-13T12:00:00Z"))!;
    expect(describeSlot(slot)).toBe("2027-03-14T07:00:00.000Z (03:00 EDT) - 02:30 does not exist (DST gap): runs at 03:00");
    const plain = nextRun(spec("daily", "America/New_York", "0900"), at("2027-06-01T00:00:00Z"))!;
    expect(describeSlot(plain)).toBe("2027-06-01T13:00:00.000Z (09:00 EDT)");
    // The local date is shown when it differs from the UTC date.
    const kolkata = nextRun(spec("daily", "Asia/Kolkata", "0200"), at("2027-06-01T00:00:00Z"))!;
    expect(describeSlot(kolkata)).toBe("2027-06-01T20:30:00.000Z (2027-06-02 02:00 IST)");
  });

  it("rejects an unknown zone and a calendar frequency without a time, with a clear message", () => {
    expect(() => nextRun(spec("daily", "Mars/Olympus_Mons", "0900"), 0)).toThrow(/unknown time zone "Mars\/Olympus_Mons"/);
    expect(() => nextRun(spec("daily", "UTC"), 0)).toThrow(/"daily" needs a time/);
  });

  it("isValidZone and systemZone", () => {
    expect(isValidZone("America/New_York")).toBe(true);
    expect(isValidZone("UTC")).toBe(true);
    expect(isValidZone("Australia/Lord_Howe")).toBe(true);
    expect(isValidZone("Mars/Olympus_Mons")).toBe(false);
    expect(isValidZone("")).toBe(false);
    expect(isValidZone("+05:00")).toBe(false);
    expect(isValidZone(systemZone())).toBe(true);
  });
});

describe("cron slots decades apart", () => {
  /** The February 29ths on a weekday (0 Sunday) after `from`'s year, by walking the years: an oracle of its own. */
  const feb29On = (weekday: number, fromYear: number, n: number): string[] => {
    const out: string[] = [];
    for (let y = fromYear; out.length < n; y++) {
      const d = new Date(Date.UTC(y, 1, 29));
      if (d.getUTCMonth() === 1 && d.getUTCDay() === weekday) out.push(d.toISOString());
    }
    return out;
  };

  it("finds a February 29 on a Monday 40 years on, across the leap year 2100 skips (fixed time and periodic)", () => {
    const [first, second] = feb29On(1, 2073, 2);
    expect([first, second]).toEqual(["2112-02-29T00:00:00.000Z", "2140-02-29T00:00:00.000Z"]);
    expect(utcRuns(cronSpec("0 0 * 2 1#5", "UTC"), "2072-02-29T12:00:00Z", 2)).toEqual([first, second]);
    // A periodic expression whose next slot is 28 years on walked day blocks one by one and gave up.
    expect(nextRun(cronSpec("0 * * 2 1#5", "UTC"), at("2044-03-01T00:00:00Z"))?.utc).toBe(feb29On(1, 2045, 1)[0]);
    // In a zone with offsets, the same slot at its local midnight.
    expect(nextRun(cronSpec("0 * * 2 1#5", "Asia/Kathmandu"), at("2072-03-01T00:00:00Z"))?.local).toMatch(/^2112-02-29T00:00:00\+05:45 /);
  });

  it("an exclude list does not cut the search at 10 years from now: the first slot decades away still runs", () => {
    const holidays = { dates: ["2026-12-25"], calendars: [] };
    expect(nextRun(cronSpec("0 0 * 2 1#5", "UTC", holidays), at("2026-01-01T00:00:00Z"))?.utc).toBe(feb29On(1, 2026, 1)[0]);
    // Excluded, the one after it (28 years later) runs.
    const first = feb29On(1, 2026, 2);
    expect(nextRun(cronSpec("0 0 * 2 1#5", "UTC", { dates: [first[0]!.slice(0, 10)], calendars: [] }), at("2026-01-01T00:00:00Z"))?.utc).toBe(first[1]);
    // Every slot excluded, for more than 10 years after the first and more than 100 slots: none.
    const newYears = Array.from({ length: 120 }, (_, i) => `${2027 + i}-01-01`);
    expect(nextRun(cronSpec("0 0 1 1 *", "UTC", { dates: newYears, calendars: [] }), at("2026-06-01T00:00:00Z"))).toBeNull();
    expect(nextRun(cronSpec("0 0 1 1 *", "UTC", { dates: newYears.slice(0, 99), calendars: [] }), at("2026-06-01T00:00:00Z"))?.utc).toBe("2126-01-01T00:00:00.000Z");
  });
});

describe("instants before 1970 (negative epoch milliseconds)", () => {
  it("are placed like any other: a daily slot, a zone's DST, a cron expression", () => {
    expect(nextRun(spec("daily", "UTC", "0230"), at("1969-12-30T00:00:00Z"))?.utc).toBe("1969-12-30T02:30:00.000Z");
    expect(nextRun(spec("daily", "America/New_York", "0230"), at("1969-07-01T00:00:00Z"))?.utc).toBe("1969-07-01T06:30:00.000Z");
    expect(utcRuns(cronSpec("0 0 * * 1", "Europe/Paris"), "1969-12-25T00:00:00Z", 2)).toEqual(["1969-12-28T23:00:00.000Z", "1970-01-04T23:00:00.000Z"]);
  });
});

/**
 * The Upcoming view's pure parts (src/web/views/upcoming/model.ts): days and
 * times in a zone, the DST change of a day, and the rows grouped by day in
 * the browser's zone or each job's, on the 2027 spring-forward weekend.
 */
import { describe, expect, it } from "vitest";
import { buildRows, clock, dayKey, dstNote, offsetMinutes, startOfDay, type UpcomingAnswer } from "../../src/web/views/upcoming/model.js";

const NY = "America/New_York";
const BERLIN = "Europe/Berlin";

describe("zones", () => {
  it("reads offsets, local dates and clocks in a zone", () => {
    expect(offsetMinutes(NY, Date.parse("2027-03-14T06:59:00Z"))).toBe(-300);
    expect(offsetMinutes(NY, Date.parse("2027-03-14T07:00:00Z"))).toBe(-240);
    expect(offsetMinutes("Asia/Kolkata", 0)).toBe(330);
    expect(dayKey(NY, Date.parse("2027-03-14T03:00:00Z"))).toBe("2027-03-13");
    expect(clock(NY, Date.parse("2027-03-14T07:00:00Z"))).toBe("03:00");
    expect(startOfDay(NY, "2027-03-14")).toBe(Date.parse("2027-03-14T05:00:00Z"));
    expect(startOfDay(BERLIN, "2027-03-28")).toBe(Date.parse("2027-03-27T23:00:00Z"));
  });

  it("notes the day a zone's clocks change, and only that day", () => {
    expect(dstNote(NY, "2027-03-14")).toBe("Clocks go forward 1 h in America/New_York (EST → EDT)");
    expect(dstNote(NY, "2027-03-13")).toBeNull();
    expect(dstNote(NY, "2027-03-15")).toBeNull();
    expect(dstNote(NY, "2026-11-01")).toBe("Clocks go back 1 h in America/New_York (EDT → EST)");
    expect(dstNote("Australia/Lord_Howe", "2026-10-04")).toMatch(/^Clocks go forward 30 min in Australia\/Lord_Howe/);
    expect(dstNote("UTC", "2027-03-14")).toBeNull();
  });
});

const ANSWER: UpcomingAnswer = {
  from: "2027-03-13T00:00:00.000Z",
  to: "2027-03-16T00:00:00.000Z",
  days: 3,
  truncated: false,
  unscheduled: 0,
  jobs: [
    { name: "nightly", timezone: NY, frequency: "daily 02:30 America/New_York", paused: false, slots: 3, more: false },
    { name: "berlin", timezone: BERLIN, frequency: "weekly sun 09:00 Europe/Berlin", paused: false, slots: 1, more: false },
  ],
  slots: [
    { job: "nightly", at: "2027-03-13T07:30:00.000Z", local: "2027-03-13T02:30:00-05:00 EST", zone_abbr: "EST", note: null, excluded: null },
    { job: "berlin", at: "2027-03-14T08:00:00.000Z", local: "2027-03-14T09:00:00+01:00 CET", zone_abbr: "CET", note: null, excluded: null },
    { job: "nightly", at: "2027-03-14T07:00:00.000Z", local: "2027-03-14T03:00:00-04:00 EDT", zone_abbr: "EDT", note: "02:30 does not exist (DST gap): runs at 03:00", excluded: null },
    { job: "nightly", at: "2027-03-15T06:30:00.000Z", local: "2027-03-15T02:30:00-04:00 EDT", zone_abbr: "EDT", note: null, excluded: "2027-03-15 in exclude.dates" },
  ],
};

const flat = (rows: ReturnType<typeof buildRows>) =>
  rows.map((r) => (r.kind === "day" ? `# ${r.label}${r.notes.length ? ` [${r.notes.join("; ")}]` : ""}` : `${r.time} ${r.slot.job}${r.also ? ` (${r.also})` : ""}${r.slot.excluded ? " x" : ""}`));

describe("buildRows", () => {
  it("groups by day in each job's zone, with the DST change on its day", () => {
    expect(flat(buildRows(ANSWER, "job", NY, true, "en-US"))).toEqual([
      "# Saturday, March 13, 2027",
      "02:30 EST nightly",
      "# Sunday, March 14, 2027 [Clocks go forward 1 h in America/New_York (EST → EDT)]",
      "03:00 EDT nightly",
      "09:00 CET berlin (04:00 EDT here)",
      "# Monday, March 15, 2027",
      "02:30 EDT nightly x",
    ]);
  });

  it("groups by day in the browser's zone, the job's own time beside it, and can leave excluded slots out", () => {
    expect(flat(buildRows(ANSWER, "browser", BERLIN, false, "en-US"))).toEqual([
      "# Saturday, March 13, 2027",
      "08:30 nightly (02:30 EST in America/New_York)",
      "# Sunday, March 14, 2027",
      "08:00 nightly (03:00 EDT in America/New_York)",
      "09:00 berlin",
    ]);
  });
});

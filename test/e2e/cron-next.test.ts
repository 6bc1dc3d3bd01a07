/**
 * `svc next --json` (the built binary) against the brute-force oracle of
 * test/helpers/cronOracle.ts, for every DST change of 2026-2028 in the
 * zones of issue 20. One project per zone holds, for each wall time that a
 * gap or fold of that zone covers, a fixed-time daily job (`M H * * *`) and
 * a periodic job over the changes' months (`*\/30 H * <months> *`); each
 * job is asked once for its next 1000 slots from 2026-01-01, which reach
 * past 2028, and every slot up to 2029-01-01 must be the oracle's. The pure
 * function is compared with the oracle case by case in
 * src/schedule/cronRun.oracle.test.ts; this is the same code through the CLI.
 * Exclusions (`--all`, reasons) are checked at the end.
 */
import { afterAll, describe, it } from "vitest";
import { OracleZone, oracleSlots, readCron } from "../helpers/cronOracle.js";
import { runSvc, tempProject, type TempProject } from "./helpers/cli.js";

const ZONES = [
  "America/New_York",
  "Europe/Berlin",
  "Australia/Sydney",
  "Australia/Lord_Howe",
  "America/Santiago",
  "Pacific/Chatham",
  "Africa/Casablanca",
];
const FROM = Date.UTC(2026, 0, 1);
const TO = Date.UTC(2029, 0, 1);
const DAY = 86_400_000;
const MIN = 60_000;

const projects: TempProject[] = [];
afterAll(() => {
  for (const p of projects) p.remove();
});

interface Job {
  name: string;
  expr: string;
}

/** The jobs aimed at this zone's changes: a fixed and a periodic one per wall hour a gap or fold covers. */
function jobsFor(zone: OracleZone): Job[] {
  const fixed = new Set<string>();
  const hours = new Set<number>();
  const months = new Set<number>();
  for (const [at, before, after] of zone.transitions()) {
    if (at < FROM || at >= TO) continue;
    const lo = at + Math.min(before, after);
    const hi = at + Math.max(before, after);
    const mid = new Date(lo + Math.floor((hi - lo) / 2 / MIN) * MIN);
    fixed.add(`${mid.getUTCMinutes()} ${mid.getUTCHours()}`);
    fixed.add(`${new Date(lo).getUTCMinutes()} ${new Date(lo).getUTCHours()}`);
    hours.add(new Date(lo).getUTCHours());
    months.add(new Date(lo).getUTCMonth() + 1);
  }
  const monthList = [...months].sort((a, b) => a - b).join(",");
  // Only the months with changes, so that 1000 slots reach past 2028.
  const exprs = [...[...fixed].map((mh) => `${mh} * ${monthList} *`), ...[...hours].map((h) => `*/30 ${h} * ${monthList} *`)];
  return exprs.map((expr, i) => ({ name: `j${i}`, expr }));
}

describe.concurrent("svc next --json equals the brute-force oracle at every DST change 2026-2028", () => {
  for (const zoneName of ZONES) {
    it(zoneName, async ({ expect }) => {
      const zone = new OracleZone(zoneName, FROM - 2 * DAY, TO + 800 * DAY);
      const jobs = jobsFor(zone);
      const yaml = `defaults:\n  timezone: ${zoneName}\njobs:\n${jobs
        .map((j) => `  ${j.name}:\n    command: "true"\n    frequency: "cron:${j.expr}"\n`)
        .join("")}`;
      const p = tempProject({ "svc.yaml": yaml });
      projects.push(p);
      let compared = 0;
      for (const job of jobs) {
        const r = await runSvc(["next", job.name, "--count", "1000", "--from", new Date(FROM).toISOString(), "--json"], { cwd: p.dir });
        expect(r.stderr).toBe("");
        const out = JSON.parse(r.stdout) as { timezone: string; runs: { utc: string }[] };
        expect(out.timezone).toBe(zoneName);
        const got = out.runs.map((x) => x.utc).filter((u) => Date.parse(u) < TO);
        const want = oracleSlots(readCron(job.expr), zone, FROM - 1, 1000, TO).map((t) => new Date(t).toISOString());
        expect(got.length, `${job.expr}: 1000 slots must reach past 2028`).toBeLessThan(out.runs.length);
        expect(got, job.expr).toEqual(want);
        compared += got.length;
      }
      expect(compared).toBeGreaterThan(500);
    });
  }
});

describe("svc next --all lists excluded slots with their reason", () => {
  it("dates and an .ics calendar, merged from defaults; the reason names the file and the event", async ({ expect }) => {
    const ics = [
      "BEGIN:VCALENDAR",
      "VERSION:2.0",
      "PRODID:-//svc e2e//EN",
      "BEGIN:VEVENT",
      "UID:xmas@svc",
      "DTSTART;VALUE=DATE:20261225",
      "DTEND;VALUE=DATE:20261226",
      "RRULE:FREQ=YEARLY",
      "EXDATE;VALUE=DATE:20271225",
      "SUMMARY:Christmas Day",
      "END:VEVENT",
      "END:VCALENDAR",
      "",
    ].join("\r\n");
    const p = tempProject({
      "holidays.ics": ics,
      "svc.yaml": `defaults:
  timezone: Europe/Berlin
  exclude: {dates: ["2026-12-24"]}
jobs:
  report:
    command: "true"
    frequency: "cron:0 9 24-26 12 *"
    exclude: {calendar: holidays.ics}
`,
    });
    projects.push(p);
    const all = await runSvc(["next", "report", "--all", "--count", "6", "--from", "2026-12-01T00:00:00Z", "--json"], { cwd: p.dir });
    expect(all.stderr).toBe("");
    expect(JSON.parse(all.stdout).runs).toEqual([
      { utc: "2026-12-24T08:00:00.000Z", local: "2026-12-24T09:00:00+01:00 CET", note: null, excluded: "2026-12-24 in exclude.dates" },
      { utc: "2026-12-25T08:00:00.000Z", local: "2026-12-25T09:00:00+01:00 CET", note: null, excluded: "2026-12-25 in holidays.ics: Christmas Day" },
      { utc: "2026-12-26T08:00:00.000Z", local: "2026-12-26T09:00:00+01:00 CET", note: null, excluded: null },
      // dates are dates, not yearly
      { utc: "2027-12-24T08:00:00.000Z", local: "2027-12-24T09:00:00+01:00 CET", note: null, excluded: null },
      // EXDATE: Christmas 2027 is not in the calendar.
      { utc: "2027-12-25T08:00:00.000Z", local: "2027-12-25T09:00:00+01:00 CET", note: null, excluded: null },
      { utc: "2027-12-26T08:00:00.000Z", local: "2027-12-26T09:00:00+01:00 CET", note: null, excluded: null },
    ]);
    const runs = await runSvc(["next", "report", "--count", "2", "--from", "2026-12-01T00:00:00Z", "--json"], { cwd: p.dir });
    expect(JSON.parse(runs.stdout).runs.map((r: { utc: string }) => r.utc)).toEqual(["2026-12-26T08:00:00.000Z", "2027-12-24T08:00:00.000Z"]);
    const text = await runSvc(["next", "report", "--all", "--count", "2", "--from", "2026-12-01T00:00:00Z"], { cwd: p.dir });
    expect(text.stdout).toBe(
      "2026-12-24T08:00:00.000Z  2026-12-24T09:00:00+01:00 CET  excluded: 2026-12-24 in exclude.dates\n" +
        "2026-12-25T08:00:00.000Z  2026-12-25T09:00:00+01:00 CET  excluded: 2026-12-25 in holidays.ics: Christmas Day\n",
    );
  });
});

/**
 * `svc next --json` (the built binary) against the brute-force oracle of
 * test/helpers/cronOracle.ts, for every DST change of 2026-2028 in the
 * zones of issue 20. One project per zone holds a fixed-time and a periodic
 * job aimed at the walls its gaps and folds cover; each is asked for 1000
 * slots at a time from 2026-01-01 until past 2028, and every slot up to
 * 2029-01-01 must be the oracle's. The pure
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

/**
 * Two jobs aimed at this zone's changes: the minutes and hours of the first
 * and middle walls of every gap and fold, in the months with changes, once
 * fixed-time (`0,30 1,2 * 3,11 *`) and once periodic (`*\/30 1,2 * 3,11 *`).
 */
function jobsFor(zone: OracleZone): Job[] {
  const minutes = new Set<number>();
  const hours = new Set<number>();
  const months = new Set<number>();
  for (const [at, before, after] of zone.transitions()) {
    if (at < FROM || at >= TO) continue;
    const lo = at + Math.min(before, after);
    const hi = at + Math.max(before, after);
    for (const wall of [new Date(lo), new Date(lo + Math.floor((hi - lo) / 2 / MIN) * MIN)]) {
      minutes.add(wall.getUTCMinutes());
      hours.add(wall.getUTCHours());
      months.add(wall.getUTCMonth() + 1);
    }
  }
  const list = (s: Set<number>) => [...s].sort((a, b) => a - b).join(",");
  const step = Math.min(...[...minutes].map((m) => (m === 0 ? 60 : m)), 30);
  return [
    { name: "fixed", expr: `${list(minutes)} ${list(hours)} * ${list(months)} *` },
    { name: "periodic", expr: `*/${step} ${list(hours)} * ${list(months)} *` },
  ];
}

// Zones one after the other (1.5-3 s each alone): spawning all at once on 2 cores starved them under load.
describe("svc next --json equals the brute-force oracle at every DST change 2026-2028", () => {
  for (const zoneName of ZONES) {
    it(zoneName, { timeout: 180_000 }, async ({ expect }) => {
      const zone = new OracleZone(zoneName, FROM - 2 * DAY, TO + 800 * DAY);
      const jobs = jobsFor(zone);
      const yaml = `defaults:\n  timezone: ${zoneName}\njobs:\n${jobs
        .map((j) => `  ${j.name}:\n    command: "true"\n    frequency: "cron:${j.expr}"\n`)
        .join("")}`;
      const p = tempProject({ "svc.yaml": yaml });
      projects.push(p);
      let compared = 0;
      for (const job of jobs) {
        // 1000 slots a call (the most svc next gives), from where the last call ended, until past 2028.
        for (let from = FROM; from < TO; ) {
          const r = await runSvc(["next", job.name, "--count", "1000", "--from", new Date(from).toISOString(), "--json"], { cwd: p.dir });
          expect(r.stderr).toBe("");
          const out = JSON.parse(r.stdout) as { timezone: string; runs: { utc: string }[] };
          expect(out.timezone).toBe(zoneName);
          const last = Date.parse(out.runs[out.runs.length - 1]!.utc);
          const got = out.runs.map((x) => x.utc).filter((u) => Date.parse(u) < TO);
          const want = oracleSlots(readCron(job.expr), zone, from, got.length + 1, Math.min(TO, last + 1)).map((t) => new Date(t).toISOString());
          expect(got, `${job.expr} from ${new Date(from).toISOString()}`).toEqual(want);
          compared += got.length;
          from = last;
        }
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

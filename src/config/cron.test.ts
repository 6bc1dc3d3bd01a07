import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseCron, parseEvery } from "./cron.js";
import { loadProject, parseProjectText } from "./project.js";
import { formatIssue } from "./issues.js";
import { errorsOf, issueAt, lineOf, tempProject, valueOf } from "./testkit.js";

const FILE = "/nonexistent-dir/svc.yaml";
const parse = (text: string) => parseProjectText(text, FILE, {});
const job = (frequency: string, extra = "") => `jobs:\n  backup:\n    command: x\n    frequency: "${frequency}"\n${extra}`;

function spec(expr: string) {
  const r = parseCron(expr);
  if (!r.ok) throw new Error(r.message);
  return r.spec;
}

function error(expr: string): string {
  const r = parseCron(expr);
  if (r.ok) throw new Error(`${expr} parsed`);
  return r.message;
}

describe("parseCron: the grammar of CONTRACT §7.1", () => {
  it("fields, ranges, steps, lists, names in any case, 0 and 7 as Sunday", () => {
    const s = spec("*/15 9-17/4 1,15 JAN-mar,Dec mon-FRI,7");
    expect(s).toMatchObject({
      expr: "0 */15 9-17/4 1,15 JAN-mar,Dec mon-FRI,7",
      seconds: [0],
      minutes: [0, 15, 30, 45],
      hours: [9, 13, 17],
      daysOfMonth: [1, 15],
      months: [1, 2, 3, 12],
      weekdays: [0, 1, 2, 3, 4, 5],
      domRestricted: true,
      dowRestricted: true,
      fixedTime: false,
    });
    expect(spec("5/20 * * * *").minutes).toEqual([5, 25, 45]); // n/s: n to the maximum
    expect(spec("0 0 * * 5-7").weekdays).toEqual([0, 5, 6]);
    expect(spec("30 */10 * * * *")).toMatchObject({ seconds: [30], minutes: [0, 10, 20, 30, 40, 50], fixedTime: false });
  });

  it("L, 5L and 1#2; restricted means the field does not start with *", () => {
    expect(spec("0 0 L * *")).toMatchObject({ lastDayOfMonth: true, daysOfMonth: [], domRestricted: true });
    expect(spec("0 0 * * 5L,1#2,mon#4")).toMatchObject({
      lastWeekdays: [5],
      nthWeekdays: [
        { weekday: 1, n: 2 },
        { weekday: 1, n: 4 },
      ],
      weekdays: [],
      dowRestricted: true,
      domRestricted: false,
    });
    expect(spec("0 0 */10 * 1")).toMatchObject({ domRestricted: false, dowRestricted: true });
    expect(spec("0 0 1-31/10 * 1")).toMatchObject({ domRestricted: true, dowRestricted: true });
  });

  it("macros, and fixed-time vs periodic", () => {
    expect(spec("@daily")).toMatchObject({ expr: "0 0 0 * * *", fixedTime: true, source: "@daily" });
    expect(spec("@HOURLY")).toMatchObject({ expr: "0 0 * * * *", fixedTime: false });
    expect(spec("@weekly").expr).toBe("0 0 0 * * 0");
    expect(spec("@monthly").expr).toBe("0 0 0 1 * *");
    expect(spec("@yearly").expr).toBe(spec("@annually").expr);
    expect(spec("30 2 * * *").fixedTime).toBe(true);
    expect(spec("0 */2 * * *").fixedTime).toBe(false);
    expect(spec("*/5 2 * * *").fixedTime).toBe(false);
    expect(spec("0-59 0-23 * * *").fixedTime).toBe(true); // Vixie looks at the first character only
  });

  it("errors name the field by number and name and say what is allowed", () => {
    expect(error("0 25 * * *")).toBe('cron field 2 (hour) "25" is out of range 0-23');
    expect(error("0 0 25 * * *")).toBe('cron field 3 (hour) "25" is out of range 0-23');
    expect(error("* * *")).toMatch(/^cron expression must have 5 fields \(minute hour day-of-month month day-of-week\) or 6 \(second first\), got 3/);
    expect(error("*/0 * * * *")).toBe('cron field 1 (minute) step "0" in "*/0" must be a whole number from 1 to 60');
    expect(error("0 0 * * 8")).toBe('cron field 5 (day-of-week) "8" is out of range 0-7 (0 and 7 are Sunday)');
    expect(error("0 0 * foo *")).toMatch(/^cron field 4 \(month\) "foo" is not a number or a name \(allowed: 1-12 or jan-dec/);
    expect(error("5-1 * * * *")).toMatch(/range "5-1" runs backwards: write the smaller value first, or a list like 5-59,0-1/);
    expect(error("0 0 * * 1#6")).toMatch(/"1#6": the number after # must be 1-5/);
    expect(error("0 0 ? * *")).toMatch(/cron field 3 \(day-of-month\) "\?" is not a number/);
    expect(error("1,,2 * * * *")).toBe('cron field 1 (minute) "1,,2" has an empty list item');
    expect(error("@reboot")).toMatch(/^@reboot is not a schedule/);
    expect(error("")).toMatch(/^cron expression is empty/);
  });
});

describe("parseEvery: n must divide the next unit", () => {
  it("maps to the cron expression of §7.1", () => {
    const ok = (t: string) => {
      const r = parseEvery(t);
      if (!r.ok) throw new Error(r.message);
      return r.spec;
    };
    expect(ok("10s")).toMatchObject({ expr: "*/10 * * * * *", source: "10s", fixedTime: false });
    expect(ok("15m").expr).toBe("0 */15 * * * *");
    expect(ok("6h")).toMatchObject({ expr: "0 0 */6 * * *", fixedTime: false });
    expect(ok("60s").seconds).toEqual([0]);
  });

  it("anything else lists the allowed values and suggests cron:", () => {
    for (const bad of ["7m", "90m", "5h", "0s", "10", "1d", "abc"]) {
      const r = parseEvery(bad);
      expect(r.ok, bad).toBe(false);
      if (!r.ok) {
        expect(r.message).toContain("1s 2s 3s 4s 5s 6s 10s 12s 15s 20s 30s 60s; 1m 2m");
        expect(r.message).toContain("use cron:");
      }
    }
  });
});

describe("svc.yaml: cron:, every: and exclude, with positions", () => {
  it("a bad field is an error at the frequency, with the message of the issue", () => {
    const text = job("cron:0 25 * * *");
    const issue = issueAt(errorsOf(parse(text)), "/jobs/backup/frequency");
    expect(issue.line).toBe(lineOf(text, "frequency:"));
    expect(formatIssue(issue, "svc.yaml")).toBe(`svc.yaml:4:5: jobs.backup.frequency: cron field 2 (hour) "25" is out of range 0-23`);
  });

  it("an expression that can never match is an error", () => {
    for (const expr of ["0 0 30 2 *", "0 0 31 4,6,9,11 *", "0 0 30 2 */2"]) {
      const errors = errorsOf(parse(job(`cron:${expr}`)));
      expect(errors.map((e) => e.path)).toEqual(["/jobs/backup/frequency"]);
    }
    expect(issueAt(errorsOf(parse(job("cron:0 0 30 2 *"))), "/jobs/backup/frequency").message).toBe(
      'cron:0 0 30 2 * can never run: no date passes its day-of-month "30", month "2" and day-of-week "*" fields together',
    );
    // Feb 29 matches in leap years; the 5th Friday exists in some months: both load.
    valueOf(parse(job("cron:0 0 29 2 *")));
    valueOf(parse(job("cron:0 0 * 2 5#5")));
  });

  it("a periodic expression whose every match falls in a DST gap of its zone is an error (the daemon would find no slot)", () => {
    // 02:xx on the second Sunday of March: New York's spring-forward gap, every year.
    const gap = "cron:*/30 2 * 3 0#2";
    expect(issueAt(errorsOf(parse(job(gap, "    timezone: America/New_York\n"))), "/jobs/backup/frequency")).toMatchObject({
      line: 4,
      message: expect.stringMatching(/^cron:\*\/30 2 \* 3 0#2 can never run in America\/New_York: every local time it names falls in a DST gap/),
    });
    // The same in UTC runs; fixed minutes run right after the gap (§3), so they load in New York too.
    valueOf(parse(job(gap, "    timezone: UTC\n")));
    valueOf(parse(job("cron:30 2 * 3 0#2", "    timezone: America/New_York\n")));
  });

  it("time, weekday and day_of_month beside cron: or every: are errors at that field", () => {
    const text = job("every:10s", `    time: "0230"\n    weekday: mon\n    day_of_month: 3\n`);
    const errors = errorsOf(parse(text));
    for (const field of ["time", "weekday", "day_of_month"]) {
      const issue = issueAt(errors, `/jobs/backup/${field}`);
      expect(issue.line).toBe(lineOf(text, `${field}:`));
      expect(issue.message).toBe(`${field} cannot be used with frequency every:10s: the expression sets when it runs; remove ${field}`);
    }
  });

  it("every: outside the allowed values is an error listing them", () => {
    expect(issueAt(errorsOf(parse(job("every:7m"))), "/jobs/backup/frequency").message).toMatch(/^every:7m: 7m does not divide an hour evenly/);
    expect(issueAt(errorsOf(parse(job("every:"))), "/jobs/backup/frequency").message).toMatch(/is not <n><unit>/);
  });

  it("defaults.frequency may be an expression; its error is reported once, at defaults", () => {
    const ok = valueOf(parse(`defaults:\n  frequency: "cron:0 9 * * 1-5"\njobs:\n  a: {command: x}\n  b: {command: y}\n`));
    expect(ok.jobs.get("a")!.schedule).toMatchObject({ frequency: "cron", cron: { source: "0 9 * * 1-5" } });
    const errors = errorsOf(parse(`defaults:\n  frequency: "cron:0 99 * * *"\njobs:\n  a: {command: x}\n  b: {command: y}\n`));
    expect(errors.map((e) => e.path)).toEqual(["/defaults/frequency"]);
  });

  it("exclude merges dates and calendars of defaults and job; bad dates and exclude on manual jobs are errors", () => {
    const dir = tempProject({
      "a.ics": "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n",
      "b.ics": "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n",
      "svc.yaml": `defaults:
  exclude: {dates: ["2026-12-25", "2026-01-01"], calendar: a.ics}
jobs:
  nightly:
    command: x
    frequency: "cron:0 3 * * *"
    exclude: {dates: ["2026-12-24", "2026-12-25"], calendar: b.ics}
  hand:
    command: x
`,
    });
    const p = valueOf(loadProject(join(dir, "svc.yaml")));
    const ex = p.jobs.get("nightly")!.schedule.exclude!;
    expect(ex.dates).toEqual(["2026-01-01", "2026-12-24", "2026-12-25"]);
    expect(ex.calendars.map((c) => c.name)).toEqual(["a.ics", "b.ics"]);
    expect(ex.calendars[0]!.path).toBe(join(dir, "a.ics"));
    expect(p.jobs.get("hand")!.schedule.exclude).toBeNull(); // inherited, unused on a manual job

    const bad = `jobs:\n  a:\n    command: x\n    frequency: daily\n    time: "0100"\n    exclude: {dates: ["2026-02-30", "26-1-1"]}\n  b:\n    command: x\n    exclude: {dates: ["2026-12-25"]}\n`;
    const errors = errorsOf(parse(bad));
    expect(issueAt(errors, "/jobs/a/exclude/dates/0").message).toBe('"2026-02-30" is not a date of the calendar');
    expect(issueAt(errors, "/jobs/a/exclude/dates/1").message).toMatch(/must be a date YYYY-MM-DD/);
    expect(issueAt(errors, "/jobs/b/exclude").message).toMatch(/^exclude only applies to scheduled jobs \(this job has frequency manual/);
  });

  it("a broken or missing calendar is an error at exclude.calendar naming the file and its line", () => {
    const dir = tempProject({
      "broken.ics": "BEGIN:VCALENDAR\nVERSION:2.0\nBEGIN:VEVENT\nDTSTART:20261225T000000Z\nSUMMARY:x\nEND:VTODO\nEND:VCALENDAR\n",
      "rrule.ics": "BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:1\nDTSTART:20261225T000000Z\nRRULE:FREQ=SOMETIMES\nEND:VEVENT\nEND:VCALENDAR\n",
      "zone.ics": "BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:1\nDTSTART;TZID=Mars/Base:20261225T000000\nEND:VEVENT\nEND:VCALENDAR\n",
      // Rules that never occur: ical.js would step them day by day forever (an April 31; Tuesdays every 7 days from a Monday).
      "never.ics": "BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:1\nDTSTART:20261221T000000Z\nRRULE:FREQ=DAILY;BYMONTH=4;BYMONTHDAY=31\nEND:VEVENT\nEND:VCALENDAR\n",
      "weekly.ics": "BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:1\nSUMMARY:x\nDTSTART:20261221T000000Z\nRRULE:FREQ=DAILY;INTERVAL=7;BYDAY=TU\nEND:VEVENT\nEND:VCALENDAR\n",
      "svc.yaml": `jobs:
  a: {command: x, frequency: hourly, exclude: {calendar: broken.ics}}
  b: {command: x, frequency: hourly, exclude: {calendar: missing.ics}}
  c: {command: x, frequency: hourly, exclude: {calendar: rrule.ics}}
  d: {command: x, frequency: hourly, exclude: {calendar: zone.ics}}
  e: {command: x, frequency: hourly, exclude: {calendar: never.ics}}
  f: {command: x, frequency: hourly, exclude: {calendar: weekly.ics}}
`,
    });
    const errors = errorsOf(loadProject(join(dir, "svc.yaml")));
    expect(issueAt(errors, "/jobs/a/exclude/calendar").message).toBe("calendar broken.ics line 6: END:VTODO closes BEGIN:VEVENT of line 3");
    expect(issueAt(errors, "/jobs/b/exclude/calendar").message).toMatch(/^calendar missing.ics: /);
    expect(issueAt(errors, "/jobs/c/exclude/calendar").message).toMatch(/^calendar rrule.ics line 5: invalid frequency "SOMETIMES"/);
    expect(issueAt(errors, "/jobs/d/exclude/calendar").message).toBe(
      'calendar zone.ics line 4: DTSTART has TZID "Mars/Base", which is neither an IANA time zone nor a VTIMEZONE of this file',
    );
    for (const [job, line] of [["e", 5], ["f", 6]] as const) {
      expect(issueAt(errors, `/jobs/${job}/exclude/calendar`).message).toMatch(new RegExp(`^calendar (never|weekly).ics line ${line}: its RRULE finds no occurrence in 100,000 steps`));
    }
    expect(errors.map((e) => e.line)).toEqual([2, 3, 4, 5, 6, 7]);
  });

  it("a calendar's bad EXDATE, DTEND, DURATION or RDATE is reported at its own line", () => {
    const head = "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:x\nBEGIN:VEVENT\nUID:1\nDTSTART:20261225T000000Z\n";
    const files: Record<string, string> = {
      "exdate.ics": `${head}RRULE:FREQ=DAILY\nEXDATE:garbage\nEND:VEVENT\nEND:VCALENDAR\n`,
      "dtend.ics": `${head}DTEND:nope\nEND:VEVENT\nEND:VCALENDAR\n`,
      "duration.ics": `${head}DURATION:P1X\nEND:VEVENT\nEND:VCALENDAR\n`,
      "rdate.ics": `${head}RDATE:xx\nEND:VEVENT\nEND:VCALENDAR\n`,
    };
    const names = Object.keys(files);
    const dir = tempProject({ ...files, "svc.yaml": `jobs:\n${names.map((f, i) => `  j${i}: {command: x, frequency: hourly, exclude: {calendar: ${f}}}\n`).join("")}` });
    const errors = errorsOf(loadProject(join(dir, "svc.yaml")));
    expect(names.map((f, i) => issueAt(errors, `/jobs/j${i}/exclude/calendar`).message.replace(/:.*/s, ""))).toEqual([
      "calendar exdate.ics line 8",
      "calendar dtend.ics line 7",
      "calendar duration.ics line 7",
      "calendar rdate.ics line 7",
    ]);
  });

  it("config show lists the frequency as written and the exclusions", async () => {
    const { jobView } = await import("./views.js");
    const p = valueOf(parse(job("cron:*/5 * * * *", `    exclude: {dates: ["2026-12-25"]}\n`)));
    expect(jobView(p.jobs.get("backup")!)).toMatchObject({ frequency: "cron:*/5 * * * *", exclude: { dates: ["2026-12-25"], calendars: [] } });
  });
});

/**
 * `svc import crontab` through the built binary, on real crontab files
 * (test/fixtures/crontab: Debian 12's /etc/crontab and the example of its
 * crontab(5)): the jobs it makes, the lines it keeps as comments and why,
 * and that its output passes `svc validate` and schedules what cron would
 * (checked with `svc next`).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, it, type ExpectStatic } from "vitest";
import { parse } from "yaml";
import { ROOT, runSvc, tempProject, type TempProject } from "./helpers/cli.js";

const FIXTURES = join(ROOT, "test", "fixtures", "crontab");
const projects: TempProject[] = [];
afterAll(() => {
  for (const p of projects) p.remove();
});

function project(): TempProject {
  const p = tempProject();
  projects.push(p);
  return p;
}

interface Jobs {
  jobs: Record<string, { command: string; frequency: string; timezone?: string; env?: Record<string, string>; description: string }>;
}

/** Imports, writes with --write, validates, and returns the parsed file and the printed text. */
async function importAndValidate(expect: ExpectStatic, args: string[]) {
  const p = project();
  const printed = await runSvc(["import", "crontab", ...args], { cwd: p.dir });
  expect(printed.code, printed.stderr).toBe(0);
  const wrote = await runSvc(["import", "crontab", ...args, "--write"], { cwd: p.dir });
  expect(wrote.code, wrote.stderr).toBe(0);
  expect(readFileSync(p.path("svc.yaml"), "utf8")).toBe(printed.stdout);
  const valid = await runSvc(["validate"], { cwd: p.dir });
  expect(valid.stderr).toBe("");
  expect(valid.code).toBe(0);
  return { p, text: printed.stdout, stderr: printed.stderr, doc: parse(printed.stdout) as Jobs };
}

async function nextUtc(p: TempProject, job: string, from: string, count: number): Promise<string[]> {
  const r = await runSvc(["next", job, "--count", String(count), "--from", from, "--json"], { cwd: p.dir });
  return (JSON.parse(r.stdout) as { runs: { utc: string }[] }).runs.map((x) => x.utc);
}

describe.concurrent("svc import crontab", () => {
  it("Debian's /etc/crontab (--system): four jobs, the user kept as a comment, valid, same schedule", async ({ expect }) => {
    const { p, text, doc } = await importAndValidate(expect, ["--system", join(FIXTURES, "debian-etc-crontab")]);
    expect(Object.entries(doc.jobs).map(([name, j]) => [name, j.frequency, j.command])).toEqual([
      ["run-parts-cron.hourly", "cron:17 * * * *", "cd / && run-parts --report /etc/cron.hourly"],
      ["run-parts-cron.daily", "cron:25 6 * * *", "test -x /usr/sbin/anacron || { cd / && run-parts --report /etc/cron.daily; }"],
      ["run-parts-cron.weekly", "cron:47 6 * * 7", "test -x /usr/sbin/anacron || { cd / && run-parts --report /etc/cron.weekly; }"],
      ["run-parts-cron.monthly", "cron:52 6 1 * *", "test -x /usr/sbin/anacron || { cd / && run-parts --report /etc/cron.monthly; }"],
    ]);
    expect(text).toContain("# crontab line 19, ran as user root (svc runs it as the daemon's user)");
    expect(text).toContain("# SHELL=/bin/sh: svc's default shell too");
    expect(text).toContain("# |  |  .---------- day of month (1 - 31)"); // the file's own comments are kept
    // Day-of-week 7 is Sunday: 06:47 on Sundays (in UTC here, as cron would in a UTC system zone).
    p.write("svc.yaml", text.replace("jobs:", "defaults:\n  timezone: UTC\njobs:"));
    expect(await nextUtc(p, "run-parts-cron.weekly", "2027-01-01T00:00:00Z", 3)).toEqual([
      "2027-01-03T06:47:00.000Z",
      "2027-01-10T06:47:00.000Z",
      "2027-01-17T06:47:00.000Z",
    ]);
    expect(await nextUtc(p, "run-parts-cron.monthly", "2027-01-01T00:00:00Z", 2)).toEqual(["2027-01-01T06:52:00.000Z", "2027-02-01T06:52:00.000Z"]);
  });

  it("crontab(5)'s example: jobs for what cron runs, comments saying why for MAILTO, SHELL and the % line", async ({ expect }) => {
    const { p, text, stderr, doc } = await importAndValidate(expect, [join(FIXTURES, "crontab5-example")]);
    expect(Object.entries(doc.jobs).map(([name, j]) => [name, j.frequency])).toEqual([
      ["daily.job", "cron:5 0 * * *"],
      ["monthly", "cron:15 14 1 * *"],
      ["echo-run", "cron:23 0-23/2 * * *"],
      ["echo-run-2", "cron:5 4 * * sun"],
      ["echo-run-3", "cron:0 */4 1 * mon"],
      ["echo-run-4", "cron:0 0 */2 * sun"],
      ["echo-2nd", "cron:0 4 8-14 * *"],
    ]);
    expect(doc.jobs["echo-2nd"]!.command).toBe('test $(date +%u) -eq 6 && echo "2nd Saturday"'); // \% is a literal %
    expect(text).toMatch(/# not imported \(line 2\): SHELL=\/bin\/bash\n\s+# {3}svc runs string commands with executor.shell of svcd.yaml/);
    expect(text).toMatch(/# not imported \(line 4\): MAILTO=paul\n\s+# {3}svc does not mail job output/);
    expect(text).toMatch(/# not imported \(line 11\): 0 22 \* \* 1-5 {4}mail -s "It's 10pm" joe%Joe,%%Where are your kids\?%\n\s+# {3}an unescaped % sends the rest of the line to the command's stdin/);
    expect(stderr).toBe("svc: 3 lines kept as comments, not imported (see the comments in the output)\n");
    p.write("svc.yaml", text.replace("jobs:", "defaults:\n  timezone: UTC\njobs:"));
    // The man page's own words: "every 4th hour on the 1st and on every Monday" (both day fields restricted: OR).
    expect(await nextUtc(p, "echo-run-3", "2027-02-27T00:00:00Z", 8)).toEqual([
      "2027-03-01T00:00:00.000Z", "2027-03-01T04:00:00.000Z", "2027-03-01T08:00:00.000Z", "2027-03-01T12:00:00.000Z",
      "2027-03-01T16:00:00.000Z", "2027-03-01T20:00:00.000Z", "2027-03-08T00:00:00.000Z", "2027-03-08T04:00:00.000Z",
    ]);
    // "at midn on every Sunday that's an uneven date" (*/2 starts with *: not restricted, so AND).
    const sundays = await nextUtc(p, "echo-run-4", "2027-01-01T00:00:00Z", 6);
    for (const u of sundays) {
      expect(new Date(u).getUTCDay()).toBe(0);
      expect(new Date(u).getUTCDate() % 2).toBe(1);
    }
  });

  it("env lines, CRON_TZ/TZ, macros, @reboot and a bad line; stdin with -", async ({ expect }) => {
    const input = readFileSync(join(FIXTURES, "mixed"), "utf8");
    const p = project();
    const r = await runSvc(["import", "crontab", "-"], { cwd: p.dir, input });
    expect(r.code).toBe(0);
    const doc = parse(r.stdout) as Jobs;
    expect(doc.jobs.backup).toMatchObject({
      frequency: "cron:@daily",
      timezone: "Europe/Berlin",
      env: { PATH: "/usr/local/bin:/usr/bin:/bin", BACKUP_DIR: "/srv/backups" },
    });
    expect(doc.jobs["backup-2"]!.frequency).toBe("cron:*/15 9-17 * * mon-fri");
    expect(doc.jobs["curl-ping"]!.timezone).toBe("America/New_York");
    expect(doc.jobs.date!.command).toBe("date +%Y-%m-%d >> /tmp/fridays");
    expect(doc.jobs["true"]!.env).toMatchObject({ EMPTY: "" });
    expect(r.stdout).toContain("# not imported (line 6): @reboot /usr/local/bin/start-tunnel");
    expect(r.stdout).toContain('# not imported (line 13): 0 25 * * * /bin/true\n  #   cron field 2 (hour) "25" is out of range 0-23');
    expect(r.stdout.startsWith("# svc.yaml imported from stdin by `svc import crontab`.")).toBe(true);
    p.write("svc.yaml", r.stdout);
    const valid = await runSvc(["validate"], { cwd: p.dir });
    expect(valid.code, valid.stderr).toBe(0);
  });

  it("an unknown or empty CRON_TZ puts the jobs below back in svc's default zone; a command with {{ stays a comment", async ({ expect }) => {
    const input = [
      "CRON_TZ=Europe/Berlin",
      "0 1 * * * /bin/true berlin",
      "TZ=Nowhere/Foo",
      "0 2 * * * /bin/true nowhere",
      "CRON_TZ=Asia/Tokyo",
      "0 3 * * * /bin/true tokyo",
      "CRON_TZ=",
      "0 4 * * * /bin/true reset",
      '0 5 * * * echo "{{ outputs.x.y }}"',
      "",
    ].join("\n");
    const p = project();
    const r = await runSvc(["import", "crontab", "-"], { cwd: p.dir, input });
    expect(r.code, r.stderr).toBe(0);
    const zones = Object.values((parse(r.stdout) as Jobs).jobs).map((j) => [j.command, j.timezone ?? null]);
    expect(zones).toEqual([
      ["/bin/true berlin", "Europe/Berlin"],
      ["/bin/true nowhere", null],
      ["/bin/true tokyo", "Asia/Tokyo"],
      ["/bin/true reset", null],
    ]);
    expect(r.stdout).toContain('# not imported (line 9): 0 5 * * * echo "{{ outputs.x.y }}"\n  #   its command holds {{, which svc reads as a placeholder');
    p.write("svc.yaml", r.stdout);
    const valid = await runSvc(["validate"], { cwd: p.dir });
    expect(valid.code, valid.stderr).toBe(0);
  });

  it("--write never overwrites; unreadable input is one error line", async ({ expect }) => {
    const p = project();
    p.write("svc.yaml", "jobs: {}\n");
    const again = await runSvc(["import", "crontab", join(FIXTURES, "crontab5-example"), "--write"], { cwd: p.dir });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/svc\.yaml exists and is not overwritten: run without --write to print the jobs, and merge them by hand\n$/);
    expect(readFileSync(p.path("svc.yaml"), "utf8")).toBe("jobs: {}\n");
    const missing = await runSvc(["import", "crontab", "nope.cron"], { cwd: p.dir });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^svc: cannot read .*nope\.cron: no such file\n$/);
    const none = await runSvc(["import", "crontab"], { cwd: p.dir, env: { PATH: "/nonexistent" } });
    expect(none.code).toBe(1);
    expect(none.stderr).toBe("svc: crontab is not installed here: pass a crontab file, or - to read stdin\n");
  });
});

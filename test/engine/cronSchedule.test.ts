/**
 * cron:/every: schedules in the real engine (real SQLite, real processes,
 * fake clock): sub-minute slots on the one-second tick, late ticks, clock
 * steps and restarts (no slot twice, none silently lost), and exclusions
 * (no run, one INFO line, the next run shown is the next one that runs,
 * reload re-reads the calendar).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FakeClock } from "../helpers/fakeClock.js";
import { engineKits, type Kit } from "../helpers/engineKit.js";

const startKit = engineKits("svc-cron-");

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

function project(frequency: string, extra = "", zone = "UTC"): string {
  return `
jobs:
  pulse:
    command: "true"
    frequency: "${frequency}"
    timezone: ${zone}
    concurrency: allow
${extra}`;
}

async function kitAt(yaml: string, now: string, opts: { dir?: string; daemon?: string; files?: Record<string, string> } = {}) {
  const clock = new FakeClock(at(now));
  const kit = await startKit(yaml, { clock, dir: opts.dir, daemon: opts.daemon, files: opts.files, random: () => 0.5 });
  return { kit, clock, dir: kit.dir };
}

const scheduled = (kit: Kit) => kit.runsOf("pulse").map((r) => r.scheduled_for);

describe("sub-minute schedules on the one-second tick", () => {
  it("every:10s: one run per slot, created at the slot's own tick, second by second", async () => {
    const { kit, clock } = await kitAt(project("every:10s"), "2027-01-10T00:00:00.500Z");
    expect(kit.engine.nextRun("pulse")!.utc).toBe("2027-01-10T00:00:10.000Z");
    const createdAt: Record<string, number> = {};
    for (let s = 1; s <= 40; s++) {
      clock.set(at("2027-01-10T00:00:00.000Z") + s * 1000);
      for (const r of kit.runsOf("pulse")) createdAt[r.scheduled_for!] ??= clock.now();
    }
    expect(scheduled(kit)).toEqual(["2027-01-10T00:00:10.000Z", "2027-01-10T00:00:20.000Z", "2027-01-10T00:00:30.000Z", "2027-01-10T00:00:40.000Z"]);
    // The same accuracy as minute schedules: each run exists at the first tick at or after its slot.
    for (const [slot, t] of Object.entries(createdAt)) expect(t).toBe(Date.parse(slot));
    expect(kit.store.jobState.get("pulse")!.next_run).toBe("2027-01-10T00:00:50.000Z");
  });

  it("6-field cron: seconds 15 and 45 of minutes 0-1 only", async () => {
    const { kit, clock } = await kitAt(project("cron:15,45 0-1 * * * *"), "2027-01-10T00:59:00.000Z");
    for (let s = 1; s <= 200; s++) clock.set(at("2027-01-10T00:59:00.000Z") + s * 1000);
    expect(scheduled(kit)).toEqual(["2027-01-10T01:00:15.000Z", "2027-01-10T01:00:45.000Z", "2027-01-10T01:01:15.000Z", "2027-01-10T01:01:45.000Z"]);
  });

  it("a late tick runs every slot it passed within a minute, each once", async () => {
    const { kit, clock } = await kitAt(project("every:10s"), "2027-01-10T00:00:05.000Z");
    clock.set(at("2027-01-10T00:00:47.000Z")); // one tick, 37 s after the first slot
    expect(scheduled(kit)).toEqual(["2027-01-10T00:00:10.000Z", "2027-01-10T00:00:20.000Z", "2027-01-10T00:00:30.000Z", "2027-01-10T00:00:40.000Z"]);
    clock.advance(1000);
    kit.engine.testSeam().tick();
    expect(scheduled(kit)).toHaveLength(4);
    expect(kit.engine.nextRun("pulse")!.utc).toBe("2027-01-10T00:00:50.000Z");
  });

  it("a jump of minutes: older slots are missed and logged (catch-up rules), the last minute's slots run", async () => {
    const { kit, clock } = await kitAt(project("every:20s"), "2027-01-10T00:00:01.000Z");
    clock.set(at("2027-01-10T00:05:01.000Z"));
    expect(scheduled(kit)).toEqual(["2027-01-10T00:04:20.000Z", "2027-01-10T00:04:40.000Z", "2027-01-10T00:05:00.000Z"]);
    const miss = kit.log.entries.filter((e) => e.level === "warn" && e.msg.includes("missed its slot"));
    expect(miss).toHaveLength(1);
    expect(miss[0]!.msg).toContain("catchup is false");
  });

  it("with catchup: true the missed slots make one catch-up run, and the recent ones run", async () => {
    const { kit, clock } = await kitAt(project("every:20s", "    catchup: true\n"), "2027-01-10T00:00:01.000Z");
    clock.set(at("2027-01-10T00:05:01.000Z"));
    const runs = kit.runsOf("pulse").map((r) => [r.scheduled_for, r.triggered_by]);
    expect(runs).toEqual([
      ["2027-01-10T00:04:00.000Z", "catchup"],
      ["2027-01-10T00:04:20.000Z", "scheduler"],
      ["2027-01-10T00:04:40.000Z", "scheduler"],
      ["2027-01-10T00:05:00.000Z", "scheduler"],
    ]);
  });

  it("a slot exactly a minute old when a jump lands is on time, as for a first slot (not part of the catch-up)", async () => {
    const { kit, clock } = await kitAt(project("every:20s", "    catchup: true\n"), "2027-01-10T00:00:01.000Z");
    clock.set(at("2027-01-10T00:05:00.000Z")); // 00:04:00 is 60 000 ms old: not late (plan: late is > LATE_AFTER_MS)
    expect(kit.runsOf("pulse").map((r) => [r.scheduled_for, r.triggered_by])).toEqual([
      ["2027-01-10T00:03:40.000Z", "catchup"],
      ["2027-01-10T00:04:00.000Z", "scheduler"],
      ["2027-01-10T00:04:20.000Z", "scheduler"],
      ["2027-01-10T00:04:40.000Z", "scheduler"],
      ["2027-01-10T00:05:00.000Z", "scheduler"],
    ]);
    const first = await kitAt(project("every:20s", "    catchup: true\n"), "2027-01-10T00:03:59.000Z");
    first.clock.set(at("2027-01-10T00:05:00.000Z")); // the same slot as the first one passed: on time too
    expect(first.kit.runsOf("pulse").map((r) => [r.scheduled_for, r.triggered_by])[0]).toEqual(["2027-01-10T00:04:00.000Z", "scheduler"]);
  });

  it("the clock stepping back never runs a slot twice", async () => {
    const { kit, clock } = await kitAt(project("every:5s"), "2027-01-10T00:00:00.500Z");
    for (let s = 1; s <= 20; s++) clock.set(at("2027-01-10T00:00:00.000Z") + s * 1000);
    expect(scheduled(kit)).toHaveLength(4);
    clock.set(at("2027-01-10T00:00:08.000Z")); // NTP steps back 12 s
    for (let s = 9; s <= 25; s++) {
      clock.set(at("2027-01-10T00:00:00.000Z") + s * 1000);
      kit.engine.testSeam().tick();
    }
    const slots = scheduled(kit);
    expect(new Set(slots).size).toBe(slots.length);
    expect(slots).toEqual(["05", "10", "15", "20", "25"].map((s) => `2027-01-10T00:00:${s}.000Z`));
  });

  it("a restart neither repeats nor silently drops a slot", async () => {
    const yaml = project("every:10s");
    const first = await kitAt(yaml, "2027-01-10T00:00:00.500Z");
    for (let s = 1; s <= 20; s++) first.clock.set(at("2027-01-10T00:00:00.000Z") + s * 1000);
    await first.kit.engine.stop({ force: true });
    expect(scheduled(first.kit)).toEqual(["2027-01-10T00:00:10.000Z", "2027-01-10T00:00:20.000Z"]);
    // Back 85 s later: the slots from 00:30 were missed while down (logged, catchup false); 01:50 runs.
    const second = await kitAt(yaml, "2027-01-10T00:01:45.000Z", { dir: first.dir });
    expect(second.kit.log.entries.some((e) => e.level === "warn" && e.msg.includes("missed its slot because the daemon was not running"))).toBe(true);
    for (let s = 106; s <= 120; s++) second.clock.set(at("2027-01-10T00:00:00.000Z") + s * 1000);
    expect(scheduled(second.kit)).toEqual(["2027-01-10T00:00:10.000Z", "2027-01-10T00:00:20.000Z", "2027-01-10T00:01:50.000Z", "2027-01-10T00:02:00.000Z"]);
  });

  it("a restart within the tick's tolerance (60 s, plus schedule_jitter) runs the slots it came back for, as the tick would", async () => {
    const yaml = project("every:10s");
    const first = await kitAt(yaml, "2027-01-10T00:00:00.500Z");
    for (let s = 1; s <= 20; s++) first.clock.set(at("2027-01-10T00:00:00.000Z") + s * 1000);
    await first.kit.engine.stop({ force: true });
    // Back 25 s later: 00:30 and 00:40 run now, late, not missed; then on time.
    const second = await kitAt(yaml, "2027-01-10T00:00:45.000Z", { dir: first.dir });
    for (let s = 46; s <= 60; s++) second.clock.set(at("2027-01-10T00:00:00.000Z") + s * 1000);
    expect(scheduled(second.kit)).toEqual(["10", "20", "30", "40", "50"].map((x) => `2027-01-10T00:00:${x}.000Z`).concat("2027-01-10T00:01:00.000Z"));
    expect(second.kit.runsOf("pulse").map((r) => r.triggered_by)).toEqual(Array(6).fill("scheduler"));
    expect(second.kit.log.entries.some((e) => e.msg.includes("missed its slot"))).toBe(false);
  });

  it("slots missed to a clock jump are traced as one span, every one of them (svc why explains the latest too)", async () => {
    const { kit, clock } = await kitAt(project("hourly"), "2027-01-10T18:08:00.000Z");
    clock.set(at("2027-01-10T22:30:00.000Z"));
    const [trace] = kit.store.nonRuns.search({ job: "pulse", reason: "missed" }, 10, 0).rows;
    expect(trace).toMatchObject({ count: 4, first_slot: "2027-01-10T19:00:00.000Z", last_slot: "2027-01-10T22:00:00.000Z" });
    const warned = kit.log.entries.filter((e) => e.msg.includes("missed its slot"));
    expect(warned.map((e) => e.msg)).toEqual([
      "job pulse: missed its slot because it was noticed late (clock jump or suspend); catchup is false, waiting for the next slot (4 slots missed, 2027-01-10T19:00:00.000Z to 2027-01-10T22:00:00.000Z)",
    ]);
  });

  it("a job dropped from svc.yaml while the daemon was down loses its next_run: added back later, it catches up nothing", async () => {
    const yaml = project("every:1h", "    catchup: true\n");
    const first = await kitAt(yaml, "2027-01-10T09:30:00.000Z");
    await first.kit.engine.stop({ force: true });
    const without = await kitAt("jobs:\n  other:\n    command: \"true\"\n", "2027-01-10T09:40:00.000Z", { dir: first.dir });
    expect(without.kit.store.jobState.get("pulse")!.next_run).toBeNull();
    await without.kit.engine.stop({ force: true });
    const back = await kitAt(yaml, "2027-01-10T11:40:00.000Z", { dir: first.dir });
    expect(back.kit.runsOf("pulse")).toEqual([]);
    expect(back.kit.log.entries.some((e) => e.msg.includes("missed its slot") || e.msg.includes("catching up"))).toBe(false);
    expect(back.kit.store.jobState.get("pulse")!.next_run).toBe("2027-01-10T12:00:00.000Z");
  });

  it("a schedule_jitter longer than the period delays runs but never drops one (every:1m, 5m of jitter, an hour)", async () => {
    let a = 0x5eed; // mulberry32: the same random delays on every run of the test
    const random = () => {
      a = (a + 0x6d2b79f5) | 0;
      let t = Math.imul(a ^ (a >>> 15), 1 | a);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const clock = new FakeClock(at("2027-01-10T09:59:30.000Z"));
    const kit = await startKit(project("every:1m"), { clock, daemon: "scheduler:\n  schedule_jitter: 5m\n", random });
    for (let t = at("2027-01-10T09:59:31.000Z"); t <= at("2027-01-10T11:05:00.000Z"); t += 1000) clock.set(t);
    // Slots 10:00 to 10:59, each once, in order, each started no later than 5 minutes after its slot.
    const runs = kit.runsOf("pulse").filter((r) => r.scheduled_for! < "2027-01-10T11:00:00.000Z");
    expect(runs.map((r) => r.scheduled_for)).toEqual(Array.from({ length: 60 }, (_, i) => new Date(at("2027-01-10T10:00:00.000Z") + i * 60_000).toISOString()));
    for (const r of runs) expect(Date.parse(r.created_at) - Date.parse(r.scheduled_for!)).toBeLessThanOrEqual(5 * 60_000);
    expect(kit.log.entries.filter((e) => e.msg.includes("missed its slot"))).toEqual([]);
  });

  it("with schedule_jitter, a restart after a slot but before its delayed start runs it", async () => {
    const yaml = project("every:1h");
    const daemon = "scheduler:\n  schedule_jitter: 10m\n";
    const first = await kitAt(yaml, "2027-01-10T09:30:00.000Z", { daemon });
    await first.kit.engine.stop({ force: true });
    // The 10:00 slot is due at 10:05 (random 0.5): back at 10:02, it runs, between then and 10:10.
    const second = await kitAt(yaml, "2027-01-10T10:02:00.000Z", { daemon, dir: first.dir });
    for (let t = at("2027-01-10T10:02:01.000Z"); t <= at("2027-01-10T10:11:00.000Z"); t += 1000) second.clock.set(t);
    const runs = second.kit.runsOf("pulse");
    expect(runs.map((r) => [r.scheduled_for, r.triggered_by])).toEqual([["2027-01-10T10:00:00.000Z", "scheduler"]]);
    expect(Date.parse(runs[0]!.created_at)).toBeLessThanOrEqual(at("2027-01-10T10:10:00.000Z"));
    expect(second.kit.log.entries.some((e) => e.msg.includes("missed its slot"))).toBe(false);
  });
});

describe("DST in the engine", () => {
  it("New York, fall back: a periodic expression runs at both 01:30s, a fixed one once", async () => {
    const yaml = `
jobs:
  periodic: {command: "true", frequency: "cron:*/30 * * * *", timezone: America/New_York, concurrency: allow}
  fixed: {command: "true", frequency: "cron:30 1 * * *", timezone: America/New_York, concurrency: allow}
`;
    const { kit, clock } = await kitAt(yaml, "2026-11-01T04:40:00.000Z");
    for (let t = at("2026-11-01T04:40:00.000Z"); t <= at("2026-11-01T07:10:00.000Z"); t += 10_000) clock.set(t);
    expect(kit.runsOf("periodic").map((r) => r.scheduled_for)).toEqual(
      ["05:00", "05:30", "06:00", "06:30", "07:00"].map((h) => `2026-11-01T${h}:00.000Z`),
    );
    expect(kit.runsOf("fixed").map((r) => r.scheduled_for)).toEqual(["2026-11-01T05:30:00.000Z"]);
  });

  it("one warning per job and DST change, not one per slot (every:1m has 120 slots in New York's overlap)", async () => {
    const yaml = `
jobs:
  minutely: {command: "true", frequency: "every:1m", timezone: America/New_York, concurrency: allow}
`;
    const { kit, clock } = await kitAt(yaml, "2026-11-01T04:50:00.000Z");
    for (let t = at("2026-11-01T04:50:00.000Z"); t <= at("2026-11-01T07:10:00.000Z"); t += 30_000) clock.set(t);
    expect(kit.runsOf("minutely").length).toBeGreaterThan(130);
    const notes = kit.log.entries.filter((e) => e.level === "warn" && /DST/.test(e.msg));
    expect(notes).toHaveLength(1);
    expect(notes[0]!.msg).toMatch(/^job minutely: .*occurs twice \(DST overlap\)/);
  });
});

const ICS = (summary: string) =>
  [
    "BEGIN:VCALENDAR",
    "VERSION:2.0",
    "PRODID:-//svc test//EN",
    "BEGIN:VEVENT",
    "UID:h1@svc",
    "DTSTART;VALUE=DATE:20270111",
    "DTEND;VALUE=DATE:20270112",
    `SUMMARY:${summary}`,
    "END:VEVENT",
    "END:VCALENDAR",
    "",
  ].join("\r\n");

describe("exclude in the engine", () => {
  it("an excluded slot makes no run and one INFO line; next_run shows the next slot that runs", async () => {
    const yaml = project("cron:0 3 * * *", `    exclude: {dates: ["2027-01-10"], calendar: holidays.ics}\n`);
    const { kit, clock } = await kitAt(yaml, "2027-01-09T12:00:00.000Z", { files: { "holidays.ics": ICS("Company day off") } });
    expect(kit.engine.nextRun("pulse")!.utc).toBe("2027-01-12T03:00:00.000Z");
    expect(kit.store.jobState.get("pulse")!.next_run).toBe("2027-01-12T03:00:00.000Z");
    for (let t = at("2027-01-09T12:00:00.000Z"); t <= at("2027-01-12T03:00:01.000Z"); t += 3_600_000) clock.set(t);
    clock.set(at("2027-01-12T03:00:01.000Z"));
    expect(scheduled(kit)).toEqual(["2027-01-12T03:00:00.000Z"]);
    const lines = kit.log.entries.filter((e) => e.msg.includes("excluded"));
    expect(lines.map((e) => [e.level, e.msg])).toEqual([
      ["info", "job pulse: slot 2027-01-10T03:00:00.000Z (03:00 UTC) excluded (2027-01-10 in exclude.dates): no run"],
      ["info", "job pulse: slot 2027-01-11T03:00:00.000Z (03:00 UTC) excluded (2027-01-11 in holidays.ics: Company day off): no run"],
    ]);
  });

  it("every:10s across an excluded day: no runs, the next run stays the first slot after it", async () => {
    const yaml = project("every:10s", `    exclude: {dates: ["2027-01-10"]}\n`);
    const { kit, clock } = await kitAt(yaml, "2027-01-09T23:59:45.000Z");
    for (let s = 46; s <= 80; s++) clock.set(at("2027-01-09T23:59:00.000Z") + s * 1000);
    expect(scheduled(kit)).toEqual(["2027-01-09T23:59:50.000Z"]);
    expect(kit.engine.nextRun("pulse")!.utc).toBe("2027-01-11T00:00:00.000Z");
    expect(kit.log.entries.filter((e) => e.msg.includes("excluded (2027-01-10 in exclude.dates)"))).toHaveLength(3); // 00:00:00, 00:00:10, 00:00:20
  });

  it("an event longer than a year (a freeze of 14 months) excludes its slots in every year it covers", async () => {
    const freeze = ICS("Freeze").replace("DTSTART;VALUE=DATE:20270111", "DTSTART;VALUE=DATE:20251201").replace("DTEND;VALUE=DATE:20270112", "DTEND;VALUE=DATE:20270201");
    const yaml = project("cron:0 0 * * *", `    exclude: {calendar: freeze.ics}\n`);
    const { kit, clock } = await kitAt(yaml, "2026-12-30T12:00:00.000Z", { files: { "freeze.ics": freeze } });
    expect(kit.engine.nextRun("pulse")!.utc).toBe("2027-02-01T00:00:00.000Z");
    for (let t = at("2026-12-30T12:00:00.000Z"); t <= at("2027-01-03T00:00:01.000Z"); t += 3_600_000) clock.set(t);
    expect(scheduled(kit)).toEqual([]);
    expect(kit.log.entries.filter((e) => e.msg.includes("in freeze.ics: Freeze")).map((e) => e.fields.slot)).toEqual([
      "2026-12-31T00:00:00.000Z",
      "2027-01-01T00:00:00.000Z",
      "2027-01-02T00:00:00.000Z",
      "2027-01-03T00:00:00.000Z",
    ]);
  });

  it("reload re-reads the calendar", async () => {
    const yaml = project("cron:0 3 * * *", `    exclude: {calendar: holidays.ics}\n`);
    const { kit, dir } = await kitAt(yaml, "2027-01-10T12:00:00.000Z", { files: { "holidays.ics": ICS("Day off") } });
    expect(kit.engine.nextRun("pulse")!.utc).toBe("2027-01-12T03:00:00.000Z");
    writeFileSync(join(dir, "holidays.ics"), ICS("Day off").replace("DTSTART;VALUE=DATE:20270111", "DTSTART;VALUE=DATE:20270105").replace("DTEND;VALUE=DATE:20270112", "DTEND;VALUE=DATE:20270106"));
    kit.reloadYaml(yaml);
    expect(kit.engine.nextRun("pulse")!.utc).toBe("2027-01-11T03:00:00.000Z");
    expect(iso(Date.parse(kit.store.jobState.get("pulse")!.next_run!))).toBe("2027-01-11T03:00:00.000Z");
  });
});

/**
 * One job whose next slot cannot be computed does not stop the others: its savepoint of the tick's
 * transaction is rolled back, it leaves the schedule with an error line, and the tick goes on.
 * The failure is made in the schedule module (a seam of ours): since the search's horizon covers
 * any expression the loader accepts, no real schedule reaches it.
 */
import { describe, expect, it, vi } from "vitest";
import type * as NextRunModule from "../../src/schedule/nextRun.js";
import { FakeClock } from "../helpers/fakeClock.js";
import { engineKits } from "../helpers/engineKit.js";

const DOOMED_ZONE = "Etc/GMT"; // the same instants as UTC: only the doomed job uses this name
vi.mock("../../src/schedule/nextRun.js", async (importOriginal) => {
  const real = await importOriginal<typeof NextRunModule>();
  return {
    ...real,
    nextSlot: (spec: Parameters<typeof real.nextSlot>[0], after: number) => {
      if (spec.timezone === "Etc/GMT" && after >= Date.parse("2027-01-10T02:30:00.000Z")) {
        throw new Error("cron 30 2 * * * has no slot after 2027-01-10T02:30:00.000Z in Etc/GMT");
      }
      return real.nextSlot(spec, after);
    },
  };
});

const startKit = engineKits("svc-sched-alone-");
const at = (iso: string) => Date.parse(iso);
const daily = (name: string, zone: string) => `  ${name}:\n    command: "echo ${name}"\n    frequency: daily\n    time: "0230"\n    timezone: ${zone}\n`;

describe("a job whose next slot cannot be computed", () => {
  it("leaves the schedule with an error line; the other jobs of the tick run and keep their slots", async () => {
    const clock = new FakeClock(at("2027-01-10T02:29:59.000Z"));
    const kit = await startKit(`jobs:\n${daily("doomed", DOOMED_ZONE)}${daily("nightly", "UTC")}`, { clock, random: () => 0.5 });
    expect(kit.engine.nextRun("doomed")!.utc).toBe("2027-01-10T02:30:00.000Z");

    clock.set(at("2027-01-10T02:30:00.000Z"));

    expect(kit.log.entries.filter((e) => e.msg === "tick failed")).toEqual([]);
    const nightly = kit.runsOf("nightly");
    expect(nightly).toHaveLength(1);
    await kit.waitRun(nightly[0]!.id, ["SUCCESS"]);
    expect(kit.engine.nextRun("nightly")!.utc).toBe("2027-01-11T02:30:00.000Z");
    // Nothing of the doomed job's savepoint is kept or announced: no run, no event.
    expect(kit.runsOf("doomed")).toEqual([]);
    expect(kit.transitions.filter((t) => t.job === "doomed")).toEqual([]);
    expect(kit.engine.nextRun("doomed")).toBeNull();
    expect(kit.store.jobState.get("doomed")!.next_run).toBeNull();
    const errors = kit.log.entries.filter((e) => e.level === "error");
    expect(errors.map((e) => e.msg)).toEqual([
      "job doomed: its next slot cannot be computed (cron 30 2 * * * has no slot after 2027-01-10T02:30:00.000Z in Etc/GMT): it is not scheduled until svc.yaml is reloaded or svcd restarts",
    ]);

    // The next day, the scheduler still works for the others.
    clock.set(at("2027-01-11T02:30:00.000Z"));
    expect(kit.runsOf("nightly")).toHaveLength(2);
    expect(kit.runsOf("doomed")).toEqual([]);
  });
});

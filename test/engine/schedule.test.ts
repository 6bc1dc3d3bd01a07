import { describe, expect, it } from "vitest";
import { FakeClock } from "../helpers/fakeClock.js";
import { engineKits } from "../helpers/engineKit.js";

const startKit = engineKits("svc-sched-");
const at = (iso: string) => Date.parse(iso);
const daily = (extra = "") => `
jobs:
  nightly:
    command: "echo tick"
    frequency: daily
    time: "0230"
    timezone: UTC
${extra}`;

async function kitAt(yaml: string, now: string, opts: { dir?: string; daemon?: string } = {}) {
  const clock = new FakeClock(at(now));
  const kit = await startKit(yaml, { clock, dir: opts.dir, daemon: opts.daemon, random: () => 0.5 });
  return { kit, clock };
}

describe("the tick", () => {
  it("fires a daily job at its slot, once, and stores the next slot", async () => {
    const { kit, clock } = await kitAt(daily(), "2027-01-10T02:29:59.000Z");
    expect(kit.store.jobState.get("nightly")!.next_run).toBe("2027-01-10T02:30:00.000Z");
    expect(kit.engine.nextRun("nightly")!.utc).toBe("2027-01-10T02:30:00.000Z");
    clock.set(at("2027-01-10T02:30:00.000Z"));
    const runs = kit.runsOf("nightly");
    expect(runs).toHaveLength(1);
    expect(runs[0]!.scheduled_for).toBe("2027-01-10T02:30:00.000Z");
    expect(runs[0]!.trigger).toBe("schedule");
    expect(runs[0]!.triggered_by).toBe("scheduler");
    clock.advance(1000);
    kit.engine.testSeam().tick();
    expect(kit.runsOf("nightly")).toHaveLength(1);
    expect(kit.store.jobState.get("nightly")!.next_run).toBe("2027-01-11T02:30:00.000Z");
  });

  it("delays a scheduled trigger by the jitter", async () => {
    // random() = 0.5 with a 10 s jitter: due at 02:30:05
    const { kit, clock } = await kitAt(daily(), "2027-01-10T02:29:00.000Z", { daemon: "scheduler:\n  schedule_jitter: 10s\n" });
    clock.set(at("2027-01-10T02:30:04.000Z"));
    expect(kit.runsOf("nightly")).toHaveLength(0);
    clock.set(at("2027-01-10T02:30:05.000Z"));
    expect(kit.runsOf("nightly")).toHaveLength(1);
  });

  it("skips slots while paused and resumes after", async () => {
    const { kit, clock } = await kitAt(daily(), "2027-01-10T02:00:00.000Z");
    kit.engine.pause("nightly");
    clock.set(at("2027-01-10T02:30:00.000Z"));
    expect(kit.runsOf("nightly")).toHaveLength(0);
    kit.engine.resume("nightly");
    clock.set(at("2027-01-11T02:30:00.000Z"));
    expect(kit.runsOf("nightly")).toHaveLength(1);
  });

  it("does not run a slot twice when the clock jumps back an hour", async () => {
    const { kit, clock } = await kitAt(`jobs:\n  h:\n    command: "true"\n    frequency: hourly\n    timezone: UTC\n`, "2027-01-10T02:59:59.000Z");
    clock.set(at("2027-01-10T03:00:00.000Z"));
    expect(kit.runsOf("h")).toHaveLength(1);
    clock.set(at("2027-01-10T02:10:00.000Z")); // NTP step back
    kit.engine.testSeam().tick();
    clock.set(at("2027-01-10T03:00:30.000Z"));
    kit.engine.testSeam().tick();
    expect(kit.runsOf("h")).toHaveLength(1);
    clock.set(at("2027-01-10T04:00:00.000Z"));
    expect(kit.runsOf("h")).toHaveLength(2);
  });

  it("handles a forward clock jump by the catch-up rules", async () => {
    const yaml = (catchup: boolean) => `jobs:\n  h:\n    command: "true"\n    frequency: hourly\n    timezone: UTC\n    catchup: ${catchup}\n`;
    const off = await kitAt(yaml(false), "2027-01-10T02:59:59.000Z");
    off.clock.set(at("2027-01-10T05:20:00.000Z"));
    expect(off.kit.runsOf("h")).toHaveLength(0);
    expect(off.kit.log.entries.some((e) => e.level === "warn" && e.msg.includes("missed"))).toBe(true);
    expect(off.kit.engine.nextRun("h")!.utc).toBe("2027-01-10T06:00:00.000Z");

    const on = await kitAt(yaml(true), "2027-01-10T02:59:59.000Z");
    on.clock.set(at("2027-01-10T05:20:00.000Z"));
    const runs = on.kit.runsOf("h");
    expect(runs).toHaveLength(1);
    expect(runs[0]!.triggered_by).toBe("catchup");
    expect(runs[0]!.scheduled_for).toBe("2027-01-10T05:00:00.000Z");
  });
});

describe("catch-up after a restart", () => {
  async function restart(catchup: boolean, downUntil: string) {
    const first = await kitAt(daily(`    catchup: ${catchup}`), "2027-01-10T01:00:00.000Z");
    await startKit.stop(first.kit);
    return kitAt(daily(`    catchup: ${catchup}`), downUntil, { dir: first.kit.dir });
  }

  it("runs one missed slot at once inside the window", async () => {
    const { kit } = await restart(true, "2027-01-12T03:00:00.000Z");
    const runs = kit.runsOf("nightly");
    expect(runs).toHaveLength(1);
    expect(runs[0]!.triggered_by).toBe("catchup");
    expect(runs[0]!.scheduled_for).toBe("2027-01-12T02:30:00.000Z");
    expect(kit.engine.nextRun("nightly")!.utc).toBe("2027-01-13T02:30:00.000Z");
  });

  it("counts the latest missed slot, however many were missed", async () => {
    const { kit } = await restart(true, "2027-01-13T02:00:00.000Z"); // missed the 10th, 11th and 12th
    const runs = kit.runsOf("nightly");
    expect(runs).toHaveLength(1);
    expect(runs[0]!.scheduled_for).toBe("2027-01-12T02:30:00.000Z");
  });

  it("respects a short catchup_window", async () => {
    const first = await kitAt(daily("    catchup: true"), "2027-01-10T01:00:00.000Z");
    await startKit.stop(first.kit);
    const { kit } = await kitAt(daily("    catchup: true"), "2027-01-10T04:00:00.000Z", { dir: first.kit.dir, daemon: "scheduler:\n  catchup_window: 1h\n" });
    expect(kit.runsOf("nightly")).toHaveLength(0);
    expect(kit.log.entries.some((e) => e.msg.includes("outside scheduler.catchup_window"))).toBe(true);
  });

  it("logs the miss with catchup false", async () => {
    const { kit } = await restart(false, "2027-01-10T03:00:00.000Z");
    expect(kit.runsOf("nightly")).toHaveLength(0);
    expect(kit.log.entries.some((e) => e.msg.includes("catchup is false"))).toBe(true);
  });
});

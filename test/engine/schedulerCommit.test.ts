import { describe, expect, it } from "vitest";
import { failNextCommit } from "../../src/store/testkit.js";
import { FakeClock } from "../helpers/fakeClock.js";
import { engineKits } from "../helpers/engineKit.js";

const startKit = engineKits("svc-sched-commit-");

const at = (iso: string) => Date.parse(iso);

async function kitAt(yaml: string, now: string) {
  const clock = new FakeClock(at(now));
  const kit = await startKit(yaml, { clock, random: () => 0.5 });
  return { kit, clock };
}

describe("the scheduler announces a run only after its transaction commits", () => {
  it("a tick whose COMMIT fails emits no event, leaves no run and keeps the slot; the next tick creates it once", async () => {
    const { kit, clock } = await kitAt(
      `jobs:\n  nightly:\n    command: "echo tick"\n    frequency: daily\n    time: "0230"\n    timezone: UTC\n`,
      "2027-01-10T02:29:59.000Z",
    );
    const commit = failNextCommit(kit.store);
    clock.set(at("2027-01-10T02:30:00.000Z")); // the tick at the slot: its COMMIT fails

    expect(commit.failed()).toBe(1);
    const failure = kit.log.entries.find((e) => e.msg === "tick failed");
    expect(String((failure?.fields.err as Error | undefined)?.message)).toMatch(/FOREIGN KEY constraint failed/);
    expect(kit.transitions, "no run:status event for a rolled-back run").toEqual([]);
    expect(kit.runsOf("nightly")).toEqual([]);
    expect(kit.engine.testSeam().ctx.waiting.size).toBe(0);
    expect(kit.store.jobState.get("nightly")!.next_run).toBe("2027-01-10T02:30:00.000Z");
    expect(kit.engine.nextRun("nightly")!.utc).toBe("2027-01-10T02:30:00.000Z");

    clock.advance(1000); // the next tick commits
    const runs = kit.runsOf("nightly");
    expect(runs).toHaveLength(1);
    expect(runs[0]!.scheduled_for).toBe("2027-01-10T02:30:00.000Z");
    expect(kit.transitions[0]).toEqual({ id: runs[0]!.id, job: "nightly", from: null, to: "PENDING" });
    expect(kit.transitions.filter((t) => t.from === null)).toHaveLength(1);
    expect(kit.store.jobState.get("nightly")!.next_run).toBe("2027-01-11T02:30:00.000Z");
    await kit.waitRun(runs[0]!.id, ["SUCCESS"]);
  });

  it("a catch-up at startup whose COMMIT fails emits nothing and logs nothing of the catch-up", async () => {
    const yaml = `jobs:\n  nightly:\n    command: "echo tick"\n    frequency: daily\n    time: "0230"\n    timezone: UTC\n    catchup: true\n`;
    const { kit } = await kitAt(yaml, "2027-01-10T02:29:59.000Z");
    await startKit.stop(kit);
    // Restart a day later: the 02:30 slot was missed and is caught up in init's transaction.
    const clock = new FakeClock(at("2027-01-10T03:00:00.000Z"));
    const again = await startKit(yaml, { clock, dir: kit.dir, random: () => 0.5, start: false });
    const commit = failNextCommit(again.store);
    await expect(again.engine.start()).rejects.toThrow(/FOREIGN KEY constraint failed/);
    expect(commit.failed()).toBe(1);
    expect(again.transitions).toEqual([]);
    expect(again.runsOf("nightly")).toEqual([]);
    expect(again.log.entries.filter((e) => /catching up/.test(e.msg))).toEqual([]);
  });

  it("a reload whose COMMIT fails changes nothing: the previous config, its slots and next_run stay; a later reload applies", async () => {
    const daily = (time: string) => `jobs:\n  nightly:\n    command: "echo tick"\n    frequency: daily\n    time: "${time}"\n    timezone: UTC\n`;
    const { kit, clock } = await kitAt(daily("0230"), "2027-01-10T01:00:00.000Z");
    const before = kit.engine.testSeam().ctx.project;
    const commit = failNextCommit(kit.store);
    expect(() => kit.reloadYaml(daily("0130") + "  extra:\n    command: \"true\"\n")).toThrow(/FOREIGN KEY constraint failed/);
    expect(commit.failed()).toBe(1);
    expect(kit.engine.testSeam().ctx.project, "the engine keeps the previous config").toBe(before);
    expect(kit.engine.nextRun("nightly")!.utc, "the in-memory slot is the previous one").toBe("2027-01-10T02:30:00.000Z");
    expect(kit.store.jobState.get("nightly")!.next_run).toBe("2027-01-10T02:30:00.000Z");

    clock.set(at("2027-01-10T01:30:00.000Z")); // the new config's slot passes: nothing runs
    expect(kit.runsOf("nightly")).toEqual([]);

    kit.reloadYaml(daily("0200"));
    expect(kit.engine.nextRun("nightly")!.utc).toBe("2027-01-10T02:00:00.000Z");
    expect(kit.store.jobState.get("nightly")!.next_run).toBe("2027-01-10T02:00:00.000Z");
    clock.set(at("2027-01-10T02:00:00.000Z"));
    expect(kit.runsOf("nightly").map((r) => r.scheduled_for)).toEqual(["2027-01-10T02:00:00.000Z"]);
  });
});

describe("a job removed by a reload", () => {
  it("leaves no next_run behind: added back after a restart, it has missed nothing (no catch-up run)", async () => {
    const nightly = `  nightly:\n    command: "echo tick"\n    frequency: daily\n    time: "0230"\n    timezone: UTC\n    catchup: true\n`;
    const other = `  other:\n    command: "true"\n`;
    const { kit, clock } = await kitAt(`jobs:\n${nightly}${other}`, "2027-01-10T01:00:00.000Z");
    expect(kit.store.jobState.get("nightly")!.next_run).toBe("2027-01-10T02:30:00.000Z");
    kit.reloadYaml(`jobs:\n${other}`);
    expect(kit.store.jobState.get("nightly")!.next_run).toBeNull();
    clock.set(at("2027-01-12T10:00:00.000Z")); // the daemon runs on; nightly does not exist
    await startKit.stop(kit);
    const again = await startKit(`jobs:\n${nightly}${other}`, { clock: new FakeClock(at("2027-01-12T10:00:00.000Z")), dir: kit.dir, random: () => 0.5 });
    expect(again.runsOf("nightly")).toEqual([]);
    expect(again.log.entries.filter((e) => /catching up|missed/.test(e.msg))).toEqual([]);
    expect(again.engine.nextRun("nightly")!.utc).toBe("2027-01-13T02:30:00.000Z");
  });
});

describe("a scheduled run's process is started before anyone hears of the run", () => {
  it("at its PENDING event the run already holds its pool slot (spawned), and the events keep their order", async () => {
    const { kit, clock } = await kitAt(
      `jobs:\n  nightly:\n    command: "echo tick"\n    frequency: daily\n    time: "0230"\n    timezone: UTC\n`,
      "2027-01-10T02:29:59.000Z",
    );
    const seen: Array<{ to: string; running: number; waiting: number }> = [];
    kit.bus.on("run:status", ({ run }) => seen.push({ to: run.status, ...kit.engine.counts() }));
    clock.set(at("2027-01-10T02:30:00.000Z"));
    expect(seen[0]).toEqual({ to: "PENDING", running: 1, waiting: 0 });
    const run = kit.runsOf("nightly")[0]!;
    await kit.waitRun(run.id, ["SUCCESS", "FAILED"]);
    expect(seen.map((s) => s.to)).toEqual(["PENDING", "RUNNING", "SUCCESS"]);
    expect(kit.lines(run.id)).toEqual(["--- attempt 1 ---", "tick"]);
  });
});

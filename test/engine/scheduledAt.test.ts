/**
 * The logical time of a run (CONTRACT §7.3): a scheduled or catch-up run has
 * its slot as `scheduled_at`, a dependency-triggered run its cycle root's, a
 * manual run none; jobs read it as SVC_SCHEDULED_AT and {{ run.scheduled_at }},
 * and take their params' defaults (§7.2).
 */
import { describe, expect, it } from "vitest";
import { FakeClock } from "../helpers/fakeClock.js";
import { engineKits } from "../helpers/engineKit.js";

const startKit = engineKits("svc-slot-");

const at = (iso: string) => Date.parse(iso);

const YAML = `
jobs:
  extract:
    command: |
      echo "extract slot=$SVC_SCHEDULED_AT arg={{ run.scheduled_at }} level=$SVC_PARAM_LEVEL"; echo '{"n": 1}'
    frequency: daily
    time: "0230"
    timezone: UTC
    catchup: true
    output: {n: "json_field:n"}
    params:
      level: {type: integer, default: 3}
  transform:
    command: ["sh", "-c", "echo transform slot=$SVC_SCHEDULED_AT arg=$1 mode=$SVC_PARAM_MODE", "-", "{{ run.scheduled_at }}"]
    frequency: after:extract
    params:
      mode: {type: enum, values: [a, b], default: b}
`;

async function kitAt(now: string, dir?: string) {
  const clock = new FakeClock(at(now));
  const kit = await startKit(YAML, { clock, dir, random: () => 0.5 });
  return { kit, clock, dir: kit.dir };
}

describe("scheduled_at", () => {
  it("a scheduled run has its slot; its dependency run inherits it; both see it and their defaults", async () => {
    const { kit, clock } = await kitAt("2027-01-10T02:29:59.000Z");
    clock.set(at("2027-01-10T02:30:00.000Z"));
    const [extract] = kit.runsOf("extract");
    expect(extract!.scheduled_at).toBe("2027-01-10T02:30:00.000Z");
    expect(extract!.params).toEqual({ level: 3 });
    await kit.waitRun(extract!.id, ["SUCCESS"]);
    const transform = await kit.waitFor("transform", () => kit.runsOf("transform")[0]);
    expect(transform).toMatchObject({ trigger: "dependency", cycle_id: extract!.cycle_id, scheduled_at: "2027-01-10T02:30:00.000Z", params: { mode: "b" } });
    await kit.waitRun(transform.id, ["SUCCESS"]);
    expect(kit.lines(extract!.id)).toContain("extract slot=2027-01-10T02:30:00.000Z arg=2027-01-10T02:30:00.000Z level=3");
    expect(kit.lines(transform.id)).toContain("transform slot=2027-01-10T02:30:00.000Z arg=2027-01-10T02:30:00.000Z mode=b");
  });

  it("a manual run joining a scheduled run's cycle takes the cycle's slot (its dependents then inherit it)", async () => {
    const { kit, clock } = await kitAt("2027-01-10T02:29:59.000Z");
    clock.set(at("2027-01-10T02:30:00.000Z"));
    const [extract] = kit.runsOf("extract");
    await kit.waitRun(extract!.id, ["SUCCESS"]);
    await kit.waitRun((await kit.waitFor("transform", () => kit.runsOf("transform")[0])).id, ["SUCCESS"]);
    const again = kit.engine.runNow("extract", { triggeredBy: "test", cycleId: extract!.cycle_id });
    expect(again.scheduled_at).toBe("2027-01-10T02:30:00.000Z");
    await kit.waitRun(again.id, ["SUCCESS"]);
    expect(kit.lines(again.id)).toContain("extract slot=2027-01-10T02:30:00.000Z arg=2027-01-10T02:30:00.000Z level=3");
  });

  it("a manual run has none: SVC_SCHEDULED_AT and the placeholder are empty", async () => {
    const { kit } = await kitAt("2027-01-10T12:00:00.000Z");
    const run = kit.engine.runNow("extract", { triggeredBy: "test", params: { level: 7 } });
    expect(run.scheduled_at).toBeNull();
    await kit.waitRun(run.id, ["SUCCESS"]);
    expect(kit.lines(run.id)).toContain("extract slot= arg= level=7");
  });

  it("a catch-up run has the slot it catches up", async () => {
    const { kit, clock, dir } = await kitAt("2027-01-10T02:00:00.000Z");
    await startKit.stop(kit);
    clock.set(at("2027-01-10T05:00:00.000Z")); // the 02:30 slot passed while down
    const { kit: again } = await kitAt("2027-01-10T05:00:00.000Z", dir);
    const [run] = again.runsOf("extract");
    expect(run).toMatchObject({ trigger: "schedule", triggered_by: "catchup", scheduled_at: "2027-01-10T02:30:00.000Z" });
  });
});

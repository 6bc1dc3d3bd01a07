/** planTagRun and gateBlockers: pure, from a parsed svc.yaml and fixed run rows. */
import { describe, expect, it } from "vitest";
import { parseProjectText } from "../config/index.js";
import type { ProjectConfig } from "../config/types.js";
import type { RunRecord } from "../store/types.js";
import { gateBlockers } from "./gate.js";
import { planTagRun } from "./tagRun.js";

function project(yaml: string): ProjectConfig {
  const r = parseProjectText(yaml, "/tmp/svc.yaml", {}, { warnings: false });
  if (!r.ok) throw new Error(r.errors.map((e) => e.message).join("\n"));
  return r.value;
}

const ETL = `jobs:
  extract: {command: "true", tags: [etl]}
  extract-b: {command: "true", tags: [etl]}
  transform: {command: "true", depends_on: [extract, extract-b], tags: [etl]}
  untagged: {command: "true", frequency: "after:transform"}
  load: {command: "true", frequency: "after:untagged", tags: [etl]}
  report: {command: "true", frequency: daily, time: "0300", depends_on: [load], tags: [etl]}
  after-report: {command: "true", frequency: "after:report", tags: [etl]}
  other: {command: "true", tags: [ops]}
`;

describe("planTagRun", () => {
  it("roots are tagged jobs without a tagged ancestor; the rest follow by dependency triggering, upstreams first", () => {
    const plan = planTagRun(project(ETL), "etl", () => false);
    expect(plan.roots).toEqual(["extract", "extract-b"]);
    // load's tagged ancestor (transform) is reached through an untagged job: it follows, it is not a root.
    expect(plan.follow).toEqual(["transform", "untagged", "load"]);
    expect(plan.notTriggered.map((n) => n.job)).toEqual(["report", "after-report"]);
    expect(plan.notTriggered[0]!.why).toContain("report has frequency daily: its upstreams (load) only gate it");
    expect(plan.notTriggered[1]!.why).toContain("its upstream report is not triggered by this run");
  });

  it("a paused follower and what hangs below it are not triggered, and say so", () => {
    const plan = planTagRun(project(ETL), "etl", (j) => j === "transform");
    expect(plan.follow).toEqual([]);
    expect(plan.notTriggered.find((n) => n.job === "transform")!.why).toContain("transform is paused");
    expect(plan.notTriggered.find((n) => n.job === "load")!.why).toContain("its upstream untagged is not triggered");
  });

  it("an unknown tag has no roots", () => {
    expect(planTagRun(project(ETL), "nope", () => false)).toEqual({ tag: "nope", roots: [], follow: [], notTriggered: [] });
  });
});

let nextId = 1;
function run(job: string, status: RunRecord["status"], cycle = "c1"): RunRecord {
  return { id: nextId++, job_name: job, status, cycle_id: cycle } as RunRecord;
}

describe("gateBlockers (CONTRACT §3's gate, explained)", () => {
  it("open when every upstream succeeded in the cycle, or has no run in it and last succeeded", () => {
    const last = (j: string) => (j === "b" ? run("b", "SUCCESS", "old") : null);
    expect(gateBlockers(["a", "b"], [run("a", "FAILED"), run("a", "SUCCESS")], last)).toEqual([]);
  });

  it("names each upstream that holds it closed, and whether it can still open by itself", () => {
    const inCycle = [run("a", "RUNNING"), run("b", "FAILED")];
    const last = (j: string) => (j === "c" ? run("c", "FAILED", "old") : null);
    const blockers = gateBlockers(["a", "b", "c", "d"], inCycle, last);
    expect(blockers.map((b) => [b.job, b.kind])).toEqual([
      ["a", "active"],
      ["b", "ended"],
      ["c", "absent"],
      ["d", "absent"],
    ]);
    expect(blockers[1]!.text).toBe(`b is FAILED in this cycle (run ${inCycle[1]!.id})`);
    expect(blockers[2]!.text).toMatch(/^c has no run in this cycle and its last run \(\d+\) is FAILED$/);
    expect(blockers[3]!.text).toBe("d has no run in this cycle and never ran");
  });
});

/** gate.ts: one rule (CONTRACT §3), answered as a boolean for the dispatcher and as blockers for `svc why`. */
import { describe, expect, it } from "vitest";
import type { RunRecord, RunStatus } from "../store/types.js";
import { gateBlockers, gateIsOpen } from "./gate.js";

let nextId = 1;
const run = (job: string, status: RunStatus, cycle = "c1"): RunRecord => ({ id: nextId++, job_name: job, status, cycle_id: cycle }) as RunRecord;

describe("gateIsOpen", () => {
  const rows: [string, string[], RunRecord[], Record<string, RunStatus>, boolean][] = [
    ["no upstreams", [], [], {}, true],
    ["the upstream succeeded in the cycle", ["a"], [run("a", "SUCCESS")], {}, true],
    ["a retry of the upstream succeeded after a failure", ["a"], [run("a", "FAILED"), run("a", "SUCCESS")], {}, true],
    ["the upstream still runs", ["a"], [run("a", "RUNNING")], { a: "SUCCESS" }, false],
    ["the upstream failed in the cycle (its last run elsewhere succeeded)", ["a"], [run("a", "FAILED")], { a: "SUCCESS" }, false],
    ["no run in the cycle, last finished SUCCESS", ["a"], [], { a: "SUCCESS" }, true],
    ["no run in the cycle, last finished FAILED", ["a"], [], { a: "FAILED" }, false],
    ["no run in the cycle, never ran", ["a"], [], {}, false],
    ["one of two upstreams holds it", ["a", "b"], [run("a", "SUCCESS"), run("b", "SKIPPED")], {}, false],
  ];
  for (const [what, ups, inCycle, last, open] of rows) {
    it(`${what}: ${open ? "open" : "closed"}`, () => {
      const lastFinished = (j: string) => (last[j] ? run(j, last[j], "old") : null);
      expect(gateIsOpen(ups, inCycle, lastFinished)).toBe(open);
      expect(gateBlockers(ups, inCycle, lastFinished).length === 0).toBe(open);
    });
  }

  it("reads an upstream's last finished run only when it has no run in the cycle, and stops at the first that holds the gate", () => {
    const asked: string[] = [];
    const lastFinished = (j: string) => (asked.push(j), j === "b" ? run("b", "SUCCESS", "old") : null);
    expect(gateIsOpen(["a", "b", "c", "d"], [run("a", "SUCCESS")], lastFinished)).toBe(false);
    expect(asked).toEqual(["b", "c"]);
  });

  it("agrees with the dispatcher's former rule and with gateBlockers on every combination of two upstreams", () => {
    // The rule as dispatcher.ts had it before it used gate.ts: the oracle.
    const former = (ups: string[], inCycle: RunRecord[], lastFinished: (j: string) => RunRecord | null): boolean => {
      for (const up of ups) {
        const mine = inCycle.filter((r) => r.job_name === up);
        if (mine.some((r) => r.status === "SUCCESS")) continue;
        if (mine.length > 0) return false;
        if (lastFinished(up)?.status !== "SUCCESS") return false;
      }
      return true;
    };
    const statuses: RunStatus[] = ["PENDING", "RUNNING", "RETRYING", "SUCCESS", "FAILED", "SKIPPED"];
    const histories: RunStatus[][] = [[], ...statuses.map((s) => [s]), ...statuses.flatMap((s) => statuses.map((t) => [s, t]))];
    const lasts: (RunStatus | null)[] = [null, "SUCCESS", "FAILED"];
    let cases = 0;
    for (const ha of histories)
      for (const hb of histories)
        for (const la of lasts)
          for (const lb of lasts) {
            const inCycle = [...ha.map((s) => run("a", s)), ...hb.map((s) => run("b", s))];
            const last: Record<string, RunStatus | null> = { a: la, b: lb };
            const lastFinished = (j: string) => (last[j] ? run(j, last[j]!, "old") : null);
            const want = former(["a", "b"], inCycle, lastFinished);
            if (gateIsOpen(["a", "b"], inCycle, lastFinished) !== want || (gateBlockers(["a", "b"], inCycle, lastFinished).length === 0) !== want) {
              throw new Error(`disagree on a=${JSON.stringify(ha)} last ${la}, b=${JSON.stringify(hb)} last ${lb}: former says ${want}`);
            }
            cases++;
          }
    expect(cases).toBe(43 * 43 * 9);
  });
});

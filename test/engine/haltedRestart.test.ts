/**
 * A cycle halted by an `on_failure: stop` job stays halted across a restart (the engine keeps halted
 * cycles in memory; recovery finds them again in the runs): a retry waiting in it does not run, and
 * nothing downstream of it is made.
 */
import { describe, expect, it } from "vitest";
import { engineKits } from "../helpers/engineKit.js";

const startKit = engineKits("svc-halted-");
const YAML = `jobs:
  root:
    command: "true"
  a:
    command: "exit 1"
    depends_on: [root]
    on_failure: stop
  b:
    command: "if [ -f bmark ]; then echo ok; else touch bmark; exit 1; fi"
    depends_on: [root]
    retries: 1
    retry_delay: "fixed:2s"
  c:
    command: "echo c ran"
    depends_on: [b]
`;

describe("a halted cycle and a restart", () => {
  it("keeps the cycle halted: b's retry ends FAILED (pipeline stopped), c is never made", async () => {
    const kit = await startKit(YAML);
    const root = kit.engine.runNow("root", { triggeredBy: "cli" });
    await kit.waitRun(root.id, ["SUCCESS"]);
    const b = await kit.waitFor("b", () => kit.runsOf("b")[0]);
    await kit.waitRun(b.id, ["RETRYING"]);
    const a = await kit.waitFor("a FAILED", () => kit.runsOf("a").find((x) => x.status === "FAILED"));
    expect(kit.engine.testSeam().ctx.halted.has(a.cycle_id)).toBe(true);
    await startKit.stop(kit);

    const again = await startKit(YAML, { dir: kit.dir });
    expect(again.engine.testSeam().ctx.halted.has(a.cycle_id)).toBe(true);
    const ended = await again.waitRun(b.id, ["SUCCESS", "FAILED"], 10_000);
    expect([ended.status, ended.error]).toEqual(["FAILED", "pipeline stopped"]);
    await new Promise((r) => setTimeout(r, 300));
    expect(again.runsOf("c")).toEqual([]);
  });

  it("a person who carried on in the cycle (a manual run in it since) is not overruled by a restart", async () => {
    const kit = await startKit(YAML);
    const root = kit.engine.runNow("root", { triggeredBy: "cli" });
    await kit.waitRun(root.id, ["SUCCESS"]);
    const a = await kit.waitFor("a FAILED", () => kit.runsOf("a").find((x) => x.status === "FAILED"));
    const b = await kit.waitFor("b", () => kit.runsOf("b")[0]);
    await kit.waitRun(b.id, ["RETRYING"]);
    // Carry on: a manual run in the cycle (of c, which has no downstream job) un-halts it.
    const carry = kit.engine.runNow("c", { triggeredBy: "cli", cycleId: a.cycle_id });
    expect(kit.engine.testSeam().ctx.halted.has(a.cycle_id)).toBe(false);
    await kit.waitRun(carry.id, ["SUCCESS"]);
    await startKit.stop(kit);
    const again = await startKit(YAML, { dir: kit.dir });
    expect(again.engine.testSeam().ctx.halted.has(a.cycle_id)).toBe(false);
  });
});

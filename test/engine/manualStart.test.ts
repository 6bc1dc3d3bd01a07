/**
 * A manual run (or retry) that may start at once is created and started in one transaction
 * (issue 24, the cost of one run): its row and its RUNNING transition commit together or not at
 * all. A failed commit kills the process before it did anything and the caller gets the error;
 * no run row is left behind. When the run cannot start at once, it is created PENDING and waits,
 * as before.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { engineKits, type Kit } from "../helpers/engineKit.js";

const startKit = engineKits();

const YAML = `jobs:
  slow:
    command: "sleep 1; touch ran"
  quick:
    command: "echo hi"
    concurrency: allow
`;

/** Makes every job_state write of the start (lock_pid) throw a storage error while `armed`. */
function refuseStarts(k: Kit): { armed: boolean } {
  const state = { armed: true };
  const upsert = k.store.jobState.upsert.bind(k.store.jobState);
  k.store.jobState.upsert = (job, patch) => {
    if (state.armed && "lock_pid" in patch && patch.lock_pid !== null) throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
    return upsert(job, patch);
  };
  return state;
}

describe("a manual run that may start at once", () => {
  it("comes back RUNNING; its events are PENDING then RUNNING, then its end", async () => {
    const kit = await startKit(YAML);
    const run = kit.engine.runNow("quick", { triggeredBy: "cli" });
    expect(run.status).toBe("RUNNING");
    expect(run.pid).not.toBeNull();
    expect(kit.engine.counts()).toEqual({ running: 1, waiting: 0 }); // running, and not also queued
    expect(kit.store.jobState.get("quick")!.lock_pid).toBe(run.pid);
    expect(kit.statusesOf(run.id)).toEqual(["PENDING", "RUNNING"]);
    expect((await kit.waitRun(run.id, ["SUCCESS", "FAILED"])).status).toBe("SUCCESS");
    expect(kit.statusesOf(run.id)).toEqual(["PENDING", "RUNNING", "SUCCESS"]);
    expect(kit.lines(run.id)).toEqual(["--- attempt 1 ---", "hi"]);
  });

  it("is created and started in one commit: a refused start leaves no run, kills the process, and the caller gets the error", async () => {
    const kit = await startKit(YAML);
    const refused = refuseStarts(kit);
    expect(() => kit.engine.runNow("slow", { triggeredBy: "cli" })).toThrow(/database or disk is full/);
    // No row, no event: nobody hears of a run that was rolled back.
    expect(kit.runsOf("slow")).toEqual([]);
    expect(kit.transitions).toEqual([]);
    // The process was started (its id was the row's) and is killed at once: it never gets to `touch ran`.
    await kit.waitFor("the killed process to free its pool slot", () => kit.engine.counts().running === 0, 5_000);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(existsSync(join(kit.dir, "ran"))).toBe(false);
    expect(kit.engine.counts()).toEqual({ running: 0, waiting: 0 });
    // The engine carries on.
    refused.armed = false;
    const next = kit.engine.runNow("quick", { triggeredBy: "cli" });
    expect((await kit.waitRun(next.id, ["SUCCESS", "FAILED"])).status).toBe("SUCCESS");
  });

  it("waits PENDING behind the runs already waiting (FIFO), and starts when a slot frees", async () => {
    const kit = await startKit(YAML, { daemon: "executor:\n  pool_size: 1\n" });
    const first = kit.engine.runNow("slow", { triggeredBy: "cli" });
    const second = kit.engine.runNow("quick", { triggeredBy: "cli" });
    const third = kit.engine.runNow("quick", { triggeredBy: "cli" });
    expect([first.status, second.status, third.status]).toEqual(["RUNNING", "PENDING", "PENDING"]);
    const done = await Promise.all([second, third].map((r) => kit.waitRun(r.id, ["SUCCESS", "FAILED"])));
    expect(done.map((r) => r.status)).toEqual(["SUCCESS", "SUCCESS"]);
    expect(Date.parse(done[0]!.started_at!)).toBeLessThanOrEqual(Date.parse(done[1]!.started_at!));
    expect(Date.parse(done[0]!.started_at!)).toBeGreaterThanOrEqual(Date.parse((await kit.waitRun(first.id, ["SUCCESS"])).finished_at!));
  });
});

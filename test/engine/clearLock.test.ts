/** engine.clearLock: the one way api/ and cli/ change job_state.lock_pid (they hold a read-only store). */
import { describe, expect, it } from "vitest";
import { EngineError } from "../../src/engine/errors.js";
import { engineKits } from "../helpers/engineKit.js";

const startKit = engineKits();

describe("engine.clearLock", () => {
  it("clears a stale lock, refuses (409) while the job runs, and knows a job that is only in job_state", async () => {
    const kit = await startKit(`jobs:\n  slow:\n    command: "sleep 30"\n`, { daemon: "executor:\n  kill_grace: 300ms\n" });
    kit.store.jobState.upsert("slow", { lock_pid: 999_999 });
    kit.store.jobState.upsert("removed", { lock_pid: 888_888 });
    expect(kit.engine.clearLock("slow").lock_pid).toBeNull();
    expect(kit.engine.clearLock("removed").lock_pid).toBeNull();
    const unknown = (() => {
      try {
        kit.engine.clearLock("nope");
      } catch (e) {
        return e;
      }
    })();
    expect(unknown).toBeInstanceOf(EngineError);
    expect(unknown).toMatchObject({ code: "not_found", status: 404 });

    const run = kit.engine.runNow("slow", { triggeredBy: "cli" });
    const running = await kit.waitRun(run.id, ["RUNNING"]);
    expect(() => kit.engine.clearLock("slow")).toThrow(`job slow has a running run (${run.id}): its lock is live; cancel the run instead`);
    expect(kit.store.jobState.get("slow")!.lock_pid).toBe(running.pid);
  });
});

describe("lock_pid with more than one run of a job", () => {
  it("goes to the run still running when another ends, and to null when the last one ends", async () => {
    const kit = await startKit(`jobs:\n  both:\n    command: "if [ -f first ]; then sleep 0.3; else touch first; sleep 1.5; fi"\n    concurrency: allow\n`);
    const slow = kit.engine.runNow("both", { triggeredBy: "cli" });
    const slowRunning = await kit.waitFor("the slow run RUNNING", () => (kit.store.runs.get(slow.id)?.status === "RUNNING" ? kit.store.runs.get(slow.id) : null));
    const fast = kit.engine.runNow("both", { triggeredBy: "cli" });
    await kit.waitRun(fast.id, ["SUCCESS"]);
    expect(kit.store.runs.get(slow.id)!.status).toBe("RUNNING");
    // The job is still locked, by the run that still runs.
    expect(kit.store.jobState.get("both")!.lock_pid).toBe(slowRunning.pid);
    await kit.waitRun(slow.id, ["SUCCESS"]);
    expect(kit.store.jobState.get("both")!.lock_pid).toBeNull();
  });
});

/**
 * How the engine records the end of a run when something goes wrong on the way, and how its
 * drain reads time (issue 18, red flags): a run is never left RUNNING with nobody watching it,
 * and shutdown_timeout is measured on the injected Clock.
 */
import { describe, expect, it } from "vitest";
import type { JobStateRow } from "../../src/store/types.js";
import { FakeClock } from "../helpers/fakeClock.js";
import { engineKits, type Kit } from "../helpers/engineKit.js";

const startKit = engineKits();

/** Makes job_state writes that set `field` throw `make()` while `armed` is true. */
function breakJobState(k: Kit, field: keyof JobStateRow, make: () => Error): { armed: boolean } {
  const state = { armed: true };
  const upsert = k.store.jobState.upsert.bind(k.store.jobState);
  k.store.jobState.upsert = (job, patch) => {
    if (state.armed && field in patch) throw make();
    return upsert(job, patch);
  };
  return state;
}

describe("recording the end of a run", () => {
  it("ends the run FAILED with the error when a bug (not storage) breaks the write, and frees its slot", async () => {
    const kit = await startKit(`jobs:\n  hello:\n    command: "echo hi"\n`);
    const broken = breakJobState(kit, "last_success", () => new TypeError("policy bug: x is undefined"));
    const run = kit.engine.runNow("hello", { triggeredBy: "cli" });
    const failed = await kit.waitRun(run.id, ["FAILED", "SUCCESS"], 5_000);
    expect(failed.status).toBe("FAILED");
    expect(failed.error).toBe("internal error while recording the end of the run: policy bug: x is undefined");
    expect(failed.exit_code).toBe(0);
    expect(failed.finished_at).not.toBeNull();
    expect(failed.pid).toBeNull();
    expect(kit.statusesOf(run.id)).toEqual(["PENDING", "RUNNING", "FAILED"]); // no SUCCESS event of the rolled-back write
    const state = kit.store.jobState.get("hello")!;
    expect(state.lock_pid).toBeNull();
    expect(state.last_failure).toBe(failed.finished_at);
    expect(kit.engine.counts()).toEqual({ running: 0, waiting: 0 });
    expect(kit.notes.map((n) => n.event)).toEqual(["on_failure"]);
    expect(kit.log.entries.some((e) => e.level === "error" && e.msg.includes(`recording the end of run ${run.id} failed`))).toBe(true);
    // The engine carries on: the next run of the job is recorded in full.
    broken.armed = false;
    const next = kit.engine.runNow("hello", { triggeredBy: "cli" });
    expect((await kit.waitRun(next.id, ["SUCCESS", "FAILED"])).status).toBe("SUCCESS");
  });

  it("retries the write when the database refuses it (storage error), and then records the run as it ended", async () => {
    const kit = await startKit(`jobs:\n  hello:\n    command: "echo hi"\n`);
    const busy = () => Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" });
    const broken = breakJobState(kit, "last_success", busy);
    const run = kit.engine.runNow("hello", { triggeredBy: "cli" });
    await kit.waitFor("the refused write", () => kit.log.entries.find((e) => e.msg.includes("retrying every second")));
    expect(kit.store.runs.get(run.id)!.status).toBe("RUNNING");
    expect(kit.engine.counts().running).toBe(1); // the attempt keeps its slot meanwhile
    broken.armed = false;
    const done = await kit.waitRun(run.id, ["SUCCESS", "FAILED"], 5_000);
    expect(done.status).toBe("SUCCESS");
    expect(kit.engine.counts()).toEqual({ running: 0, waiting: 0 });
  });
});

describe("a graceful stop", () => {
  it("measures shutdown_timeout on the injected clock, not the wall clock", async () => {
    const clock = new FakeClock(Date.parse("2027-01-10T10:00:00.000Z"));
    const kit = await startKit(`jobs:\n  slow:\n    command: "sleep 30"\n`, {
      clock,
      daemon: "scheduler:\n  shutdown_timeout: 1h\nexecutor:\n  kill_grace: 300ms\n",
    });
    const run = kit.engine.runNow("slow", { triggeredBy: "cli" });
    await kit.waitRun(run.id, ["RUNNING"]);
    let stopped = false;
    const stopping = kit.engine.stop({ force: false }).then(() => (stopped = true));
    await new Promise((r) => setTimeout(r, 300));
    expect(stopped).toBe(false); // draining: the hour has not passed on the clock
    clock.advance(3_600_000);
    const inTime = await Promise.race([stopping, new Promise((r) => setTimeout(() => r(false), 5_000))]);
    expect(inTime).toBe(true);
    const ended = kit.store.runs.get(run.id)!;
    expect(ended.status).toBe("FAILED");
    expect(ended.error).toBe("killed: daemon shutdown timeout");
  });
});

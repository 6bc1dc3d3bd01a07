import { expect, it } from "vitest";
import { spawnMethod, testSeam } from "../../src/executor/posixSpawn.js";
import { engineKits } from "../helpers/engineKit.js";
import { describeUnless } from "../helpers/skip.js";

const startKit = engineKits();

const binding = {
  missing: spawnMethod === "posix_spawn" ? null : "needs the posix_spawn binding (Linux, built by npm install; not under SVC_SPAWN=fork): the pidfd watch is its own",
};

describeUnless(binding, "a run whose process can no longer be watched", () => {
  it("ends FAILED at once with the reason in its error and its log, instead of staying RUNNING", async () => {
    const kit = await startKit(`jobs:\n  long:\n    command: "echo started; sleep 60"\n    frequency: manual\n`);
    testSeam.failNextExitWatch();
    const run = kit.engine.runNow("long", { triggeredBy: "test" });
    const ended = await kit.waitRun(run.id, ["FAILED", "SUCCESS"], 10_000);
    const reason = "svcd lost track of the process (polling its pidfd failed: EBADF), so it killed its process group (SIGKILL) rather than leave it running unwatched";
    expect(ended.status).toBe("FAILED");
    expect(ended.error).toBe(reason);
    expect(kit.lines(run.id, ["stderr"])).toContain(`svc: ${reason}`);
    expect(kit.log.entries.some((e) => e.level === "error" && e.msg === `executor: ${reason}`)).toBe(true);
    expect(kit.engine.testSeam().ctx.attempts.size).toBe(0);
  });
});

/**
 * The native spawn path reports a child's exit in the async context of the spawn (spawn.c's
 * napi_async_init): AsyncLocalStorage and async_hooks see the exit callback as caused by the
 * spawn, as they do for child_process. Linux with the binding built (npm install) only.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { expect, it } from "vitest";
import { describeUnless } from "../../test/helpers/skip.js";
import { posixSpawn, spawnMethod } from "./posixSpawn.js";

const why = process.env.SVC_SPAWN === "fork" ? "SVC_SPAWN=fork: jobs are forked, the posix_spawn binding is not loaded" : "needs the posix_spawn binding (Linux, built by npm install)";
describeUnless({ missing: spawnMethod === "posix_spawn" ? null : why }, "posix_spawn's exit callback", () => {
  it("runs in the AsyncLocalStorage context the spawn was made in", async () => {
    const als = new AsyncLocalStorage<{ job: string }>();
    const seen = await als.run({ job: "ctx-check" }, () => {
      const child = posixSpawn("/bin/sh", ["-c", "exit 3"], { cwd: "/", env: { PATH: "/usr/bin:/bin" } });
      if (child === null || child instanceof Error) throw child ?? new Error("no binding");
      child.stdout.resume();
      child.stderr.resume();
      return new Promise<{ store: unknown; code: number | null }>((resolve) => {
        child.on("exit", (code: number | null) => resolve({ store: als.getStore(), code }));
      });
    });
    // Outside the run() the store is gone: the exit carried the spawn's context, not this one.
    expect(als.getStore()).toBeUndefined();
    expect(seen).toEqual({ store: { job: "ctx-check" }, code: 3 });
  });
});

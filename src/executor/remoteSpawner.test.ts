/**
 * The spawner helper, for real: the built dist/executor/spawnerMain.js
 * (npm test builds it first), real processes, real pipes passed over IPC.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { memoryLogger } from "../shared/logger.js";
import { isGroupAlive, processStartTime } from "./liveness.js";
import { RemoteSpawner } from "./remoteSpawner.js";
import { runWithTimeout } from "./runWithTimeout.js";
import { createHarness, waitFor } from "./testHarness.js";

const SCRIPT = join(import.meta.dirname, "..", "..", "dist", "executor", "spawnerMain.js");

/** Field `index` (1-based, after the command name) of /proc/<pid>/stat. */
function statField(pid: number, index: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[index - 3]!;
}

let h: ReturnType<typeof createHarness>;
let spawner: RemoteSpawner;
let log: ReturnType<typeof memoryLogger>;
beforeEach(() => {
  expect(existsSync(SCRIPT), `${SCRIPT} is missing: run npm run build:ts`).toBe(true);
  h = createHarness();
  log = memoryLogger();
  spawner = new RemoteSpawner({ script: SCRIPT, logger: log });
});
afterEach(async () => {
  await h.cleanup();
  spawner.close();
});

describe("RemoteSpawner: jobs started by the helper process", () => {
  it("runs a command: its lines, exit code and pid, with the helper as its parent", async () => {
    const r = h.start("echo hi; echo oops >&2; exit 3", {}, { spawner });
    expect(r.handle.startPending).toBe(true);
    expect(r.handle.pid).toBeNull();
    await r.handle.started;
    const pid = r.handle.pid!;
    expect(pid).toBeGreaterThan(1);
    expect(r.handle.pidStart).toMatch(/^\d+$/);
    expect(await r.exited).toEqual({ code: 3, signal: null, spawnError: null });
    expect(r.stdout).toEqual(["hi"]);
    expect(r.stderr).toEqual(["oops"]);
    expect(spawner.pid).not.toBeNull();
    expect(spawner.pid).not.toBe(process.pid);
  });

  it("starts the process in its own group, as a child of the helper, with the env given", async () => {
    const r = h.start('echo "$FOO"; pwd; sleep 0.3', { env: { PATH: h.env.PATH!, FOO: "bar baz" } }, { spawner });
    await r.handle.started;
    const pid = r.handle.pid!;
    expect(Number(statField(pid, 4))).toBe(spawner.pid); // ppid
    expect(Number(statField(pid, 5))).toBe(pid); // pgrp: its own group
    expect(r.handle.pidStart).toBe(processStartTime(pid));
    expect((await r.exited).code).toBe(0);
    expect(r.stdout).toEqual(["bar baz", h.dir]);
  });

  it("keeps the helper out of the daemon's process group (a Ctrl-C for svcd does not reach it)", async () => {
    spawner.start();
    await waitFor(() => spawner.pid !== null);
    const helper = spawner.pid!;
    expect(Number(statField(helper, 5))).toBe(helper);
    expect(Number(statField(helper, 5))).not.toBe(Number(statField(process.pid, 5)));
  });

  it("runs many at once, each with its own lines", async () => {
    const runs = Array.from({ length: 30 }, (_, i) => h.start(["sh", "-c", `echo start${i}; sleep 0.05; echo end${i}; exit ${i % 4}`], {}, { spawner }));
    const exits = await Promise.all(runs.map((r) => r.exited));
    runs.forEach((r, i) => {
      expect(r.stdout).toEqual([`start${i}`, `end${i}`]);
      expect(exits[i]!.code).toBe(i % 4);
    });
  });

  it("never loses the end of a process that exits at once (its pipes end before anyone listens)", async () => {
    for (let round = 0; round < 20; round++) {
      const runs = Array.from({ length: 5 }, () => h.start("exit 1", {}, { spawner }));
      for (const r of runs) expect((await r.exited).code).toBe(1);
    }
  });

  it("reports what cannot start in one line, like an in-process spawn", async () => {
    const missing = h.start(["/no/such/command"], {}, { spawner });
    expect((await missing.exited).spawnError).toMatch(/cannot start "\/no\/such\/command": command not found \(ENOENT\)/);
    const cwd = h.start("true", { cwd: join(h.dir, "gone") }, { spawner });
    expect((await cwd.exited).spawnError).toMatch(/working directory .*gone does not exist/);
  });

  it("carries out a stop asked for before the helper answered", async () => {
    const r = h.start("sleep 30", {}, { spawner });
    expect(r.handle.startPending).toBe(true);
    r.handle.stop();
    const exit = await r.exited;
    expect(exit.signal).toBe("SIGTERM");
  });

  it("times out through the helper: the whole group is killed", async () => {
    const handle = runWithTimeout(h.spec("sleep 30 & sleep 30"), { killGraceMs: 200, timeoutMs: 200, onLine: () => {}, spawner });
    await handle.started;
    const pid = handle.pid!;
    const exit = await handle.exited;
    expect(exit.timedOut).toBe(true);
    expect(await waitFor(() => !isGroupAlive(pid), 3_000)).toBe(true);
  });

  it("when the helper dies, its running jobs are killed and reported, and the next job gets a new helper", async () => {
    const r = h.start("sleep 30 & sleep 30", {}, { spawner });
    await r.handle.started;
    const pid = r.handle.pid!;
    const first = spawner.pid!;
    process.kill(first, "SIGKILL");
    const exit = await r.exited;
    expect(exit.signal).toBe("SIGKILL");
    expect(await waitFor(() => !isGroupAlive(pid), 3_000)).toBe(true);
    expect(log.entries.some((rec) => /spawner helper exited; 1 running job\(s\) were killed/.test(rec.msg))).toBe(true);

    const next = h.start("echo again", {}, { spawner });
    expect((await next.exited).code).toBe(0);
    expect(next.stdout).toEqual(["again"]);
    expect(spawner.pid).not.toBe(first);
    expect(spawner.usable).toBe(true);
  });

  it("falls back to spawning in-process when the helper script is missing", async () => {
    const broken = new RemoteSpawner({ script: join(h.dir, "missing.js"), logger: log });
    const r = h.start("echo fallback", {}, { spawner: broken });
    await r.exited;
    expect(broken.usable).toBe(false);
    expect(r.stdout).toEqual(["fallback"]);
    // A second start no longer goes through it: the pid is known at once.
    const again = h.start("sleep 0.1", {}, { spawner: broken });
    expect(again.handle.startPending).toBe(false);
    expect(Number(statField(again.handle.pid!, 4))).toBe(process.pid);
    await again.exited;
  });
});

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isGroupAlive, isProcessAlive } from "./liveness.js";
import { runWithTimeout } from "./runWithTimeout.js";
import { createHarness, groupMembers, isSettled, waitFor } from "./testkit.js";

let h: ReturnType<typeof createHarness>;
beforeEach(() => {
  h = createHarness();
});
afterEach(async () => {
  await h.cleanup();
});

// A shell with children and grandchildren, some in subshells, all sleeping.
const FAMILY = "sleep 1000 & (sleep 1000 &) ; sh -c 'sleep 1000 & sleep 1000' & echo ready; wait";

describe("stopping", () => {
  it("exit codes and signal names", async () => {
    expect((await h.start("exit 42").exited).code).toBe(42);
    expect(await h.start("kill -USR1 $$").exited).toEqual({ code: null, signal: "SIGUSR1", spawnError: null });
    expect(await h.start(["sh", "-c", "kill -9 $$"]).exited).toEqual({ code: null, signal: "SIGKILL", spawnError: null });
  });

  it("stop() kills children and grandchildren: the whole group is gone", async () => {
    const r = h.start(FAMILY);
    expect(await waitFor(() => r.stdout.includes("ready"))).toBe(true);
    const pgid = r.handle.pid!;
    expect(await waitFor(() => groupMembers(pgid).length >= 5)).toBe(true);
    r.handle.stop();
    const info = await r.exited;
    expect(info.signal).toBe("SIGTERM");
    expect(await waitFor(() => !isGroupAlive(pgid), 5_000)).toBe(true);
    expect(groupMembers(pgid)).toEqual([]);
  });

  it("a job that ignores SIGTERM gets SIGKILL after the grace period", async () => {
    const r = h.start("trap '' TERM; echo ready; sleep 1000 & wait", {}, { killGraceMs: 300 });
    expect(await waitFor(() => r.stdout.includes("ready"))).toBe(true);
    const t0 = Date.now();
    r.handle.stop();
    // Still there after SIGTERM (checked well before the grace ends).
    await new Promise((res) => setTimeout(res, 100));
    expect(await isSettled(r.exited)).toBe(false);
    const info = await r.exited;
    expect(info.signal).toBe("SIGKILL");
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    expect(await waitFor(() => !isGroupAlive(r.handle.pid!))).toBe(true);
  });

  it("a grandchild that ignores SIGTERM is killed even when the leader dies at once", async () => {
    const r = h.start("sh -c \"trap '' TERM; echo ready; sleep 1000\" & wait", {}, { killGraceMs: 10_000 });
    expect(await waitFor(() => r.stdout.includes("ready"))).toBe(true);
    const t0 = Date.now();
    r.handle.stop();
    await r.exited;
    // The drain window (200 ms), not the 10 s grace, ended it.
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(await waitFor(() => !isGroupAlive(r.handle.pid!))).toBe(true);
  });

  it("kill() sends SIGKILL at once", async () => {
    const r = h.start("trap '' TERM; echo ready; sleep 1000", {}, { killGraceMs: 60_000 });
    expect(await waitFor(() => r.stdout.includes("ready"))).toBe(true);
    r.handle.kill();
    expect((await r.exited).signal).toBe("SIGKILL");
  });

  it("stop() is idempotent and safe after exit", async () => {
    const r = h.start("echo ready; sleep 1000", {}, { killGraceMs: 200 });
    expect(await waitFor(() => r.stdout.includes("ready"))).toBe(true);
    r.handle.stop();
    r.handle.stop();
    r.handle.kill();
    const info = await r.exited;
    expect(info.code).toBeNull();
    r.handle.stop();
    r.handle.kill();
    const done = h.start("true");
    await done.exited;
    done.handle.stop();
    done.handle.kill();
  });

  it("a job that closes stdout and stderr and keeps running is tracked until stop()", async () => {
    const r = h.start("echo bye; exec >&- 2>&-; sleep 1000");
    expect(await waitFor(() => r.stdout.includes("bye"))).toBe(true);
    await new Promise((res) => setTimeout(res, 400));
    expect(await isSettled(r.exited)).toBe(false);
    expect(isProcessAlive(r.handle.pid!, r.handle.pidStart)).toBe(true);
    r.handle.stop();
    expect((await r.exited).signal).toBe("SIGTERM");
  });

  it("a job that closes stdout only still delivers stderr and its exit", async () => {
    const r = h.start("exec >&-; sleep 0.3; echo late >&2; exit 5");
    expect(await r.exited).toEqual({ code: 5, signal: null, spawnError: null });
    expect(r.stderr).toEqual(["late"]);
  });

  it("leftovers holding the pipes after the leader exits are killed after the drain window", async () => {
    const t0 = Date.now();
    const r = h.start("sleep 1000 & echo done");
    const info = await r.exited;
    expect(info.code).toBe(0);
    expect(r.stdout).toEqual(["done"]);
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(await waitFor(() => !isGroupAlive(r.handle.pid!))).toBe(true);
  });

  it("a process that left the group but holds the pipes cannot keep the run open", async () => {
    const t0 = Date.now();
    const r = h.start("setsid sleep 1000 & echo $!");
    expect((await r.exited).code).toBe(0);
    const escaped = Number(r.stdout[0]);
    try {
      // drain window (200 ms) + escaped-pipe bound (1 s), with slack for a busy machine
      expect(Date.now() - t0).toBeLessThan(10_000);
      expect(isProcessAlive(escaped, null)).toBe(true); // out of our reach, by design
    } finally {
      process.kill(escaped, "SIGKILL");
    }
  });

  it("a leftover still writing during the drain window is heard", async () => {
    const r = h.start("(sleep 0.05; echo from-child) & echo parent", {}, { drainMs: 5_000 });
    await r.exited;
    expect(r.stdout.sort()).toEqual(["from-child", "parent"]);
  });

  it("background processes that do not hold the pipes are killed with the group", async () => {
    const r = h.start("sleep 1000 >/dev/null 2>&1 & echo $!");
    expect((await r.exited).code).toBe(0);
    const bg = Number(r.stdout[0]);
    expect(await waitFor(() => !isProcessAlive(bg, null))).toBe(true);
  });
});

describe("runWithTimeout", () => {
  const run = (command: string, timeoutMs: number | null, killGraceMs = 300) =>
    runWithTimeout(h.spec(command), { timeoutMs, killGraceMs, onLine: () => {} });

  it("stops the whole group after the timeout and says so", async () => {
    const r = run(FAMILY, 300);
    const t0 = Date.now();
    const info = await r.exited;
    expect(info.timedOut).toBe(true);
    expect(info.signal).toBe("SIGTERM");
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect(await waitFor(() => !isGroupAlive(r.pid!))).toBe(true);
  });

  it("escalates to SIGKILL when SIGTERM is ignored", async () => {
    const info = await run("trap '' TERM; sleep 1000", 200, 200).exited;
    expect(info).toMatchObject({ timedOut: true, signal: "SIGKILL" });
  });

  it("a quick command does not time out", async () => {
    expect(await run("exit 2", 10_000).exited).toEqual({ code: 2, signal: null, spawnError: null, timedOut: false });
    expect((await run("true", null).exited).timedOut).toBe(false);
  });

  it("a stop() by the caller is not a timeout", async () => {
    const r = run("sleep 1000", 60_000);
    r.stop();
    expect(await r.exited).toMatchObject({ timedOut: false, signal: "SIGTERM" });
  });

  it("a spawn failure is reported, not a timeout", async () => {
    const r = runWithTimeout(h.spec(["/nonexistent/x"]), { timeoutMs: 10, killGraceMs: 10, onLine: () => {} });
    const info = await r.exited;
    expect(info.timedOut).toBe(false);
    expect(info.spawnError).toMatch(/not found/);
  });
});

import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { once } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import { isGroupAlive, isProcessAlive, killGroup, ownsGroup, processStartTime } from "./liveness.js";
import { groupMembers, waitFor } from "./testkit.js";

const NO_SUCH_PID = 2 ** 30; // above any pid_max

const children: ChildProcess[] = [];
function spawnGroup(script: string): ChildProcess {
  const child = spawn("/bin/sh", ["-c", script], { detached: true, stdio: "ignore" });
  children.push(child);
  return child;
}
afterEach(async () => {
  for (const c of children) {
    if (c.exitCode === null && c.signalCode === null) {
      try {
        process.kill(-c.pid!, "SIGKILL");
      } catch {
        // already gone
      }
      await once(c, "exit");
    }
  }
  children.length = 0;
});

/** Block the event loop (so Node cannot reap a child) until `cond` or `ms`. */
function blockUntil(cond: () => boolean, ms: number): boolean {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (cond()) return true;
    Atomics.wait(cell, 0, 0, 5);
  }
  return cond();
}

const procState = (pid: number): string | null => {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "latin1");
    return s.slice(s.lastIndexOf(")") + 2).split(" ")[0] ?? null;
  } catch {
    return null;
  }
};

describe("liveness probes", () => {
  it("processStartTime reads field 22 of /proc/<pid>/stat", () => {
    const st = processStartTime(process.pid);
    expect(st).toMatch(/^\d+$/);
    expect(processStartTime(process.pid)).toBe(st);
    expect(processStartTime(NO_SUCH_PID)).toBeNull();
    expect(processStartTime(0)).toBeNull();
    expect(processStartTime(-5)).toBeNull();
    expect(processStartTime(1.5)).toBeNull();
  });

  it("isProcessAlive checks the start time to guard against pid reuse", () => {
    const st = processStartTime(process.pid)!;
    expect(isProcessAlive(process.pid, st)).toBe(true);
    expect(isProcessAlive(process.pid, null)).toBe(true);
    expect(isProcessAlive(process.pid, String(Number(st) + 1))).toBe(false);
    expect(isProcessAlive(NO_SUCH_PID, null)).toBe(false);
    expect(isProcessAlive(0, null)).toBe(false);
  });

  it("a process is dead once it exits", async () => {
    const c = spawnGroup("exit 0");
    const st = processStartTime(c.pid!);
    await once(c, "exit");
    expect(isProcessAlive(c.pid!, st)).toBe(false);
    expect(isGroupAlive(c.pid!)).toBe(false);
  });

  it("zombies count as gone for both probes", () => {
    const c = spawnGroup("exit 0");
    const pid = c.pid!;
    // The loop is blocked, so Node cannot reap it: it stays a zombie.
    expect(blockUntil(() => procState(pid) === "Z", 5_000)).toBe(true);
    expect(() => process.kill(-pid, 0)).not.toThrow(); // signal 0 alone would say "alive"
    expect(isProcessAlive(pid, null)).toBe(false);
    expect(isGroupAlive(pid)).toBe(false);
  });

  it("a group whose leader exited is alive while a member runs", async () => {
    const c = spawnGroup("sleep 1000 & echo $! > /dev/null");
    await once(c, "exit");
    expect(isProcessAlive(c.pid!, null)).toBe(false);
    expect(isGroupAlive(c.pid!)).toBe(true);
    await killGroup(c.pid!, 1_000);
    expect(isGroupAlive(c.pid!)).toBe(false);
  });

  it("never probes group 0 or 1", () => {
    expect(isGroupAlive(0)).toBe(false);
    expect(isGroupAlive(1)).toBe(false);
    expect(isGroupAlive(-3)).toBe(false);
  });
});

describe("ownsGroup (crash recovery)", () => {
  it("is true for the recorded leader and false when its pid was reused", async () => {
    const c = spawnGroup("sleep 1000");
    const st = processStartTime(c.pid!)!;
    expect(ownsGroup(c.pid!, st)).toBe(true);
    expect(ownsGroup(c.pid!, null)).toBe(true);
    expect(ownsGroup(c.pid!, String(Number(st) - 1))).toBe(false);
  });

  it("is true while orphans of a dead leader remain, false once all are gone", async () => {
    const c = spawnGroup("sleep 1000 & exit 0");
    const st = processStartTime(c.pid!)!;
    await once(c, "exit");
    expect(ownsGroup(c.pid!, st)).toBe(true);
    await killGroup(c.pid!, 1_000);
    expect(ownsGroup(c.pid!, st)).toBe(false);
  });
});

describe("killGroup", () => {
  it("SIGTERM is enough for a well-behaved group", async () => {
    const c = spawnGroup("sleep 1000 & sleep 1000 & wait");
    const pgid = c.pid!;
    expect(await waitFor(() => groupMembers(pgid).length === 3)).toBe(true);
    const t0 = Date.now();
    await killGroup(pgid, 10_000);
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(isGroupAlive(pgid)).toBe(false);
  });

  it("SIGKILLs what ignores SIGTERM after the grace", async () => {
    const c = spawnGroup("trap '' TERM; sleep 1000 & (trap '' TERM; sleep 1000) & wait");
    const pgid = c.pid!;
    expect(await waitFor(() => groupMembers(pgid).length >= 3)).toBe(true);
    const t0 = Date.now();
    await killGroup(pgid, 300);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    expect(isGroupAlive(pgid)).toBe(false);
    expect(groupMembers(pgid)).toEqual([]);
  });

  it("resolves at once for a group that is gone", async () => {
    const exited = spawnGroup("exit 0");
    await once(exited, "exit");
    // A grace of 10 minutes: a killGroup that waited for it is still waiting when the 5 s timer fires.
    // 5 s is safe: the correct path is one kill(-pgid, 0) that fails, microseconds even on a loaded machine.
    for (const pgid of [NO_SUCH_PID, exited.pid!]) {
      let timer: NodeJS.Timeout | undefined;
      const outcome = await Promise.race([
        killGroup(pgid, 600_000).then(() => "resolved"),
        new Promise((r) => (timer = setTimeout(() => r("still waiting"), 5_000))),
      ]);
      clearTimeout(timer);
      expect([pgid, outcome]).toEqual([pgid, "resolved"]);
    }
  });
});

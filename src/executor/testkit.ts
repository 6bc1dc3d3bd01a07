/**
 * Helpers for the executor's tests (real subprocesses). Every handle started
 * through `harness.start` is SIGKILLed in `harness.cleanup`, so a failing test
 * leaks no process.
 */
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isGroupAlive } from "./liveness.js";
import { startProcess } from "./startProcess.js";
import type { ExitInfo, OutStream, ProcessHandle, SpawnSpec, StartOptions } from "./types.js";

export interface Captured {
  handle: ProcessHandle;
  stdout: string[];
  stderr: string[];
  exited: Promise<ExitInfo>;
}

/** Poll `cond` every 20 ms until true or `ms` passed; returns the last result. */
export async function waitFor(cond: () => boolean, ms = 5_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (cond()) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Whether a promise has settled, checked after the current macrotask queue drains. */
export async function isSettled(p: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void p.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((r) => setImmediate(r));
  return settled;
}

/** Pids of the live (non-zombie) processes in group `pgid`, from /proc. */
export function groupMembers(pgid: number): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "latin1");
      const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(rest[2]) === pgid && rest[0] !== "Z") pids.push(Number(name));
    } catch {
      // the process went away while we looked: not a member
    }
  }
  return pids;
}

export function createHarness() {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "svc-exec-")));
  const handles: ProcessHandle[] = [];
  const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin" };

  const spec = (command: string | string[], over: Partial<SpawnSpec> = {}): SpawnSpec => ({
    command,
    shell: "/bin/sh",
    cwd: dir,
    env,
    ...over,
  });

  const start = (
    command: string | string[],
    over: Partial<SpawnSpec> = {},
    opts: Partial<StartOptions> = {},
  ): Captured => {
    const stdout: string[] = [];
    const stderr: string[] = [];
    const onLine = (s: OutStream, l: string): void => void (s === "stdout" ? stdout : stderr).push(l);
    const handle = startProcess(spec(command, over), { killGraceMs: 2_000, onLine, ...opts });
    handles.push(handle);
    return { handle, stdout, stderr, exited: handle.exited };
  };

  const cleanup = async (): Promise<void> => {
    for (const h of handles) h.kill();
    await Promise.all(handles.map((h) => h.exited));
    for (const h of handles) if (h.pid !== null) await waitFor(() => !isGroupAlive(h.pid!), 5_000);
    handles.length = 0;
    rmSync(dir, { recursive: true, force: true });
  };

  return { dir, env, spec, start, cleanup };
}

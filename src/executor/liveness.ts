/**
 * Liveness probes over /proc, for crash recovery and for checking that a
 * process group is really gone.
 *
 * Zombies count as gone: a killed grandchild is re-parented to PID 1, which
 * here can take 200 ms or more to reap it (ENVIRONMENT.md), yet it runs no
 * code and holds no pipe.
 *
 * Linux only for the start-time guard. Without /proc, `processStartTime`
 * returns null and the probes fall back to `kill(pid, 0)`.
 */
import { closeSync, openSync, readdirSync, readSync } from "node:fs";

interface ProcStat {
  state: string;
  pgrp: number;
  startTime: string;
}

/**
 * Scratch space for readStat, only used synchronously. A stat line is at most
 * ~1 KB (52 numeric fields and a 16-byte command name). open+read into it costs
 * half of readFileSync, and it is read on every spawn.
 */
const statBuf = Buffer.allocUnsafe(4096);

/** Parse /proc/<pid>/stat. The command name (field 2) may hold spaces and parentheses. */
function readStat(pid: number | string): ProcStat | null {
  let text: string;
  try {
    const fd = openSync(`/proc/${pid}/stat`, "r");
    try {
      text = statBuf.toString("latin1", 0, readSync(fd, statBuf, 0, statBuf.length, 0));
    } finally {
      closeSync(fd);
    }
  } catch {
    return null; // gone (ENOENT/ESRCH) or no /proc
  }
  const close = text.lastIndexOf(")");
  if (close === -1) return null;
  // After "pid (comm) ": field 3 (state) is index 0, field 5 (pgrp) index 2, field 22 (starttime) index 19.
  const rest = text.slice(close + 2).split(" ");
  const state = rest[0];
  const pgrp = Number(rest[2]);
  const startTime = rest[19];
  if (state === undefined || startTime === undefined || !Number.isInteger(pgrp)) return null;
  return { state, pgrp, startTime };
}

const isDead = (state: string): boolean => state === "Z" || state === "X" || state === "x";

/** Whether /proc is there (a fact of the machine, read once at load). */
const HAS_PROC = readStat("self") !== null;

/**
 * process.kill, returning the errno code instead of throwing. ESRCH is the
 * common answer (checked at the end of every run), and the stack trace of the
 * thrown error is most of its cost, so none is captured.
 */
function sendSignal(target: number, signal: NodeJS.Signals | 0): string | null {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    process.kill(target, signal);
    return null;
  } catch (e: unknown) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === undefined) throw e; // not a system error: a bug (bad signal name)
    return code;
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** Signal 0 probe: true when something with this pid (or -pgid) exists, zombies included. */
function signalZeroExists(target: number): boolean {
  const code = sendSignal(target, 0);
  return code === null || code === "EPERM"; // EPERM: it exists but belongs to someone else
}

/** The process's start time (clock ticks since boot, /proc/<pid>/stat field 22), or null. */
export function processStartTime(pid: number): string | null {
  if (!Number.isInteger(pid) || pid <= 0) return null;
  return readStat(pid)?.startTime ?? null;
}

/**
 * True when `pid` runs and is the same process that was recorded: its start
 * time equals `pidStart` (a different one means the pid was reused). A zombie
 * is not alive. With `pidStart` null only existence is checked.
 */
export function isProcessAlive(pid: number, pidStart: string | null): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (!HAS_PROC) return signalZeroExists(pid);
  const stat = readStat(pid);
  if (stat === null || isDead(stat.state)) return false;
  return pidStart === null || stat.startTime === pidStart;
}

/** True when any process of group `pgid` is left that is not a zombie. */
export function isGroupAlive(pgid: number): boolean {
  if (!Number.isInteger(pgid) || pgid <= 1) return false;
  // Fast path: one syscall answers "nobody left" (the common case).
  if (!signalZeroExists(-pgid)) return false;
  if (!HAS_PROC) return true;
  return groupHasLiveMember(pgid);
}

function groupHasLiveMember(pgid: number): boolean {
  // Check the leader first: it is usually the one still running.
  const leader = readStat(pgid);
  if (leader !== null && leader.pgrp === pgid && !isDead(leader.state)) return true;
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return true; // cannot tell: the signal probe said something exists
  }
  for (const name of names) {
    const c = name.charCodeAt(0);
    if (c < 48 || c > 57) continue; // not a pid directory
    const stat = readStat(name);
    if (stat !== null && stat.pgrp === pgid && !isDead(stat.state)) return true;
  }
  return false;
}

/**
 * True when process group `pgid` still holds live processes of the run that
 * was recorded with leader pid `pgid` and start time `pidStart` (crash
 * recovery: such a run cannot be adopted, its pipes are gone; kill it).
 *
 * Why this is safe against pid reuse: Linux does not reuse a pid while it is
 * still some group's id. So when a process with that pid runs with another
 * start time, the recorded group is necessarily gone. When no process has
 * that pid, the remaining members are the recorded leader's orphans (or, in
 * the rare case that the pid was reused by a new group leader which exited in
 * turn, that group's).
 */
export function ownsGroup(pgid: number, pidStart: string | null): boolean {
  const leader = readStat(pgid);
  if (leader !== null && !isDead(leader.state)) {
    if (pidStart !== null && leader.startTime !== pidStart) return false; // pid reused
    return leader.pgrp === pgid || isGroupAlive(pgid);
  }
  return isGroupAlive(pgid);
}

/**
 * Send `signal` to the whole group. Returns false when it could not be sent:
 * the group is gone (ESRCH) or is not ours to signal (EPERM).
 */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  if (!Number.isInteger(pgid) || pgid <= 1) return false; // never kill(-1) or kill(0)
  const code = sendSignal(-pgid, signal);
  if (code === null) return true;
  if (code === "ESRCH" || code === "EPERM") return false;
  throw new Error(`kill(-${pgid}, ${signal}) failed: ${code}`);
}

/** SIGTERM, then SIGCONT so that a stopped process can act on it (as systemd does). */
export function terminateGroup(pgid: number): boolean {
  if (!signalGroup(pgid, "SIGTERM")) return false;
  signalGroup(pgid, "SIGCONT");
  return true;
}

const POLL_MS = 25;
/** After SIGKILL, how long to wait for the group to disappear before giving up. */
const AFTER_KILL_WAIT_MS = 2_000;

/** Poll until the group has no live member or `ms` have passed; true when gone. */
export async function waitGroupGone(pgid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (!isGroupAlive(pgid)) return true;
    const left = deadline - Date.now();
    if (left <= 0) return false;
    await new Promise((r) => setTimeout(r, Math.min(POLL_MS, left)));
  }
}

/**
 * Stop a process group we no longer hold a handle for (crash recovery):
 * SIGTERM, wait up to `graceMs` for it to go, then SIGKILL and wait a bounded
 * time (2 s). Resolves without error when the group is already gone.
 */
export async function killGroup(pgid: number, graceMs: number): Promise<void> {
  if (!isGroupAlive(pgid)) return;
  if (!terminateGroup(pgid)) return;
  if (await waitGroupGone(pgid, graceMs)) return;
  if (!signalGroup(pgid, "SIGKILL")) return;
  await waitGroupGone(pgid, AFTER_KILL_WAIT_MS);
}

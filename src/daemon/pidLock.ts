import { existsSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Logger } from "../shared/logger.js";
import { SvcError } from "../shared/svcError.js";
import { sleepSync } from "../shared/sleepSync.js";
import { takeFileLock } from "../store/fileLock.js";

/** The daemon-already-running error (CONTRACT §1); its message is what `svc start` prints. */
export class LockHeldError extends SvcError {
  constructor(
    readonly pid: number,
    readonly path: string,
  ) {
    super("conflict", `daemon already running (pid ${pid}); lock file ${path}`);
    this.name = "LockHeldError";
  }
}

export interface PidLock {
  readonly path: string;
  release(): void;
}

/**
 * Takes the daemon lock of a data directory (SPEC rule 9): `<data>/svcd.lock`,
 * held, and `<data>/svcd.pid`, which says by whom. A running daemon refuses
 * (LockHeldError, with the pid its pid file names); a pid file left by a
 * daemon that died is replaced with a warning.
 *
 * The lock is the kernel's (an fcntl lock on `svcd.lock`, taken through
 * SQLite's exclusive locking mode): it is held until the process closes it or
 * dies, so there is no stale lock to judge and take over. A pid file alone
 * cannot be that: two daemons starting at once each read the other's file as
 * half-written or stale, took it over, and both ran (seen with six started at
 * once). `svcd.lock` is never deleted (a racer holding the old file open would
 * lock a file nobody else sees); the pid file is written under another name and
 * renamed into place, so it is never seen half-written.
 */
export function acquirePidLock(path: string, log: Logger, pid = process.pid): PidLock {
  const held = takeFileLock(join(dirname(path), "svcd.lock"));
  if (held === null) throw new LockHeldError(waitForHolder(path), path);
  try {
    const before = readHolder(path);
    if (before !== "gone") log.warn({ path, stale_pid: before }, "taking over a stale daemon lock (its process is gone)");
    const own = `${path}.${pid}.tmp`;
    writeFileSync(own, `${pid}\n`, { mode: 0o600 });
    renameSync(own, path);
  } catch (e) {
    held.release();
    throw e;
  }
  return {
    path,
    release() {
      try {
        if (readFileSync(path, "utf8").trim() === String(pid)) unlinkSync(path);
      } catch {
        // already gone: nothing to release
      }
      held.release();
    },
  };
}

/** The holder's pid: it writes its pid file right after taking the lock, so a racer may read it a moment late. */
function waitForHolder(path: string): number {
  const until = Date.now() + 2_000;
  for (;;) {
    const holder = readHolder(path);
    if (typeof holder === "number" || Date.now() >= until) return typeof holder === "number" ? holder : 0;
    sleepSync(10);
  }
}

/** The pid in a lock file; null for garbage; "gone" when there is no file (a racer moved it). */
function readHolder(path: string): number | null | "gone" {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return "gone";
    return null;
  }
  const n = Number.parseInt(text.trim(), 10);
  return Number.isInteger(n) && n > 0 ? n : null;
}

/**
 * Whether a process holds the daemon lock of the data directory whose pid file is `pidPath` (probed:
 * taken and let go at once when free). `svc start` asks this, not whether the pid file's pid is
 * alive: a daemon killed with SIGKILL leaves its pid file, and the pid may be another process's now.
 */
export function daemonLockHeld(pidPath: string): boolean {
  const lockPath = join(dirname(pidPath), "svcd.lock");
  if (!existsSync(lockPath)) return false;
  const probe = takeFileLock(lockPath, 0);
  if (probe === null) return true;
  probe.release();
  return false;
}

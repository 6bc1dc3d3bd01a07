import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import type { Logger } from "../shared/logger.js";
import { SvcError } from "../shared/svcError.js";

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
 * Takes `<data>/svcd.pid` by exclusive create (SPEC rule 9). A lock whose pid
 * is alive refuses; a stale one (dead pid, garbage) is taken over with a
 * warning. Creation is atomic (O_EXCL), so two daemons racing for a stale
 * lock cannot both win: the loser sees EEXIST on its retry.
 */
export function acquirePidLock(path: string, log: Logger, pid = process.pid): PidLock {
  for (let tries = 0; tries < 3; tries++) {
    try {
      const fd = openSync(path, "wx", 0o600);
      try {
        writeSync(fd, `${pid}\n`);
      } finally {
        closeSync(fd);
      }
      return {
        path,
        release() {
          try {
            if (readFileSync(path, "utf8").trim() === String(pid)) unlinkSync(path);
          } catch {
            // already gone: nothing to release
          }
        },
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
    const holder = readHolder(path);
    if (holder !== null && holder !== pid && isAlive(holder)) throw new LockHeldError(holder, path);
    log.warn({ path, stale_pid: holder }, "taking over a stale daemon lock (its process is gone)");
    try {
      unlinkSync(path);
    } catch {
      // someone else removed it first: retry the exclusive create
    }
  }
  throw new Error(`could not take the daemon lock ${path}: another daemon is starting at the same time`);
}

function readHolder(path: string): number | null {
  try {
    const n = Number.parseInt(readFileSync(path, "utf8").trim(), 10);
    return Number.isInteger(n) && n > 0 ? n : null;
  } catch {
    return null;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

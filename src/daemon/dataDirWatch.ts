import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../shared/logger.js";
import type { Undo } from "./parts.js";

/** How often the daemon checks that its data directory and database file are still there. */
const DATA_DIR_CHECK_MS = 2_000;

/**
 * A data directory (or database file) removed under the running daemon
 * would take every later write with it: SQLite keeps writing to the
 * unlinked file, which is gone when the daemon exits. So the daemon
 * checks every 2 s, and when the database file or the PID lock is gone it
 * says so and calls `lost` once (not while the daemon is already stopping):
 * the daemon then stops (draining running
 * jobs as a graceful stop does), writes the open database back to its path
 * (database.ts) and starts again (`restartRequested`): nothing recorded is
 * lost and the daemon serves on. Returns how to stop watching.
 */
export function watchDataDir(
  dataDir: string,
  db: { path: string; opened: { dev: number; ino: number } },
  log: Logger,
  daemon: { stopping(): boolean; lost(how: { saveDatabase: boolean }): void },
): Undo {
  const pidFile = join(dataDir, "svcd.pid");
  // The kernel lock is on this file: removed (or replaced), another daemon could take a new one beside
  // us. Lost like the pid file: the restart takes the lock again, or finds the other daemon and stops.
  const lockFile = join(dataDir, "svcd.lock");
  const lockId = fileId(lockFile);
  const timer = setInterval(() => {
    let problem: string | null = null;
    let saveDatabase = false;
    try {
      const now = statSync(db.path);
      if (now.dev !== db.opened.dev || now.ino !== db.opened.ino) {
        problem = `the database file ${db.path} was replaced`;
        saveDatabase = true;
      }
    } catch {
      problem = `the database file ${db.path} was removed`;
      saveDatabase = true;
    }
    if (!existsSync(pidFile)) problem ??= `the PID lock ${pidFile} was removed`;
    if (lockId !== null) {
      const now = fileId(lockFile);
      if (now === null || now.dev !== lockId.dev || now.ino !== lockId.ino || now.born !== lockId.born) {
        problem ??= `the daemon lock ${lockFile} was ${now === null ? "removed" : "replaced"}`;
      }
    }
    if (problem === null || daemon.stopping()) return;
    clearInterval(timer);
    const dirGone = !existsSync(dataDir);
    log.error(
      { data_dir: dataDir, database: db.path },
      `${dirGone ? `the data directory ${dataDir} was removed (${problem})` : problem} while svcd was running: ` +
        `stopping, writing the open database back${saveDatabase ? "" : " (not needed)"} and starting again`,
    );
    daemon.lost({ saveDatabase });
  }, DATA_DIR_CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** A file's identity: a new file may get a removed one's inode number at once, not its birth (or change) time. */
function fileId(path: string): { dev: number; ino: number; born: number } | null {
  try {
    const st = statSync(path);
    return { dev: st.dev, ino: st.ino, born: st.birthtimeMs || st.ctimeMs };
  } catch {
    return null;
  }
}

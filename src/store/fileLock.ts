/**
 * A lock the kernel holds for this process until it closes it or dies: an
 * fcntl lock on a small SQLite file, taken through SQLite's exclusive locking
 * mode (Node has no flock). Used by the daemon lock (src/daemon/pidLock.ts).
 */
import { chmodSync } from "node:fs";
import Database from "better-sqlite3";
import { sleepSync } from "../shared/sleepSync.js";

export interface FileLock {
  release(): void;
}

/**
 * Takes the lock at `path` (created 0600 if missing); null when another
 * process (or connection) holds it for `patienceMs`. Two takers at once can
 * each hold SQLite's shared lock and refuse each other the exclusive one, so a
 * refused attempt closes its connection (dropping all its locks) and tries
 * again after a random pause.
 */
export function takeFileLock(path: string, patienceMs = 300): FileLock | null {
  const until = Date.now() + patienceMs;
  for (;;) {
    const db = new Database(path, { timeout: 0 });
    try {
      chmodSync(path, 0o600);
      db.pragma("locking_mode = EXCLUSIVE");
      // A write: the exclusive lock is taken, and in this mode kept until the connection closes.
      db.exec("BEGIN EXCLUSIVE; PRAGMA user_version = 1; COMMIT");
      return {
        release() {
          if (db.open) db.close();
        },
      };
    } catch (e) {
      db.close();
      if ((e as { code?: string }).code !== "SQLITE_BUSY") throw e;
    }
    if (Date.now() >= until) return null;
    sleepSync(1 + Math.random() * 9);
  }
}

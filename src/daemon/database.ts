import { mkdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import type { DaemonConfig } from "../config/types.js";
import type { Logger } from "../shared/logger.js";
import { toError } from "../shared/toError.js";
import { openStore, type Store } from "../store/index.js";
import type { Undo } from "./parts.js";

export interface DaemonDatabase {
  store: Store;
  path: string;
  /** The file as opened: the data directory watch compares the path's file with it. */
  opened: { dev: number; ino: number };
  undo: Undo;
}

/**
 * When the database file was removed under the daemon (dataDirWatch.ts), the
 * close first writes the open database back to its path: `wanted` is asked
 * at close, `failed` is told when the write-back could not be done.
 */
export interface WriteBack {
  wanted(): boolean;
  failed(): void;
}

/** The daemon's SQLite store (`storage.sqlite`, `<data>/svc.db` by default); its undo closes it. */
export function openDatabase(sqlite: DaemonConfig["storage"]["sqlite"], dataDir: string, log: Logger, writeBack: WriteBack): DaemonDatabase {
  const path = sqlite.path ?? join(dataDir, "svc.db");
  const store = openStore({
    path,
    busyTimeoutMs: sqlite.busyTimeoutMs,
    walAutocheckpoint: sqlite.walAutocheckpoint,
    logger: log, // background write and indexing failures belong in the daemon's log
  });
  let opened: { dev: number; ino: number };
  try {
    opened = statSync(path);
  } catch (e) {
    store.close();
    throw e;
  }
  const undo = () => {
    try {
      if (writeBack.wanted() && !saveDatabase(store, path, dataDir, log)) writeBack.failed();
    } finally {
      store.close();
    }
  };
  return { store, path, opened: { dev: opened.dev, ino: opened.ino }, undo };
}

/** Writes the open (possibly unlinked) database back to its path, recreating the directories; false when it could not. */
function saveDatabase(store: Store, path: string, dataDir: string, log: Logger): boolean {
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    store.saveCopy(path);
    log.info({ database: path }, `the database was written back to ${path}`);
    return true;
  } catch (e) {
    log.error({ err: toError(e), database: path }, `could not write the database back to ${path}: what was recorded since it was removed is lost`);
    return false;
  }
}

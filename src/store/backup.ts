import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { Worker } from "node:worker_threads";
import Database from "better-sqlite3";
import { MIGRATIONS, SVC_APPLICATION_ID } from "./migrations/index.js";
import type { Db } from "./sql.js";
import { keepHeapFlags } from "../shared/heapFlags.js";

/**
 * Online backup and the checks of a database file (CONTRACT §7.4).
 *
 * A backup uses SQLite's online backup API (better-sqlite3's `backup()`):
 * it copies the database a few hundred pages per step and lets the event
 * loop run between steps, so the daemon keeps ticking, starting jobs and
 * writing logs meanwhile. Writes made through the daemon's own connection
 * during the copy are carried into it, so the copy is one consistent state
 * of the database, at least as new as the moment the backup began.
 */

/** What a database file holds, as far as restoring it goes. */
export type DatabaseFileCheck =
  | { ok: true; schemaVersion: number; runs: number; integrity: "ok" }
  | { ok: false; problem: string };

export interface BackupResult {
  path: string;
  bytes: number;
  schema_version: number;
  runs: number;
  integrity: "ok";
  started_at: string;
  finished_at: string;
  duration_ms: number;
}

let backups = 0;

/** Pages copied per step: 4 MiB with 4 KiB pages, a few ms of event-loop time each. */
const PAGES_PER_STEP = 1_000;

/**
 * Copies the open database to `dest` (replacing it atomically: a temp file
 * beside it, then rename; mode 0600), then checks the copy in a worker
 * thread. Throws with a one-line message when the copy fails its check.
 */
export async function backupTo(db: Db, dest: string, beforeCopy: () => void): Promise<BackupResult> {
  const file = path.resolve(dest);
  const t0 = Date.now();
  const startedAt = new Date(t0).toISOString();
  const tmp = `${file}.partial-${process.pid}-${++backups}`;
  fs.rmSync(tmp, { force: true });
  try {
    // Created 0600 before SQLite writes into it: job output never sits in a world-readable file.
    fs.closeSync(fs.openSync(tmp, "w", 0o600));
    beforeCopy();
    await db.backup(tmp, { progress: () => PAGES_PER_STEP });
    selfContained(tmp);
    const check = await checkDatabaseFileAsync(tmp);
    if (!check.ok) throw new Error(`the backup copy failed its check: ${check.problem}`);
    fs.chmodSync(tmp, 0o600);
    fs.renameSync(tmp, file);
    const finished = Date.now();
    return {
      path: file,
      bytes: fs.statSync(file).size,
      schema_version: check.schemaVersion,
      runs: check.runs,
      integrity: "ok",
      started_at: startedAt,
      finished_at: new Date(finished).toISOString(),
      duration_ms: finished - t0,
    };
  } finally {
    for (const f of [tmp, `${tmp}-wal`, `${tmp}-shm`]) fs.rmSync(f, { force: true });
  }
}

/**
 * The copy keeps the source's WAL mode in its header, so every reader would
 * create -wal and -shm files beside it. A backup is one file: rollback
 * journal mode (the daemon sets WAL again when it opens a restored copy).
 */
function selfContained(file: string): void {
  const copy = new Database(file, { fileMustExist: true });
  try {
    copy.pragma("journal_mode = DELETE");
  } finally {
    copy.close();
  }
}

/**
 * Checks a database file without changing it: an SQLite file of svc's
 * (application_id), a schema version this svc knows, `PRAGMA
 * integrity_check` ok. Synchronous: for the CLI (`svc restore`).
 */
export function checkDatabaseFile(file: string, knownVersion = MIGRATIONS.length): DatabaseFileCheck {
  const abs = path.resolve(file);
  const problem = fileProblem(abs);
  if (problem !== null) return { ok: false, problem };
  return checkSvcDatabase(Database, abs, SVC_APPLICATION_ID, knownVersion);
}

/**
 * checkDatabaseFile in a worker thread: an integrity check reads the whole
 * file (seconds for a large one) and must not stall the daemon's tick.
 */
export function checkDatabaseFileAsync(file: string, knownVersion = MIGRATIONS.length): Promise<DatabaseFileCheck> {
  const abs = path.resolve(file);
  const problem = fileProblem(abs);
  if (problem !== null) return Promise.resolve({ ok: false, problem });
  const sqlite = createRequire(import.meta.url).resolve("better-sqlite3");
  return new Promise((resolve) => {
    const w = keepHeapFlags(new Worker(WORKER_SOURCE, { eval: true, workerData: { sqlite, file: abs, appId: SVC_APPLICATION_ID, known: knownVersion } }));
    let done = false;
    const finish = (r: DatabaseFileCheck) => {
      if (done) return;
      done = true;
      resolve(r);
      void w.terminate();
    };
    w.once("message", finish);
    w.once("error", (e) => finish({ ok: false, problem: `the check of ${abs} failed: ${e.message}` }));
    w.once("exit", (code) => finish({ ok: false, problem: `the check of ${abs} stopped (exit code ${code})` }));
  });
}

/** A path that cannot be an SQLite database file, said in one line; null when it may be one. */
function fileProblem(abs: string): string | null {
  let st: fs.Stats;
  try {
    st = fs.statSync(abs);
  } catch (e) {
    return `cannot read ${abs} (${(e as NodeJS.ErrnoException).code ?? String(e)})`;
  }
  if (!st.isFile()) return `${abs} is not a regular file`;
  return hasSqliteHeader(abs) ? null : `${abs} is not an SQLite database`;
}

/**
 * The checks themselves, read only. It uses nothing but its parameters:
 * the worker thread runs this function's own source text (a worker started
 * from the one-file daemon bundle cannot import this module by path).
 */
function checkSvcDatabase(Sqlite: typeof Database, file: string, appId: number, known: number): DatabaseFileCheck {
  let db: Database.Database | null = null;
  try {
    db = new Sqlite(file, { readonly: true, fileMustExist: true });
    if (db.pragma("application_id", { simple: true }) !== appId) {
      return { ok: false, problem: `${file} is not an svc database (another application's SQLite file)` };
    }
    const version = db.pragma("user_version", { simple: true }) as number;
    if (version > known) {
      return { ok: false, problem: `${file} was written by a newer svc (schema version ${version}, this svc knows up to ${known}): upgrade svc first` };
    }
    const integrity = (db.prepare("PRAGMA integrity_check").pluck().all() as string[]).join("; ");
    if (integrity !== "ok") return { ok: false, problem: `${file} fails PRAGMA integrity_check: ${integrity.slice(0, 300)}` };
    const runs = db.prepare("SELECT count(*) FROM job_runs").pluck().get() as number;
    return { ok: true, schemaVersion: version, runs, integrity: "ok" };
  } catch (e) {
    return { ok: false, problem: `${file} is damaged or unreadable (${e instanceof Error ? e.message : String(e)})` };
  } finally {
    db?.close();
  }
}

const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const check = ${checkSvcDatabase.toString()};
const { sqlite, file, appId, known } = workerData;
parentPort.postMessage(check(require(sqlite), file, appId, known));
`;

export interface RestoreResult {
  database: string;
  /** Where the previous database went, or null when there was none. */
  previous: string | null;
  schemaVersion: number;
  runs: number;
}

/**
 * Puts `source` (checked first) in place of the database at `dbPath`. The
 * copy is SQLite's own (`VACUUM INTO` on a read-only connection), so what a
 * source still holds in its -wal file (a `svc.db.bak-...` kept after a crash)
 * is copied too, as the check counted it. The previous database, with its
 * -wal and -shm files, is renamed to `<db>.bak-<UTC timestamp>` (-wal, -shm
 * suffixed the same way, so SQLite still finds them when the copy is opened;
 * `-2`, `-3`... after the timestamp when a restore in the same second took
 * it). The caller makes sure no daemon uses the database (it holds the
 * daemon's PID lock).
 */
export function restoreFrom(source: string, dbPath: string, now = new Date()): RestoreResult {
  const src = path.resolve(source);
  const db = path.resolve(dbPath);
  if (src === db) throw new Error(`${src} is the database itself: give a backup file`);
  const check = checkDatabaseFile(src);
  if (!check.ok) throw new Error(`refusing to restore: ${check.problem}`);
  fs.mkdirSync(path.dirname(db), { recursive: true, mode: 0o700 });
  const tmp = `${db}.restoring-${process.pid}`;
  for (const suffix of ["", "-journal"]) fs.rmSync(tmp + suffix, { force: true });
  copyWithSqlite(src, tmp);
  fs.chmodSync(tmp, 0o600);
  let previous: string | null = null;
  try {
    if (fs.existsSync(db)) {
      previous = freeName(`${db}.bak-${stamp(now)}`);
      for (const suffix of ["", "-wal", "-shm"]) {
        if (fs.existsSync(db + suffix)) fs.renameSync(db + suffix, previous + suffix);
      }
    } else {
      for (const suffix of ["-wal", "-shm"]) fs.rmSync(db + suffix, { force: true });
    }
    fs.renameSync(tmp, db);
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  return { database: db, previous, schemaVersion: check.schemaVersion, runs: check.runs };
}

/** A consistent copy of the database `src` (its -wal content included) at `dest`, which must not exist. */
function copyWithSqlite(src: string, dest: string): void {
  const from = new Database(src, { readonly: true, fileMustExist: true });
  try {
    from.prepare("VACUUM INTO ?").run(dest);
  } finally {
    from.close();
  }
}

/** `base`, or `base-2`, `base-3`...: the first name that neither it nor its -wal and -shm files use. */
function freeName(base: string): string {
  const taken = (name: string) => ["", "-wal", "-shm"].some((suffix) => fs.existsSync(name + suffix));
  let name = base;
  for (let n = 2; taken(name); n++) name = `${base}-${n}`;
  return name;
}

/** 20261124T225301Z: sortable, and no colons (which some tools read as host:path). */
function stamp(d: Date): string {
  return d.toISOString().replace(/[-:]/g, "").replace(/\.\d{3}Z$/, "Z");
}

const SQLITE_HEADER = Buffer.from("SQLite format 3\0", "latin1");

function hasSqliteHeader(file: string): boolean {
  const fd = fs.openSync(file, "r");
  try {
    const buf = Buffer.alloc(SQLITE_HEADER.length);
    return fs.readSync(fd, buf, 0, buf.length, 0) === buf.length && buf.equals(SQLITE_HEADER);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * A backup without a daemon (`svc backup` when none runs): the database is
 * opened read only and copied the same way.
 */
export async function backupFile(dbPath: string, dest: string): Promise<BackupResult> {
  const src = path.resolve(dbPath);
  const target = path.resolve(dest);
  if ([src, `${src}-wal`, `${src}-shm`].includes(target)) throw new Error(`${target} is the database itself: give another path for the backup`);
  const problem = fileProblem(src);
  if (problem !== null) throw new Error(`no database to back up: ${problem}`);
  const db = new Database(src, { readonly: true, fileMustExist: true });
  try {
    return await backupTo(db, target, () => {});
  } finally {
    db.close();
  }
}

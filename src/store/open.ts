import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { StoreOpenError } from "./errors.js";
import { MIGRATIONS, migrate, schemaVersion, SchemaTooNewError, SVC_APPLICATION_ID } from "./migrations/index.js";
import type { Migration } from "./migrations/index.js";

const SQLITE_HEADER = Buffer.from("SQLite format 3\0", "latin1");
const MOVE_AWAY = "move it away or set storage.sqlite.path";

export interface OpenDatabaseOptions {
  path: string;
  busyTimeoutMs: number;
  walAutocheckpoint: number;
  migrations?: readonly Migration[];
  nowIso: string;
}

export interface OpenedDatabase {
  db: Database.Database;
  path: string;
  schemaVersion: number;
  migratedFrom: number;
}

/**
 * Opens (or creates) the svc database. Every check that can refuse the file
 * runs before anything is written to it, so a foreign, corrupt or too-new
 * file is left byte-for-byte as it was. Errors are one-line StoreOpenErrors
 * naming the path, the cause and what to do.
 */
export function openDatabase(opts: OpenDatabaseOptions): OpenedDatabase {
  const file = path.resolve(opts.path);
  const dir = path.dirname(file);
  ensureDir(file, dir);
  const existed = checkExistingFile(file, dir);
  if (!existed) createEmptyFile(file, dir);

  let db: Database.Database;
  try {
    db = new Database(file, { fileMustExist: true });
  } catch (e) {
    throw openError(file, e);
  }
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.trunc(opts.busyTimeoutMs))}`);
    checkIdentity(db, file, opts.migrations ?? MIGRATIONS);
    configure(db, file, opts.walAutocheckpoint);
    registerFunctions(db);
    const { from, to } = migrate(db, opts.migrations ?? MIGRATIONS, opts.nowIso);
    restrictModes(file);
    // No ANALYZE / PRAGMA optimize: statistics taken while the FTS5 shadow
    // tables are small make every later FTS5 insert several times slower, and
    // the indexes are chosen well without statistics (figures and the
    // EXPLAIN QUERY PLAN check: src/store/README.md, "No ANALYZE").
    return { db, path: file, schemaVersion: to, migratedFrom: from };
  } catch (e) {
    db.close();
    if (e instanceof StoreOpenError) throw e;
    if (e instanceof SchemaTooNewError) throw tooNew(file, e);
    throw openError(file, e);
  }
}

function ensureDir(file: string, dir: string): void {
  if (fs.existsSync(dir)) return;
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    throw new StoreOpenError(
      file,
      `cannot create the database directory ${dir} (${errnoText(e)}): create it or set storage.sqlite.path`,
      { cause: e },
    );
  }
}

/** Returns whether the file exists; throws when it is not something we may open. */
function checkExistingFile(file: string, dir: string): boolean {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") {
      if (!writable(dir)) {
        throw new StoreOpenError(
          file,
          `cannot create the database ${file}: the directory ${dir} is read-only: make it writable or set storage.sqlite.path`,
        );
      }
      return false;
    }
    throw new StoreOpenError(file, `cannot open the database ${file} (${errnoText(e)})`, { cause: e });
  }
  if (!st.isFile()) throw new StoreOpenError(file, `${file} is not an svc database (not a regular file): ${MOVE_AWAY}`);
  if (st.size > 0 && !hasSqliteHeader(file)) {
    throw new StoreOpenError(file, `${file} is not an svc database (file is not a database): ${MOVE_AWAY}`);
  }
  if (!readableWritable(file)) {
    throw new StoreOpenError(
      file,
      `cannot open the database ${file}: the file is not readable and writable by this user: fix its permissions or set storage.sqlite.path`,
    );
  }
  // WAL mode needs to create <file>-wal and <file>-shm beside the database.
  if (!writable(dir)) {
    throw new StoreOpenError(
      file,
      `cannot open the database ${file}: the directory ${dir} is read-only (SQLite creates ${path.basename(file)}-wal and -shm beside it): make it writable or set storage.sqlite.path`,
    );
  }
  return true;
}

function createEmptyFile(file: string, dir: string): void {
  try {
    fs.closeSync(fs.openSync(file, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_RDWR, 0o600));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return; // someone created it meanwhile; the identity check decides
    const why = code === "EACCES" || code === "EROFS" || code === "EPERM" ? `the directory ${dir} is read-only` : errnoText(e);
    throw new StoreOpenError(file, `cannot create the database ${file}: ${why}: make it writable or set storage.sqlite.path`, {
      cause: e,
    });
  }
}

/**
 * Reads only: the file must be empty (new), or an svc database of a schema
 * version we know. Returns its schema version (0 for a new file).
 */
function checkIdentity(db: Database.Database, file: string, migrations: readonly Migration[]): number {
  const appId = db.pragma("application_id", { simple: true }) as number;
  const version = schemaVersion(db);
  const objects = (db.prepare("SELECT count(*) AS n FROM sqlite_schema").get() as { n: number }).n;
  if (appId !== SVC_APPLICATION_ID) {
    if (appId === 0 && version === 0 && objects === 0) return 0;
    throw new StoreOpenError(file, `${file} is not an svc database (it is another application's SQLite database): ${MOVE_AWAY}`);
  }
  if (version > migrations.length) throw tooNew(file, new SchemaTooNewError(version, migrations.length));
  return version;
}

function configure(db: Database.Database, file: string, walAutocheckpoint: number): void {
  const mode = db.pragma("journal_mode = WAL", { simple: true });
  if (mode !== "wal") {
    throw new StoreOpenError(file, `cannot open the database ${file}: WAL mode is not available there (journal mode stays ${String(mode)})`);
  }
  db.pragma("synchronous = NORMAL");
  db.pragma("foreign_keys = ON");
  db.pragma(`wal_autocheckpoint = ${Math.max(0, Math.trunc(walAutocheckpoint))}`);
  db.pragma("cache_size = -16384"); // 16 MiB: index scans of a 1,000,000-run table stay in memory
  db.pragma("temp_store = MEMORY");
}

/** The database holds job output: 0600, and SQLite gives -wal/-shm the database file's mode. */
function restrictModes(file: string): void {
  for (const f of [file, `${file}-wal`, `${file}-shm`]) {
    try {
      fs.chmodSync(f, 0o600);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    }
  }
}

function tooNew(file: string, e: SchemaTooNewError): StoreOpenError {
  return new StoreOpenError(
    file,
    `${file} was written by a newer svc (schema version ${e.found}, this svc knows up to ${e.supported}): upgrade svc, or ${MOVE_AWAY}`,
    { cause: e },
  );
}

function openError(file: string, e: unknown): StoreOpenError {
  const code = (e as { code?: unknown }).code;
  const msg = e instanceof Error ? e.message : String(e);
  if (code === "SQLITE_NOTADB") return new StoreOpenError(file, `${file} is not an svc database (${msg}): ${MOVE_AWAY}`, { cause: e });
  if (typeof code === "string" && code.startsWith("SQLITE_CORRUPT")) {
    return new StoreOpenError(file, `${file} is damaged (${msg}): restore it from a backup, or ${MOVE_AWAY}`, { cause: e });
  }
  if (code === "SQLITE_BUSY") {
    return new StoreOpenError(file, `${file} is locked by another process (${msg}): stop the other svcd or set storage.sqlite.path`, {
      cause: e,
    });
  }
  return new StoreOpenError(file, `cannot open the database ${file} (${msg})`, { cause: e });
}

function hasSqliteHeader(file: string): boolean {
  const fd = fs.openSync(file, "r");
  try {
    const buf = Buffer.alloc(SQLITE_HEADER.length);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    return n === buf.length && buf.equals(SQLITE_HEADER);
  } finally {
    fs.closeSync(fd);
  }
}

function writable(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

function readableWritable(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.R_OK | fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

function errnoText(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  return err.code ? `${err.code}: ${err.message}` : String(e);
}

/**
 * The SQL functions svc's queries use, on a connection: `svc_fold(text)`, case folding beyond ASCII for the
 * audit's "any case" reason search (SQLite's LIKE folds A-Z only). Every connection that runs the store's
 * queries needs them (openDatabase registers them on svcd's).
 */
export function registerFunctions(db: Database.Database): void {
  db.function("svc_fold", { deterministic: true }, (v: unknown) => (typeof v === "string" ? v.toLowerCase() : v));
}

/**
 * Typed errors of the store, each a SvcError (shared/svcError.ts) with its
 * API code: NotFoundError 404, ConflictError / DuplicateSlotError /
 * TransitionError 409, InvalidQueryError (bad sort column, page size, enum
 * value, instant) 400; StoreOpenError and SchemaTooNewError are startup errors
 * (one line, no stack). TransitionError lives beside the transition table in
 * runStatus.ts. A RangeError from the store is a broken invariant (a bug of its
 * caller), never a client's mistake: the API answers 500.
 *
 * This module is also the only one outside the SQLite driver that knows
 * SQLite's error codes: `isTransientStorageError` and `describeStorageError`
 * are what the engine and the API ask.
 */
import { SvcError } from "../shared/svcError.js";

export { TransitionError } from "./runStatus.js";
export { SchemaTooNewError } from "./migrations/migrate.js";

/** The database at `path` cannot be opened; `message` is one line that names the path and says what to do. */
export class StoreOpenError extends SvcError {
  constructor(
    readonly path: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super("internal", message, options);
    this.name = "StoreOpenError";
  }
}

/** A run for this (job, scheduled slot) already exists: the slot was already triggered. */
export class DuplicateSlotError extends SvcError {
  constructor(
    readonly jobName: string,
    readonly scheduledFor: string,
  ) {
    super("conflict", `job ${jobName}: a run for the slot ${scheduledFor} already exists`);
    this.name = "DuplicateSlotError";
  }
}

/** A row that the caller named by id or name does not exist. */
export class NotFoundError extends SvcError {
  constructor(
    readonly kind: "run" | "alert" | "integration" | "backfill",
    readonly key: number | string,
  ) {
    super("not_found", `${kind} ${key} not found`);
    this.name = "NotFoundError";
  }
}

/** The row exists but is in the wrong state for the request (alert retry while pending...). */
export class ConflictError extends SvcError {
  constructor(message: string) {
    super("conflict", message);
    this.name = "ConflictError";
  }
}

/** A query value the caller passed is not acceptable (sort column, page size, enum value, instant...): 400. */
export class InvalidQueryError extends SvcError {
  constructor(message: string) {
    super("bad_request", message);
    this.name = "InvalidQueryError";
  }
}

/** SQLite's extended result code of an error thrown by the driver (`SQLITE_BUSY_SNAPSHOT`...), else undefined. */
export function sqliteCode(e: unknown): string | undefined {
  const code = typeof e === "object" && e !== null ? (e as { code?: unknown }).code : undefined;
  return typeof code === "string" && code.startsWith("SQLITE_") ? code : undefined;
}

/** Primary result codes of a refusal that passes: the same write may succeed later (lock gone, space freed). */
const TRANSIENT = ["SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_FULL", "SQLITE_IOERR", "SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_NOMEM", "SQLITE_PROTOCOL"];

/**
 * The database refused a read or write for a reason outside svc that may pass (locked past
 * busy_timeout, disk full, read-only, I/O error): worth trying again. A constraint violation,
 * a misuse or a bug is not.
 */
export function isTransientStorageError(e: unknown): boolean {
  const code = sqliteCode(e);
  return code !== undefined && TRANSIENT.some((t) => primary(code, t));
}

/** Is `code` the primary result code `p` or one of its extended codes (`SQLITE_IOERR_WRITE` of `SQLITE_IOERR`)? */
function primary(code: string, p: string): boolean {
  return code === p || code.startsWith(`${p}_`);
}

/**
 * A clear message for a request the database refused, or null when `e` is not from SQLite. The
 * SQLite text itself is not in it (it may name paths): the caller logs the error.
 */
export function describeStorageError(e: unknown): string | null {
  const code = sqliteCode(e);
  if (code === undefined) return null;
  if (primary(code, "SQLITE_BUSY") || primary(code, "SQLITE_LOCKED")) {
    return "the database is locked by another process (storage.sqlite.busy_timeout passed): try again";
  }
  if (code === "SQLITE_FULL") return "the disk holding the database is full: free some space, then try again";
  if (primary(code, "SQLITE_READONLY")) return "the database cannot be written (read-only): the daemon logged the details";
  if (primary(code, "SQLITE_IOERR")) return "the database could not be read or written (I/O error): the daemon logged the details";
  return "the database refused the request: the daemon logged the details";
}

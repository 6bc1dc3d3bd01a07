/**
 * Typed errors of the store. The API maps them to status codes:
 * StoreOpenError is a startup error (one line, no stack), DuplicateSlotError
 * and ConflictError are 409, NotFoundError is 404, RangeError (bad sort
 * column, page size, enum value) is 400. TransitionError lives beside the
 * transition table in runStatus.ts.
 */
export { TransitionError } from "./runStatus.js";

/** The database at `path` cannot be opened; `message` is one line that names the path and says what to do. */
export class StoreOpenError extends Error {
  constructor(
    readonly path: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "StoreOpenError";
  }
}

/** A run for this (job, scheduled slot) already exists: the slot was already triggered. */
export class DuplicateSlotError extends Error {
  constructor(
    readonly jobName: string,
    readonly scheduledFor: string,
  ) {
    super(`job ${jobName}: a run for the slot ${scheduledFor} already exists`);
    this.name = "DuplicateSlotError";
  }
}

/** A row that the caller named by id or name does not exist. */
export class NotFoundError extends Error {
  constructor(
    readonly kind: "run" | "alert" | "integration",
    readonly key: number | string,
  ) {
    super(`${kind} ${key} not found`);
    this.name = "NotFoundError";
  }
}

/** The row exists but is in the wrong state for the request (alert retry while pending...). */
export class ConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConflictError";
  }
}

/**
 * Typed errors of the store. The API maps them to status codes:
 * StoreOpenError is a startup error (one line, no stack), DuplicateSlotError
 * and ConflictError are 409, NotFoundError is 404, InvalidQueryError (bad sort
 * column, page size, enum value, instant) is 400. TransitionError lives beside the
 * transition table in runStatus.ts. A RangeError from the store is a broken
 * invariant (a bug of its caller), never a client's mistake: the API answers 500.
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

/** A query value the caller passed is not acceptable (sort column, page size, enum value, instant...): 400. */
export class InvalidQueryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InvalidQueryError";
  }
}

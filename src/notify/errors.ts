/**
 * Typed errors for the API to map: `statusCode` and `code` follow the error
 * catalogue of CONTRACT §4 (404 not_found, 409 conflict).
 */
export class NotifyNotFoundError extends Error {
  readonly statusCode = 404;
  readonly code = "not_found";
  constructor(message: string) {
    super(message);
    this.name = "NotifyNotFoundError";
  }
}

export class NotifyConflictError extends Error {
  readonly statusCode = 409;
  readonly code = "conflict";
  constructor(message: string) {
    super(message);
    this.name = "NotifyConflictError";
  }
}

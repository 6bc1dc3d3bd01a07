/**
 * The one family of errors svc raises on purpose. Each module subclasses it
 * (EngineError, the store's NotFoundError / ConflictError / InvalidQueryError,
 * ApiError, StartupError...); every instance carries a stable `code` of the
 * API's error catalogue (CONTRACT §4) and its HTTP `status`.
 *
 * The API maps errors by this class alone: a SvcError with a 4xx status is
 * answered as is; anything else (a RangeError or TypeError from a bug, a
 * SvcError of status 500) is a 500 `internal`, logged with its context. So no
 * generic JavaScript error class is ever a signal for a 4xx.
 */

/** Code -> HTTP status. The API's catalogue (api/errors.ts) adds a description to each. */
export const SVC_ERROR_STATUS = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  validation_failed: 422,
  invalid_config: 422,
  internal: 500,
} as const;

export type SvcErrorCode = keyof typeof SVC_ERROR_STATUS;

export class SvcError extends Error {
  readonly status: number;
  /** What the API sends as `details` (validation_failed: one `{path, message}` per bad field). */
  readonly details?: unknown;

  constructor(
    readonly code: SvcErrorCode,
    message: string,
    options?: { cause?: unknown; details?: unknown },
  ) {
    super(message, options);
    // Each subclass names itself with a literal: the daemon's bundle minifies class names.
    this.name = "SvcError";
    this.status = SVC_ERROR_STATUS[code];
    if (options?.details !== undefined) this.details = options.details;
  }

  /** Raised on purpose about the request (a 4xx), not a failure of svc itself. */
  get clientError(): boolean {
    return this.status < 500;
  }
}

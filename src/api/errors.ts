/**
 * The API's one error catalogue (CONTRACT §4): every error answer is
 * `{"error": {"code", "message", "details?"}}` with one of these codes.
 * docs/API.md documents each code; a test checks that it does.
 */
export const ERROR_CATALOGUE = {
  bad_request: { status: 400, description: "The request is malformed: invalid JSON, wrong content type, a bad path, query or body value (the message names the field)." },
  unauthorized: { status: 401, description: "Missing or invalid credentials (sent with `WWW-Authenticate`)." },
  forbidden: { status: 403, description: "The credentials are valid but their role may not use this route." },
  not_found: { status: 404, description: "Unknown route, job, run, alert or integration." },
  conflict: { status: 409, description: "The target is in the wrong state: retry of a non-FAILED run, skip without a PENDING run, cancel with nothing running, clear_lock while RUNNING, alert retry while pending, daemon shutting down." },
  payload_too_large: { status: 413, description: "The request body is over 1 MiB." },
  invalid_config: { status: 422, description: "A config file is invalid (validate, save, reload); `details` is the list of `{file, line, column, path, message}`." },
  internal: { status: 500, description: "An unexpected failure; it is logged by the daemon with the request's context. The message never carries a stack trace." },
} as const;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export const ERROR_CODES = Object.keys(ERROR_CATALOGUE) as ErrorCode[];

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: unknown };
}

/** An error the routes throw on purpose; the error handler answers it as is. */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = "ApiError";
    this.status = ERROR_CATALOGUE[code].status;
  }

  body(): ErrorBody {
    return { error: { code: this.code, message: this.message, ...(this.details === undefined ? {} : { details: this.details }) } };
  }
}

export const badRequest = (message: string, details?: unknown) => new ApiError("bad_request", message, details);
export const notFound = (message: string) => new ApiError("not_found", message);
export const conflict = (message: string) => new ApiError("conflict", message);
export const invalidConfig = (message: string, details: unknown) => new ApiError("invalid_config", message, details);

/** The response schema of an error answer, for the route schemas and the OpenAPI document. */
export const errorResponseSchema = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["code", "message"],
      properties: {
        code: { type: "string", enum: ERROR_CODES },
        message: { type: "string" },
        details: {},
      },
    },
  },
} as const;

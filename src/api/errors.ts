import { SVC_ERROR_STATUS, SvcError, type SvcErrorCode } from "../shared/svcError.js";

/**
 * The API's one error catalogue (CONTRACT §4): every error answer is
 * `{"error": {"code", "message", "details?"}}` with one of these codes.
 * docs/API.md documents each code; a test checks that it does.
 */
const DESCRIPTIONS: Record<SvcErrorCode, string> = {
  bad_request: "The request is malformed: invalid JSON, wrong content type, a bad path, query or body value (the message names the field).",
  unauthorized: "Missing or invalid credentials (sent with `WWW-Authenticate`).",
  forbidden: "The credentials are valid but their role may not use this route (or may not read a config text with its secrets: `?raw=1`).",
  not_found: "Unknown route, job, run, alert or integration.",
  conflict: "The target is in the wrong state: retry of a non-FAILED run, skip without a PENDING run, cancel with nothing running, clear_lock while RUNNING, alert retry while pending, daemon shutting down.",
  payload_too_large: "The request body is over 1 MiB.",
  validation_failed: "Values in the request do not fit what they must (a run's `params`: unknown names, wrong types, a value outside `values` or `pattern`, a missing required one); nothing was created. `details` is the list of `{path, message}`, `path` like `params.day`.",
  invalid_config: "A config file is invalid (save, reload), or cannot be parsed and so cannot be shown redacted (GET /api/config/source, /api/config/daemon); `details` is the list of `{file, line, column, path, message}`.",
  internal: "An unexpected failure; it is logged by the daemon with the request's context. The message never carries a stack trace.",
};

/** Each code with its status (from the SvcError family, shared/svcError.ts) and what it means. */
export const ERROR_CATALOGUE = Object.fromEntries(
  (Object.keys(SVC_ERROR_STATUS) as SvcErrorCode[]).map((c) => [c, { status: SVC_ERROR_STATUS[c], description: DESCRIPTIONS[c] }]),
) as { [C in SvcErrorCode]: { status: (typeof SVC_ERROR_STATUS)[C]; description: string } };

export type ErrorCode = SvcErrorCode;

export const ERROR_CODES = Object.keys(ERROR_CATALOGUE) as ErrorCode[];

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: unknown };
}

/** An error the routes throw on purpose (a SvcError with optional details); the error handler answers it as is. */
export class ApiError extends SvcError {
  constructor(code: ErrorCode, message: string, details?: unknown) {
    super(code, message, { details });
    this.name = "ApiError";
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

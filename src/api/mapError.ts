import { SvcError } from "../shared/svcError.js";
import { ApiError, badRequest, type ErrorCode } from "./errors.js";

/** One ajv error as Fastify attaches it to a validation failure. */
interface AjvIssue {
  instancePath?: string;
  keyword?: string;
  params?: Record<string, unknown>;
  message?: string;
}

interface FastifyLikeError {
  code?: string;
  statusCode?: number;
  validation?: AjvIssue[];
  validationContext?: string;
  message?: string;
}

const WHERE: Record<string, string> = { querystring: "query parameter", params: "path parameter", body: "body field", headers: "header" };

/**
 * Turns anything a route or Fastify threw into a catalogue error, or null
 * when it is unexpected (the handler answers 500 `internal` and logs it).
 * By class alone: a SvcError raised on purpose about the request (4xx) keeps
 * its code and message; every other error of ours, and any generic language
 * error, is a 500.
 */
export function mapError(e: unknown): ApiError | null {
  if (e instanceof ApiError) return e;
  if (e instanceof SvcError) return e.clientError ? new ApiError(e.code, e.message, e.details) : null;
  if (typeof e !== "object" || e === null) return null;
  const f = e as FastifyLikeError;
  if (Array.isArray(f.validation)) return validationError(f.validation, f.validationContext ?? "request");
  // A generic language error (RangeError, TypeError...) is a bug, never a client's mistake: it maps
  // to nothing (500 internal, logged). Only errors raised on purpose, with their own class, are 4xx.
  return fastifyError(f);
}

function validationError(issues: AjvIssue[], context: string): ApiError {
  const details = issues.map((i) => {
    const field = fieldOf(i);
    return { in: context, field, message: issueText(i) };
  });
  const first = details[0];
  const where = WHERE[context] ?? context;
  const message = first
    ? first.field
      ? `invalid ${where} "${first.field}": ${first.message}`
      : `invalid ${context}: ${first.message}`
    : `invalid ${context}`;
  return badRequest(message, details);
}

function fieldOf(i: AjvIssue): string {
  const base = (i.instancePath ?? "").replace(/^\//, "").replace(/\//g, ".");
  const extra = i.params?.missingProperty ?? i.params?.additionalProperty;
  if (typeof extra === "string") return base ? `${base}.${extra}` : extra;
  return base;
}

function issueText(i: AjvIssue): string {
  const allowed = i.params?.allowedValues;
  if (i.keyword === "enum" && Array.isArray(allowed)) return `must be one of ${allowed.map(String).join(", ")}`;
  if (i.keyword === "additionalProperties") return "is not a known field";
  if (i.keyword === "required") return "is required";
  if (i.keyword === "pattern" && i.instancePath?.endsWith("name")) return "is not a valid job name (letters, digits, `_`, `.`, `-`; at most 64; starts with a letter or digit)";
  return i.message ?? "is invalid";
}

/** Errors Fastify raises itself before a handler runs (body parsing, routing). */
function fastifyError(f: FastifyLikeError): ApiError | null {
  switch (f.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new ApiError("payload_too_large", "request body is over the 1 MiB limit");
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return badRequest("unsupported Content-Type: send the body as application/json");
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return badRequest("the body is empty but Content-Type is application/json: send a JSON value or no Content-Type");
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return badRequest("Content-Length does not match the body");
    case "FST_ERR_BAD_URL":
    case "FST_ERR_ASYNC_CONSTRAINT":
      return badRequest("the URL is not valid (bad percent-encoding or characters)");
    default:
      break;
  }
  if (f.message && /JSON/.test(f.message) && f.statusCode === 400) {
    return badRequest(`malformed JSON body: ${f.message}`);
  }
  if (typeof f.statusCode === "number" && f.statusCode >= 400 && f.statusCode < 500) {
    const byStatus: Record<number, ErrorCode> = { 401: "unauthorized", 403: "forbidden", 404: "not_found", 409: "conflict", 413: "payload_too_large" };
    const code = byStatus[f.statusCode] ?? "bad_request";
    return new ApiError(code, f.message ?? "bad request");
  }
  return null;
}

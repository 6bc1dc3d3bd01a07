/**
 * JSON Schemas shared by the routes. They drive request validation
 * (Fastify + ajv) and the OpenAPI document, so both come from one place.
 * Response schemas document the answers (tests validate real answers
 * against them); serialization itself is plain JSON.stringify, so a field
 * added by the store is never dropped silently.
 */
import { LOG_STREAMS, MAX_OFFSET, MAX_PAGE, RUN_STATUSES, TRIGGERS } from "../store/types.js";

/** CONTRACT §2. Checked before any lookup, so `../x` never reaches the store or the file system. */
export const JOB_NAME_PATTERN = "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$";
export const TAG_PATTERN = "^[a-z0-9-]{1,32}$";

const str = { type: "string" } as const;
const strOrNull = { type: ["string", "null"] } as const;
const int = { type: "integer" } as const;
const intOrNull = { type: ["integer", "null"] } as const;

export const jobNameSchema = { type: "string", pattern: JOB_NAME_PATTERN, description: "job name (CONTRACT §2 regex)" } as const;
export const runIdSchema = { type: "integer", minimum: 1, description: "run id" } as const;

export const jobParams = { type: "object", required: ["name"], properties: { name: jobNameSchema } } as const;
export const runParams = { type: "object", required: ["id"], properties: { id: runIdSchema } } as const;

export const runStatusSchema = { type: "string", enum: RUN_STATUSES } as const;
export const triggerSchema = { type: "string", enum: TRIGGERS } as const;
export const streamSchema = { type: "string", enum: LOG_STREAMS } as const;
export const dateSchema = {
  type: "string",
  minLength: 1,
  description: "ISO 8601 date (`2026-11-01`, UTC midnight) or instant (`2026-11-01T12:00:00Z`)",
} as const;

export const runRecordSchema = {
  type: "object",
  required: ["id", "job_name", "status", "attempt", "trigger", "triggered_by", "cycle_id", "created_at"],
  properties: {
    id: int,
    job_name: str,
    status: runStatusSchema,
    attempt: int,
    trigger: triggerSchema,
    triggered_by: str,
    reason: strOrNull,
    cycle_id: str,
    tags: { type: "array", items: str },
    scheduled_for: strOrNull,
    created_at: str,
    started_at: strOrNull,
    finished_at: strOrNull,
    exit_code: intOrNull,
    sla_breached: { type: "integer", enum: [0, 1] },
    hc_status: { type: ["string", "null"], enum: ["pass", "fail", "warn", null] },
    pid: intOrNull,
    pid_start: strOrNull,
    error: strOrNull,
    duration_ms: intOrNull,
    next_attempt_at: strOrNull,
    params: { type: "object", additionalProperties: { type: ["string", "number", "boolean"] }, description: "param values; secret ones read ***" },
    scheduled_at: { ...strOrNull, description: "the slot this run is for (ISO UTC); null for manual runs" },
    backfill_id: intOrNull,
  },
} as const;

/** Counts by run status, every status present. */
export const RUN_STATUS_COUNTS = {
  type: "object",
  required: [...RUN_STATUSES],
  properties: Object.fromEntries(RUN_STATUSES.map((s) => [s, int])),
} as const;

export const jobStateSchema = {
  type: "object",
  required: ["job_name"],
  properties: {
    job_name: str,
    last_success: strOrNull,
    last_failure: strOrNull,
    next_run: strOrNull,
    lock_pid: intOrNull,
    paused: { type: ["integer", "boolean"] },
  },
} as const;

export const logLineSchema = {
  type: "object",
  required: ["seq", "ts", "stream", "line"],
  properties: { seq: int, ts: str, stream: streamSchema, line: str },
} as const;

export const outputRowSchema = {
  type: "object",
  required: ["var_name", "value", "job_name", "cycle_id", "created_at"],
  properties: { id: int, run_id: int, var_name: str, value: str, job_name: str, cycle_id: str, created_at: str },
} as const;

export const alertRowSchema = {
  type: "object",
  required: ["id", "job_name", "status"],
  properties: {
    id: int,
    job_name: str,
    run_id: intOrNull,
    event: str,
    channel: str,
    status: { type: "string", enum: ["pending", "delivered", "failed"] },
    attempts: int,
    last_attempt_at: strOrNull,
    error: strOrNull,
    payload: str,
    created_at: str,
  },
} as const;

export const nonRunSchema = {
  type: "object",
  required: ["id", "job_name", "reason", "detail", "count", "first_at", "last_at"],
  properties: {
    id: int,
    job_name: str,
    reason: { type: "string", enum: ["paused", "upstream_failed", "missed", "excluded"] },
    detail: str,
    cycle_id: strOrNull,
    upstream: strOrNull,
    upstream_run_id: intOrNull,
    first_slot: strOrNull,
    last_slot: strOrNull,
    count: int,
    first_at: str,
    last_at: str,
    after_run_id: int,
  },
} as const;

export const configIssueSchema = {
  type: "object",
  required: ["file", "line", "column", "path", "message"],
  properties: { file: str, line: int, column: int, path: str, message: str },
} as const;

export const startedRunSchema = {
  type: "object",
  required: ["run_id", "cycle_id", "status"],
  properties: { run_id: int, cycle_id: str, status: runStatusSchema },
} as const;

/** `?param=day=2026-11-01` (repeatable): runs whose param has that value (CONTRACT §7.2 audit search). */
export const paramFilterSchema = {
  type: "array",
  maxItems: 20,
  items: { type: "string", pattern: "^[a-z_][a-z0-9_]*=", maxLength: 4200 },
  description: "NAME=VALUE, repeatable: runs whose param NAME has VALUE (5 matches the number 5, true the boolean); secret params never match",
} as const;

/** The `param` query values as the store's filter. */
export function paramFilters(values: readonly string[] | undefined): { name: string; value: string }[] | undefined {
  if (values === undefined || values.length === 0) return undefined;
  return values.map((v) => ({ name: v.slice(0, v.indexOf("=")), value: v.slice(v.indexOf("=") + 1) }));
}

// ---- paging (CONTRACT §4) ----

export const PAGE_SIZES = [25, 50, 100] as const;

export const pageQuery = {
  page: { type: "integer", minimum: 1, maximum: MAX_PAGE, default: 1 },
  page_size: { type: "integer", enum: PAGE_SIZES, default: 50 },
  sort: { type: "string", pattern: "^[a-z_]{1,40}$", description: "column to sort by" },
  order: { type: "string", enum: ["asc", "desc"] },
} as const;

/** `limit` and `offset` of every list route (one schema: an offset past MAX_OFFSET is a 400 naming the field, not a database error). */
export function sliceQuery(defaultLimit: number, maxLimit: number) {
  return {
    limit: { type: "integer", minimum: 1, maximum: maxLimit, default: defaultLimit },
    offset: { type: "integer", minimum: 0, maximum: MAX_OFFSET, default: 0 },
  } as const;
}

export function pageOf(row: object) {
  return {
    type: "object",
    required: ["rows", "total", "page", "page_size"],
    properties: { rows: { type: "array", items: row }, total: int, page: int, page_size: int },
  } as const;
}

export function sliceOf(row: object) {
  return {
    type: "object",
    required: ["rows", "total", "limit", "offset"],
    properties: { rows: { type: "array", items: row }, total: int, limit: int, offset: int },
  } as const;
}

export const okSchema = { type: "object", required: ["ok"], properties: { ok: { type: "boolean" } } } as const;

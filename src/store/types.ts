/**
 * Record shapes as stored in SQLite and as returned by the API (snake_case,
 * the column names). Statuses are upper case, triggers and streams lower case.
 */

export type RunStatus = "PENDING" | "RUNNING" | "SUCCESS" | "FAILED" | "RETRYING" | "SKIPPED";
export type Trigger = "manual" | "schedule" | "dependency" | "backfill";
export type HcStatus = "pass" | "fail" | "warn";
export type LogStream = "stdout" | "stderr" | "healthcheck";
export type AlertStatus = "pending" | "delivered" | "failed";

export const RUN_STATUSES: readonly RunStatus[] = [
  "PENDING",
  "RUNNING",
  "SUCCESS",
  "FAILED",
  "RETRYING",
  "SKIPPED",
];
export const TRIGGERS: readonly Trigger[] = ["manual", "schedule", "dependency", "backfill"];

/** A run parameter's value (CONTRACT §7.2). */
export type ParamValue = string | number | boolean;

/** What a secret param's value reads wherever a run is shown. */
export const SECRET_MASK = "***";
/**
 * The largest OFFSET a list accepts: the largest integer a JS number holds exactly, well inside
 * SQLite's 64-bit range (a larger number is bound as a REAL and SQLite refuses it: datatype mismatch).
 */
export const MAX_OFFSET = Number.MAX_SAFE_INTEGER;
/** The largest `page` of a paged table: (page - 1) * 100 (the largest page_size) stays within MAX_OFFSET. */
export const MAX_PAGE = Math.floor(MAX_OFFSET / 100);
export const LOG_STREAMS: readonly LogStream[] = ["stdout", "stderr", "healthcheck"];

export interface RunRecord {
  id: number;
  job_name: string;
  status: RunStatus;
  attempt: number;
  trigger: Trigger;
  triggered_by: string;
  reason: string | null;
  cycle_id: string;
  /** Job tags when the run was created, for audit search by tag. */
  tags: string[];
  /** The scheduled slot (ISO) a schedule-triggered run belongs to; unique per job. */
  scheduled_for: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  exit_code: number | null;
  sla_breached: 0 | 1;
  hc_status: HcStatus | null;
  pid: number | null;
  /** Process start time from /proc (clock ticks since boot), guards against pid reuse. */
  pid_start: string | null;
  error: string | null;
  duration_ms: number | null;
  next_attempt_at: string | null;
  /**
   * The run's parameter values ({} when none), secret ones as `***`: every view of a run
   * (API, CLI, export, notifications, audit log) shows this. The engine reads the values
   * themselves with `runs.paramValues`.
   */
  params: Record<string, ParamValue>;
  /** The slot (ISO UTC) this run is for: scheduled, catch-up and backfill runs, and their cycles' dependency runs; null for manual runs. */
  scheduled_at: string | null;
  /** The backfill that created this run or the cycle it is in, else null. */
  backfill_id: number | null;
}

export interface NewRun {
  job_name: string;
  trigger: Trigger;
  triggered_by: string;
  reason?: string | null;
  cycle_id: string;
  tags: string[];
  attempt?: number; // default 1
  status?: "PENDING" | "SKIPPED"; // default PENDING
  error?: string | null; // for runs created SKIPPED
  scheduled_for?: string | null;
  scheduled_at?: string | null;
  backfill_id?: number | null;
  /** Values as checked against the job's declaration (null or {}: none). */
  params?: Record<string, ParamValue> | null;
  /** Names among `params` declared `secret: true`. */
  secretParams?: readonly string[];
  created_at: string;
}

/** Fields a transition may set besides `status`. */
export type RunPatch = Partial<
  Pick<
    RunRecord,
    | "attempt"
    | "started_at"
    | "finished_at"
    | "exit_code"
    | "sla_breached"
    | "hc_status"
    | "pid"
    | "pid_start"
    | "error"
    | "duration_ms"
    | "next_attempt_at"
  >
> & {
  /**
   * When the attempt that this transition to RUNNING starts began (ISO). Not
   * a job_runs column: a run leaving RETRYING records its attempts in
   * run_attempts, and this is the new attempt's start there. Without it the
   * retry instant (`next_attempt_at`) stands in.
   */
  attempt_started_at?: string;
};

/** A backfill as the API shows it (CONTRACT §7.3); secret params read `***`. */
export interface BackfillRecord {
  id: number;
  job: string;
  /** [from, to): ISO UTC instants. */
  from: string;
  to: string;
  /** Slot runs it created. */
  total: number;
  /** Its slot runs by status now (every status, 0 included). */
  by_status: Record<RunStatus, number>;
  /** No slot run is PENDING, RUNNING or RETRYING any more. */
  done: boolean;
  created_at: string;
  created_by: string;
  cancelled: boolean;
  cancelled_at: string | null;
  reason: string | null;
  params: Record<string, ParamValue>;
  rerun: boolean;
  ignore_exclude: boolean;
  parallel: number;
}

export interface NewBackfill {
  job_name: string;
  from: string;
  to: string;
  reason: string | null;
  params: Record<string, ParamValue>;
  secretParams: readonly string[];
  rerun: boolean;
  ignore_exclude: boolean;
  parallel: number;
  total: number;
  created_by: string;
  created_at: string;
}

/** One run of a new backfill: its slot, its cycle, and the slot claim (`scheduled_for`) when it takes it. */
export interface NewBackfillRun {
  scheduled_at: string;
  cycle_id: string;
  scheduled_for: string | null;
}

export interface JobStateRow {
  job_name: string;
  last_success: string | null;
  last_failure: string | null;
  next_run: string | null;
  lock_pid: number | null;
  paused: 0 | 1;
}

export interface LogLine {
  run_id: number;
  seq: number; // 1, 2, 3... per run, no gaps
  ts: string;
  stream: LogStream;
  line: string;
}

export interface OutputRow {
  id: number;
  run_id: number;
  job_name: string;
  var_name: string;
  value: string;
  cycle_id: string;
  created_at: string;
}

/** Why a run did not happen (non_runs, `svc why`). */
export type NonRunReason = "paused" | "upstream_failed" | "missed" | "excluded";

/** A trace of runs that did not happen: one skipped slot or cycle, or consecutive slots of one reason. */
export interface NonRunRow {
  id: number;
  job_name: string;
  reason: NonRunReason;
  /** For people: `paused: scheduled slot skipped`, `upstream extract FAILED (run 41)`. */
  detail: string;
  /** The cycle a dependency-triggered job did not run in; null for slots. */
  cycle_id: string | null;
  upstream: string | null;
  upstream_run_id: number | null;
  /** The first and last scheduled slot this row stands for (null for cycles). */
  first_slot: string | null;
  last_slot: string | null;
  /** How many slots (or 1 for a cycle). */
  count: number;
  first_at: string;
  last_at: string;
  /** The job's newest run id when the row was opened. */
  after_run_id: number;
}

export interface NewNonRun {
  job_name: string;
  reason: NonRunReason;
  detail: string;
  cycle_id?: string | null;
  upstream?: string | null;
  upstream_run_id?: number | null;
  slot?: string | null;
  /** Consecutive slots this entry stands for, `slot` the first and `lastSlot` the last (default: one slot). */
  slots?: number;
  lastSlot?: string | null;
  /** When it was recorded (ISO UTC). */
  at: string;
}

export interface AlertRow {
  id: number;
  job_name: string;
  run_id: number | null;
  event: string;
  channel: string;
  status: AlertStatus;
  attempts: number;
  last_attempt_at: string | null;
  error: string | null;
  /** The rendered delivery (JSON text) so a retry re-sends the same thing. */
  payload: string;
  created_at: string;
}

export interface IntegrationStatusRow {
  name: string;
  provider: string;
  credential_status: string;
  last_test_result: string | null;
  last_test_at: string | null;
}

/**
 * One attempt of a run that retried (run_attempts). `finished_at` null: the
 * run's current or last attempt, which ends when the run does.
 */
export interface AttemptSpan {
  attempt: number;
  started_at: string;
  finished_at: string | null;
  exit_code: number | null;
  error: string | null;
}

/** `{rows, total, page, page_size}` pages (CONTRACT §4). */
export interface Page<T> {
  rows: T[];
  total: number;
  page: number;
  page_size: number;
}

/** `{rows, total, limit, offset}` slices where SPEC names limit/offset. */
export interface Slice<T> {
  rows: T[];
  total: number;
  limit: number;
  offset: number;
}

/** A page of a table view (`/api/db/*`). */
export interface PageRequest {
  page: number; // from 1
  page_size: 25 | 50 | 100;
  sort: string; // a column name; validated by the store (unknown -> throws InvalidQueryError)
  order: "asc" | "desc";
}

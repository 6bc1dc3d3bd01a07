/** The API's JSON shapes the client reads (CONTRACT §4, docs/API.md). */
import type { JobStateRow, RunRecord } from "../../store/types.js";

export type { RunRecord } from "../../store/types.js";

/** A PENDING, RUNNING or RETRYING run of a job. */
export interface ActiveRun {
  id: number;
  status: "PENDING" | "RUNNING" | "RETRYING";
}

export interface JobSummary {
  name: string;
  description: string | null;
  frequency: string;
  timezone?: string;
  tags: string[];
  paused: boolean;
  next_run: string | null;
  /** next_run in the job's zone: `2027-03-14T03:00:00-04:00 EDT`. */
  next_run_local: string | null;
  last_run: RunRecord | null;
  /** Its unfinished runs, oldest first: what the job is doing now. */
  active_runs: ActiveRun[];
  state: JobStateRow;
}

export interface JobsAnswer {
  jobs: JobSummary[];
}

export interface Slot {
  utc: string;
  /** In the job's zone: `2027-03-14T03:00:00-04:00 EDT`. */
  local: string;
  note: string | null;
}

export interface AlertRow {
  id: number;
  job_name: string;
  run_id: number | null;
  event: string;
  channel: string;
  status: "pending" | "delivered" | "failed";
  attempts: number;
  last_attempt_at: string | null;
  error: string | null;
  created_at: string;
}

export interface JobDetail {
  job: Record<string, unknown>;
  state: Omit<JobStateRow, "paused"> & { paused: boolean };
  runs: RunRecord[];
  active_runs: ActiveRun[];
  next_runs: Slot[];
  last_alert: AlertRow | null;
}

export interface StartedRun {
  run_id: number;
  cycle_id: string;
  status: string;
}

export interface DaemonInfo {
  pid: number;
  config_path: string;
  daemon_config_path: string | null;
  started_at: string;
  database_path: string;
  data_dir?: string;
  active_jobs: number;
  paused_jobs: number;
  total_jobs: number;
  running_jobs?: number;
  version: string;
  config_loaded_at?: string | null;
  config_sha256?: string | null;
  daemon_config_sha256?: string | null;
}

export interface LogPage {
  lines: { seq: number; ts: string; stream: string; line: string }[];
  total: number;
}

export interface Slice<T> {
  rows: T[];
  total: number;
  limit: number;
  offset: number;
}

export interface AuditAnswer {
  runs: RunRecord[];
  total: number;
  limit: number;
  offset: number;
}

export interface Integration {
  name: string;
  provider: string;
  credential_status: string;
  last_test_result: string | null;
  last_test_at: string | null;
}

export const TERMINAL = new Set(["SUCCESS", "FAILED", "SKIPPED"]);

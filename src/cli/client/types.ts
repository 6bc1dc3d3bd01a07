/** The API's JSON shapes the client reads (CONTRACT §4, docs/API.md). */
import type { JobStateRow, RunRecord } from "../../store/types.js";

export type { RunRecord } from "../../store/types.js";

export interface JobSummary {
  name: string;
  description: string | null;
  frequency: string;
  timezone?: string;
  tags: string[];
  paused: boolean;
  next_run: string | null;
  last_run: RunRecord | null;
  state: JobStateRow;
}

export interface JobsAnswer {
  jobs: JobSummary[];
}

export interface JobDetail {
  job: Record<string, unknown>;
  state: Omit<JobStateRow, "paused"> & { paused: boolean };
  runs: RunRecord[];
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

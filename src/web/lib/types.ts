/** Response shapes of the daemon API (CONTRACT §4). Records come from src/store/types.ts. */
import type { ConfigIssue } from "../../config/types.js";
import type { JobStateRow, LogStream, RunRecord, RunStatus } from "../../store/types.js";
import type { ActiveRun } from "./jobNow.js";

export type {
  AlertRow,
  BackfillRecord,
  IntegrationStatusRow,
  JobStateRow,
  LogStream,
  OutputRow,
  RunRecord,
  RunStatus,
  Trigger,
} from "../../store/types.js";
export type { ConfigIssue };

export interface StatusResponse {
  status: string;
  version: string;
  uptime_s: number;
  started_at: string;
  jobs: { total: number; active: number; paused: number; running: number };
}

export interface JobSummary {
  name: string;
  description: string | null;
  frequency: string;
  tags: string[];
  paused: boolean | 0 | 1;
  next_run: string | null;
  last_run: RunRecord | null;
  /** What the job is doing now: its PENDING, RUNNING and RETRYING runs (last_run may be a newer SKIPPED one). */
  active_runs?: ActiveRun[];
  state: JobStateRow | null;
  /** Not in CONTRACT §4 yet; used for the next-run tooltip when present. */
  timezone?: string;
}

export interface JobDetail {
  /** The job's config with env redacted; its exact shape is the API's. */
  job: Record<string, unknown>;
  state: (JobStateRow & { paused: boolean | 0 | 1 }) | null;
  runs: RunRecord[];
  /** Its PENDING, RUNNING and RETRYING runs, whether or not `runs` (the newest few) holds them. */
  active_runs?: ActiveRun[];
}

export interface StartedRun {
  run_id: number;
  cycle_id: string;
  status: RunStatus;
}

export interface LogLineMsg {
  seq: number;
  ts: string;
  stream: LogStream;
  line: string;
}

export interface DagResponse {
  nodes: { name: string; frequency: string; tags: string[] }[];
  edges: { from: string; to: string; kind: "depends_on" | "after" }[];
  order: string[];
}

export interface ValidateResponse {
  valid: boolean;
  errors: ConfigIssue[];
  warnings: ConfigIssue[];
}

export interface DaemonInfo {
  pid: number;
  config_path: string;
  daemon_config_path: string | null;
  started_at: string;
  database_path: string;
  active_jobs: number;
  paused_jobs: number;
  total_jobs: number;
  version: string;
}

export interface TableResponse<T> {
  rows: T[];
  total: number;
  page?: number;
  page_size?: number;
  limit?: number;
  offset?: number;
}

export const TERMINAL: readonly RunStatus[] = ["SUCCESS", "FAILED", "SKIPPED"];
export const isTerminal = (s: RunStatus | string | null | undefined) => TERMINAL.includes(s as RunStatus);
export const PAGE_SIZES = [25, 50, 100] as const;

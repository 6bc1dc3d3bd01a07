import { frequencyLabel } from "../config/index.js";
import type { JobConfig, ProjectConfig } from "../config/types.js";
import type { Engine } from "../engine/engine.js";
import { formatOffset, zoneInfo } from "../schedule/zone.js";
import type { ReadStore } from "../store/api.js";
import type { JobStateRow, RunRecord } from "../store/types.js";

/**
 * Read-only views the routes answer with, assembled from the config, the
 * store and the engine's live state. Nothing here changes state.
 */

export function emptyState(job: string): JobStateRow {
  return { job_name: job, last_success: null, last_failure: null, next_run: null, lock_pid: null, paused: 0 };
}

export interface JobSummary {
  name: string;
  description: string | null;
  frequency: string;
  timezone: string;
  tags: string[];
  paused: boolean;
  next_run: string | null;
  last_run: RunRecord | null;
  state: JobStateRow;
}

/** `GET /api/jobs` rows, sorted by name (CONTRACT §4). */
export function jobSummaries(project: ProjectConfig, store: ReadStore, engine: Engine, tag: string | undefined): JobSummary[] {
  const states = new Map(store.jobState.all().map((s) => [s.job_name, s]));
  const jobs = [...project.jobs.values()].filter((j) => tag === undefined || j.tags.includes(tag));
  jobs.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return jobs.map((job) => {
    const state = states.get(job.name) ?? emptyState(job.name);
    return {
      name: job.name,
      description: job.description,
      frequency: frequencyLabel(job),
      timezone: job.schedule.timezone,
      tags: [...job.tags],
      paused: state.paused === 1,
      next_run: engine.nextRun(job.name)?.utc ?? null,
      last_run: store.runs.recent(job.name, 1)[0] ?? null,
      state,
    };
  });
}

export interface StateRow extends JobStateRow {
  running_run_ids: number[];
  next_run_local: string | null;
  in_config: boolean;
}

/**
 * `GET /api/db/state`: job_state joined with live scheduler state, one row
 * per configured job plus rows of jobs no longer in the config.
 */
export function stateRows(project: ProjectConfig, store: ReadStore, engine: Engine): StateRow[] {
  const states = new Map(store.jobState.all().map((s) => [s.job_name, s]));
  const names = new Set([...project.jobs.keys(), ...states.keys()]);
  return [...names].map((name) => {
    const state = states.get(name) ?? emptyState(name);
    const job = project.jobs.get(name);
    return {
      ...state,
      running_run_ids: job ? engine.activeRuns(name) : [],
      next_run_local: job ? localTime(state.next_run, job) : null,
      in_config: job !== undefined,
    };
  });
}

/**
 * The stored next_run instant in the job's zone ("2027-03-14T03:00:00-04:00 EDT"),
 * the same form as `ScheduledSlot.local`.
 * TODO(schedule): export makeSlot's local formatter from src/schedule so this is not a second copy.
 */
function localTime(nextRunIso: string | null, job: JobConfig): string | null {
  if (nextRunIso === null) return null;
  const at = Date.parse(nextRunIso);
  if (Number.isNaN(at)) return null;
  const zone = zoneInfo(job.schedule.timezone);
  const offsetMs = zone.offsetMs(at);
  return `${new Date(at + offsetMs).toISOString().slice(0, 19)}${formatOffset(offsetMs)} ${zone.abbreviation(at)}`;
}

/** Job counts for `/api/status` and `/api/daemon/info`. */
export function jobCounts(project: ProjectConfig, store: ReadStore, engine: Engine): { total: number; active: number; paused: number; running: number } {
  let paused = 0;
  for (const name of store.jobState.pausedJobs()) if (project.jobs.has(name)) paused++;
  const total = project.jobs.size;
  return { total, active: total - paused, paused, running: engine.counts().running };
}

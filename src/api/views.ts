import { frequencyLabel } from "../config/index.js";
import type { JobConfig, ProjectConfig } from "../config/types.js";
import type { Engine } from "../engine/engine.js";
import { nextRuns } from "../schedule/nextRun.js";
import { localIso, zoneInfo } from "../schedule/zone.js";
import type { ReadStore } from "../store/api.js";
import type { JobStateRow, RunRecord } from "../store/types.js";

/**
 * Read-only views the routes answer with, assembled from the config, the
 * store and the engine's live state. Nothing here changes state.
 */

export function emptyState(job: string): JobStateRow {
  return { job_name: job, last_success: null, last_failure: null, next_run: null, lock_pid: null, paused: 0 };
}

/** A run of the job that is not finished: what the job is doing now. */
export interface ActiveRun {
  id: number;
  status: "PENDING" | "RUNNING" | "RETRYING";
}

export interface JobSummary {
  name: string;
  description: string | null;
  frequency: string;
  timezone: string;
  tags: string[];
  paused: boolean;
  next_run: string | null;
  /** next_run in the job's zone: `2027-03-14T03:00:00-04:00 EDT`. */
  next_run_local: string | null;
  last_run: RunRecord | null;
  /** Its PENDING, RUNNING and RETRYING runs, oldest first: the job's state comes from these, not from last_run. */
  active_runs: ActiveRun[];
  state: JobStateRow;
}

/** Every unfinished run, by job, oldest first (one query for all jobs). */
export function activeRunsByJob(store: ReadStore): Map<string, ActiveRun[]> {
  const byJob = new Map<string, ActiveRun[]>();
  for (const r of store.runs.byStatus(["PENDING", "RUNNING", "RETRYING"])) {
    let list = byJob.get(r.job_name);
    if (!list) byJob.set(r.job_name, (list = []));
    list.push({ id: r.id, status: r.status as ActiveRun["status"] });
  }
  return byJob;
}

/** One job's unfinished runs, oldest first. */
export function activeRunsOf(store: ReadStore, job: string): ActiveRun[] {
  return activeRunsByJob(store).get(job) ?? [];
}

/**
 * The job's next `count` slots, from the one the scheduler holds (so the
 * rules it applies, DST and exclusions, decide the first) on by the
 * schedule code; none for `manual` and `after:` jobs.
 */
export function upcoming(deps: { project(): ProjectConfig; engine: Engine }, name: string, count: number): { utc: string; local: string; note: string | null }[] {
  const job = deps.project().jobs.get(name);
  const first = job && count > 0 ? deps.engine.nextRun(name) : null;
  if (!job || !first) return [];
  const slots = [first, ...nextRuns(job.schedule, first.at, count - 1)];
  return slots.map((s) => ({ utc: s.utc, local: s.local, note: s.note }));
}

/** `GET /api/jobs` rows, sorted by name (CONTRACT §4). */
export function jobSummaries(project: ProjectConfig, store: ReadStore, engine: Engine, tag: string | undefined): JobSummary[] {
  const states = new Map(store.jobState.all().map((s) => [s.job_name, s]));
  const active = activeRunsByJob(store);
  const jobs = [...project.jobs.values()].filter((j) => tag === undefined || j.tags.includes(tag));
  jobs.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return jobs.map((job) => {
    const state = states.get(job.name) ?? emptyState(job.name);
    const next = engine.nextRun(job.name)?.utc ?? null;
    return {
      name: job.name,
      description: job.description,
      frequency: frequencyLabel(job),
      timezone: job.schedule.timezone,
      tags: [...job.tags],
      paused: state.paused === 1,
      next_run: next,
      next_run_local: localTime(next, job),
      last_run: store.runs.recent(job.name, 1)[0] ?? null,
      active_runs: active.get(job.name) ?? [],
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

/** The stored next_run instant in the job's zone ("2027-03-14T03:00:00-04:00 EDT"), the form of `ScheduledSlot.local`. */
export function localTime(nextRunIso: string | null, job: Pick<JobConfig, "schedule">): string | null {
  if (nextRunIso === null) return null;
  const at = Date.parse(nextRunIso);
  return Number.isNaN(at) ? null : localIso(zoneInfo(job.schedule.timezone), at);
}

/** Job counts for `/api/status` and `/api/daemon/info`. */
export function jobCounts(project: ProjectConfig, store: ReadStore, engine: Engine): { total: number; active: number; paused: number; running: number } {
  let paused = 0;
  for (const name of store.jobState.pausedJobs()) if (project.jobs.has(name)) paused++;
  const total = project.jobs.size;
  return { total, active: total - paused, paused, running: engine.counts().running };
}

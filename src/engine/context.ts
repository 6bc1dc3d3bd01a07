import { defaultParams, secretParamNames } from "../config/params.js";
import type { DaemonConfig, JobConfig, ProjectConfig } from "../config/types.js";
import type { Clock } from "../shared/clock.js";
import type { Logger } from "../shared/logger.js";
import type { Store } from "../store/api.js";
import type { NewRun, RunPatch, RunRecord, RunStatus } from "../store/types.js";
import type { Attempt } from "./attempt.js";
import { BackfillQueue } from "./backfillQueue.js";
import type { EngineEvents, EventBus } from "./events.js";
import { IdMap } from "./idMap.js";

/** A run waiting for a pool slot: PENDING, or RETRYING until `nextAttemptAt`. */
export interface Waiting {
  id: number;
  job: string;
  cycleId: string;
  status: "PENDING" | "RETRYING";
  nextAttemptAt: number | null;
}

export interface EngineDeps {
  store: Store;
  bus: EventBus;
  log: Logger;
  clock: Clock;
  project: ProjectConfig;
  daemon: DaemonConfig;
  /** Environment every job starts from (the daemon's own). */
  baseEnv?: NodeJS.ProcessEnv;
  /** [0, 1) source for jitter; injected by tests. */
  random?: () => number;
}

/**
 * The engine's shared state, passed as one object (STYLE: no module-level
 * mutable state). Invariant: a run id is in at most one of `attempts`
 * (RUNNING) and `waiting` (PENDING / RETRYING).
 */
export interface EngineContext {
  readonly store: Store;
  readonly bus: EventBus;
  readonly log: Logger;
  readonly clock: Clock;
  readonly random: () => number;
  readonly daemon: DaemonConfig;
  readonly baseEnv: NodeJS.ProcessEnv;
  /** What every job's environment starts from: `baseEnv` (set variables) under `executor.global_env`, built once. */
  readonly spawnEnv: Readonly<Record<string, string>>;
  project: ProjectConfig;
  /** Dependency-triggered downstream jobs of each job, from the current project. */
  downstreams: Map<string, string[]>;
  /** Not Maps: a Map churned by every run keeps every run alive until a full collection (idMap.ts). */
  readonly attempts: IdMap<Attempt>;
  readonly waiting: IdMap<Waiting>;
  /** Cycles halted by an `on_failure: stop` job: nothing new dispatches in them. */
  readonly halted: Set<string>;
  /** Backfills' slot runs waiting to enter `waiting` in slot order (CONTRACT §7.3). */
  readonly backfills: BackfillQueue;
  stopping: boolean;
}

/**
 * The `svc` client's own variables, which the shell that started svcd may hold: not passed to jobs (a
 * job printing its environment would log the client's token). svcd.yaml may still read them
 * (`${env:SVC_TOKEN}`), and `executor.global_env` or a job's `env` may pass them on explicitly.
 */
const CLIENT_ONLY = new Set(["SVC_TOKEN", "SVC_ADDR"]);

export function createContext(deps: EngineDeps): EngineContext {
  // A plain copy: reading process.env goes through getenv for every variable, on every dispatch.
  const baseEnv = deps.baseEnv ?? { ...process.env };
  const spawnEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(baseEnv)) if (v !== undefined && !CLIENT_ONLY.has(k)) spawnEnv[k] = v;
  Object.assign(spawnEnv, deps.daemon.executor.globalEnv);
  // Frozen: every run's environment inherits it (engine/prepare.ts), and posixSpawn keeps its K=V strings.
  Object.freeze(spawnEnv);
  const ctx: Omit<EngineContext, "backfills"> & { backfills?: BackfillQueue } = {
    store: deps.store,
    bus: deps.bus,
    log: deps.log,
    clock: deps.clock,
    random: deps.random ?? Math.random,
    daemon: deps.daemon,
    baseEnv,
    spawnEnv,
    project: deps.project,
    downstreams: downstreamIndex(deps.project),
    attempts: new IdMap(),
    waiting: new IdMap(),
    halted: new Set(),
    stopping: false,
  };
  ctx.backfills = new BackfillQueue(ctx);
  return ctx as EngineContext;
}

/** job -> the jobs that list it upstream, in file order. */
export function downstreamIndex(project: ProjectConfig): Map<string, string[]> {
  const index = new Map<string, string[]>();
  for (const job of project.jobs.values()) {
    for (const up of job.upstreams) {
      let list = index.get(up);
      if (!list) index.set(up, (list = []));
      list.push(job.name);
    }
  }
  return index;
}

/** The one place a run changes status: store check + event. */
export function setStatus(ctx: EngineContext, run: RunRecord, to: RunStatus, patch: RunPatch = {}): RunRecord {
  const updated = ctx.store.runs.transition(run.id, to, patch, run.status);
  ctx.bus.emit("run:status", { run: updated, from: run.status });
  return updated;
}

/**
 * Several transitions and `alsoWrite` in one transaction; their events are
 * sent after the commit, so nobody hears of a change that was rolled back.
 */
export function setStatuses(
  ctx: EngineContext,
  changes: Array<{ run: RunRecord; to: RunStatus; patch: RunPatch }>,
  alsoWrite: () => void = () => {},
): RunRecord[] {
  const updated = ctx.store.tx(() => {
    const rows = changes.map(({ run, to, patch }) => ctx.store.runs.transition(run.id, to, patch, run.status));
    alsoWrite();
    return rows;
  });
  changes.forEach(({ run }, i) => ctx.bus.emit("run:status", { run: updated[i]!, from: run.status }));
  return updated;
}

/**
 * Inserts a run and announces it; PENDING runs join the dispatch queue. Without `params` the
 * run takes the job's defaults (scheduled, catch-up and dependency runs: CONTRACT §7.2).
 */
export function createRun(ctx: EngineContext, fields: NewRunFields, job: JobConfig): RunRecord {
  const run = insertRun(ctx, fields, job);
  announceRun(ctx, run);
  return run;
}

export type NewRunFields = Omit<NewRun, "created_at" | "tags">;

/** A new run of `job`: its tags, and its declared defaults unless params are given (a `create` effect's run). */
export function runOf(fields: NewRunFields, job: JobConfig): Omit<NewRun, "created_at"> {
  return {
    ...fields,
    params: fields.params !== undefined ? fields.params : defaultParams(job.params),
    secretParams: fields.secretParams ?? secretParamNames(job.params),
    tags: job.tags,
  };
}

/**
 * createRun's write alone: the run's row (the caller announces it once its transaction is committed;
 * the scheduler writes `create` effects through apply.ts's writeEffects instead, which do that).
 */
export function insertRun(ctx: EngineContext, fields: NewRunFields, job: JobConfig): RunRecord {
  return ctx.store.runs.create({ ...runOf(fields, job), created_at: new Date(ctx.clock.now()).toISOString() });
}

/** createRun's announcement of a committed new run: its event, and the dispatch queue for a PENDING one. */
export function announceRun(ctx: EngineContext, run: RunRecord): void {
  ctx.bus.emit("run:status", { run, from: null });
  if (run.status === "PENDING") {
    ctx.waiting.set(run.id, { id: run.id, job: run.job_name, cycleId: run.cycle_id, status: "PENDING", nextAttemptAt: null });
  }
}

export function notify(
  ctx: EngineContext,
  event: EngineEvents["run:notify"]["event"],
  run: RunRecord,
  previousStatus: RunStatus | null = null,
): void {
  ctx.bus.emit("run:notify", { event, run, fallbackToFailure: event === "on_sla_breach", previousStatus });
}

export function nowIso(ctx: EngineContext): string {
  return new Date(ctx.clock.now()).toISOString();
}

/** Is a job paused? (job_state is the source of truth, persisted across restarts.) */
export function isPaused(ctx: EngineContext, job: string): boolean {
  return ctx.store.jobState.get(job)?.paused === 1;
}

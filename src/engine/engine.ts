import { randomUUID } from "node:crypto";
import { formatDuration } from "../config/index.js";
import type { JobConfig, ParamValue, ProjectConfig } from "../config/types.js";
import type { TimerHandle } from "../shared/clock.js";
import { toError } from "../shared/toError.js";
import type { BackfillRecord, JobStateRow, RunRecord } from "../store/types.js";
import { createContext, downstreamIndex, nowIso, setStatus, type EngineContext, type EngineDeps, type NewRunFields } from "./context.js";
import { Dispatcher } from "./dispatcher.js";
import { checkParams, secretParamNames } from "../config/params.js";
import { cancelBackfill, createBackfill, planBackfill, type BackfillPlan, type BackfillRequest } from "./backfill.js";
import { badRequest, conflict, notFound, unknownJob, validationFailed } from "./errors.js";
import { reconcile } from "./recovery.js";
import { Scheduler, type NextRunInfo } from "./scheduler.js";
import type { ScheduledSlot } from "../schedule/nextRun.js";

export const MAX_REASON_LENGTH = 500;
/** Backward clock movements smaller than this are jitter, not a step. */
const CLOCK_STEP_BACK_MS = 1_000;
/** How often a drain looks again at the attempts in flight (new ends are recorded between looks). */
const IDLE_POLL_MS = 100;

export interface StartSummary {
  next: NextRunInfo[];
  lost: number;
  resumed: number;
}

/**
 * The engine's public face. The API and CLI call these operations; nothing
 * else changes run state. Every operation is synchronous up to the point a
 * subprocess starts; run completion arrives later through the event bus.
 */
/** What a manual run is asked for with (runNow, trigger). */
export interface ManualRunOptions {
  reason?: string | null;
  params?: unknown;
  triggeredBy: string;
  /** Join this earlier cycle (a full id or a unique prefix) instead of a new one. */
  cycleId?: string;
}

export class Engine {
  private readonly ctx: EngineContext;
  private readonly pool: Dispatcher;
  private readonly scheduler: Scheduler;
  private tickTimer: TimerHandle | null = null;
  /** The clock at the last tick: a reading well below it means the wall clock was stepped back. */
  private lastTick: number | null = null;
  private stopping: Promise<void> | null = null;
  /** Runs already reported as past their SLA (sla_breached is also stored). */
  private readonly slaReported = new Set<number>();

  constructor(deps: EngineDeps) {
    this.ctx = createContext(deps);
    this.pool = new Dispatcher(this.ctx);
    this.scheduler = new Scheduler(this.ctx, this.pool);
  }

  /** Reconciles what a previous daemon left, computes slots (with catch-up), starts the tick. */
  async start(): Promise<StartSummary> {
    const { lost, resumed } = await reconcile(this.ctx, () => this.pool.pump());
    const next = this.scheduler.init(this.ctx.clock.now());
    this.pool.pump();
    this.armTick();
    return { next, lost, resumed };
  }

  /** Wakes at each whole second of the clock (absolute instants: no drift). */
  private armTick(): void {
    if (this.ctx.stopping) return;
    const at = (Math.floor(this.ctx.clock.now() / 1000) + 1) * 1000;
    this.tickTimer = this.ctx.clock.setTimer(at, () => {
      this.tick();
      this.armTick();
    });
  }

  /**
   * For tests and benchmarks only (an ESLint rule keeps it out of src/): a tick now, with
   * whatever clock the engine has, and the live context. Production code drives the engine
   * through its clock and its public operations.
   */
  testSeam(): { tick(): void; readonly ctx: EngineContext } {
    return { tick: () => this.tick(), ctx: this.ctx };
  }

  /** One tick: fire due slots, start due retries, check SLAs. */
  private tick(): void {
    try {
      const now = this.ctx.clock.now();
      if (this.lastTick !== null && this.lastTick - now > CLOCK_STEP_BACK_MS) this.clockWentBack(this.lastTick - now);
      this.lastTick = now;
      this.scheduler.tick(now);
      this.checkSla(now);
      this.pool.pump();
    } catch (e) {
      this.ctx.log.error({ err: toError(e) }, "tick failed");
    }
  }

  /**
   * The wall clock was stepped back (NTP, a manual change). Slots are instants and need
   * nothing (the scheduler never fires a slot twice), but a retry delay is a duration: each
   * pending retry keeps the wait it had left instead of also waiting out the step.
   */
  private clockWentBack(byMs: number): void {
    this.ctx.log.warn({ back_ms: byMs }, `the clock went back by ${formatDuration(byMs)}: pending retries keep their remaining delay`);
    for (const w of this.ctx.waiting.values()) {
      if (w.status !== "RETRYING" || w.nextAttemptAt === null) continue;
      w.nextAttemptAt -= byMs;
      try {
        this.ctx.store.runs.update(w.id, { next_attempt_at: new Date(w.nextAttemptAt).toISOString() });
      } catch (e) {
        this.ctx.log.error({ err: toError(e), run_id: w.id }, "could not store the moved retry instant");
      }
    }
  }

  /** SPEC rule 8: a run still RUNNING (or retrying) past its `sla` is marked once and reported. */
  private checkSla(now: number): void {
    const ids = [...this.ctx.attempts.keys()];
    for (const w of this.ctx.waiting.values()) if (w.status === "RETRYING") ids.push(w.id);
    for (const id of ids) {
      if (this.slaReported.has(id)) continue;
      const run = this.ctx.store.runs.get(id);
      const job = run && this.ctx.project.jobs.get(run.job_name);
      if (!run || !job || job.slaMs === null || !run.started_at || run.sla_breached === 1) continue;
      if (now - Date.parse(run.started_at) < job.slaMs) continue;
      this.slaReported.add(id);
      const marked = this.ctx.store.runs.update(id, { sla_breached: 1 });
      this.ctx.log.warn({ job: job.name, run_id: id }, `job ${job.name}: run ${id} passed its SLA`);
      this.ctx.bus.emit("run:notify", { event: "on_sla_breach", run: marked, fallbackToFailure: true, previousStatus: null });
    }
    for (const id of this.slaReported) if (!this.ctx.attempts.has(id) && !this.ctx.waiting.has(id)) this.slaReported.delete(id);
  }

  private job(name: string) {
    const job = this.ctx.project.jobs.get(name);
    if (!job) throw unknownJob(name);
    return job;
  }

  /**
   * Triggers a manual run now, in a new cycle, or joining the earlier cycle `cycleId` (a full id or
   * a unique prefix): then its gate and `{{ outputs.* }}` read that cycle, and its dependents follow
   * in it. Paused jobs may still be run by hand. `params` are checked against the job's declaration
   * (CONTRACT §7.2): any problem is a validation error naming every bad field, and no run is created.
   */
  runNow(name: string, opts: ManualRunOptions): RunRecord {
    const { fields, job } = this.manualRun(name, opts);
    return this.pool.createAndStart(fields, job);
  }

  /**
   * runNow for the API: the checks at once (a bad request throws), then the run is created with the
   * others asked for in the same loop turn, in one transaction; resolves once it is committed.
   */
  trigger(name: string, opts: ManualRunOptions): Promise<RunRecord> {
    const { fields, job } = this.manualRun(name, opts);
    return this.pool.createSoon(fields, job);
  }

  /**
   * Throws what runNow would throw for this job and these options (an unknown job, a bad reason or
   * params, a stopping daemon), creating nothing: a tag's run checks every root before it starts one.
   */
  checkManualRun(name: string, opts: Omit<ManualRunOptions, "cycleId">): void {
    this.checked(name, opts);
  }

  private checked(name: string, opts: Omit<ManualRunOptions, "cycleId">): { job: JobConfig; reason: string | null; params: Record<string, ParamValue> } {
    const job = this.job(name);
    const reason = opts.reason ?? null;
    if (reason !== null && reason.length > MAX_REASON_LENGTH) {
      throw badRequest(`reason is ${reason.length} characters long; the limit is ${MAX_REASON_LENGTH}`);
    }
    const params = checkParams(job.params, opts.params);
    if (!params.ok) throw validationFailed(job.name, params.errors);
    this.assertRunning();
    return { job, reason, params: params.values };
  }

  private manualRun(name: string, opts: ManualRunOptions): { fields: NewRunFields; job: JobConfig } {
    const { job, reason, params } = this.checked(name, opts);
    const fields: NewRunFields = { job_name: job.name, trigger: "manual", triggered_by: opts.triggeredBy, reason, cycle_id: randomUUID(), params };
    if (opts.cycleId !== undefined) {
      fields.cycle_id = this.existingCycle(opts.cycleId);
      // A person chose to carry on with this cycle (as retry does).
      this.ctx.halted.delete(fields.cycle_id);
      // Its logical time is the cycle's (CONTRACT §7.3), which its dependents then inherit.
      fields.scheduled_at = this.ctx.store.runs.inCycle(fields.cycle_id)[0]?.scheduled_at ?? null;
    }
    return { fields, job };
  }

  /** The one cycle whose id is, or starts with, `idOrPrefix`. */
  private existingCycle(idOrPrefix: string): string {
    const hits = this.ctx.store.runs.cyclesStartingWith(idOrPrefix.toLowerCase(), 2);
    if (hits.includes(idOrPrefix.toLowerCase())) return idOrPrefix.toLowerCase();
    if (hits.length === 0) throw notFound(`no cycle ${idOrPrefix}: no run was ever recorded in it (\`svc history JOB --json\` shows cycle ids)`);
    if (hits.length > 1) throw badRequest(`cycle ${idOrPrefix} is ambiguous (${hits.join(", ")}...): give more of its id`);
    return hits[0]!;
  }

  /**
   * A new run of the job's most recent run, which must be FAILED, in the same cycle, with its
   * params (secret ones still secret) and its slot.
   */
  retry(name: string, opts: { triggeredBy: string }): RunRecord {
    const job = this.job(name);
    const last = this.ctx.store.runs.recent(job.name, 1)[0];
    if (!last) throw conflict(`job ${name} has no run to retry`);
    if (last.status !== "FAILED") {
      throw conflict(`job ${name}: its most recent run (${last.id}) is ${last.status}; only a FAILED run can be retried`);
    }
    this.assertRunning();
    this.ctx.halted.delete(last.cycle_id); // a person chose to carry on with this cycle
    const kept = this.ctx.store.runs.paramValues(last.id);
    return this.pool.createAndStart(
      {
        job_name: job.name,
        trigger: "manual",
        triggered_by: opts.triggeredBy,
        reason: last.reason,
        cycle_id: last.cycle_id,
        attempt: last.attempt + 1,
        params: kept?.values ?? {},
        // Secret then, or secret now (the declaration may have changed since): either way it reads ***.
        secretParams: [...new Set([...(kept?.secret ?? []), ...secretParamNames(job.params)])],
        scheduled_at: last.scheduled_at,
        // A person's run, not one of the backfill's: it does not count in the backfill's progress.
        backfill_id: null,
      },
      job,
    );
  }

  /**
   * Backfills the job's slots in [from, to) (CONTRACT §7.3). With `dryRun` only the plan (the
   * slots, what happens to each); otherwise the backfill and its runs, all created now.
   */
  backfill(name: string, req: BackfillRequest & { dryRun?: boolean }): { plan: BackfillPlan; backfill: BackfillRecord | null } {
    const job = this.job(name);
    const reason = req.reason ?? null;
    if (reason !== null && reason.length > MAX_REASON_LENGTH) {
      throw badRequest(`reason is ${reason.length} characters long; the limit is ${MAX_REASON_LENGTH}`);
    }
    const plan = planBackfill(this.ctx, job, req);
    if (req.dryRun) return { plan, backfill: null };
    this.assertRunning();
    const { backfill } = createBackfill(this.ctx, job, req, plan);
    this.pool.pump();
    return { plan, backfill };
  }

  /** Cancels a backfill: its waiting runs end SKIPPED, running ones finish. */
  cancelBackfill(id: number, opts: { by: string }): { backfill: BackfillRecord; skipped: number } {
    const out = cancelBackfill(this.ctx, id, opts.by);
    this.pool.pump();
    return out;
  }

  /** Stops every RUNNING or RETRYING run of the job (each ends FAILED, `error: cancelled`). */
  cancel(name: string): RunRecord[] {
    const job = this.job(name);
    const ids = this.pool.activeRunsOf(job.name);
    if (ids.length === 0) throw conflict(`job ${name} has no RUNNING or RETRYING run to cancel`);
    this.pool.stopRuns(ids, "cancelled");
    return ids.map((id) => this.ctx.store.runs.get(id)).filter((r): r is RunRecord => r !== null);
  }

  /** Marks the job's oldest PENDING run SKIPPED. */
  skip(name: string, opts: { by: string }): RunRecord {
    const job = this.job(name);
    // A run whose process is being started (it holds a pool slot) is not waiting any more.
    const pending = this.ctx.store.runs.byStatus(["PENDING"]).find((r) => r.job_name === job.name && !this.ctx.attempts.has(r.id));
    if (!pending) throw conflict(`job ${name} has no PENDING run to skip`);
    this.ctx.waiting.delete(pending.id);
    const skipped = setStatus(this.ctx, pending, "SKIPPED", { error: `skipped by ${opts.by}`, finished_at: nowIso(this.ctx) });
    this.pool.pump();
    return skipped;
  }

  pause(name: string): void {
    this.setPaused([this.job(name).name], true);
  }

  resume(name: string): void {
    this.setPaused([this.job(name).name], false);
  }

  /** Pauses every job with the tag; returns their names. */
  pauseTag(tag: string): string[] {
    return this.setPaused(this.jobsWithTag(tag), true);
  }

  resumeTag(tag: string): string[] {
    return this.setPaused(this.jobsWithTag(tag), false);
  }

  private jobsWithTag(tag: string): string[] {
    const names = [...this.ctx.project.jobs.values()].filter((j) => j.tags.includes(tag)).map((j) => j.name);
    if (names.length === 0) throw notFound(`no job has the tag "${tag}" (see \`svc tags list\`)`);
    return names;
  }

  private setPaused(names: string[], paused: boolean): string[] {
    this.ctx.store.tx(() => {
      for (const n of names) this.ctx.store.jobState.upsert(n, { paused: paused ? 1 : 0 });
    });
    for (const n of names) this.scheduler.setPaused(n, paused);
    if (!paused) this.scheduler.reload(this.ctx.clock.now());
    return names;
  }

  /**
   * Swaps in a new, already validated config atomically (SPEC rule 10).
   * Running attempts keep the job config they started with.
   */
  reload(project: ProjectConfig): void {
    const { project: previous, downstreams } = this.ctx;
    this.ctx.project = project;
    this.ctx.downstreams = downstreamIndex(project);
    try {
      this.scheduler.reload(this.ctx.clock.now());
    } catch (e) {
      // The new slots could not be written (disk full, database locked): the previous config stays, whole.
      this.ctx.project = previous;
      this.ctx.downstreams = downstreams;
      throw e;
    }
    this.ctx.bus.emit("config:reloaded", { jobs: project.jobs.size });
    this.pool.pump();
  }

  /**
   * Graceful stop drains running jobs for up to `scheduler.shutdown_timeout`,
   * then kills what is left; forced stop kills every group now. Either way
   * every run ends with a correct record. Safe to call twice.
   */
  stop(opts: { force: boolean }): Promise<void> {
    if (opts.force && this.stopping) {
      for (const a of this.ctx.attempts.values()) a.kill("killed: forced daemon stop");
    }
    this.stopping ??= this.shutdown(opts.force);
    return this.stopping;
  }

  private async shutdown(force: boolean): Promise<void> {
    this.ctx.stopping = true;
    this.tickTimer?.cancel();
    if (force) {
      for (const a of this.ctx.attempts.values()) a.kill("killed: forced daemon stop");
    } else if (this.ctx.attempts.size > 0) {
      this.ctx.log.info({ running: this.ctx.attempts.size }, "waiting for running jobs to finish");
      const drained = await this.waitIdle(this.ctx.daemon.scheduler.shutdownTimeoutMs);
      if (!drained) {
        this.ctx.log.warn({ running: this.ctx.attempts.size }, "shutdown_timeout reached: killing the jobs still running");
        for (const a of this.ctx.attempts.values()) a.kill("killed: daemon shutdown timeout");
      }
    }
    await this.waitIdle(Math.max(5_000, this.ctx.daemon.executor.killGraceMs + 2_000));
    this.ctx.store.logs.flush();
  }

  /** Resolves true once no attempt is in flight, false after `ms`. */
  private async waitIdle(ms: number): Promise<boolean> {
    const { clock } = this.ctx;
    const deadline = clock.now() + ms;
    while (this.ctx.attempts.size > 0) {
      if (clock.now() >= deadline) return false;
      let timer: TimerHandle | null = null;
      await Promise.race([
        Promise.all([...this.ctx.attempts.values()].map((a) => a.done)),
        new Promise((r) => (timer = clock.setTimer(Math.min(clock.now() + IDLE_POLL_MS, deadline), () => r(undefined)))),
      ]);
      (timer as TimerHandle | null)?.cancel();
      // let the dispatcher record the ends that just resolved
      await new Promise((r) => setImmediate(r));
    }
    return true;
  }

  /**
   * `clear_lock` (SPEC): sets the job's lock_pid to null. 404 for a job neither in svc.yaml nor
   * in job_state; 409 while the job has a RUNNING or RETRYING run (its lock is live).
   */
  clearLock(name: string): JobStateRow {
    if (!this.ctx.project.jobs.has(name) && this.ctx.store.jobState.get(name) === null) {
      throw notFound(`unknown job "${name}": it is neither in svc.yaml nor in job_state`);
    }
    const active = this.pool.activeRunsOf(name);
    if (active.length > 0) throw conflict(`job ${name} has a running run (${active.join(", ")}): its lock is live; cancel the run instead`);
    return this.ctx.store.jobState.upsert(name, { lock_pid: null });
  }

  private assertRunning(): void {
    if (this.ctx.stopping) throw conflict("the daemon is shutting down: no new runs");
  }

  // ---- views for the API ----

  nextRun(name: string): ScheduledSlot | null {
    return this.scheduler.next(name);
  }

  /** Run ids of a job that are RUNNING or RETRYING. */
  activeRuns(name: string): number[] {
    return this.pool.activeRunsOf(name);
  }

  counts(): { running: number; waiting: number } {
    return { running: this.ctx.attempts.size, waiting: this.ctx.waiting.size };
  }

  /** For /metrics, in one pass over the live maps: RUNNING runs per job, PENDING and RETRYING totals. */
  liveRuns(): { runningByJob: Map<string, number>; pending: number; retrying: number } {
    const runningByJob = new Map<string, number>();
    for (const a of this.ctx.attempts.values()) runningByJob.set(a.job.name, (runningByJob.get(a.job.name) ?? 0) + 1);
    let pending = 0;
    for (const w of this.ctx.waiting.values()) if (w.status === "PENDING") pending++;
    return { runningByJob, pending, retrying: this.ctx.waiting.size - pending };
  }
}

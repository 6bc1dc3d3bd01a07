import type { JobConfig } from "../config/types.js";
import { toError } from "../shared/toError.js";
import type { RunRecord } from "../store/types.js";
import { Attempt, type AttemptResult } from "./attempt.js";
import { nowIso, setStatus, type EngineContext } from "./context.js";
import { afterFailure, succeed } from "./outcomes.js";
import { prepareSpawn } from "./prepare.js";

/**
 * The bounded pool (CONTRACT §3): at most `executor.pool_size` subprocesses
 * and at most `scheduler.max_concurrent_jobs` runs RUNNING or RETRYING; the
 * rest wait PENDING in FIFO (run id) order. A run whose dependency gate is
 * closed does not block the runs behind it.
 */
export class Dispatcher {
  private pumping = false;
  private again = false;

  constructor(private readonly ctx: EngineContext) {}

  /** Starts every waiting run that may start now. Re-entrant calls are folded into one more pass. */
  pump(): void {
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.again = false;
        this.pass();
      } while (this.again);
    } catch (e) {
      this.ctx.log.error({ err: toError(e) }, "dispatch pass failed");
    } finally {
      this.pumping = false;
    }
  }

  private pass(): void {
    const { ctx } = this;
    if (ctx.stopping || ctx.waiting.size === 0) return;
    const now = ctx.clock.now();
    const cycles = new Map<string, RunRecord[]>();
    const ids = [...ctx.waiting.keys()].sort((a, b) => a - b);
    for (const id of ids) {
      if (ctx.attempts.size >= ctx.daemon.executor.poolSize) return;
      const w = ctx.waiting.get(id);
      if (!w || (w.status === "RETRYING" && (w.nextAttemptAt ?? 0) > now)) continue;
      const run = ctx.store.runs.get(id);
      if (!run || run.status !== w.status) {
        ctx.waiting.delete(id); // changed behind our back (skip, cancel): not ours to start
        continue;
      }
      if (run.status === "PENDING" && this.activeCount() >= ctx.daemon.scheduler.maxConcurrentJobs) return;
      this.consider(run, cycles);
    }
  }

  private consider(run: RunRecord, cycles: Map<string, RunRecord[]>): void {
    const { ctx } = this;
    const job = ctx.project.jobs.get(run.job_name);
    if (!job) {
      this.drop(run, "FAILED", `job ${run.job_name} is no longer in svc.yaml`);
      return;
    }
    if (ctx.halted.has(run.cycle_id)) {
      this.drop(run, run.status === "PENDING" ? "SKIPPED" : "FAILED", "pipeline stopped");
      return;
    }
    if (run.status === "PENDING") {
      if (!this.gateOpen(run, job, cycles)) return;
      const others = this.activeRunsOf(job.name, run.id);
      if (others.length > 0 && job.concurrency === "forbid") {
        this.drop(run, "SKIPPED", "concurrency forbid");
        return;
      }
      if (others.length > 0 && job.concurrency === "replace") {
        for (const other of others) this.stopRun(other, `replaced by run ${run.id}`);
      }
    }
    this.start(run, job);
  }

  /** Runs RUNNING or RETRYING (held slots against max_concurrent_jobs). */
  activeCount(): number {
    let n = this.ctx.attempts.size;
    for (const w of this.ctx.waiting.values()) if (w.status === "RETRYING") n++;
    return n;
  }

  /** Run ids of a job that are RUNNING or RETRYING, except `exceptId`. */
  activeRunsOf(job: string, exceptId = -1): number[] {
    const ids: number[] = [];
    for (const [id, a] of this.ctx.attempts) if (a.job.name === job && id !== exceptId) ids.push(id);
    for (const w of this.ctx.waiting.values()) if (w.job === job && w.status === "RETRYING" && w.id !== exceptId) ids.push(w.id);
    return ids;
  }

  /**
   * CONTRACT §3 gate: every upstream has a SUCCESS run in this cycle; an
   * upstream with no run in the cycle counts when its latest finished run
   * is SUCCESS.
   */
  private gateOpen(run: RunRecord, job: JobConfig, cycles: Map<string, RunRecord[]>): boolean {
    if (job.upstreams.length === 0) return true;
    let inCycle = cycles.get(run.cycle_id);
    if (!inCycle) cycles.set(run.cycle_id, (inCycle = this.ctx.store.runs.inCycle(run.cycle_id)));
    for (const up of job.upstreams) {
      const ups = inCycle.filter((r) => r.job_name === up);
      if (ups.some((r) => r.status === "SUCCESS")) continue;
      if (ups.length > 0) return false;
      if (this.ctx.store.runs.lastFinished(up)?.status !== "SUCCESS") return false;
    }
    return true;
  }

  /** Ends a waiting run without starting it. */
  private drop(run: RunRecord, to: "SKIPPED" | "FAILED", error: string): void {
    setStatus(this.ctx, run, to, { error, finished_at: nowIso(this.ctx) });
    // Only once recorded: a write that failed (locked or full database) leaves it queued for a later pass.
    this.ctx.waiting.delete(run.id);
  }

  /** Stops a RUNNING or RETRYING run for good (cancel, replace, pipeline stop). */
  stopRun(id: number, reason: string): void {
    const attempt = this.ctx.attempts.get(id);
    if (attempt) {
      attempt.stop(reason);
      return;
    }
    const w = this.ctx.waiting.get(id);
    const run = this.ctx.store.runs.get(id);
    if (w && run && run.status === "RETRYING") this.drop(run, "FAILED", reason);
  }

  private start(run: RunRecord, job: JobConfig): void {
    const { ctx } = this;
    const queued = ctx.waiting.get(run.id);
    const attemptNo = run.status === "RETRYING" ? run.attempt + 1 : run.attempt;
    const spec = prepareSpawn(ctx, run, job, attemptNo);
    if ("error" in spec) {
      // A dispatch error is not retried: a missing value or variable will not appear by waiting.
      const failed = setStatus(ctx, run, "FAILED", {
        attempt: attemptNo,
        error: spec.error,
        finished_at: nowIso(ctx),
        duration_ms: 0,
      });
      ctx.waiting.delete(run.id);
      ctx.store.logs.append(run.id, "stderr", `svc: ${spec.error}`, nowIso(ctx));
      ctx.store.jobState.upsert(job.name, { last_failure: failed.finished_at });
      afterFailure(ctx, this, failed, job, false);
      return;
    }
    const attempt = new Attempt(
      { store: ctx.store, clock: ctx.clock, log: ctx.log, killGraceMs: ctx.daemon.executor.killGraceMs, shell: ctx.daemon.executor.shell },
      { ...run, attempt: attemptNo },
      job,
      spec,
    );
    ctx.waiting.delete(run.id);
    ctx.attempts.set(run.id, attempt);
    let running: RunRecord;
    try {
      running = setStatus(ctx, run, "RUNNING", {
        attempt: attemptNo,
        started_at: run.started_at ?? nowIso(ctx),
        pid: attempt.pid,
        pid_start: attempt.pidStart,
        next_attempt_at: null,
        error: null,
        exit_code: null,
      });
    } catch (e) {
      // The database refused the start (locked, full): a process it does not know about must not
      // run. It is killed at once (before it printed anything) and holds its pool slot until it is
      // gone; then the run, still PENDING or RETRYING in the database, is queued again.
      attempt.kill("its start could not be recorded");
      void attempt.done.then(() => {
        ctx.attempts.delete(run.id);
        if (queued) ctx.waiting.set(run.id, queued);
      });
      throw e;
    }
    void attempt.done.then((result) => this.ended(running, job, result, ctx.clock.now()));
    // Appended in the same turn as the spawn, so before any line of the process.
    ctx.store.logs.append(run.id, "stdout", `--- attempt ${attemptNo} ---`, nowIso(ctx));
    ctx.store.jobState.upsert(job.name, { lock_pid: attempt.pid });
  }

  /**
   * Records how an attempt ended, in one transaction: either all of it (status, job state,
   * retry or policy, downstream runs) or nothing. When the database refuses the write (locked
   * past busy_timeout, disk full) the attempt keeps its pool slot and the write is tried again
   * every second: the run must never stay RUNNING in the database with nobody watching it.
   */
  private ended(run: RunRecord, job: JobConfig, result: AttemptResult, finishedAt: number, failures = 0): void {
    const { ctx } = this;
    // Runs the outcome makes ready start after the commit, in the pump below.
    this.pumping = true;
    try {
      // Every line of the attempt is stored before its end: whoever sees the run finished reads all of it.
      ctx.store.logs.flush();
      ctx.store.tx(() => this.record(run, job, result, finishedAt));
    } catch (e) {
      const err = toError(e);
      if (isStorageError(err)) {
        if (failures === 0) ctx.log.error({ err, run_id: run.id, job: job.name }, `recording the end of run ${run.id} failed; retrying every second`);
        ctx.clock.setTimer(ctx.clock.now() + RECORD_RETRY_MS, () => this.ended(run, job, result, finishedAt, failures + 1));
        return;
      }
      ctx.log.error({ err, run_id: run.id, job: job.name }, "recording the end of a run failed");
    } finally {
      this.pumping = false;
    }
    ctx.attempts.delete(run.id);
    if (failures > 0) ctx.log.info({ run_id: run.id, job: job.name }, `recorded the end of run ${run.id} after ${failures} failed tries`);
    this.pump();
  }

  private record(run: RunRecord, job: JobConfig, result: AttemptResult, finishedAt: number): void {
    const { ctx } = this;
    const current = ctx.store.runs.get(run.id) ?? run;
    const patch = {
      exit_code: result.exitCode,
      hc_status: result.hc,
      finished_at: new Date(finishedAt).toISOString(),
      // Wall-clock difference: a clock stepped back during the run must not make it negative.
      duration_ms: Math.max(0, finishedAt - Date.parse(current.started_at ?? new Date(finishedAt).toISOString())),
      pid: null,
    };
    ctx.store.jobState.upsert(job.name, { lock_pid: null });
    if (result.ok) {
      succeed(ctx, this, current, job, { ...patch, error: result.hc === "warn" ? result.error : null }, result.hc === "warn");
    } else {
      const failed = setStatus(ctx, current, "FAILED", { ...patch, error: result.error });
      ctx.store.jobState.upsert(job.name, { last_failure: failed.finished_at });
      afterFailure(ctx, this, failed, job, result.retryable);
    }
  }
}

/** How long to wait before writing the end of a run again after the database refused it. */
const RECORD_RETRY_MS = 1_000;

/** SQLite refused a write for a reason that passes (SQLITE_BUSY, SQLITE_FULL, SQLITE_IOERR...). */
function isStorageError(e: Error): boolean {
  const code = (e as { code?: unknown }).code;
  return typeof code === "string" && code.startsWith("SQLITE_");
}

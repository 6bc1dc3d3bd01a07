import type { JobConfig } from "../config/types.js";
import type { TimerHandle } from "../shared/clock.js";
import { toError } from "../shared/toError.js";
import { isTransientStorageError } from "../store/errors.js";
import type { RunRecord } from "../store/types.js";
import { Attempt, type AttemptResult } from "./attempt.js";
import { notify, nowIso, setStatus, setStatuses, type EngineContext, type Waiting } from "./context.js";
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
  /** Attempts that ended this turn, recorded together (recordEndings). */
  private readonly endings: Ending[] = [];
  /** Ends the database refused, each waiting for its next try. */
  private readonly unwritten = new Map<Ending, { failures: number; timer: TimerHandle }>();

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

  /**
   * One pass over the queue. Every process the pass starts is spawned first and
   * their RUNNING transitions are recorded together afterwards, in one
   * transaction: 50 jobs due at once start one spawn apart, not one spawn
   * plus three database writes apart.
   */
  private pass(): void {
    const { ctx } = this;
    if (ctx.stopping || ctx.waiting.size === 0) return;
    const started: Started[] = [];
    try {
      this.startReady(started);
    } finally {
      this.recordStarts(started);
    }
  }

  private startReady(started: Started[]): void {
    const { ctx } = this;
    const now = ctx.clock.now();
    const cycles = new Map<string, RunRecord[]>();
    const ids = [...ctx.waiting.keys()].sort((a, b) => a - b);
    // Rows are read ahead, READ_AHEAD ids a query. Whatever the pass writes besides a start (a drop,
    // a replace, a failed dispatch) may concern the runs read ahead: they are read again after it.
    let ahead = new Map<number, RunRecord>();
    let readTo = 0;
    const read = (i: number): RunRecord | undefined => {
      if (i >= readTo) {
        readTo = Math.min(ids.length, i + READ_AHEAD);
        ahead = new Map(ctx.store.runs.getMany(ids.slice(i, readTo)).map((r) => [r.id, r]));
      }
      return ahead.get(ids[i]!);
    };
    // Waiting RETRYING runs hold max_concurrent_jobs slots too: counted once here and kept up to
    // date as they leave the queue, not recounted for every run (50 due at once were 50 walks).
    let retrying = this.retryingCount();
    for (let i = 0; i < ids.length; i++) {
      if (ctx.attempts.size >= ctx.daemon.executor.poolSize) return;
      const id = ids[i]!;
      const w = ctx.waiting.get(id);
      if (!w || (w.status === "RETRYING" && (w.nextAttemptAt ?? 0) > now)) continue;
      const run = read(i);
      if (!run || run.status !== w.status) {
        ctx.waiting.delete(id); // changed behind our back (skip, cancel): not ours to start
        if (w.status === "RETRYING") retrying--;
        continue;
      }
      if (run.status === "PENDING" && ctx.attempts.size + retrying >= ctx.daemon.scheduler.maxConcurrentJobs) return;
      if (this.consider(run, cycles, started)) {
        readTo = 0;
        retrying = this.retryingCount();
      } else if (w.status === "RETRYING" && !ctx.waiting.has(id)) {
        retrying--;
      }
    }
  }

  /** Starts the run if it may start. True when it wrote something else (a drop, a replace, a failed dispatch). */
  private consider(run: RunRecord, cycles: Map<string, RunRecord[]>, started: Started[]): boolean {
    const { ctx } = this;
    const job = ctx.project.jobs.get(run.job_name);
    if (!job) {
      this.drop(run, "FAILED", `job ${run.job_name} is no longer in svc.yaml`);
      return true;
    }
    if (ctx.halted.has(run.cycle_id)) {
      this.drop(run, run.status === "PENDING" ? "SKIPPED" : "FAILED", "pipeline stopped");
      return true;
    }
    let replaced = false;
    if (run.status === "PENDING") {
      if (!this.gateOpen(run, job, cycles)) return false;
      const others = job.concurrency === "allow" ? [] : this.activeRunsOf(job.name, run.id);
      if (others.length > 0 && job.concurrency === "forbid") {
        this.drop(run, "SKIPPED", "concurrency forbid");
        return true;
      }
      if (others.length > 0 && job.concurrency === "replace") {
        for (const other of others) this.stopRun(other, `replaced by run ${run.id}`);
        replaced = true;
      }
    }
    return this.start(run, job, started) || replaced;
  }

  /** Waiting runs that are RETRYING. */
  private retryingCount(): number {
    let n = 0;
    for (const w of this.ctx.waiting.values()) if (w.status === "RETRYING") n++;
    return n;
  }

  /** Run ids of a job that are RUNNING or RETRYING, except `exceptId`. */
  activeRunsOf(job: string, exceptId = -1): number[] {
    const ids: number[] = [];
    for (const a of this.ctx.attempts.values()) if (a.job.name === job && a.run.id !== exceptId) ids.push(a.run.id);
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

  /**
   * Spawns the run's process; its RUNNING transition is recorded by recordStarts at the end of the
   * pass. True when it could not be dispatched (recorded FAILED, with what follows a failure).
   */
  private start(run: RunRecord, job: JobConfig, started: Started[]): boolean {
    const { ctx } = this;
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
      return true;
    }
    const attempt = new Attempt(
      { store: ctx.store, clock: ctx.clock, log: ctx.log, killGraceMs: ctx.daemon.executor.killGraceMs, shell: ctx.daemon.executor.shell },
      { ...run, attempt: attemptNo },
      job,
      spec,
    );
    started.push({ run, job, attempt, attemptNo, queued: ctx.waiting.get(run.id) });
    ctx.waiting.delete(run.id);
    ctx.attempts.set(run.id, attempt);
    return false;
  }

  /**
   * Records the RUNNING transitions of the processes a pass started, in one
   * transaction, still in the turn that spawned them (so before any line of
   * theirs is read).
   */
  private recordStarts(started: Started[]): void {
    const { ctx } = this;
    if (started.length === 0) return;
    const at = nowIso(ctx);
    let running: RunRecord[];
    try {
      running = setStatuses(
        ctx,
        started.map(({ run, attempt, attemptNo }) => ({
          run,
          to: "RUNNING",
          patch: {
            attempt: attemptNo,
            started_at: run.started_at ?? at,
            attempt_started_at: at,
            pid: attempt.pid,
            pid_start: attempt.pidStart,
            next_attempt_at: null,
            error: null,
            exit_code: null,
          },
        })),
        () => {
          for (const { job, attempt } of started) ctx.store.jobState.upsert(job.name, { lock_pid: attempt.pid });
        },
      );
    } catch (e) {
      // The database refused the starts (locked, full): processes it does not know about must not
      // run. They are killed at once (before they printed anything) and hold their pool slots until
      // they are gone; then the runs, still PENDING or RETRYING in the database, are queued again.
      for (const { run, attempt, queued } of started) {
        attempt.kill("its start could not be recorded");
        void attempt.done.then(() => {
          ctx.attempts.delete(run.id);
          if (queued) ctx.waiting.set(run.id, queued);
        });
      }
      throw e;
    }
    started.forEach(({ job, attempt, attemptNo }, i) => {
      const run = running[i]!;
      void attempt.done.then((result) => this.ended({ run, job, result, finishedAt: ctx.clock.now() }));
      ctx.store.logs.append(run.id, "stdout", `--- attempt ${attemptNo} ---`, at);
    });
  }

  /**
   * An attempt ended. Its end is recorded at the end of this event-loop turn,
   * together with every other attempt that ended in the same turn: one
   * transaction (and one log flush) for all of them, not one each.
   */
  private ended(ending: Ending): void {
    this.endings.push(ending);
    if (this.endings.length === 1) setImmediate(() => this.recordEndings());
  }

  private recordEndings(): void {
    const batch = this.endings.splice(0);
    if (batch.length > 1 && this.writeEnds(batch) === null) return this.pump();
    // One end, or a batch the database refused (nothing of it written): each on its own, with its own retries.
    for (const e of batch) this.recordEnd(e);
  }

  /**
   * Records how an attempt ended, in one transaction: either all of it (status, job state,
   * retry or policy, downstream runs) or nothing. When the database refuses the write (locked
   * past busy_timeout, disk full) the attempt keeps its pool slot and the write is tried again
   * every second: the run must never stay RUNNING in the database with nobody watching it.
   */
  private recordEnd(ending: Ending, failures = 0): void {
    const { ctx } = this;
    const { run, job } = ending;
    const err = this.writeEnds([ending]);
    if (err !== null && isTransientStorageError(err)) return this.retryLater(ending, failures, err);
    if (err !== null) {
      // Not the database refusing a write but a bug on the way (a transition the table refuses,
      // a TypeError in a policy): the full end cannot be written, so the run ends FAILED with the
      // error, on its own, without retry or policy. Never left RUNNING with nobody watching it.
      ctx.log.error({ err, run_id: run.id, job: job.name }, `recording the end of run ${run.id} failed: it ends FAILED with the error`);
      const unrecorded = this.failUnrecorded(ending, err);
      if (unrecorded !== null && isTransientStorageError(unrecorded)) return this.retryLater(ending, failures, unrecorded);
      if (unrecorded !== null) ctx.log.error({ err: unrecorded, run_id: run.id, job: job.name }, `run ${run.id}: could not record it FAILED either`);
      ctx.attempts.delete(run.id);
    } else if (failures > 0) {
      ctx.log.info({ run_id: run.id, job: job.name }, `recorded the end of run ${run.id} after ${failures} failed tries`);
    }
    this.pump();
  }

  /** The database refused the end (locked, full): the attempt keeps its slot and the write is tried again in a second. */
  private retryLater(ending: Ending, failures: number, err: Error): void {
    const { ctx } = this;
    const { run, job } = ending;
    if (failures === 0) ctx.log.error({ err, run_id: run.id, job: job.name }, `recording the end of run ${run.id} failed; retrying every second`);
    const timer = ctx.clock.setTimer(ctx.clock.now() + RECORD_RETRY_MS, () => {
      this.unwritten.delete(ending);
      this.recordEnd(ending, failures + 1);
    });
    this.unwritten.set(ending, { failures, timer });
  }

  /**
   * The end of a run could not be written for a reason other than storage: the run ends FAILED with
   * that error (no retry, no failure policy beyond the alert), its job's lock released. Returns what
   * the database threw, or null.
   */
  private failUnrecorded({ run, job, result, finishedAt }: Ending, why: Error): Error | null {
    const { ctx } = this;
    const at = new Date(finishedAt).toISOString();
    try {
      const current = ctx.store.runs.get(run.id);
      if (current?.status !== "RUNNING") return null; // someone else ended it: nothing left RUNNING
      const [failed] = setStatuses(
        ctx,
        [
          {
            run: current,
            to: "FAILED",
            patch: {
              error: `internal error while recording the end of the run: ${why.message}`,
              exit_code: result.exitCode,
              finished_at: at,
              duration_ms: Math.max(0, finishedAt - Date.parse(current.started_at ?? at)),
              pid: null,
            },
          },
        ],
        () => ctx.store.jobState.upsert(job.name, { last_failure: at, lock_pid: null }),
      );
      if (job.onFailure === "alert") notify(ctx, "on_failure", failed!);
      return null;
    } catch (e) {
      return toError(e);
    }
  }

  /**
   * Every buffered line, then the ends, in one transaction; frees the attempts' pool slots once
   * written. Returns what the database threw, or null. Runs the outcomes make ready start after
   * the commit, in the caller's pump.
   */
  private writeEnds(batch: Ending[]): Error | null {
    const { ctx } = this;
    this.pumping = true;
    try {
      // Every line of an attempt is stored before its end: whoever sees the run finished reads all of it.
      ctx.store.logs.flush();
      ctx.store.tx(() => {
        for (const e of batch) this.record(e);
      });
    } catch (e) {
      return toError(e);
    } finally {
      this.pumping = false;
    }
    for (const e of batch) ctx.attempts.delete(e.run.id);
    this.retryUnwritten();
    return null;
  }

  /**
   * The database took a write again (space is back, the lock is gone): the ends it refused are
   * tried now, each in a later turn, not at their next timer, so no run stays RUNNING without
   * its process for up to a second more than it must.
   */
  private retryUnwritten(): void {
    if (this.unwritten.size === 0) return;
    const pending = [...this.unwritten];
    this.unwritten.clear();
    for (const [ending, { failures, timer }] of pending) {
      timer.cancel();
      setImmediate(() => this.recordEnd(ending, failures + 1));
    }
  }

  /** `run` is the RUNNING row its start returned; the transitions below check its status and return the row as stored. */
  private record({ run, job, result, finishedAt }: Ending): void {
    const { ctx } = this;
    const patch = {
      exit_code: result.exitCode,
      hc_status: result.hc,
      finished_at: new Date(finishedAt).toISOString(),
      // Wall-clock difference: a clock stepped back during the run must not make it negative.
      duration_ms: Math.max(0, finishedAt - Date.parse(run.started_at ?? new Date(finishedAt).toISOString())),
      pid: null,
    };
    // The job's lock is released in the same write as its last_success / last_failure.
    if (result.ok) {
      succeed(ctx, this, run, job, { ...patch, error: result.hc === "warn" ? result.error : null }, result.hc === "warn", { lock_pid: null });
    } else {
      const failed = setStatus(ctx, run, "FAILED", { ...patch, error: result.error });
      ctx.store.jobState.upsert(job.name, { last_failure: failed.finished_at, lock_pid: null });
      afterFailure(ctx, this, failed, job, result.retryable);
    }
  }
}

/** An attempt that ended, waiting to be recorded. */
interface Ending {
  run: RunRecord;
  job: JobConfig;
  result: AttemptResult;
  finishedAt: number;
}

/** A process a dispatch pass started, before its RUNNING transition is recorded. */
interface Started {
  run: RunRecord;
  job: JobConfig;
  attempt: Attempt;
  attemptNo: number;
  /** Its queue entry, put back when the start cannot be recorded. */
  queued: Waiting | undefined;
}

/** Waiting runs read per query in a dispatch pass. */
const READ_AHEAD = 64;

/** How long to wait before writing the end of a run again after the database refused it. */
const RECORD_RETRY_MS = 1_000;

import type { JobConfig } from "../config/types.js";
import { toError } from "../shared/toError.js";
import type { RunRecord } from "../store/types.js";
import { applyEffects } from "./apply.js";
import { Attempt } from "./attempt.js";
import { nowIso, setStatuses, type EngineContext, type Waiting } from "./context.js";
import { activeRunsOf, gatherFacts } from "./facts.js";
import { decide, type Effect } from "./outcomes.js";
import { prepareSpawn } from "./prepare.js";
import { Recorder } from "./recorder.js";

/**
 * The queue and its gates (CONTRACT §3): at most `executor.pool_size`
 * subprocesses and at most `scheduler.max_concurrent_jobs` runs RUNNING or
 * RETRYING; the rest wait PENDING in FIFO (run id) order. A run whose
 * dependency gate is closed does not block the runs behind it. Whether a
 * ready run starts, waits or is dropped is decide()'s (outcomes.ts); how
 * attempts end is recorded by the Recorder.
 */
export class Dispatcher {
  private pumping = false;
  private again = false;
  private readonly recorder: Recorder;

  constructor(private readonly ctx: EngineContext) {
    this.recorder = new Recorder(ctx, () => this.pump());
  }

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
    if (ctx.stopping) return;
    ctx.backfills.admit();
    if (ctx.waiting.size === 0) return;
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

  /** Starts the run if decide() says so. True when it wrote something else (a drop, a replace, a failed dispatch). */
  private consider(run: RunRecord, cycles: Map<string, RunRecord[]>, started: Started[]): boolean {
    const { ctx } = this;
    const job = ctx.project.jobs.get(run.job_name);
    const effects = decide({ kind: "ready" }, gatherFacts(ctx, run, () => this.gateOpen(run, job!, cycles)), ctx.clock.now(), ctx.random);
    const start = effects.find((e): e is Effect & { kind: "start" } => e.kind === "start");
    const others = effects.length > (start ? 1 : 0);
    if (others) this.apply(effects);
    if (!start || !job) return others;
    return this.start(run, job, start.attemptNo, started) || others;
  }

  private apply(effects: readonly Effect[]): void {
    applyEffects(this.ctx, effects, () => this.pump());
  }

  /** Waiting runs that are RETRYING. */
  private retryingCount(): number {
    let n = 0;
    for (const w of this.ctx.waiting.values()) if (w.status === "RETRYING") n++;
    return n;
  }

  /** Run ids of a job that are RUNNING or RETRYING. */
  activeRunsOf(job: string): number[] {
    return activeRunsOf(this.ctx, job).map((r) => r.id);
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

  /** Stops RUNNING or RETRYING runs for good (cancel): each ends FAILED with `reason`. */
  stopRuns(ids: readonly number[], reason: string): void {
    this.apply(ids.map((runId) => ({ kind: "stop", runId, reason })));
  }

  /**
   * Spawns the run's process; its RUNNING transition is recorded by recordStarts at the end of the
   * pass. True when it could not be dispatched (recorded FAILED, with what follows a failure).
   */
  private start(run: RunRecord, job: JobConfig, attemptNo: number, started: Started[]): boolean {
    const { ctx } = this;
    const spec = prepareSpawn(ctx, run, job, attemptNo);
    if ("error" in spec) {
      const situation = { kind: "dispatchFailed", attemptNo, error: spec.error } as const;
      this.apply(decide(situation, gatherFacts(ctx, run), ctx.clock.now(), ctx.random));
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
      void attempt.done.then((result) => this.recorder.ended({ run, job, result, finishedAt: ctx.clock.now() }));
      ctx.store.logs.append(run.id, "stdout", `--- attempt ${attemptNo} ---`, at);
    });
  }
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

import type { JobConfig } from "../config/types.js";
import type { TimerHandle } from "../shared/clock.js";
import { toError } from "../shared/toError.js";
import type { LinesWritten } from "../store/api.js";
import { isTransientStorageError } from "../store/errors.js";
import type { RunRecord } from "../store/types.js";
import { afterCommit, writeEffects, type AfterCommit } from "./apply.js";
import type { AttemptResult } from "./attempt.js";
import { notify, setStatuses, type EngineContext } from "./context.js";
import { gatherFacts } from "./facts.js";
import { decide } from "./outcomes.js";
import type { TurnPart, TurnWrites } from "./turnWrites.js";

/** An attempt that ended, waiting to be recorded. */
export interface Ending {
  /** The RUNNING row its start returned. */
  run: RunRecord;
  /** The job's config when the attempt started (a reload does not change a running attempt). */
  job: JobConfig;
  result: AttemptResult;
  finishedAt: number;
}

/** How long to wait before writing the end of a run again after the database refused it. */
const RECORD_RETRY_MS = 1_000;

/**
 * Records how attempts ended: decide() on each end, its effects written
 * together with the other ends of the same event-loop turn, in that turn's
 * transaction (TurnWrites). The attempt holds its pool slot until its end is
 * written; `pump` runs after.
 */
export class Recorder {
  /** Attempts that ended this turn, recorded together (endingsPart). */
  private readonly endings: Ending[] = [];
  /** Ends the database refused, each waiting for its next try. */
  private readonly unwritten = new Map<Ending, { failures: number; timer: TimerHandle }>();

  constructor(
    private readonly ctx: EngineContext,
    private readonly writes: TurnWrites,
    private readonly pump: () => void,
  ) {}

  /**
   * An attempt ended. Its end is recorded at the end of this event-loop turn,
   * together with every other attempt that ended in the same turn: one
   * savepoint of the turn's transaction (and one log flush) for all of them.
   */
  ended(ending: Ending): void {
    this.endings.push(ending);
    if (this.endings.length === 1) this.writes.add(() => this.endingsPart());
  }

  /** The part of a turn's transaction that writes the ends of that turn. */
  private endingsPart(): TurnPart<AfterCommit> {
    const batch = this.endings.splice(0);
    const ends = this.endsWrite(batch);
    return {
      write: () => ends.write(),
      committed: (after) => {
        ends.committed(after);
        this.pump();
      },
      failed: (err) => {
        ends.rolledBack();
        // Nothing of it is written: one end goes on as its own write would have; a batch, each end
        // on its own (a bad one fails alone), each with its own retries.
        if (batch.length === 1) this.settle(batch[0]!, 0, err);
        else for (const e of batch) this.recordEnd(e);
      },
    };
  }

  /**
   * Records how an attempt ended, in one transaction: either all of it (status, job state,
   * retry or policy, downstream runs) or nothing. When the database refuses the write (locked
   * past busy_timeout, disk full) the attempt keeps its pool slot and the write is tried again
   * every second: the run must never stay RUNNING in the database with nobody watching it.
   */
  private recordEnd(ending: Ending, failures = 0): void {
    this.settle(ending, failures, this.writeEnds([ending]));
  }

  /** What follows a try at writing `ending` (recordEnd): `err` is what the database threw, or null once it is written. */
  private settle(ending: Ending, failures: number, err: Error | null): void {
    const { ctx } = this;
    const { run, job } = ending;
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
      ctx.store.logs.flush(); // the attempt's lines, before anyone sees it ended
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

  /** The ends of `batch` in a transaction of their own (recordEnd). Returns what the database threw, or null. */
  private writeEnds(batch: readonly Ending[]): Error | null {
    const ends = this.endsWrite(batch);
    let after: AfterCommit;
    try {
      after = this.ctx.store.tx(() => ends.write());
    } catch (e) {
      ends.rolledBack();
      return toError(e);
    }
    ends.committed(after);
    return null;
  }

  /**
   * Every buffered line, then the ends of `batch`, written in the caller's transaction; once it is
   * committed, the attempts' pool slots are freed and the ends' events follow. Runs the outcomes
   * make ready start after the commit, in the caller's pump.
   */
  private endsWrite(batch: readonly Ending[]): EndsWrite {
    const { ctx } = this;
    let lines: LinesWritten | null = null;
    return {
      write: () => {
        // Every line of an attempt is stored with its end (one commit): whoever sees the run finished reads all of it.
        lines = ctx.store.logs.flushWithin();
        const all: AfterCommit = [];
        const now = ctx.clock.now();
        for (const e of batch) {
          // Decided one by one: each end sees what the ends before it in the batch wrote.
          const facts = { ...gatherFacts(ctx, slaAsStored(ctx, e)), job: e.job };
          all.push(...writeEffects(ctx, decide({ kind: "ended", result: e.result, finishedAt: e.finishedAt }, facts, now, ctx.random), this.pump));
        }
        return all;
      },
      committed: (after) => {
        // The lines are announced (WebSocket followers get them) before the ends' events.
        lines?.committed();
        for (const e of batch) ctx.attempts.delete(e.run.id);
        afterCommit(after);
        this.retryUnwritten();
      },
      rolledBack: () => lines?.rolledBack(),
    };
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
}

/** The write of some ends (Recorder.endsWrite) and what follows its commit or its rollback. */
interface EndsWrite {
  write(): AfterCommit;
  committed(after: AfterCommit): void;
  rolledBack(): void;
}

/**
 * The run its start returned, with `sla_breached` as stored: the tick marks a run that passes its SLA while it
 * runs, and its end must not report the breach again. Read only when the run did pass its SLA (rare).
 */
function slaAsStored(ctx: EngineContext, e: Ending): RunRecord {
  const sla = e.job.slaMs;
  if (sla === null || e.run.sla_breached === 1 || e.run.started_at === null || e.finishedAt - Date.parse(e.run.started_at) < sla) return e.run;
  return ctx.store.runs.get(e.run.id)?.sla_breached === 1 ? { ...e.run, sla_breached: 1 } : e.run;
}

import type { JobConfig } from "../config/types.js";
import { toError } from "../shared/toError.js";
import type { RunRecord } from "../store/types.js";
import { applyEffects } from "./apply.js";
import { Attempt } from "./attempt.js";
import { announceRun, createRun, insertRun, nowIso, type EngineContext, type NewRunFields, type Waiting } from "./context.js";
import { activeRunsOf, gatherFacts } from "./facts.js";
import { gateIsOpen } from "./gate.js";
import { decide, type Effect } from "./outcomes.js";
import type { SpawnSpec } from "../executor/index.js";
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
    // Rows are read ahead, READ_AHEAD ids a query; the pass's first query only about what the free
    // pool slots can take (an end frees one slot while hundreds of triggered runs may wait: reading
    // 64 of them for one start was most of the pass). Whatever the pass writes besides a start (a
    // drop, a replace, a failed dispatch) may concern the runs read ahead: they are read again after it.
    let ahead = new Map<number, RunRecord>();
    let readTo = 0;
    let queries = 0;
    const read = (i: number): RunRecord | undefined => {
      if (i >= readTo) {
        const free = ctx.daemon.executor.poolSize - ctx.attempts.size;
        readTo = Math.min(ids.length, i + (queries++ === 0 ? Math.min(READ_AHEAD, Math.max(FIRST_READ_MIN, 2 * free)) : READ_AHEAD));
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
   * CONTRACT §3 gate (the rule is gate.ts's, shared with `svc why` and the
   * cycle view): every upstream has a SUCCESS run in this cycle; an upstream
   * with no run in the cycle counts when its latest finished run is SUCCESS.
   * The cycle's runs are read once per dispatch pass.
   */
  private gateOpen(run: RunRecord, job: JobConfig, cycles: Map<string, RunRecord[]>): boolean {
    if (job.upstreams.length === 0) return true;
    let inCycle = cycles.get(run.cycle_id);
    if (!inCycle) cycles.set(run.cycle_id, (inCycle = this.ctx.store.runs.inCycle(run.cycle_id)));
    return gateIsOpen(job.upstreams, inCycle, this.lastFinished);
  }

  private readonly lastFinished = (job: string): RunRecord | null => this.ctx.store.runs.lastFinished(job);

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
    this.spawn(run, job, attemptNo, spec, started);
    return false;
  }

  /** Starts the attempt's process: the run leaves the queue and holds a pool slot. */
  private spawn(run: RunRecord, job: JobConfig, attemptNo: number, spec: SpawnSpec, started: Started[]): void {
    const { ctx } = this;
    const attempt = new Attempt(
      { store: ctx.store, clock: ctx.clock, log: ctx.log, killGraceMs: ctx.daemon.executor.killGraceMs, shell: ctx.daemon.executor.shell },
      { ...run, attempt: attemptNo },
      job,
      spec,
    );
    // Its start instant is the spawn's (the pass's order, FIFO), not the later instant its start is recorded.
    started.push({ run, job, attempt, attemptNo, queued: ctx.waiting.get(run.id), at: nowIso(ctx) });
    ctx.waiting.delete(run.id);
    ctx.attempts.set(run.id, attempt);
  }

  /**
   * Records the RUNNING transitions of the processes a pass started, in one
   * transaction, before any line of theirs is read: at once for those whose
   * start is settled (a fork, a failed start), and for those the kernel is
   * still starting off the event loop (posix_spawn on a worker thread), in
   * the turn after their spawn settles, together with every other start
   * settled in the same turn (see recordSpawned).
   */
  private recordStarts(started: Started[]): void {
    const now: Started[] = [];
    for (const s of started) {
      const spawning = s.attempt.spawning;
      if (spawning === null) now.push(s);
      else void spawning.then(() => this.spawned(s));
    }
    this.writeAndAnnounce(now);
  }

  /** Starts whose spawn has settled, to record in one transaction at the check phase of this loop turn. */
  private settled: Started[] = [];

  /**
   * A spawn settled (on the event loop's poll phase, where libuv hands over
   * the worker threads' results). Its RUNNING transition is written at the
   * check phase of the same loop iteration, with those of the other spawns
   * settled meanwhile: one commit for a burst. The process's pipes and exit
   * watch were registered in this poll phase, so libuv reads them in the next
   * one at the earliest: its lines follow its `--- attempt N ---` marker.
   */
  private spawned(s: Started): void {
    this.settled.push(s);
    if (this.settled.length > 1) return;
    setImmediate(() => {
      const batch = this.settled;
      this.settled = [];
      try {
        this.writeAndAnnounce(batch);
      } catch (e) {
        this.ctx.log.error({ err: toError(e), runs: batch.map((b) => b.run.id) }, "could not record the start of runs: their processes were killed and the runs wait again");
      }
    });
  }

  /** The RUNNING transitions of `started`, committed in one transaction, then their events; the processes are killed if it fails. */
  private writeAndAnnounce(started: Started[]): void {
    const { ctx } = this;
    if (started.length === 0) return;
    let running: RunRecord[];
    try {
      running = ctx.store.tx(() => this.writeStarts(started));
    } catch (e) {
      this.abandon(started);
      throw e;
    }
    this.afterStarts(started, running);
  }

  /** The RUNNING transitions and the jobs' locks of `started`; the caller's transaction commits them. */
  private writeStarts(started: readonly Started[]): RunRecord[] {
    const { ctx } = this;
    const running = started.map(({ run, attempt, attemptNo, at }) =>
      ctx.store.runs.transition(
        run.id,
        "RUNNING",
        {
          attempt: attemptNo,
          started_at: run.started_at ?? at,
          attempt_started_at: at,
          pid: attempt.pid,
          pid_start: attempt.pidStart,
          next_attempt_at: null,
          error: null,
          exit_code: null,
        },
        run.status,
      ),
    );
    for (const { job, attempt } of started) ctx.store.jobState.upsert(job.name, { lock_pid: attempt.pid });
    return running;
  }

  /** After the starts are committed: their events, the wait for each attempt's end, its marker line. */
  private afterStarts(started: readonly Started[], running: readonly RunRecord[]): void {
    const { ctx } = this;
    started.forEach(({ run }, i) => ctx.bus.emit("run:status", { run: running[i]!, from: run.status }));
    started.forEach(({ job, attempt, attemptNo, at }, i) => {
      const run = running[i]!;
      void attempt.done.then((result) => this.recorder.ended({ run, job, result, finishedAt: ctx.clock.now() }));
      ctx.store.logs.append(run.id, "stdout", `--- attempt ${attemptNo} ---`, at);
    });
  }

  /**
   * The database refused the starts (locked, full): processes it does not know about must not
   * run. They are killed at once (before they printed anything) and hold their pool slots until
   * they are gone; then the runs, still PENDING or RETRYING in the database, are queued again
   * (a run whose row was rolled back with them was never queued).
   */
  private abandon(started: readonly Started[]): void {
    const { ctx } = this;
    for (const { run, attempt, queued } of started) {
      attempt.discard("its start could not be recorded");
      void attempt.done.then(() => {
        ctx.attempts.delete(run.id);
        if (queued) ctx.waiting.set(run.id, queued);
      });
    }
  }

  /**
   * A new run (a manual trigger, a retry) and its start in one transaction: when it may start at
   * once, its INSERT and its RUNNING transition are one commit instead of two. That is the case
   * when nothing else waits (no run is passed over, FIFO holds), a pool slot and a
   * max_concurrent_jobs slot are free, its job's config prepares a command, and decide() says
   * start; otherwise the run is created and the queue pumped as before. Events follow the commit:
   * the new run's (PENDING), then its RUNNING one. When the commit fails, the process is killed
   * before it printed anything and the error goes to the caller: no run was made.
   */
  createAndStart(fields: NewRunFields, job: JobConfig): RunRecord {
    const { ctx } = this;
    ctx.backfills.admit();
    const free =
      !this.pumping &&
      !ctx.stopping &&
      ctx.waiting.size === 0 &&
      ctx.attempts.size < ctx.daemon.executor.poolSize &&
      ctx.attempts.size < ctx.daemon.scheduler.maxConcurrentJobs;
    if (!free) return this.createThenPump(fields, job);
    const started: Started[] = [];
    let created!: RunRecord;
    let running: RunRecord[];
    try {
      running = ctx.store.tx(() => {
        created = insertRun(ctx, fields, job);
        const effects = decide({ kind: "ready" }, gatherFacts(ctx, created, () => this.gateOpen(created, job, new Map())), ctx.clock.now(), ctx.random);
        const start = effects.length === 1 && effects[0]!.kind === "start" ? effects[0] : null;
        if (!start || start.kind !== "start") return [];
        const spec = prepareSpawn(ctx, created, job, start.attemptNo);
        if ("error" in spec) return []; // the pass after the commit records the failed dispatch
        this.spawn(created, job, start.attemptNo, spec, started);
        // The kernel is still starting it: its RUNNING transition is recorded once it has a pid.
        if (started[0]!.attempt.spawning !== null) return [];
        return this.writeStarts(started);
      });
    } catch (e) {
      this.abandon(started);
      throw e;
    }
    if (started.length === 0) {
      announceRun(ctx, created);
      this.pump();
      return ctx.store.runs.get(created.id) ?? created;
    }
    ctx.bus.emit("run:status", { run: created, from: null }); // its creation; it never waited in the queue
    if (running.length === 0) {
      // Committed PENDING: should its start not be recorded, the run waits in the queue again.
      started[0]!.queued = { id: created.id, job: created.job_name, cycleId: created.cycle_id, status: "PENDING", nextAttemptAt: null };
      this.recordStarts(started);
      return created;
    }
    this.afterStarts(started, running);
    return running[0]!;
  }

  private createThenPump(fields: NewRunFields, job: JobConfig): RunRecord {
    const run = createRun(this.ctx, fields, job);
    this.pump();
    return this.ctx.store.runs.get(run.id) ?? run;
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
  /** When it was spawned: its attempt's start instant. */
  at: string;
}

/** Waiting runs read per query in a dispatch pass. */
const READ_AHEAD = 64;
/** The least a pass's first read of waiting runs asks for (see startReady). */
const FIRST_READ_MIN = 8;

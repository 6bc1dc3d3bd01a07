import type { JobConfig } from "../config/types.js";
import { toError } from "../shared/toError.js";
import type { RunRecord } from "../store/types.js";
import { applyEffects } from "./apply.js";
import { Attempt } from "./attempt.js";
import { announceRun, insertRun, nowIso, type EngineContext, type NewRunFields, type Waiting } from "./context.js";
import { activeRunsOf, gatherFacts } from "./facts.js";
import { gateIsOpen } from "./gate.js";
import { decide, type Effect } from "./outcomes.js";
import type { SpawnSpec } from "../executor/index.js";
import { prepareSpawn } from "./prepare.js";
import { Recorder } from "./recorder.js";
import { TurnWrites, type TurnPart } from "./turnWrites.js";

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
  /** The creations, starts and ends of one loop turn, in one commit. */
  private readonly writes: TurnWrites;

  constructor(private readonly ctx: EngineContext) {
    this.writes = new TurnWrites(ctx.store, ctx.log);
    this.recorder = new Recorder(ctx, this.writes, () => this.pump());
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
      // At max_concurrent_jobs a PENDING run waits, and so do the PENDING runs after it (FIFO); a due
      // RETRYING run further on still starts (it holds its slot already): stopping the pass here held
      // it behind a PENDING run that waited for its slot, and nothing moved again.
      if (w.status === "PENDING" && ctx.attempts.size + retrying >= ctx.daemon.scheduler.maxConcurrentJobs) continue;
      const run = read(i);
      if (!run || run.status !== w.status) {
        ctx.waiting.delete(id); // changed behind our back (skip, cancel): not ours to start
        if (w.status === "RETRYING") retrying--;
        continue;
      }
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
  private spawn(run: RunRecord, job: JobConfig, attemptNo: number, spec: SpawnSpec, started: Started[]): Started {
    const { ctx } = this;
    const attempt = new Attempt(
      { store: ctx.store, clock: ctx.clock, log: ctx.log, killGraceMs: ctx.daemon.executor.killGraceMs, shell: ctx.daemon.executor.shell },
      { ...run, attempt: attemptNo },
      job,
      spec,
    );
    // Its start instant is the spawn's (the pass's order, FIFO), not the later instant its start is recorded.
    const s: Started = { run, job, attempt, attemptNo, queued: ctx.waiting.get(run.id), at: nowIso(ctx) };
    started.push(s);
    ctx.waiting.delete(run.id);
    ctx.attempts.set(run.id, attempt);
    return s;
  }

  /**
   * Records the RUNNING transitions of the processes a pass started, in one
   * transaction: at once for those whose start is settled (a fork, a failed
   * start), and for those the kernel is still starting off the event loop
   * (posix_spawn on a worker thread), once their spawn settles (see starting).
   */
  private recordStarts(started: Started[]): void {
    const now: Started[] = [];
    for (const s of started) {
      const spawning = s.attempt.spawning;
      if (spawning === null) {
        now.push(s);
        continue;
      }
      const entry = { start: s, settled: false };
      this.starting.push(entry);
      void spawning.then(() => {
        entry.settled = true;
        this.flushSoon();
      });
    }
    this.writeAndAnnounce(now);
  }

  /**
   * Starts spawned off the event loop, in the order they were dispatched. Worker threads may
   * settle them in another order; they are recorded in this one (FIFO: RUNNING events and
   * started_at follow the queue), each batch in the transaction of the loop turn in which the
   * spawns before it have settled (TurnWrites: with the turn's creations and ends, one commit).
   * Lines a process prints before its start is recorded wait in its attempt (Attempt.recorded),
   * after its `--- attempt N ---` marker.
   */
  private starting: Array<{ start: Started; settled: boolean }> = [];
  private flushing = false;

  private flushSoon(): void {
    if (this.flushing) return;
    this.flushing = true;
    this.writes.add(() => {
      // The settled ones at the head of the queue, as the turn's transaction begins.
      this.flushing = false;
      let n = 0;
      while (n < this.starting.length && this.starting[n]!.settled) n++;
      const batch = this.starting.splice(0, n).map((e) => e.start);
      return {
        write: () => this.writeStarts(batch),
        committed: (running) => this.afterStarts(batch, running),
        failed: (err) => {
          if (batch.length === 0) return;
          this.abandon(batch);
          this.ctx.log.error({ err, runs: batch.map((b) => b.run.id) }, "could not record the start of runs: their processes were killed and the runs wait again");
        },
      };
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
          // A retry's row showed the failed attempt's end while the next ran (attempts.ts keeps it).
          ...(run.status === "RETRYING" ? { finished_at: null, duration_ms: null, hc_status: null } : {}),
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
    started.forEach(({ job, attempt }, i) => {
      const run = running[i]!;
      void attempt.done.then((result) => this.recorder.ended({ run, job, result, finishedAt: ctx.clock.now() }));
    });
    // Every end is watched first: a marker the log writer refuses (its buffer full while the database
    // keeps failing) drops that run's lines, as any line it refuses, and strands no other start.
    for (const { run, attempt, attemptNo, at } of started) {
      try {
        attempt.recorded(`--- attempt ${attemptNo} ---`, at);
      } catch (err) {
        ctx.log.error({ err, run: run.id }, "could not log the start of a run: its lines so far are dropped");
      }
    }
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
   * A new run (a manual trigger, a retry), started at once when it may: when nothing else waits
   * (no run is passed over, FIFO holds), a pool slot and a max_concurrent_jobs slot are free, its
   * job's config prepares a command, and decide() says start; otherwise the run is created and the
   * queue pumped as before. Its row is committed before this returns; events follow the commit: the
   * new run's (PENDING), then its RUNNING one. Where a start settles at once (fork), the INSERT and
   * the RUNNING transition are one commit, and when that commit fails the process is killed before
   * it printed anything and the error goes to the caller: no run was made. Where the kernel starts
   * the process off the event loop (posix_spawn), the run comes back PENDING and holding its pool
   * slot; its RUNNING transition follows a turn later (recordStarts).
   */
  createAndStart(fields: NewRunFields, job: JobConfig): RunRecord {
    const { ctx } = this;
    ctx.backfills.admit();
    const started: Started[] = [];
    let made!: Made;
    try {
      made = ctx.store.tx(() => this.createOne(fields, job, false, started));
    } catch (e) {
      this.abandon(started);
      throw e;
    }
    return this.announceMade([made])[0]!;
  }

  /**
   * createAndStart for the API: the runs asked for in one loop turn are created (and started, as
   * createAndStart does) in the turn's transaction at its check phase (TurnWrites, with the turn's
   * starts and ends), and each promise resolves once that transaction is committed, so an answer
   * acknowledges a stored run. A run whose write fails (its
   * savepoint is rolled back) rejects alone; a failed commit rejects them all, and no run was made.
   */
  createSoon(fields: NewRunFields, job: JobConfig): Promise<RunRecord> {
    return new Promise((resolve, reject) => {
      this.asked.push({ fields, job, resolve, reject });
      if (this.asked.length === 1) this.writes.add(() => this.createAsked());
    });
  }

  private asked: Asked[] = [];

  /** The part of a turn's transaction that creates (and starts) the runs asked for in that turn. */
  private createAsked(): TurnPart<Array<Made | { error: unknown }>> {
    const { ctx } = this;
    const batch = this.asked;
    this.asked = [];
    const all: Started[] = [];
    return {
      write: () => {
        ctx.backfills.admit();
        let queued = false;
        return batch.map((a) => {
          const started: Started[] = [];
          try {
            // Its own savepoint: a write that fails takes only this run back.
            const made = ctx.store.tx(() => this.createOne(a.fields, a.job, queued, started));
            queued ||= made.started === null;
            all.push(...started);
            return made;
          } catch (e) {
            this.abandon(started);
            // SQLite rolled the turn's whole transaction back (disk full): every run of it fails.
            if (!ctx.store.inTransaction) throw e;
            return { error: e };
          }
        });
      },
      committed: (outcomes) => {
        const records = this.announceMade(outcomes.filter((o): o is Made => !("error" in o)));
        let k = 0;
        outcomes.forEach((o, i) => ("error" in o ? batch[i]!.reject(o.error) : batch[i]!.resolve(records[k++]!)));
      },
      failed: (err) => {
        this.abandon(all);
        for (const a of batch) a.reject(err);
      },
    };
  }

  /**
   * createAndStart's writes, in the caller's transaction: the run's INSERT, and when it may start at
   * once (see createAndStart; `behind`: a run created before it in the same transaction waits), its
   * spawn and, when that settled at once, its RUNNING transition. The process it spawns is also
   * pushed on `started`, for the caller to abandon should the transaction fail.
   */
  private createOne(fields: NewRunFields, job: JobConfig, behind: boolean, started: Started[]): Made {
    const { ctx } = this;
    const created = insertRun(ctx, fields, job);
    const free =
      !behind &&
      !this.pumping &&
      !ctx.stopping &&
      ctx.waiting.size === 0 &&
      ctx.attempts.size < ctx.daemon.executor.poolSize &&
      ctx.attempts.size < ctx.daemon.scheduler.maxConcurrentJobs;
    if (!free) return { created, started: null, running: null };
    const effects = decide({ kind: "ready" }, gatherFacts(ctx, created, () => this.gateOpen(created, job, new Map())), ctx.clock.now(), ctx.random);
    const start = effects.length === 1 && effects[0]!.kind === "start" ? effects[0] : null;
    if (!start || start.kind !== "start") return { created, started: null, running: null };
    const spec = prepareSpawn(ctx, created, job, start.attemptNo);
    if ("error" in spec) return { created, started: null, running: null }; // the pass after the commit records the failed dispatch
    const spawned = this.spawn(created, job, start.attemptNo, spec, started);
    // The kernel is still starting it: its RUNNING transition is recorded once it has a pid.
    if (spawned.attempt.spawning !== null) return { created, started: spawned, running: null };
    return { created, started: spawned, running: this.writeStarts([spawned])[0]! };
  }

  /** After the commit of createOne's writes: their events, the queue, the starts to record; the runs as they are now. */
  private announceMade(made: readonly Made[]): RunRecord[] {
    const { ctx } = this;
    let pump = false;
    const out = made.map(({ created, started, running }) => {
      if (started === null) {
        announceRun(ctx, created);
        pump = true;
        return created;
      }
      ctx.bus.emit("run:status", { run: created, from: null }); // its creation; it never waited in the queue
      if (running !== null) {
        this.afterStarts([started], [running]);
        return running;
      }
      // Committed PENDING: should its start not be recorded, the run waits in the queue again.
      started.queued = { id: created.id, job: created.job_name, cycleId: created.cycle_id, status: "PENDING", nextAttemptAt: null };
      this.recordStarts([started]);
      return created;
    });
    if (!pump) return out;
    this.pump();
    return out.map((r, i) => (made[i]!.started === null ? (ctx.store.runs.get(r.id) ?? r) : r));
  }
}

/** A manual run asked for through createSoon, waiting for its turn's transaction. */
interface Asked {
  fields: NewRunFields;
  job: JobConfig;
  resolve: (r: RunRecord) => void;
  reject: (e: unknown) => void;
}

/** A run createOne made: its row, the process it spawned (if it started at once), its RUNNING row when the start settled at once. */
interface Made {
  created: RunRecord;
  started: Started | null;
  running: RunRecord | null;
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

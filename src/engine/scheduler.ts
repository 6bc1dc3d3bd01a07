import { randomUUID } from "node:crypto";
import type { JobConfig, ScheduleSpec } from "../config/types.js";
import { describeSlot, nextRun, nextSlot, type ScheduledSlot, type Slot } from "../schedule/nextRun.js";
import { DuplicateSlotError, sqliteCode } from "../store/errors.js";
import { afterCommit, writeEffects, type AfterCommit } from "./apply.js";
import { runOf, type EngineContext } from "./context.js";
import type { Dispatcher } from "./dispatcher.js";
import { LATE_AFTER_MS, plan, type PlannedRun, type ScheduleEntry } from "./planner.js";

interface Entry extends ScheduleEntry {
  /**
   * The next slot that runs (not excluded), shown by svc status, the API
   * and job_state.next_run; null when `exclude` removes every slot for
   * years. It is `slotAt` unless that slot is excluded.
   */
  slot: ScheduledSlot | null;
  /** The slot at `slotAt`, with the reason when `exclude` removes it. */
  raw: Slot;
  /** The ScheduleSpec the slot was computed from: a reload recomputes the slot only when it changed. */
  spec: ScheduleSpec;
}

/** At most this many slots of one job are handled in one tick (every:1s after a long stall). */
const MAX_SLOTS_PER_TICK = 10_000;
/** Longer than any DST gap or overlap (2 h at most), shorter than the day between a daily job's notes. */
const NOTE_QUIET_MS = 3 * 3_600_000;

/**
 * Deep equality of plain config data (objects, arrays, primitives): no
 * allocation, unlike comparing JSON texts, and no per-job JSON kept in memory.
 */
function sameData(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k)) return false;
    if (!sameData((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}

/** What the daemon logs at startup for each scheduled job. */
export interface NextRunInfo {
  job: string;
  slot: ScheduledSlot | null;
}

/** Missed slots counted one by one for their trace, at most (every:1s missing a day is 86,400). */
const MAX_MISSED_COUNTED = 10_000;

/**
 * The schedule table: each time-scheduled job's next slot, computed when
 * the job fires or its config changes, never on every tick (a full recompute
 * of 10,000 jobs is far over a tick's budget). Only this class writes
 * `job_state.next_run`, always in the transaction that creates the slot's run,
 * so a crash can neither lose a slot nor run it twice (runs are unique per
 * (job, scheduled_for)). What a transaction announces (the new runs' events,
 * log lines) waits for its commit: a rolled-back one announces nothing.
 */
export class Scheduler {
  private readonly entries = new Map<string, Entry>();
  /** Each job's last slot whose DST note was logged (see arm). */
  private readonly noted = new Map<string, number>();
  /** What the open transaction announces once it commits; null outside one. */
  private after: AfterCommit | null = null;

  constructor(
    private readonly ctx: EngineContext,
    private readonly pool: Dispatcher,
  ) {}

  /**
   * Startup: compute every job's next slot, and apply the catch-up rules to
   * slots missed while the daemon was down (CONTRACT §3).
   */
  init(now: number): NextRunInfo[] {
    const states = new Map(this.ctx.store.jobState.all().map((s) => [s.job_name, s]));
    const info: NextRunInfo[] = [];
    // A slot the running daemon would still run: no older than the tick's own tolerance (LATE_AFTER_MS)
    // after its latest jittered due time. A restart at 10:00:00.3, or one before a jittered slot was due,
    // has not missed it: it runs now, as the tick would have run it.
    const grace = this.lateAfterMs();
    this.inTx(() => {
      for (const job of this.ctx.project.jobs.values()) {
        const state = states.get(job.name);
        const stored = state === undefined ? undefined : state.next_run;
        const persisted = state?.next_run ? Date.parse(state.next_run) : null;
        const paused = state?.paused === 1;
        if (persisted !== null && persisted <= now && nextRun(job.schedule, persisted - 1) !== null) {
          if (!paused && now - persisted <= grace) {
            const slot = this.arm(job, persisted - 1, false, stored);
            const entry = this.entries.get(job.name);
            if (entry && entry.dueAt < now) entry.dueAt = now;
            info.push({ job: job.name, slot });
            continue;
          }
          this.missed(job, persisted, now, "the daemon was not running");
        }
        info.push({ job: job.name, slot: this.arm(job, now, paused, stored) });
      }
      // A job dropped from svc.yaml while the daemon was down: its next_run would read as a missed slot
      // were it added back later (reload clears it the same way).
      for (const [name, state] of states) {
        if (!this.ctx.project.jobs.has(name) && state.next_run !== null) this.ctx.store.jobState.upsert(name, { next_run: null });
      }
    });
    return info;
  }

  /**
   * After a config swap: new or changed schedules get a fresh slot; removed jobs leave the table.
   * A reload whose transaction fails changes nothing: the table is put back as it was and the
   * error goes to the caller (the engine then keeps the previous config).
   */
  reload(now: number): void {
    const before = new Map(this.entries);
    const jobs = this.ctx.project.jobs;
    try {
      const removed = [...this.entries.keys()].filter((name) => !jobs.has(name));
      for (const name of removed) {
        this.entries.delete(name);
        this.noted.delete(name);
      }
      this.inTx(() => {
        // A removed job's next_run would read as a slot missed were it added back before a restart.
        for (const name of removed) if (this.ctx.store.jobState.get(name)?.next_run != null) this.ctx.store.jobState.upsert(name, { next_run: null });
        for (const job of jobs.values()) {
          const entry = this.entries.get(job.name);
          if (entry && sameData(entry.spec, job.schedule)) continue;
          this.arm(job, now, this.ctx.store.jobState.get(job.name)?.paused === 1);
        }
      });
    } catch (e) {
      this.entries.clear();
      for (const [job, entry] of before) this.entries.set(job, entry);
      throw e;
    }
  }

  /**
   * One tick: handle every slot that is due, oldest first. A job whose tick
   * comes late (a busy loop, a clock step forward) has each of its passed
   * slots handled in order, so sub-minute schedules lose none: slots
   * noticed within LATE_AFTER_MS of their due time run, older ones follow
   * the catch-up rules, excluded ones log a line. Returns how many runs it
   * created. A tick whose transaction fails (the disk is full, the commit
   * fails) changes nothing: the due jobs keep their slots for the next tick.
   */
  tick(now: number): number {
    const due = plan(now, this.entries.values(), this.lateAfterMs());
    if (due.length === 0) return 0;
    // The new runs' events after their dispatch pass: their processes are being started first.
    return this.ctx.bus.hold(() => this.handle(due, now));
  }

  private handle(due: ReturnType<typeof plan>, now: number): number {
    let created = 0;
    const before = due.map((p) => [p.job, this.entries.get(p.job)] as const);
    try {
      this.inTx(() => {
        for (const p of due) {
          const job = this.ctx.project.jobs.get(p.job);
          if (job) created += this.advanceAlone(job, p, now);
        }
      });
    } catch (e) {
      for (const [job, entry] of before) {
        if (entry) this.entries.set(job, entry);
        else this.entries.delete(job);
      }
      throw e;
    }
    if (created > 0) this.pool.pump();
    return created;
  }

  /**
   * Runs `fn` in one transaction; what it announces (`announce`, `say`) happens
   * after the commit, in order, and not at all when the transaction rolls back.
   */
  private inTx(fn: () => void): void {
    const after: AfterCommit = [];
    this.after = after;
    try {
      this.ctx.store.tx(fn);
    } finally {
      this.after = null;
    }
    afterCommit(after);
  }

  private announce(fns: AfterCommit): void {
    if (this.after) this.after.push(...fns);
    else afterCommit(fns);
  }

  /** A log line, after the commit of the open transaction. */
  private say(level: "info" | "warn", fields: Record<string, unknown>, message: string): void {
    this.announce([() => this.ctx.log[level](fields, message)]);
  }

  /**
   * advance() in a savepoint of the tick's transaction: a job whose next slot cannot be computed
   * (a search that finds none: only a schedule whose slots are decades apart) is taken out of the
   * table with an error line, and the other jobs' slots go on. A database error that ends the
   * whole transaction still fails the tick, as before.
   */
  private advanceAlone(job: JobConfig, p: PlannedRun, now: number): number {
    const after = this.after!;
    const mark = after.length;
    const entry = this.entries.get(job.name);
    try {
      return this.ctx.store.tx(() => this.advance(job, p, now));
    } catch (e) {
      // A database error fails the tick as before (the due jobs keep their slots for the next one).
      if (!this.ctx.store.inTransaction || sqliteCode(e) !== undefined) throw e;
      after.length = mark; // nothing of the rolled-back savepoint is announced
      this.entries.delete(job.name);
      this.ctx.store.jobState.upsert(job.name, { next_run: null });
      const err = e instanceof Error ? e : new Error(String(e));
      this.announce([
        () =>
          this.ctx.log.error(
            { job: job.name, err, slot: entry ? new Date(entry.slotAt).toISOString() : null },
            `job ${job.name}: its next slot cannot be computed (${err.message}): it is not scheduled until svc.yaml is reloaded or svcd restarts`,
          ),
      ]);
      return 0;
    }
  }

  /** Handles one job's due slots, from the planned one until its next slot is not due. */
  private advance(job: JobConfig, first: PlannedRun, now: number): number {
    let created = 0;
    let p: PlannedRun | undefined = first;
    for (let n = 0; p !== undefined && n < MAX_SLOTS_PER_TICK; n++) {
      const entry = this.entries.get(job.name);
      if (entry === undefined) break;
      if (p.action === "excluded") {
        this.say(
          "info",
          { job: job.name, slot: entry.raw.utc, reason: entry.raw.excluded },
          `job ${job.name}: slot ${describeSlot(entry.raw)} excluded (${entry.raw.excluded}): no run`,
        );
        this.trace(job, "excluded", p.slotAt, `excluded: ${entry.raw.excluded}`);
        this.arm(job, p.slotAt, entry.paused);
      } else if (p.action === "run") {
        if (this.fire(job, p.slotAt, "scheduler")) created++;
        this.arm(job, p.slotAt, false);
      } else if (p.action === "late") {
        // Slots more than lateAfterMs old are missed (catch-up rules), as plan() counts lateness;
        // one exactly that old, like newer ones, runs as it comes.
        const bound = now - this.lateAfterMs() - 1;
        if (this.missed(job, p.slotAt, bound, "it was noticed late (clock jump or suspend)")) created++;
        this.arm(job, Math.max(p.slotAt, bound), false);
      } else {
        this.say("info", { job: job.name, slot: new Date(p.slotAt).toISOString() }, "job is paused: scheduled slot skipped");
        this.trace(job, "paused", p.slotAt, "paused: scheduled slot skipped");
        this.arm(job, now, true);
        break;
      }
      const next = this.entries.get(job.name);
      p = next === undefined ? undefined : plan(now, [next], this.lateAfterMs())[0];
    }
    return created;
  }

  /** How late a slot may be noticed and still run: LATE_AFTER_MS after its time, plus the jitter that may delay it. */
  private lateAfterMs(): number {
    return LATE_AFTER_MS + this.ctx.daemon.scheduler.scheduleJitterMs;
  }

  setPaused(job: string, paused: boolean): void {
    const entry = this.entries.get(job);
    if (entry) entry.paused = paused;
  }

  next(job: string): ScheduledSlot | null {
    return this.entries.get(job)?.slot ?? null;
  }

  /**
   * Computes and stores the job's first slot strictly after `after` (which
   * `exclude` may remove: it then passes with a log line) and its next slot
   * that runs, which is what job_state.next_run and every view show.
   * `stored` is job_state.next_run as just read (undefined when unknown or
   * when the job has no row yet): an unchanged value is not written again,
   * which is most of a restart's startup writes.
   */
  private arm(job: JobConfig, after: number, paused: boolean, stored?: string | null): ScheduledSlot | null {
    const raw = nextSlot(job.schedule, after);
    if (!raw) {
      this.entries.delete(job.name);
      if (stored !== null) this.ctx.store.jobState.upsert(job.name, { next_run: null });
      return null;
    }
    let slot: ScheduledSlot | null = raw;
    if (raw.excluded !== null) {
      // Passing excluded slots one by one (every:10s on a holiday) keeps the runnable slot found once.
      // A job whose every slot is excluded for years keeps "none" until its config changes, instead of searching again at each slot.
      const prev = this.entries.get(job.name);
      const same = prev !== undefined && prev.spec === job.schedule;
      slot = same && prev.slot === null ? null : same && prev.slot && prev.slot.at > raw.at ? prev.slot : nextRun(job.schedule, raw.at);
    }
    const jitter = this.ctx.daemon.scheduler.scheduleJitterMs;
    this.entries.set(job.name, {
      job: job.name,
      slotAt: raw.at,
      dueAt: raw.at + (jitter > 0 && raw.excluded === null ? Math.floor(this.ctx.random() * jitter) : 0),
      paused,
      excluded: raw.excluded !== null,
      slot,
      raw,
      spec: job.schedule,
    });
    const utc = slot?.utc ?? null;
    if (stored !== utc) this.ctx.store.jobState.upsert(job.name, { next_run: utc });
    // One line per DST change and job: `every:1s` has 3,600 slots in an overlap, each with its note.
    if (raw.excluded === null && raw.note && !(raw.at - (this.noted.get(job.name) ?? -Infinity) < NOTE_QUIET_MS)) {
      this.noted.set(job.name, raw.at);
      this.say("warn", { job: job.name, timezone: job.schedule.timezone, slot: raw.utc }, `job ${job.name}: ${raw.note}`);
    }
    return slot;
  }

  /**
   * A slot that makes no run leaves a trace (non_runs) besides its log line, for `svc why`;
   * consecutive ones of one reason are one row. Called inside the tick's transaction.
   */
  private trace(job: JobConfig, reason: "paused" | "excluded" | "missed", slotAt: number, detail: string, span?: { slots: number; lastAt: number }): void {
    this.ctx.store.nonRuns.record({
      job_name: job.name,
      reason,
      detail,
      slot: new Date(slotAt).toISOString(),
      ...(span && span.slots > 1 ? { slots: span.slots, lastSlot: new Date(span.lastAt).toISOString() } : {}),
      at: new Date(this.ctx.clock.now()).toISOString(),
    });
  }

  /**
   * The slots missed from `firstMissed` up to `now`: how many, and the last (for `svc why` on any of them).
   * Counted up to MAX_MISSED_COUNTED (a sub-minute schedule down for days); past that the span ends there.
   */
  private missedSpan(job: JobConfig, firstMissed: number, now: number): { slots: number; lastAt: number } {
    let slots = 0;
    let lastAt = firstMissed;
    for (let s = nextRun(job.schedule, firstMissed - 1); s && s.at <= now && slots < MAX_MISSED_COUNTED; s = nextRun(job.schedule, s.at)) {
      slots++;
      lastAt = s.at;
    }
    return { slots: Math.max(1, slots), lastAt };
  }

  /**
   * Creates the run of one slot (through apply.ts, as every decision's runs:
   * announced after the commit); false when that slot already has one.
   */
  private fire(job: JobConfig, slotAt: number, triggeredBy: "scheduler" | "catchup"): boolean {
    const run = runOf(
      {
        job_name: job.name,
        trigger: "schedule",
        triggered_by: triggeredBy,
        cycle_id: randomUUID(),
        scheduled_for: new Date(slotAt).toISOString(),
        scheduled_at: new Date(slotAt).toISOString(),
      },
      job,
    );
    try {
      this.announce(writeEffects(this.ctx, [{ kind: "create", run }], () => this.pool.pump()));
      return true;
    } catch (e) {
      if (e instanceof DuplicateSlotError) return false;
      throw e;
    }
  }

  /**
   * Missed slots (CONTRACT §3): with `catchup: true` and the latest missed
   * slot inside `scheduler.catchup_window`, one run at once however many were
   * missed; otherwise the miss is logged and the next slot is used.
   */
  private missed(job: JobConfig, firstMissed: number, now: number, why: string): boolean {
    const window = this.ctx.daemon.scheduler.catchupWindowMs;
    let latest: ScheduledSlot | null = null;
    let s = nextRun(job.schedule, Math.max(firstMissed, now - window) - 1);
    while (s && s.at <= now) {
      latest = s;
      s = nextRun(job.schedule, s.at);
    }
    const paused = this.ctx.store.jobState.get(job.name)?.paused === 1;
    const fields = { job: job.name, missed: new Date(firstMissed).toISOString() };
    if (!job.catchup || paused) {
      const span = this.missedSpan(job, firstMissed, now);
      const many = span.slots > 1 ? ` (${span.slots} slots missed, ${new Date(firstMissed).toISOString()} to ${new Date(span.lastAt).toISOString()})` : "";
      this.say("warn", fields, `job ${job.name}: missed its slot because ${why}; catchup is ${paused ? "off while paused" : "false"}, waiting for the next slot${many}`);
      this.trace(job, "missed", firstMissed, `missed: ${why}; catchup is ${paused ? "off while paused" : "false"}`, span);
      return false;
    }
    if (!latest) {
      this.say("warn", fields, `job ${job.name}: missed its slot because ${why}; it is outside scheduler.catchup_window, waiting for the next slot`);
      this.trace(job, "missed", firstMissed, `missed: ${why}; the slot is outside scheduler.catchup_window`, this.missedSpan(job, firstMissed, now));
      return false;
    }
    this.say("info", { ...fields, slot: describeSlot(latest) }, `job ${job.name}: catching up a missed slot`);
    return this.fire(job, latest.at, "catchup");
  }
}

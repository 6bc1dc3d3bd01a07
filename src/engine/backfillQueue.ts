import type { Store } from "../store/api.js";
import type { RunStatus } from "../store/types.js";
import type { BackfillFacts } from "./outcomes.js";
import type { IdMap } from "./idMap.js";

/** What the queue reads and writes of the engine's state (EngineContext, which holds the queue). */
interface QueueDeps {
  readonly store: Store;
  /** The dispatch queue: admitted slot runs go here, PENDING. */
  readonly waiting: IdMap<{ id: number; job: string; cycleId: string; status: "PENDING" | "RETRYING"; nextAttemptAt: number | null }>;
  /** Runs with an attempt in flight. */
  readonly attempts: Pick<IdMap<unknown>, "has" | "size">;
}

/** One backfill whose slot runs are not all finished. */
interface Entry {
  id: number;
  job: string;
  parallel: number;
  cancelled: boolean;
  /** Its PENDING slot runs not yet in the dispatch queue, in slot (id) order, from `next` on. */
  pending: { id: number; cycleId: string }[];
  next: number;
  /** Slot runs in the dispatch queue or running (PENDING, RUNNING, RETRYING): at most `parallel`. */
  admitted: Set<number>;
}

/**
 * The slot runs of backfills (CONTRACT §7.3) wait here, PENDING in the
 * database, and enter the dispatch queue (`ctx.waiting`) in slot order, at
 * most `parallel` of a backfill at a time. So a backfill of 10,000 slots puts
 * a handful of runs in front of the dispatcher, not 10,000 it would walk on
 * every pass. Whether an admitted run may start now is decide()'s (its
 * backfill rows in outcomes.ts); this queue only keeps the order and the count.
 * The state is rebuilt from the database at startup (`load`).
 */
export class BackfillQueue {
  private readonly entries = new Map<number, Entry>();

  constructor(private readonly ctx: QueueDeps) {}

  /** Startup, after reconciliation: every backfill with unfinished slot runs, its PENDING ones waiting here again. */
  load(): number {
    const { store } = this.ctx;
    let pending = 0;
    for (const id of store.backfills.openIds()) {
      const b = store.backfills.get(id);
      if (!b) continue;
      const runs = store.backfills.unfinishedSlotRuns(id, b.job);
      const waiting = runs.filter((r) => r.status === "PENDING");
      const rows = new Map(store.runs.getMany(waiting.map((r) => r.id)).map((r) => [r.id, r.cycle_id]));
      this.entries.set(id, {
        id,
        job: b.job,
        parallel: b.parallel,
        cancelled: b.cancelled,
        pending: waiting.map((r) => ({ id: r.id, cycleId: rows.get(r.id) ?? "" })),
        next: 0,
        admitted: new Set(runs.filter((r) => r.status !== "PENDING").map((r) => r.id)),
      });
      pending += waiting.length;
    }
    return pending;
  }

  /** A new backfill: its slot runs as created, oldest slot first. */
  add(id: number, job: string, parallel: number, runs: readonly { id: number; cycleId: string }[]): void {
    if (runs.length === 0) return;
    this.entries.set(id, { id, job, parallel, cancelled: false, pending: [...runs], next: 0, admitted: new Set() });
  }

  /**
   * Nothing more of this backfill enters the dispatch queue (its admitted runs that did not
   * start end SKIPPED by decide()); returns its runs that were still waiting here.
   */
  cancel(id: number): number[] {
    const e = this.entries.get(id);
    if (!e) return [];
    e.cancelled = true;
    const left = e.pending.slice(e.next).map((p) => p.id);
    e.next = e.pending.length;
    return left;
  }

  /**
   * Moves the next slot runs of each backfill into the dispatch queue while fewer than
   * `parallel` of its runs are there or running. Called at the start of every dispatch pass.
   */
  admit(): void {
    const { ctx } = this;
    for (const e of this.entries.values()) {
      for (const id of e.admitted) if (!ctx.waiting.has(id) && !ctx.attempts.has(id)) e.admitted.delete(id);
      while (!e.cancelled && e.admitted.size < e.parallel && e.next < e.pending.length) {
        const { id, cycleId } = e.pending[e.next++]!;
        ctx.waiting.set(id, { id, job: e.job, cycleId, status: "PENDING", nextAttemptAt: null });
        e.admitted.add(id);
      }
      if (e.next >= e.pending.length && e.admitted.size === 0) this.entries.delete(e.id);
    }
  }

  /** decide()'s facts about a slot run of backfill `id`, given the job's other active runs. */
  facts(id: number, others: readonly { id: number; status: RunStatus }[]): BackfillFacts | null {
    const e = this.entries.get(id);
    if (!e) return null;
    let active = 0;
    for (const o of others) if (e.admitted.has(o.id)) active++;
    return { parallel: e.parallel, cancelled: e.cancelled, active, outside: others.length - active };
  }

  /** Slot runs waiting here, not yet in the dispatch queue (for /metrics and tests). */
  waitingCount(): number {
    let n = 0;
    for (const e of this.entries.values()) n += e.pending.length - e.next;
    return n;
  }
}

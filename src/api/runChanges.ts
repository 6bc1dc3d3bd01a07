import type { EventBus } from "../engine/events.js";
import { toTimelineRun, type TimelineRun } from "../store/timeline.js";
import type { RunRecord } from "../store/types.js";

/**
 * The recent run changes, for blocking queries (`GET /api/timeline/changes`,
 * in the manner of Consul's blocking queries and Kubernetes' watch with a
 * resourceVersion): a client holds a cursor, asks for what changed after it,
 * and the answer waits until something has. It is fed by the engine's
 * `run:status` events (every committed creation and status change), so a
 * dashboard learns of a run starting or ending within ~100 ms without
 * polling, and without a second push channel besides the log WebSocket.
 *
 * Cursors are `<epoch>.<seq>`: every change takes the next seq, and the
 * epoch changes with every daemon start, so a cursor from a previous daemon
 * (or one older than the last `capacity` changes) is answered with `reset`,
 * and the client reloads.
 *
 * What is kept is what an answer sends: each run's latest change only (an
 * answer carries the latest state of each run that changed after the
 * cursor, so a run's earlier changes can never be sent again), as the
 * timeline's row of it (toTimelineRun: ten values, not the ~1.4 KB
 * RunRecord with its params and tags), with the job name, status and
 * trigger strings shared. At ~3 changes a run that is about a third of the
 * last `capacity` changes, ~0.3 KB each: ~1 MB at the bound where whole
 * RunRecords for every change took ~16 MB (docs/perf/FIXES.md).
 */
export interface ChangesAnswer {
  cursor: string;
  /** The cursor cannot be served (another daemon, or too old): reload everything. */
  reset: boolean;
  /**
   * The latest state of each run that changed after the cursor, in the order of those latest
   * changes, as timeline rows without their attempts (`attempts` null: the route reads them).
   * Shared with the ring and other answers: never modify them.
   */
  runs: readonly TimelineRun[];
}

/** One change; `row` null once a later change of the same run superseded it. */
interface Change {
  readonly seq: number;
  row: TimelineRun | null;
}

/** Past this many distinct names, the table of shared strings starts over (sharing is only an economy). */
const MAX_SHARED_STRINGS = 4_096;

export class RunChanges {
  private seq = 0;
  /** Changes up to this seq are forgotten: a cursor before it is answered with reset. */
  private floor = 0;
  /** In seq order: each run's latest change, and superseded ones not compacted away yet. */
  private ring: Change[] = [];
  /** run id -> its latest change (the one in `ring` with a row). */
  private readonly latest = new Map<number, Change>();
  private readonly strings = new Map<string, string>();
  private readonly waiters = new Set<() => void>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly unsubscribe: () => void;
  private closed = false;

  constructor(
    bus: EventBus,
    private readonly epoch: string,
    private readonly capacity = 10_000,
    /** Changes that come in a burst (a dependency chain, a tick starting many jobs) wake waiters once. */
    private readonly coalesceMs = 100,
  ) {
    this.unsubscribe = bus.on("run:status", ({ run }) => this.add(run));
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Runs whose latest change is still kept (for tests and the memory bench). */
  get size(): number {
    return this.latest.size;
  }

  cursor(): string {
    return `${this.epoch}.${this.seq}`;
  }

  since(cursor: string): ChangesAnswer {
    const now = this.cursor();
    const dot = cursor.lastIndexOf(".");
    const after = Number(cursor.slice(dot + 1));
    if (dot < 0 || cursor.slice(0, dot) !== this.epoch || !Number.isInteger(after) || after > this.seq || after < this.floor) {
      return { cursor: now, reset: true, runs: [] };
    }
    const runs: TimelineRun[] = [];
    for (let i = this.ring.length - 1; i >= 0 && this.ring[i]!.seq > after; i--) {
      const { row } = this.ring[i]!;
      if (row !== null) runs.push(row);
    }
    return { cursor: now, reset: false, runs: runs.reverse() };
  }

  /** Resolves at the next (coalesced) change, after `ms`, when `cancel` fires, or on close. */
  wait(ms: number, cancel: { once(event: "close", fn: () => void): unknown; off(event: "close", fn: () => void): unknown }): Promise<void> {
    if (this.closed || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timeout);
        this.waiters.delete(done);
        cancel.off("close", done);
        resolve();
      };
      const timeout = setTimeout(done, ms);
      this.waiters.add(done);
      cancel.once("close", done);
    });
  }

  /** Answers every waiter now (daemon stopping) and stops listening. */
  close(): void {
    this.closed = true;
    this.unsubscribe();
    clearTimeout(this.timer);
    this.wake();
  }

  private add(run: RunRecord): void {
    const row = toTimelineRun(run, null);
    row[1] = this.shared(row[1]);
    row[2] = this.shared(row[2]) as RunRecord["status"];
    row[4] = this.shared(row[4]) as RunRecord["trigger"];
    const change: Change = { seq: ++this.seq, row };
    const previous = this.latest.get(run.id);
    if (previous !== undefined) previous.row = null;
    this.latest.set(run.id, change);
    this.ring.push(change);
    // Forget in chunks: once per `capacity / 4` changes, not at every change.
    if (this.seq - this.floor > this.capacity + this.capacity / 4) {
      this.floor = this.seq - this.capacity;
      this.compact();
    } else if (this.ring.length > 2 * this.latest.size + 256) {
      // More superseded changes than live ones: drop them (amortised: the ring at least halves).
      this.compact();
    }
    if (this.waiters.size > 0 && this.timer === undefined) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.wake();
      }, this.coalesceMs);
    }
  }

  /** Drops superseded changes and those at or before `floor`. */
  private compact(): void {
    const kept: Change[] = [];
    for (const change of this.ring) {
      if (change.row === null) continue;
      if (change.seq > this.floor) kept.push(change);
      else this.latest.delete(change.row[0]);
    }
    this.ring = kept;
    if (this.strings.size > MAX_SHARED_STRINGS) this.strings.clear();
  }

  /** One copy of each job name, status and trigger (each record read from SQLite has its own). */
  private shared(s: string): string {
    const known = this.strings.get(s);
    if (known !== undefined) return known;
    this.strings.set(s, s);
    return s;
  }

  private wake(): void {
    for (const done of [...this.waiters]) done();
  }
}

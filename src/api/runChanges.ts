import type { EventBus } from "../engine/events.js";
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
 * Cursors are `<epoch>.<seq>`: the epoch changes with every daemon start,
 * so a cursor from a previous daemon (or one older than the last
 * `capacity` changes) is answered with `reset`, and the client reloads.
 */
export interface ChangesAnswer {
  cursor: string;
  /** The cursor cannot be served (another daemon, or too old): reload everything. */
  reset: boolean;
  /** The latest record of each run that changed after the cursor, in change order. */
  runs: RunRecord[];
}

export class RunChanges {
  private seq = 0;
  private readonly ring: { seq: number; run: RunRecord }[] = [];
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

  cursor(): string {
    return `${this.epoch}.${this.seq}`;
  }

  since(cursor: string): ChangesAnswer {
    const now = this.cursor();
    const dot = cursor.lastIndexOf(".");
    const after = Number(cursor.slice(dot + 1));
    const oldest = this.ring[0]?.seq ?? this.seq + 1;
    if (dot < 0 || cursor.slice(0, dot) !== this.epoch || !Number.isInteger(after) || after > this.seq || after < oldest - 1) {
      return { cursor: now, reset: true, runs: [] };
    }
    const latest = new Map<number, RunRecord>();
    for (let i = this.ring.length - 1; i >= 0 && this.ring[i]!.seq > after; i--) {
      const { run } = this.ring[i]!;
      if (!latest.has(run.id)) latest.set(run.id, run);
    }
    return { cursor: now, reset: false, runs: [...latest.values()].reverse() };
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
    this.ring.push({ seq: ++this.seq, run });
    // Trim in chunks: one splice per `capacity / 4` changes, not a shift per change.
    if (this.ring.length > this.capacity + this.capacity / 4) this.ring.splice(0, this.ring.length - this.capacity);
    if (this.waiters.size > 0 && this.timer === undefined) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.wake();
      }, this.coalesceMs);
    }
  }

  private wake(): void {
    for (const done of [...this.waiters]) done();
  }
}

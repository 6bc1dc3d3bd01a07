import type { Logger } from "../shared/logger.js";
import { toError } from "../shared/toError.js";
import type { Store } from "../store/api.js";

/** One part of a loop turn's transaction (see TurnWrites). */
export interface TurnPart<T> {
  /** Its writes, in a savepoint of the turn's transaction. */
  write(): T;
  /** After the turn's commit, with what `write` returned. */
  committed(result: T): void;
  /** Nothing of `write` is stored: its savepoint was rolled back (`error` is what it threw), or the turn's commit failed. */
  failed(error: Error): void;
}

/**
 * The engine's writes of one event-loop turn, committed together at its check
 * phase: the manual runs asked for (Dispatcher.createSoon), the starts whose
 * spawn settled (Dispatcher.recordStarts) and the attempts that ended
 * (Recorder.ended). Each part is written in a savepoint of its own, so a part
 * whose write fails is rolled back alone and handled by its own failure path
 * (unless SQLite rolled the whole transaction back: then every part fails);
 * one commit (one WAL append of the pages they share) serves them all. Parts
 * hear of the outcome in the order they were added, after the commit.
 */
export class TurnWrites {
  private makers: Array<() => TurnPart<unknown>> = [];

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
  ) {}

  /**
   * Adds a part to this turn's transaction: `make` is called at the turn's check phase, before the
   * transaction begins (the part takes what it will write then). A part added while a turn's parts
   * hear their outcome goes to the next turn's.
   */
  add<T>(make: () => TurnPart<T>): void {
    this.makers.push(make as () => TurnPart<unknown>);
    if (this.makers.length === 1) setImmediate(() => this.commit());
  }

  private commit(): void {
    const makers = this.makers;
    this.makers = [];
    const parts = makers.map((make) => make());
    const outcomes: Array<{ value: unknown } | { error: Error }> = [];
    try {
      this.store.tx(() => {
        for (const part of parts) {
          try {
            outcomes.push({ value: this.store.tx(() => part.write()) });
          } catch (e) {
            // SQLite rolled the whole transaction back (disk full, I/O error): the parts before are gone
            // too, and the next would be written in a transaction of its own. The turn fails as a whole.
            if (!this.store.inTransaction) throw e;
            outcomes.push({ error: toError(e) });
          }
        }
      });
    } catch (e) {
      const error = toError(e);
      for (const part of parts) this.tell(() => part.failed(error));
      return;
    }
    parts.forEach((part, i) => {
      const o = outcomes[i]!;
      this.tell(() => ("error" in o ? part.failed(o.error) : part.committed(o.value)));
    });
  }

  /** One part's outcome: a part that throws does not keep the others from hearing theirs. */
  private tell(fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.log.error({ err: toError(e) }, "handling the outcome of a write failed");
    }
  }
}

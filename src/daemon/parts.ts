import type { Logger } from "../shared/logger.js";
import { toError } from "../shared/toError.js";

/** Undoes one started part: closes, releases or removes what it made. May be async. */
export type Undo = () => unknown;

/**
 * The parts started so far (STYLE: Dagu's Start / stopOnce). A failed start
 * undoes exactly the parts that started, last first; undoing is safe to call
 * twice: a second call waits for the first, and each undo runs once.
 */
export class Parts {
  private readonly started: { name: string; undo: Undo }[] = [];
  private undoing: Promise<void> | null = null;

  /** `log` is read when undoing: the logger is itself one of the parts. */
  constructor(private readonly log: () => Logger | undefined) {}

  /** Records a started part; null (a part that had nothing to start) records nothing. */
  add(name: string, undo: Undo | null): void {
    if (undo) this.started.push({ name, undo });
  }

  /** Undoes every started part, last first. A failing undo is logged and the others still run. */
  undo(): Promise<void> {
    if (this.undoing) return this.undoing;
    const run = async (): Promise<void> => {
      while (this.started.length > 0) {
        const part = this.started.pop()!;
        try {
          await part.undo();
        } catch (e) {
          this.log()?.error({ err: toError(e), part: part.name }, "error while stopping");
        }
      }
    };
    // Cleared when done (not inside `run`: with nothing to undo it would finish before being stored).
    const undoing = run().finally(() => {
      if (this.undoing === undoing) this.undoing = null;
    });
    this.undoing = undoing;
    return undoing;
  }
}

/**
 * Starts a part made of parts: when `start` throws, the sub-parts it had
 * started are undone (last first) before the error goes on; otherwise what it
 * made comes back with one undo for all of them.
 */
export async function startGroup<T extends object>(log: () => Logger | undefined, start: (parts: Parts) => Promise<T> | T): Promise<T & { undo: () => Promise<void> }> {
  const parts = new Parts(log);
  try {
    const made = await start(parts);
    return { ...made, undo: () => parts.undo() };
  } catch (e) {
    await parts.undo();
    throw e;
  }
}

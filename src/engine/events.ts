import type { LogLine, RunRecord, RunStatus } from "../store/types.js";
import type { Logger } from "../shared/logger.js";
import { toError } from "../shared/toError.js";

/**
 * The engine's typed event map. The WebSocket stream, notifications and the
 * audit log all subscribe here; emit never throws into the engine.
 */
export interface EngineEvents {
  /** After every committed status change (and on creation, with from = null). */
  "run:status": { run: RunRecord; from: RunStatus | null };
  /** Log lines just made durable, in order. */
  "run:logs": { lines: LogLine[] };
  /** A notification event for the notify module (SPEC "Events"). */
  "run:notify": {
    event: "on_success" | "on_failure" | "on_sla_breach" | "on_retry";
    run: RunRecord;
    /** When on_sla_breach has no entries and this is set, fall back to on_failure. */
    fallbackToFailure: boolean;
    /** The status of the job's previous completed run, for only_after_failure (null when no on_success entry of the job has it). */
    previousStatus: RunStatus | null;
  };
  /** The project config was swapped (reload). */
  "config:reloaded": { jobs: number };
  /** A notification reached its final status (delivered, or failed for good); for /metrics. */
  "alert:finished": { alertId: number; provider: string; status: "delivered" | "failed" };
}

export type EventName = keyof EngineEvents;
type Listener<K extends EventName> = (payload: EngineEvents[K]) => void;

export class EventBus {
  private readonly listeners = new Map<EventName, Set<Listener<EventName>>>();

  constructor(private readonly log: Logger) {}

  on<K extends EventName>(name: K, fn: Listener<K>): () => void {
    let set = this.listeners.get(name);
    if (!set) {
      set = new Set();
      this.listeners.set(name, set);
    }
    set.add(fn as Listener<EventName>);
    return () => set.delete(fn as Listener<EventName>);
  }

  /** Events emitted while `hold` runs, in order; null when not holding. */
  private held: Array<() => void> | null = null;

  /**
   * Runs `fn`, and the events it emits after it, in the order emitted: what `fn` starts (a spawn)
   * is under way before any listener runs. The scheduler's tick holds the events of the runs it
   * creates until their dispatch pass has spawned them (the listeners of a first PENDING event,
   * not yet compiled, once took longer than the spawn). Nested holds release with the outermost.
   */
  hold<T>(fn: () => T): T {
    if (this.held !== null) return fn();
    const held: Array<() => void> = (this.held = []);
    try {
      return fn();
    } finally {
      this.held = null;
      for (const emit of held) emit();
    }
  }

  emit<K extends EventName>(name: K, payload: EngineEvents[K]): void {
    if (this.held !== null) {
      this.held.push(() => this.emit(name, payload));
      return;
    }
    const set = this.listeners.get(name);
    if (!set) return;
    for (const fn of set) {
      try {
        fn(payload);
      } catch (e) {
        this.log.error({ err: toError(e), event: name }, "event listener failed");
      }
    }
  }
}

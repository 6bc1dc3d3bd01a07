import { SvcError } from "../shared/svcError.js";
import type { RunStatus } from "./types.js";

/**
 * The one table of allowed run transitions (SPEC "States and transitions",
 * CONTRACT §3). Every status change goes through `assertTransition`.
 *
 * A run is one row across its automatic retries, so a failed attempt goes
 * RUNNING -> FAILED -> RETRYING -> RUNNING, and a failure under the `skip`
 * policy goes RUNNING -> FAILED -> SKIPPED, as SPEC's table lists them.
 */
const ALLOWED: Record<RunStatus, readonly RunStatus[]> = {
  // dispatch; skip operation / concurrency forbid / upstream skipped or stopped;
  // dispatch error (missing output value, unset ${env:}) or pipeline stop
  PENDING: ["RUNNING", "SKIPPED", "FAILED"],
  // exit 0 (+ healthcheck); exit non-zero, timeout, cancel, replace, lost process
  RUNNING: ["SUCCESS", "FAILED"],
  // retry policy with retries left; `skip` policy once retries are exhausted
  FAILED: ["RETRYING", "SKIPPED"],
  // next attempt starts; cancelled (or dispatch error) while waiting out the delay
  RETRYING: ["RUNNING", "FAILED"],
  SUCCESS: [],
  SKIPPED: [],
};

export class TransitionError extends SvcError {
  /**
   * `expected` is set when the caller named the status it saw (`from` of
   * `runs.transition`) and the stored status differs: someone else moved
   * the run first.
   */
  constructor(
    readonly runId: number,
    readonly from: RunStatus,
    readonly to: RunStatus,
    readonly expected?: RunStatus,
  ) {
    super(
      "conflict",
      expected !== undefined && expected !== from
        ? `run ${runId}: transition ${expected} -> ${to} refused: the run is ${from}, not ${expected}`
        : `run ${runId}: transition ${from} -> ${to} is not allowed`,
    );
    this.name = "TransitionError";
  }
}

export function canTransition(from: RunStatus, to: RunStatus): boolean {
  return ALLOWED[from].includes(to);
}

export function assertTransition(runId: number, from: RunStatus, to: RunStatus): void {
  if (!canTransition(from, to)) throw new TransitionError(runId, from, to);
}

/** Terminal for log streaming and for "the run is over" (SPEC). */
export function isTerminal(status: RunStatus): boolean {
  return status === "SUCCESS" || status === "FAILED" || status === "SKIPPED";
}

/** Holds a slot against `scheduler.max_concurrent_jobs`. */
export function isActive(status: RunStatus): boolean {
  return status === "RUNNING" || status === "RETRYING";
}

import { iso } from "../shared/clock.js";
import type { RunPatch, RunRecord, RunStatus } from "../store/types.js";
import { isTerminal } from "../store/runStatus.js";
import type { EngineContext } from "./context.js";
import { gatherFacts } from "./facts.js";
import { decide, type Effect } from "./outcomes.js";

/** What happens once the writes of a decision are committed, in the order of its effects. */
export type AfterCommit = (() => void)[];

/**
 * Applies a decision's effects (outcomes.ts) in two steps. `writeEffects` does
 * every database write; the caller runs it inside one transaction, with the
 * writes of other decisions if it likes. `afterCommit` then does everything
 * that must not happen for a write that was rolled back: the queue, stopping
 * attempts, timers, log messages and every event (so nobody hears of a change
 * that did not happen). A `start` effect is the dispatcher's own and is skipped
 * here.
 */
export function writeEffects(ctx: EngineContext, effects: readonly Effect[], pump: () => void): AfterCommit {
  const after: AfterCommit = [];
  const rows = new Map<number, RunRecord>();
  const at = iso(ctx.clock.now());
  const transition = (runId: number, from: RunStatus, to: RunStatus, patch: RunPatch) => {
    const run = ctx.store.runs.transition(runId, to, patch, from);
    rows.set(runId, run);
    after.push(() => {
      if (to === "RETRYING") {
        const nextAttemptAt = run.next_attempt_at === null ? null : Date.parse(run.next_attempt_at);
        ctx.waiting.set(run.id, { id: run.id, job: run.job_name, cycleId: run.cycle_id, status: "RETRYING", nextAttemptAt });
      } else if (isTerminal(to)) {
        ctx.waiting.delete(run.id);
      }
      ctx.bus.emit("run:status", { run, from });
    });
  };
  for (const e of effects) {
    switch (e.kind) {
      case "transition":
        transition(e.runId, e.from, e.to, e.patch);
        break;
      case "create": {
        const run = ctx.store.runs.create({ ...e.run, created_at: at });
        after.push(() => {
          if (run.status === "PENDING") {
            ctx.waiting.set(run.id, { id: run.id, job: run.job_name, cycleId: run.cycle_id, status: "PENDING", nextAttemptAt: null });
          }
          ctx.bus.emit("run:status", { run, from: null });
        });
        break;
      }
      case "jobState":
        ctx.store.jobState.upsert(e.job, e.patch);
        break;
      case "logLine":
        ctx.store.logs.append(e.runId, e.stream, e.line, at);
        break;
      case "stop": {
        const attempt = ctx.attempts.get(e.runId);
        if (attempt) {
          after.push(() => attempt.stop(e.reason));
          break;
        }
        // Waiting out its retry delay: no process to stop, it ends FAILED now, with what follows a stopped run.
        const run = ctx.waiting.has(e.runId) ? ctx.store.runs.get(e.runId) : null;
        if (run?.status === "RETRYING") after.push(...writeEffects(ctx, decide({ kind: "stopped", reason: e.reason }, gatherFacts(ctx, run), ctx.clock.now(), ctx.random), pump));
        break;
      }
      case "notify": {
        const { event, runId, previousStatus } = e;
        after.push(() => {
          const run = rows.get(runId) ?? ctx.store.runs.get(runId);
          if (run) ctx.bus.emit("run:notify", { event, run, fallbackToFailure: event === "on_sla_breach", previousStatus });
        });
        break;
      }
      case "halt":
        // At once, not after the commit: the next decision of the same transaction must see it.
        // Idempotent, so a rolled-back halt is harmless: the retried write halts the cycle again.
        ctx.halted.add(e.cycleId);
        break;
      case "wake":
        after.push(() => void ctx.clock.setTimer(e.at, pump));
        break;
      case "log":
        after.push(() => ctx.log[e.level](e.fields, e.message));
        break;
      case "nonRun":
        ctx.store.nonRuns.record({ ...e.entry, at });
        break;
      case "start":
        break;
    }
  }
  return after;
}

/** Runs what follows a commit. */
export function afterCommit(after: AfterCommit): void {
  for (const fn of after) fn();
}

/** Writes the effects in one transaction, then runs what follows the commit. */
export function applyEffects(ctx: EngineContext, effects: readonly Effect[], pump: () => void): void {
  afterCommit(ctx.store.tx(() => writeEffects(ctx, effects, pump)));
}

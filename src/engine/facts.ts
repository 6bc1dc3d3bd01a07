import type { RunRecord, RunStatus } from "../store/types.js";
import { isTerminal as isTerminalStatus } from "../store/runStatus.js";
import { isPaused, type EngineContext } from "./context.js";
import type { Facts } from "./outcomes.js";

const NONE: readonly string[] = [];

/**
 * The facts decide() may use about `run`, read from the engine's state and
 * the store. The lists are read on first use and then kept for the decision.
 * `gateOpen` is the dispatcher's (only a ready PENDING run asks it).
 */
export function gatherFacts(ctx: EngineContext, run: RunRecord, gateOpen: () => boolean = () => true): Facts {
  let cycleRuns: RunRecord[] | null = null;
  return {
    run,
    job: ctx.project.jobs.get(run.job_name),
    cycle: {
      halted: ctx.halted.has(run.cycle_id),
      runs: () => (cycleRuns ??= startingAsRunning(ctx, ctx.store.runs.inCycle(run.cycle_id))),
    },
    downstreams: {
      of: (job) => ctx.downstreams.get(job) ?? NONE,
      job: (name) => ctx.project.jobs.get(name),
      paused: (name) => isPaused(ctx, name),
    },
    previousStatus: () => ctx.store.runs.lastCompletedStatus(run.job_name),
    othersActive: () => activeRunsOf(ctx, run.job_name, run.id),
    gateOpen,
    backfill: () => (run.backfill_id === null ? null : ctx.backfills.facts(run.backfill_id, activeRunsOf(ctx, run.job_name, run.id))),
  };
}

/** The RUNNING (an attempt in flight) and RETRYING (waiting) runs of a job, except `exceptId`. */
export function activeRunsOf(ctx: EngineContext, job: string, exceptId = -1): { id: number; status: RunStatus; pid: number | null }[] {
  const out: { id: number; status: RunStatus; pid: number | null }[] = [];
  for (const a of ctx.attempts.values()) if (a.job.name === job && a.run.id !== exceptId) out.push({ id: a.run.id, status: "RUNNING", pid: a.pid });
  for (const w of ctx.waiting.values()) if (w.job === job && w.status === "RETRYING" && w.id !== exceptId) out.push({ id: w.id, status: "RETRYING", pid: null });
  return out;
}

/**
 * A run whose process the kernel is starting (its attempt holds a pool slot, posix_spawn runs on a
 * worker thread) is still PENDING or RETRYING in the database until its start is recorded a turn
 * later: decide() sees it as what it is, RUNNING, so a halted cycle stops it rather than skip a run
 * whose process exists.
 */
function startingAsRunning(ctx: EngineContext, runs: RunRecord[]): RunRecord[] {
  if (ctx.attempts.size === 0) return runs;
  return runs.map((r) => (r.status !== "RUNNING" && ctx.attempts.has(r.id) && !isTerminalStatus(r.status) ? { ...r, status: "RUNNING" } : r));
}

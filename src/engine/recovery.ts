import { killGroup, ownsGroup } from "../executor/index.js";
import type { RunRecord } from "../store/types.js";
import { applyEffects } from "./apply.js";
import type { EngineContext } from "./context.js";
import { gatherFacts } from "./facts.js";
import { decide } from "./outcomes.js";

/**
 * Startup reconciliation (SPEC rule 9, CONTRACT §3). A run left RUNNING by a
 * previous daemon cannot be adopted (its output pipes are gone): its process
 * group is killed if anything of it is left, the run becomes FAILED
 * (`daemon restarted, process lost`) and the retry policy decides what
 * follows. PENDING and RETRYING runs rejoin the queue, a backfill's PENDING
 * slot runs its backfill's queue (in slot order, CONTRACT §7.3).
 */
export async function reconcile(ctx: EngineContext, pump: () => void): Promise<{ lost: number; resumed: number }> {
  const lost = ctx.store.runs.byStatus(["RUNNING"]);
  haltAgain(ctx, [...lost, ...ctx.store.runs.byStatus(["PENDING", "RETRYING"])]);
  await Promise.all(lost.map((run) => killLeftovers(ctx, run)));
  for (const run of lost) {
    // Read again: an earlier lost run's policy (skip, stop) may have changed it.
    const now = ctx.store.runs.get(run.id);
    if (now?.status !== "RUNNING") continue;
    applyEffects(ctx, decide({ kind: "lost" }, gatherFacts(ctx, now), ctx.clock.now(), ctx.random), pump);
  }
  for (const job of ctx.store.jobState.lockedJobs()) ctx.store.jobState.upsert(job, { lock_pid: null });
  const waiting = ctx.store.runs.byStatus(["PENDING", "RETRYING"]);
  let resumed = 0;
  for (const run of waiting) {
    if (run.status === "PENDING" && run.trigger === "backfill" && run.backfill_id !== null) continue; // BackfillQueue.load
    resumed++;
    ctx.waiting.set(run.id, {
      id: run.id,
      job: run.job_name,
      cycleId: run.cycle_id,
      status: run.status as "PENDING" | "RETRYING",
      nextAttemptAt: run.next_attempt_at ? Date.parse(run.next_attempt_at) : null,
    });
  }
  const backfill = ctx.backfills.load();
  if (lost.length > 0 || waiting.length > 0) {
    ctx.log.info({ lost: lost.length, resumed, backfill_waiting: backfill }, "reconciled runs left by the previous daemon");
  }
  return { lost: lost.length, resumed: resumed + backfill };
}

/**
 * Kills what is left of a lost run's process group (the group id is the
 * leader's pid). `ownsGroup` refuses a pid that was reused by another process.
 */
async function killLeftovers(ctx: EngineContext, run: RunRecord): Promise<void> {
  if (run.pid === null || !ownsGroup(run.pid, run.pid_start)) return;
  await killGroup(run.pid, ctx.daemon.executor.killGraceMs);
  ctx.log.warn({ job: run.job_name, run_id: run.id, pid: run.pid }, "killed the process group of a run lost by the previous daemon");
}

/** Ends of runs a person or policy stopped: not a failure that halts a cycle (see outcomes.ts). */
const STOPPED = /^(cancelled|replaced by run \d+|pipeline stopped|killed: .*)$/;

/**
 * The cycles an `on_failure: stop` job halted before the restart (the engine keeps them in memory only):
 * those of the runs still to go on, where a run of a job whose policy is `stop` ended FAILED (not
 * stopped by a person or a policy) and no manual run or retry joined the cycle since (a person carrying
 * on, as engine.runNow with a cycle and engine.retry do). Their runs then end as in a halted cycle.
 */
function haltAgain(ctx: EngineContext, active: readonly RunRecord[]): void {
  for (const cycleId of new Set(active.map((r) => r.cycle_id))) {
    const runs = ctx.store.runs.inCycle(cycleId);
    const halting = runs.filter(
      (r) => r.status === "FAILED" && ctx.project.jobs.get(r.job_name)?.onFailure === "stop" && (r.error === null || !STOPPED.test(r.error)),
    );
    if (halting.length === 0) continue;
    const since = halting.map((r) => r.finished_at ?? r.created_at).sort().at(-1)!;
    if (runs.some((r) => r.trigger === "manual" && r.created_at > since)) continue;
    ctx.halted.add(cycleId);
  }
}

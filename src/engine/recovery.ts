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

import type { JobConfig } from "../config/types.js";
import type { JobStateRow, RunPatch, RunRecord } from "../store/types.js";
import { createRun, isPaused, notify, nowIso, setStatus, type EngineContext } from "./context.js";
import type { Dispatcher } from "./dispatcher.js";
import { retryDelayMs } from "./retryDelay.js";

/**
 * What happens after an attempt: SPEC's transition table from RUNNING on,
 * retries, failure policies and dependency triggering (CONTRACT §3).
 */

export function succeed(
  ctx: EngineContext,
  pool: Dispatcher,
  run: RunRecord,
  job: JobConfig,
  patch: RunPatch,
  hcWarned: boolean,
  /** More job_state fields to write with last_success. */
  state: Partial<Omit<JobStateRow, "job_name">> = {},
): RunRecord {
  const previous = ctx.store.runs.lastFinished(job.name)?.status ?? null;
  const done = setStatus(ctx, run, "SUCCESS", patch);
  ctx.store.jobState.upsert(job.name, { ...state, last_success: done.finished_at });
  notify(ctx, "on_success", done, previous);
  // A healthcheck that fails with warn_only fires the on_sla_breach event (SPEC).
  if (hcWarned) notify(ctx, "on_sla_breach", done);
  triggerDownstream(ctx, done);
  pool.pump();
  return done;
}

/**
 * A FAILED attempt: retry while attempts remain (when `retryable`), else the
 * job's failure policy.
 */
export function afterFailure(ctx: EngineContext, pool: Dispatcher, run: RunRecord, job: JobConfig, retryable: boolean): void {
  if (retryable && run.attempt < 1 + job.retries) {
    const at = ctx.clock.now() + retryDelayMs(job.retryDelay, run.attempt, ctx.random);
    const retrying = setStatus(ctx, run, "RETRYING", { next_attempt_at: new Date(at).toISOString() });
    ctx.waiting.set(run.id, { id: run.id, job: job.name, cycleId: run.cycle_id, status: "RETRYING", nextAttemptAt: at });
    // Wake exactly at the retry instant rather than at the next whole-second tick.
    ctx.clock.setTimer(at, () => pool.pump());
    notify(ctx, "on_retry", retrying);
    return;
  }
  switch (job.onFailure) {
    case "alert":
      notify(ctx, "on_failure", run);
      return;
    case "skip": {
      const skipped = setStatus(ctx, run, "SKIPPED");
      skipDescendants(ctx, skipped);
      return;
    }
    case "stop":
      haltCycle(ctx, pool, run);
      return;
    case "ignore":
      ctx.log.info({ job: job.name, run_id: run.id, error: run.error }, "run failed (on_failure: ignore)");
      return;
  }
}

/**
 * When a run of U ends SUCCESS in cycle C, each dependency-triggered job D
 * downstream of U gets one PENDING run in C (CONTRACT §3). An existing live
 * or successful run of D in C is reused (its gate is checked again); a
 * FAILED or SKIPPED one is not, so a manual retry of U can still lead on.
 */
export function triggerDownstream(ctx: EngineContext, run: RunRecord): void {
  if (ctx.halted.has(run.cycle_id)) return;
  const downs = ctx.downstreams.get(run.job_name);
  if (!downs) return;
  const inCycle = ctx.store.runs.inCycle(run.cycle_id);
  for (const name of downs) {
    const job = ctx.project.jobs.get(name);
    if (!job || !job.dependencyTriggered) continue;
    if (isPaused(ctx, name)) {
      ctx.log.info({ job: name, upstream: run.job_name, cycle_id: run.cycle_id }, "job is paused: not triggered");
      continue;
    }
    const live = inCycle.some((r) => r.job_name === name && r.status !== "FAILED" && r.status !== "SKIPPED");
    if (live) continue;
    createRun(ctx, { job_name: name, trigger: "dependency", triggered_by: run.job_name, cycle_id: run.cycle_id }, job);
  }
}

/**
 * `on_failure: skip`: each dependency-triggered job downstream (transitively)
 * that would have run in the cycle gets a SKIPPED row there
 * (`error: upstream skipped`); an existing PENDING run is skipped instead.
 */
function skipDescendants(ctx: EngineContext, run: RunRecord): void {
  const inCycle = ctx.store.runs.inCycle(run.cycle_id);
  const queue: [string, string][] = (ctx.downstreams.get(run.job_name) ?? []).map((d) => [d, run.job_name]);
  const seen = new Set<string>();
  while (queue.length > 0) {
    const [name, upstream] = queue.shift()!;
    if (seen.has(name)) continue;
    seen.add(name);
    const job = ctx.project.jobs.get(name);
    if (!job || !job.dependencyTriggered) continue;
    const error = `upstream skipped: ${upstream}`;
    const existing = inCycle.filter((r) => r.job_name === name);
    const pending = existing.find((r) => r.status === "PENDING");
    if (pending) {
      ctx.waiting.delete(pending.id);
      setStatus(ctx, pending, "SKIPPED", { error, finished_at: nowIso(ctx) });
    } else if (existing.length === 0) {
      createRun(
        ctx,
        { job_name: name, trigger: "dependency", triggered_by: upstream, cycle_id: run.cycle_id, status: "SKIPPED", error },
        job,
      );
    } else {
      continue; // it already ran in this cycle through another path: leave it and what follows
    }
    for (const d of ctx.downstreams.get(name) ?? []) queue.push([d, name]);
  }
}

/**
 * `on_failure: stop`: the cycle halts. PENDING runs in it become SKIPPED,
 * RUNNING and RETRYING runs downstream of the failed job are cancelled
 * (`error: pipeline stopped`), and nothing new dispatches in the cycle.
 */
function haltCycle(ctx: EngineContext, pool: Dispatcher, run: RunRecord): void {
  ctx.halted.add(run.cycle_id);
  const downstream = descendants(ctx, run.job_name);
  for (const r of ctx.store.runs.inCycle(run.cycle_id)) {
    if (r.status === "PENDING") {
      ctx.waiting.delete(r.id);
      setStatus(ctx, r, "SKIPPED", { error: "pipeline stopped", finished_at: nowIso(ctx) });
    } else if ((r.status === "RUNNING" || r.status === "RETRYING") && downstream.has(r.job_name)) {
      pool.stopRun(r.id, "pipeline stopped");
    }
  }
  ctx.log.warn({ job: run.job_name, run_id: run.id, cycle_id: run.cycle_id }, "pipeline stopped (on_failure: stop)");
}

function descendants(ctx: EngineContext, job: string): Set<string> {
  const out = new Set<string>();
  const queue = [...(ctx.downstreams.get(job) ?? [])];
  while (queue.length > 0) {
    const name = queue.pop()!;
    if (out.has(name)) continue;
    out.add(name);
    queue.push(...(ctx.downstreams.get(name) ?? []));
  }
  return out;
}

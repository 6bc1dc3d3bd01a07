import { randomUUID } from "node:crypto";
import { checkParams, secretParamNames, type ParamIssue } from "../config/params.js";
import type { JobConfig } from "../config/types.js";
import { slotsBetween } from "../schedule/nextRun.js";
import { parseInstant } from "../shared/instant.js";
import type { BackfillRecord, ParamValue } from "../store/types.js";
import { nowIso, setStatuses, type EngineContext } from "./context.js";
import { conflict, notFound, validationFailed } from "./errors.js";

/**
 * Backfill (CONTRACT §7.3): the job's scheduled slots in [from, to), by the
 * rules of `svc next`, each made a run with trigger `backfill`, its own cycle
 * and `scheduled_at` = the slot. Every run is created at once, in one
 * transaction, so a restart resumes them and can neither lose a slot nor run
 * one twice; they then enter the dispatch queue in slot order through the
 * BackfillQueue, and decide() makes them wait for the job's other runs.
 */

export const MAX_BACKFILL_SLOTS = 10_000;
export const MAX_BACKFILL_PARALLEL = 100;

export interface BackfillRequest {
  from: string;
  to: string;
  reason?: string | null;
  params?: unknown;
  rerun?: boolean;
  parallel?: number;
  ignoreExclude?: boolean;
  triggeredBy: string;
}

/** One slot of the range, and what the backfill does with it. */
export interface PlannedSlot {
  utc: string;
  /** "2026-11-01T01:30:00-05:00 EST", as `svc next` prints it. */
  local: string;
  /** Where a DST rule decided the instant. */
  note: string | null;
  /** Why `exclude` removes it, or null (an excluded slot runs only with `ignore_exclude`). */
  excluded: string | null;
  /** The job's oldest run for this slot, or null. */
  existing_run: number | null;
  /** Whether the backfill makes a run of it: not excluded, and no run yet unless `rerun`. */
  will_run: boolean;
}

export interface BackfillPlan {
  job: string;
  timezone: string;
  from: string;
  to: string;
  slots: PlannedSlot[];
  /** How many runs it makes (slots with will_run). */
  runs: number;
  /** Slots of [from, to) after now, left to the scheduler (counted up to MAX_BACKFILL_SLOTS). */
  after_now: number;
  params: Record<string, ParamValue>;
}

/** Checks a request and lists its slots (the dry run). Throws validation_failed naming every bad field. */
export function planBackfill(ctx: EngineContext, job: JobConfig, req: BackfillRequest): BackfillPlan {
  const issues: ParamIssue[] = [];
  const from = parseInstant(req.from);
  const to = parseInstant(req.to);
  const instant = "must be an ISO 8601 date or instant with a zone, like 2026-11-01 or 2026-11-01T06:00:00Z";
  if (from === null) issues.push({ path: "from", message: `${instant} (got ${JSON.stringify(req.from)})` });
  if (to === null) issues.push({ path: "to", message: `${instant} (got ${JSON.stringify(req.to)})` });
  if (from !== null && to !== null && to <= from) issues.push({ path: "to", message: `must be later than from (the range is [from, to))` });
  const parallel = req.parallel ?? 1;
  if (!Number.isInteger(parallel) || parallel < 1 || parallel > MAX_BACKFILL_PARALLEL) {
    issues.push({ path: "parallel", message: `must be an integer from 1 to ${MAX_BACKFILL_PARALLEL}` });
  }
  const kind = job.schedule.frequency;
  if (kind === "manual" || kind === "after") {
    const why = kind === "manual" ? "frequency manual" : "it runs after its upstream jobs";
    issues.push({ path: "job", message: `has no schedule (${why}): a backfill runs a job's scheduled slots` });
  }
  const params = checkParams(job.params, req.params);
  if (!params.ok) issues.push(...params.errors);
  if (issues.length > 0) throw validationFailed(job.name, issues);

  // Slots after now are the scheduler's: a backfill run made of one would claim it, and the job would
  // not run at that slot's time. They are left out and counted (docs/CLI.md, "svc backfill").
  const now = ctx.clock.now();
  const end = Math.min(to!, now + 1);
  const later = to! > end ? slotsBetween(job.schedule, Math.max(from!, end), to!, MAX_BACKFILL_SLOTS) : { slots: [], truncated: false };
  if (from! >= end && later.slots.length > 0) {
    throw validationFailed(job.name, [
      {
        path: "from",
        message: `every slot of the range is still ahead (the first: ${later.slots[0]!.utc}), and the scheduler runs those at their time: a backfill runs past slots`,
      },
    ]);
  }
  const range = from! < end ? slotsBetween(job.schedule, from!, end, MAX_BACKFILL_SLOTS) : { slots: [], truncated: false };
  if (range.truncated) {
    throw validationFailed(job.name, [
      {
        path: "to",
        message: `the range holds more than ${MAX_BACKFILL_SLOTS.toLocaleString("en-US")} slots of job ${job.name} (the ${MAX_BACKFILL_SLOTS + 1}th would be after ${range.slots[range.slots.length - 1]!.utc}): split it into smaller backfills`,
      },
    ]);
  }
  const existing = ctx.store.backfills.runsForSlots(job.name, range.slots.map((s) => s.utc));
  const slots = range.slots.map((s): PlannedSlot => {
    const run = existing.get(s.utc) ?? null;
    const excluded = s.excluded !== null && !req.ignoreExclude;
    return { utc: s.utc, local: s.local, note: s.note, excluded: s.excluded, existing_run: run, will_run: !excluded && (run === null || req.rerun === true) };
  });
  return {
    job: job.name,
    timezone: job.schedule.timezone,
    from: new Date(from!).toISOString(),
    to: new Date(to!).toISOString(),
    slots,
    runs: slots.filter((s) => s.will_run).length,
    after_now: later.slots.length,
    params: params.ok ? params.values : {},
  };
}

/**
 * Records the backfill and all its runs in one transaction, announces them after the commit
 * and queues them. A slot without a run is also claimed as the job's scheduled slot
 * (`scheduled_for`), so the scheduler never runs it again; a rerun of a slot that has a run
 * leaves that claim where it is.
 */
export function createBackfill(ctx: EngineContext, job: JobConfig, req: BackfillRequest, plan: BackfillPlan): { backfill: BackfillRecord; runIds: number[] } {
  const { store } = ctx;
  const at = nowIso(ctx);
  const secretParams = secretParamNames(job.params);
  const todo = plan.slots.filter((s) => s.will_run);
  const { backfill, runs } = store.backfills.create(
    {
      job_name: job.name,
      from: plan.from,
      to: plan.to,
      reason: req.reason ?? null,
      params: plan.params,
      secretParams,
      rerun: req.rerun === true,
      ignore_exclude: req.ignoreExclude === true,
      parallel: req.parallel ?? 1,
      total: todo.length,
      created_by: req.triggeredBy,
      created_at: at,
    },
    todo.map((slot) => ({ scheduled_at: slot.utc, cycle_id: randomUUID(), scheduled_for: slot.existing_run === null ? slot.utc : null })),
    job.tags,
  );
  // Announced after the commit; each listener gets its own record (the store builds one per run).
  for (const run of runs) ctx.bus.emit("run:status", { run, from: null });
  ctx.backfills.add(
    backfill.id,
    job.name,
    backfill.parallel,
    runs.map((r) => ({ id: r.id, cycleId: r.cycle_id })),
  );
  ctx.log.info(
    { job: job.name, backfill_id: backfill.id, from: plan.from, to: plan.to, runs: runs.length, by: req.triggeredBy },
    `backfill ${backfill.id} of ${job.name}: ${runs.length} runs for ${plan.slots.length} slots`,
  );
  return { backfill: store.backfills.get(backfill.id) ?? backfill, runIds: runs.map((r) => r.id) };
}

/**
 * Cancels a backfill: its waiting runs (slot runs and dependency runs of its cycles that are
 * PENDING) end SKIPPED `backfill cancelled`, in one transaction with the mark; running ones finish.
 */
export function cancelBackfill(ctx: EngineContext, id: number, by: string): { backfill: BackfillRecord; skipped: number } {
  const { store } = ctx;
  const b = store.backfills.get(id);
  if (!b) throw notFound(`backfill ${id} not found (GET /api/backfills lists them)`);
  if (b.cancelled) throw conflict(`backfill ${id} was already cancelled at ${b.cancelled_at}`);
  if (b.done) throw conflict(`backfill ${id} is finished: nothing waits to be cancelled`);
  ctx.backfills.cancel(id);
  const at = nowIso(ctx);
  // A run whose process is being started (posix_spawn on a worker thread) is still PENDING in the database: it
  // runs, and finishes, as the running ones do.
  const waiting = store.backfills.waitingRuns(id).filter((run) => !ctx.attempts.has(run.id));
  setStatuses(
    ctx,
    waiting.map((run) => ({ run, to: "SKIPPED" as const, patch: { error: "backfill cancelled", finished_at: at } })),
    () => store.backfills.markCancelled(id, at),
  );
  for (const run of waiting) ctx.waiting.delete(run.id);
  ctx.log.info({ job: b.job, backfill_id: id, skipped: waiting.length, by }, `backfill ${id} of ${b.job} cancelled by ${by}`);
  return { backfill: store.backfills.get(id)!, skipped: waiting.length };
}

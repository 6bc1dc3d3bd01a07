/**
 * "What should run now": a pure function of the instant and the schedule
 * table, so it is tested with fixed instants (STYLE: Dagu's tick planner).
 * Only the scheduler writes the table; the planner never mutates it.
 */

export interface ScheduleEntry {
  job: string;
  /** The scheduled instant (epoch ms) of the job's next slot. */
  slotAt: number;
  /** slotAt plus this slot's random jitter (scheduler.schedule_jitter). */
  dueAt: number;
  paused: boolean;
  /** The slot is removed by `exclude` (CONTRACT §7.1): it passes with a log line and no run. */
  excluded: boolean;
}

export type PlanAction =
  /** Start a run for the slot. */
  | "run"
  /** The job is paused: the slot passes without a run. */
  | "paused"
  /** Noticed long after it was due (clock jump, suspended machine): catch-up rules decide. */
  | "late"
  /** `exclude` removes the slot: no run, one INFO line. */
  | "excluded";

export interface PlannedRun {
  job: string;
  slotAt: number;
  action: PlanAction;
}

/**
 * A slot noticed more than this long after its time counts as missed; with `scheduler.schedule_jitter`
 * the jitter is added (lateAfterMs): a slot's random delay never makes it late, whatever the next slot's.
 */
export const LATE_AFTER_MS = 60_000;

export function plan(now: number, entries: Iterable<ScheduleEntry>, lateAfterMs = LATE_AFTER_MS): PlannedRun[] {
  const due: (PlannedRun & { dueAt: number })[] = [];
  for (const e of entries) {
    if (e.dueAt > now) continue;
    const action: PlanAction = e.excluded ? "excluded" : e.paused ? "paused" : now - e.slotAt > lateAfterMs ? "late" : "run";
    due.push({ job: e.job, slotAt: e.slotAt, action, dueAt: e.dueAt });
  }
  // Earliest first, then by name: the dispatch queue is FIFO, so this order is the run order.
  due.sort((a, b) => a.dueAt - b.dueAt || (a.job < b.job ? -1 : a.job > b.job ? 1 : 0));
  return due.map(({ job, slotAt, action }) => ({ job, slotAt, action }));
}

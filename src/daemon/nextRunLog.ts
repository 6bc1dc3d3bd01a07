import type { ProjectConfig } from "../config/types.js";
import type { NextRunInfo } from "../engine/scheduler.js";
import { describeSlot } from "../schedule/nextRun.js";
import type { Logger } from "../shared/logger.js";
import type { Undo } from "./parts.js";

/** Startup "next run" lines logged per event-loop turn. */
const NEXT_RUN_LOG_SLICE = 200;

/**
 * SPEC rule 1: each job's next run, in UTC with the zone abbreviation.
 * Logged a slice per event-loop turn so that the API answers meanwhile
 * (the cost of the text formatter: docs/PERFORMANCE.md); it ends early when
 * the daemon begins to stop. Returns how to stop it.
 */
export function logNextRuns(next: NextRunInfo[], project: ProjectConfig, log: Logger, stopping: () => boolean): Undo {
  let i = 0;
  let pending: NodeJS.Immediate | null = null;
  const slice = (): void => {
    pending = null;
    const end = Math.min(next.length, i + NEXT_RUN_LOG_SLICE);
    for (; i < end; i++) {
      const { job, slot } = next[i]!;
      const zone = project.jobs.get(job)?.schedule.timezone;
      if (slot) log.info({ job, next_run: slot.utc, zone: slot.zoneAbbr, timezone: zone }, `next run of ${job}: ${describeSlot(slot)}`);
    }
    if (i < next.length && !stopping()) pending = setImmediate(slice);
  };
  slice();
  return () => {
    if (pending) clearImmediate(pending);
    pending = null;
  };
}

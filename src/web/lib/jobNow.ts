import type { RunRecord, RunStatus } from "./types.js";

export type ActiveRun = { id: number; status: "PENDING" | "RUNNING" | "RETRYING" };

/**
 * What a job is doing now: its active runs first (its newest run may be a SKIPPED one, refused at once by
 * `concurrency: forbid` while an older run still runs; docs/API.md), else its newest run. Every view that
 * shows a job's state reads it here (the overview, the graph, the job page), as `svc status` does.
 */
export function nowStatus(active: readonly ActiveRun[] | undefined, newest: RunRecord | null | undefined): RunStatus | undefined {
  for (const s of ["RUNNING", "RETRYING", "PENDING"] as const) if ((active ?? []).some((r) => r.status === s)) return s;
  return newest?.status;
}

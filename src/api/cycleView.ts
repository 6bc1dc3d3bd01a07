import type { ProjectConfig } from "../config/types.js";
import { gateBlockers, type GateBlocker } from "../engine/gate.js";
import type { ReadStore } from "../store/api.js";
import type { RunRecord } from "../store/types.js";

/**
 * `GET /api/cycles/:id`: every run of one cycle and whether the cycle has
 * settled, for `svc run --tag --wait` (which follows whole cycles) and
 * `svc why`. A cycle is settled when nothing in it can move on by itself:
 * no run RUNNING or RETRYING, and every PENDING run waits on a gate that
 * only a person can open (an upstream that ended without SUCCESS, or has no
 * run in the cycle). A PENDING run with an open gate waits for a pool slot:
 * not settled. Settled with PENDING runs means "stuck": `waiting` says on what.
 */
export interface CycleView {
  cycle_id: string;
  runs: RunRecord[];
  settled: boolean;
  waiting: { run_id: number; job: string; blocked_by: { job: string; kind: GateBlocker["kind"]; text: string }[] }[];
}

export function cycleView(project: ProjectConfig, store: ReadStore, cycleId: string): CycleView | null {
  const runs = store.runs.inCycle(cycleId);
  if (runs.length === 0) return null;
  const waiting: CycleView["waiting"] = [];
  let moving = false;
  for (const r of runs) {
    if (r.status === "RUNNING" || r.status === "RETRYING") moving = true;
    if (r.status !== "PENDING") continue;
    const job = project.jobs.get(r.job_name);
    const blockers = job ? gateBlockers(job.upstreams, runs, (j) => store.runs.lastFinished(j)) : [];
    if (blockers.length === 0 || blockers.some((b) => b.kind === "active")) moving = true;
    waiting.push({ run_id: r.id, job: r.job_name, blocked_by: blockers.map((b) => ({ job: b.job, kind: b.kind, text: b.text })) });
  }
  return { cycle_id: cycleId, runs, settled: !moving, waiting };
}

import { api, ApiError, seg } from "./api.js";
import type { OutputRow, RunRecord, TableResponse } from "./types.js";

export interface CycleData {
  /** Every run of the cycle, oldest first. */
  runs: RunRecord[];
  /** Every output captured in the cycle. */
  outputs: OutputRow[];
}

const PAGE = 100;
/** A cycle of more runs than this is shown in part (a DAG of 10,000 jobs triggered at once). */
const MAX_PAGES = 50;

/**
 * The runs of a trigger chain: `GET /api/db/job_runs?cycle_id=` page by page
 * (an addition to CONTRACT §4 made for these views). Rows are kept only if
 * they really carry the cycle, so an API that ignored the filter cannot
 * mislead. An API that rejects the filter (400) gets the runs named by the
 * cycle's captured outputs instead (`/api/db/run_outputs?cycle_id=`, in the
 * contract).
 */
export async function cycleRuns(cycleId: string): Promise<RunRecord[]> {
  try {
    const runs: RunRecord[] = [];
    for (let page = 1; page <= MAX_PAGES; page++) {
      const p = await api.get<TableResponse<RunRecord>>("api/db/job_runs", { cycle_id: cycleId, page_size: PAGE, page, sort: "id", order: "asc" });
      runs.push(...p.rows.filter((r) => r.cycle_id === cycleId));
      if (p.rows.length < PAGE || page * PAGE >= p.total) break;
    }
    return runs;
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 400) throw e;
  }
  const outputs = await cycleOutputs(cycleId);
  const ids = [...new Set(outputs.map((o) => o.run_id))];
  const runs = await Promise.all(ids.map((id) => api.get<RunRecord>(`api/runs/${seg(id)}`).catch(() => null)));
  return runs.filter((r): r is RunRecord => r !== null).sort((a, b) => a.id - b.id);
}

export async function cycleOutputs(cycleId: string): Promise<OutputRow[]> {
  const page = await api.get<TableResponse<OutputRow>>("api/db/run_outputs", { cycle_id: cycleId, limit: 1000 });
  return page.rows;
}

export async function loadCycle(cycleId: string): Promise<CycleData> {
  const [runs, outputs] = await Promise.all([cycleRuns(cycleId), cycleOutputs(cycleId)]);
  return { runs, outputs };
}

/** The run that stands for each job in the cycle: its latest (a manual retry adds a run to the same cycle). */
export function latestByJob(runs: readonly RunRecord[]): Map<string, RunRecord> {
  const out = new Map<string, RunRecord>();
  for (const r of runs) {
    const prev = out.get(r.job_name);
    if (!prev || r.id > prev.id) out.set(r.job_name, r);
  }
  return out;
}

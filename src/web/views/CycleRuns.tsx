import { useEffect, useState } from "preact/hooks";
import { api, ApiError, seg } from "../lib/api.js";
import type { OutputRow, RunRecord, TableResponse } from "../lib/types.js";
import { href } from "../lib/router.js";
import { RunStatusBadge } from "../components/StatusBadge.js";
import { Empty, Loading } from "../components/States.js";
import { Time } from "../components/Time.js";

/**
 * The other runs of a trigger chain: `GET /api/db/job_runs?cycle_id=` (an
 * addition to CONTRACT §4 made for this view). Rows are kept only if they
 * really carry the cycle, so an API that ignored the filter cannot mislead.
 * An API that rejects the filter (400) gets the runs named by the cycle's
 * captured outputs instead (`/api/db/run_outputs?cycle_id=`, in the contract).
 */
async function loadCycle(cycleId: string): Promise<RunRecord[]> {
  try {
    const page = await api.get<TableResponse<RunRecord>>("api/db/job_runs", { cycle_id: cycleId, page_size: 100, sort: "id", order: "asc" });
    return page.rows.filter((r) => r.cycle_id === cycleId);
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 400) throw e;
  }
  const outputs = await api.get<TableResponse<OutputRow>>("api/db/run_outputs", { cycle_id: cycleId, limit: 100 });
  const ids = [...new Set(outputs.rows.map((o) => o.run_id))];
  const runs = await Promise.all(ids.map((id) => api.get<RunRecord>(`api/runs/${seg(id)}`).catch(() => null)));
  return runs.filter((r): r is RunRecord => r !== null).sort((a, b) => a.id - b.id);
}

export function CycleRuns({ run }: { run: RunRecord }) {
  const [runs, setRuns] = useState<RunRecord[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    loadCycle(run.cycle_id).then(
      (r) => live && setRuns(r),
      (e: unknown) => live && setError(e instanceof Error ? e.message : String(e)),
    );
    return () => {
      live = false;
    };
  }, [run.cycle_id, run.status]);
  if (error) return <p class="err-text">Could not list the cycle: {error}</p>;
  if (!runs) return <Loading what="Finding the cycle's runs" />;
  const others = runs.filter((r) => r.id !== run.id);
  if (others.length === 0) return <Empty>No other runs found in this cycle.</Empty>;
  return (
    <ul class="cycle-list">
      {others.map((r) => (
        <li key={r.id}>
          <a href={href(`/runs/${r.id}`)}>
            #{r.id} {r.job_name}
          </a>{" "}
          <RunStatusBadge status={r.status} /> <Time iso={r.started_at ?? r.created_at} relative />
        </li>
      ))}
    </ul>
  );
}

import { useEffect, useState } from "preact/hooks";
import { api, ApiError, seg } from "../lib/api.js";
import type { OutputRow, RunRecord, TableResponse } from "../lib/types.js";
import { href } from "../lib/router.js";
import { RunStatusBadge } from "../components/StatusBadge.js";
import { Empty, Loading } from "../components/States.js";
import { Time } from "../components/Time.js";

/**
 * The other runs of a trigger chain. CONTRACT §4 has no cycle filter on run
 * lists, so this asks `/api/db/job_runs?cycle_id=` (kept only if the rows
 * really carry that cycle: an API that ignores the filter cannot mislead)
 * and adds every run named by the cycle's captured outputs
 * (`/api/db/run_outputs?cycle_id=`, which the contract has).
 */
async function loadCycle(cycleId: string): Promise<RunRecord[]> {
  const found = new Map<number, RunRecord>();
  const runs = api
    .get<TableResponse<RunRecord>>("api/db/job_runs", { cycle_id: cycleId, page_size: 100 })
    .then((r) => r.rows.filter((x) => x.cycle_id === cycleId).forEach((x) => found.set(x.id, x)))
    .catch((e: unknown) => {
      if (!(e instanceof ApiError) || e.status !== 400) throw e;
    });
  const outputs = api
    .get<TableResponse<OutputRow>>("api/db/run_outputs", { cycle_id: cycleId, limit: 100 })
    .then((r) => [...new Set(r.rows.map((o) => o.run_id))]);
  const [, ids] = await Promise.all([runs, outputs]);
  const missing = ids.filter((id) => !found.has(id));
  const more = await Promise.all(missing.map((id) => api.get<RunRecord>(`api/runs/${seg(id)}`).catch(() => null)));
  for (const r of more) if (r) found.set(r.id, r);
  return [...found.values()].sort((a, b) => a.id - b.id);
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

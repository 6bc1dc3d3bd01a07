import { useEffect, useState } from "preact/hooks";
import { cycleRuns } from "../lib/cycle.js";
import type { RunRecord } from "../lib/types.js";
import { href } from "../lib/router.js";
import { RunStatusBadge } from "../components/StatusBadge.js";
import { Empty, Loading } from "../components/States.js";
import { Time } from "../components/Time.js";

export function CycleRuns({ run }: { run: RunRecord }) {
  const [runs, setRuns] = useState<RunRecord[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    cycleRuns(run.cycle_id).then(
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
  const graph = (
    <p>
      <a href={href("/graph", { cycle: run.cycle_id })}>Show this cycle's graph</a>
    </p>
  );
  if (others.length === 0)
    return (
      <>
        <Empty>No other runs found in this cycle.</Empty>
        {graph}
      </>
    );
  return (
    <>
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
    {graph}
    </>
  );
}

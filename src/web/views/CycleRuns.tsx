import { useEffect, useState } from "preact/hooks";
import { cycleRuns } from "../lib/cycle.js";
import { isTerminal, type RunRecord } from "../lib/types.js";
import { href } from "../lib/router.js";
import { RunStatusBadge } from "../components/StatusBadge.js";
import { Empty, Loading } from "../components/States.js";
import { Time } from "../components/Time.js";

/** While a run of the cycle is not over (or a load failed), look again this often. */
const CYCLE_POLL_MS = 3_000;

/**
 * The other runs of the run's cycle. Reloaded while any run of the cycle is not over (downstream runs
 * progress, a retry adds one) and after a failed load; a finished cycle no longer changes.
 */
export function CycleRuns({ run, version = 0 }: { run: RunRecord; /** Changed by the page after an action that may add a run (a retry). */ version?: number }) {
  const [runs, setRuns] = useState<RunRecord[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = () =>
      cycleRuns(run.cycle_id).then(
        (r) => {
          if (!live) return;
          setRuns(r);
          setError(null);
          if (r.some((x) => !isTerminal(x.status))) timer = setTimeout(load, CYCLE_POLL_MS);
        },
        (e: unknown) => {
          if (!live) return;
          setError(e instanceof Error ? e.message : String(e));
          timer = setTimeout(load, CYCLE_POLL_MS);
        },
      );
    void load();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [run.cycle_id, run.status, version]);
  if (error && !runs) return <p class="err-text">Could not list the cycle: {error}</p>;
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

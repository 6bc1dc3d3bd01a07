import { href } from "../lib/router.js";
import { fmtDuration, runDuration, shortId } from "../lib/format.js";
import type { RunRecord } from "../lib/types.js";
import { Badge, HealthBadge, RunStatusBadge } from "./StatusBadge.js";
import { Table, type Column, type SortState } from "./Table.js";
import { Time } from "./Time.js";
import { seg } from "../lib/api.js";
import { hasParams, ParamValues } from "./ParamValues.js";

/**
 * Columns of a run list; `job` adds the job name (audit, database views), `params` the run's
 * parameter values. A backfill run's trigger links to its backfill's page.
 */
export function runColumns(opts: { job?: boolean; cycle?: boolean; sortable?: boolean; params?: boolean } = {}): Column<RunRecord>[] {
  const s = opts.sortable ?? false;
  const cols: (Column<RunRecord> | false)[] = [
    { key: "id", label: "Run", sortable: s, render: (r) => <a href={href(`/runs/${r.id}`)}>#{r.id}</a> },
    !!opts.job && {
      key: "job_name",
      label: "Job",
      sortable: s,
      render: (r) => <a href={href(`/jobs/${seg(r.job_name)}`)}>{r.job_name}</a>,
    },
    { key: "status", label: "Status", sortable: s, render: (r) => <RunStatusBadge status={r.status} /> },
    { key: "attempt", label: "Attempt", sortable: s, class: "num" },
    {
      key: "trigger",
      label: "Trigger",
      sortable: s,
      render: (r) =>
        r.backfill_id !== null && r.backfill_id !== undefined ? (
          <a href={href(`/backfills/${r.backfill_id}`)} title={`Open backfill #${r.backfill_id}`}>
            {r.trigger} #{r.backfill_id}
          </a>
        ) : (
          r.trigger
        ),
    },
    !!opts.params && { key: "params", label: "Params", render: (r) => <ParamValues params={r.params} /> },
    { key: "triggered_by", label: "By", sortable: s },
    { key: "started_at", label: "Started", sortable: s, render: (r) => <Time iso={r.started_at ?? r.created_at} /> },
    {
      key: "duration_ms",
      label: "Duration",
      sortable: s,
      class: "num",
      render: (r) => fmtDuration(runDuration(r)),
    },
    { key: "exit_code", label: "Exit", sortable: s, class: "num" },
    {
      key: "sla_breached",
      label: "SLA",
      sortable: s,
      render: (r) => (r.sla_breached ? <Badge tone="warn">breached</Badge> : <span class="muted">ok</span>),
    },
    { key: "hc_status", label: "Healthcheck", sortable: s, render: (r) => <HealthBadge status={r.hc_status} /> },
    !!opts.cycle && {
      key: "cycle_id",
      label: "Cycle",
      sortable: s,
      render: (r) => (
        <a href={href("/graph", { cycle: r.cycle_id })} title={`Show the graph of cycle ${r.cycle_id}`}>
          <code>{shortId(r.cycle_id)}</code>
        </a>
      ),
    },
    {
      key: "reason",
      label: "Reason / error",
      render: (r) => (
        <>
          {r.reason && <div>{r.reason}</div>}
          {r.error && <div class="err-text">{r.error}</div>}
        </>
      ),
    },
  ];
  return cols.filter((c): c is Column<RunRecord> => c !== false);
}

export function RunsTable({
  runs,
  job,
  cycle,
  sort,
  onSort,
  caption,
}: {
  runs: RunRecord[];
  job?: boolean;
  cycle?: boolean;
  sort?: SortState;
  onSort?: (key: string) => void;
  caption?: string;
}) {
  return (
    <Table
      columns={runColumns({ job, cycle, sortable: !!onSort, params: runs.some(hasParams) })}
      rows={runs}
      rowKey={(r) => r.id}
      sort={sort}
      onSort={onSort}
      caption={caption}
    />
  );
}

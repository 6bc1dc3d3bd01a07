import type { ComponentChildren } from "preact";
import { seg } from "../lib/api.js";
import { href } from "../lib/router.js";
import { shortId } from "../lib/format.js";
import type { AlertRow, JobStateRow, OutputRow, RunRecord } from "../lib/types.js";
import type { Column } from "../components/Table.js";
import type { FilterField } from "../components/FilterForm.js";
import { runColumns } from "../components/RunsTable.js";
import { AlertBadge, Badge, PausedBadge, StreamLabel } from "../components/StatusBadge.js";
import { Time } from "../components/Time.js";

/** What a row button needs: POST `path`, then reload; `label` names it in notices and errors. */
export interface RowActions {
  post: (label: string, path: string) => void;
  busy: boolean;
}

export interface DbTable {
  name: string;
  title: string;
  /**
   * `page`: page/page_size with `sort`/`order` (CONTRACT §4); `slice`:
   * limit/offset where SPEC names them. The API sorts slices newest first
   * and takes no sort, so their headers are plain.
   */
  paging: "page" | "slice";
  filters: FilterField[];
  columns: (act: RowActions) => Column<Record<string, unknown>>[];
  rowKey: (row: Record<string, unknown>, i: number) => string | number;
  note?: ComponentChildren;
}

const STATUS_OPTS: [string, string][] = ["PENDING", "RUNNING", "SUCCESS", "FAILED", "RETRYING", "SKIPPED"].map((s) => [s.toLowerCase(), s]);
const TRIGGER_OPTS: [string, string][] = ["manual", "schedule", "dependency", "backfill"].map((t) => [t, t]);
const STREAM_OPTS: [string, string][] = ["stdout", "stderr", "healthcheck"].map((t) => [t, t]);
const jobField: FilterField = { name: "job", label: "Job", type: "text", placeholder: "job name" };

type Any = Record<string, unknown>;
const as = <T,>(cols: Column<T>[]) => cols as unknown as Column<Any>[];
const jobLink = (name: unknown) => <a href={href(`/jobs/${seg(String(name))}`)}>{String(name)}</a>;
const runLink = (id: unknown) => (id === null || id === undefined ? <span class="muted">—</span> : <a href={href(`/runs/${seg(String(id))}`)}>#{String(id)}</a>);
const sortable = <T,>(cols: Column<T>[], except: string[] = []) => cols.map((c) => ({ ...c, sortable: !except.includes(c.key) }));

const jobStateColumns = (act: RowActions): Column<JobStateRow>[] => [
  ...sortable<JobStateRow>([
    { key: "job_name", label: "Job", render: (r) => jobLink(r.job_name) },
    { key: "last_success", label: "Last success", render: (r) => <Time iso={r.last_success} /> },
    { key: "last_failure", label: "Last failure", render: (r) => <Time iso={r.last_failure} /> },
    { key: "next_run", label: "Next run", render: (r) => <Time iso={r.next_run} /> },
    { key: "lock_pid", label: "Lock pid", class: "num" },
    { key: "paused", label: "Paused", render: (r) => <PausedBadge paused={r.paused} /> },
  ]),
  {
    key: "_actions",
    label: "Actions",
    render: (r) => (
      <button
        type="button"
        disabled={act.busy || r.lock_pid === null}
        title={r.lock_pid === null ? "not locked" : "Set lock_pid to null (refused while the job is RUNNING)"}
        onClick={() => act.post(`Clear lock of ${r.job_name}`, `api/db/job_state/${seg(r.job_name)}/clear_lock`)}
      >
        Clear lock
      </button>
    ),
  },
];

export const DB_TABLES: DbTable[] = [
  {
    name: "job_runs",
    title: "Runs",
    paging: "page",
    filters: [
      jobField,
      { name: "status", label: "Status", type: "select", options: STATUS_OPTS },
      { name: "trigger", label: "Trigger", type: "select", options: TRIGGER_OPTS },
      { name: "since", label: "Since", type: "date" },
      { name: "until", label: "Until", type: "date" },
      { name: "sla_breached", label: "SLA", type: "select", options: [["1", "breached"], ["0", "met"]] },
    ],
    columns: () => as<RunRecord>(sortable(runColumns({ job: true, cycle: true, params: true }), ["reason", "params"])),
    rowKey: (r) => Number(r.id),
  },
  {
    name: "job_state",
    title: "Job state",
    paging: "page",
    filters: [],
    columns: (act) => as(jobStateColumns(act)),
    rowKey: (r) => String(r.job_name),
    note: "Clearing a lock is refused (409) while the job is RUNNING.",
  },
  {
    name: "run_logs",
    title: "Logs",
    paging: "slice",
    filters: [
      { name: "run_id", label: "Run id", type: "number" },
      jobField,
      { name: "stream", label: "Stream", type: "select", options: STREAM_OPTS },
      { name: "q", label: "Full text", type: "search", placeholder: "words in the line" },
    ],
    columns: () =>
      [
        { key: "run_id", label: "Run", render: (r: Any) => runLink(r.run_id) },
        { key: "job_name", label: "Job", render: (r) => (r.job_name ?? r.job ? jobLink(r.job_name ?? r.job) : "—") },
        { key: "seq", label: "Seq", class: "num" },
        { key: "ts", label: "Time", render: (r) => <Time iso={r.ts as string} /> },
        { key: "stream", label: "Stream", render: (r) => <StreamLabel stream={String(r.stream)} /> },
        { key: "line", label: "Line", class: "mono wrap" },
      ] as Column<Any>[],
    rowKey: (r, i) => `${String(r.run_id)}:${String(r.seq ?? i)}`,
  },
  {
    name: "run_outputs",
    title: "Outputs",
    paging: "slice",
    filters: [
      { name: "run_id", label: "Run id", type: "number" },
      jobField,
      { name: "cycle_id", label: "Cycle", type: "text", placeholder: "cycle UUID" },
      { name: "var_name", label: "Variable", type: "text" },
    ],
    columns: () =>
      as<OutputRow>([
          { key: "id", label: "Id", class: "num" },
          { key: "run_id", label: "Run", render: (r) => runLink(r.run_id) },
          { key: "job_name", label: "Job", render: (r) => jobLink(r.job_name) },
          { key: "var_name", label: "Variable", render: (r) => <code>{r.var_name}</code> },
          { key: "value", label: "Value", class: "mono wrap" },
          { key: "cycle_id", label: "Cycle", render: (r) => <a href={href("/db/run_outputs", { cycle_id: r.cycle_id })} title={r.cycle_id}>{shortId(r.cycle_id)}</a> },
          { key: "created_at", label: "Captured", render: (r) => <Time iso={r.created_at} /> },
      ]),
    rowKey: (r) => Number(r.id),
  },
  {
    name: "alerts",
    title: "Alerts",
    paging: "slice",
    filters: [jobField, { name: "status", label: "Status", type: "select", options: [["pending", "pending"], ["delivered", "delivered"], ["failed", "failed"]] }],
    columns: (act) =>
      as<AlertRow>([
          { key: "id", label: "Id", class: "num" },
          { key: "job_name", label: "Job", render: (r) => jobLink(r.job_name) },
          { key: "run_id", label: "Run", render: (r) => runLink(r.run_id) },
          { key: "event", label: "Event" },
          { key: "channel", label: "Channel", render: (r) => <code>{r.channel}</code> },
          { key: "status", label: "Status", render: (r) => <AlertBadge status={r.status} /> },
          { key: "attempts", label: "Attempts", class: "num" },
          { key: "last_attempt_at", label: "Last attempt", render: (r) => <Time iso={r.last_attempt_at} /> },
          { key: "error", label: "Error", render: (r) => (r.error ? <span class="err-text">{r.error}</span> : <span class="muted">—</span>) },
        {
          key: "_actions",
          label: "Actions",
          render: (r) =>
            r.status === "failed" ? (
              <button type="button" disabled={act.busy} onClick={() => act.post(`Retry of alert ${r.id}`, `api/db/alerts/${seg(r.id)}/retry`)}>
                Retry
              </button>
            ) : (
              <span class="muted">—</span>
            ),
        },
      ]),
    rowKey: (r) => Number(r.id),
  },
  {
    name: "state",
    title: "Live state",
    paging: "page",
    filters: [],
    columns: () =>
      sortable<Any>([
        { key: "job_name", label: "Job", render: (r) => jobLink(r.job_name) },
        { key: "paused", label: "Paused", render: (r) => <PausedBadge paused={r.paused as boolean} /> },
        {
          key: "running_run_ids",
          label: "Running",
          render: (r) => {
            const ids = Array.isArray(r.running_run_ids) ? (r.running_run_ids as number[]) : [];
            return ids.length ? ids.map((id) => <span key={id}>{runLink(id)} </span>) : <Badge tone="muted">idle</Badge>;
          },
        },
        { key: "next_run_local", label: "Next run (job zone)" },
        { key: "next_run", label: "Next run (local)", render: (r) => <Time iso={r.next_run as string | null} /> },
        { key: "last_success", label: "Last success", render: (r) => <Time iso={r.last_success as string | null} /> },
        { key: "last_failure", label: "Last failure", render: (r) => <Time iso={r.last_failure as string | null} /> },
        { key: "lock_pid", label: "Lock pid", class: "num" },
      ], ["running_run_ids", "next_run_local"]),
    rowKey: (r) => String(r.job_name),
  },
];

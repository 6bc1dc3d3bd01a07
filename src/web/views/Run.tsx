import { useEffect, useState } from "preact/hooks";
import { qs, seg } from "../lib/api.js";
import { useApi } from "../lib/useApi.js";
import { href } from "../lib/router.js";
import { fmtDuration, runDuration } from "../lib/format.js";
import { isTerminal, type JobDetail, type OutputRow, type RunRecord } from "../lib/types.js";
import { Loaded, Empty } from "../components/States.js";
import { KeyValues } from "../components/KeyValues.js";
import { HealthBadge, RunStatusBadge, SlaBadge } from "../components/StatusBadge.js";
import { Time } from "../components/Time.js";
import { Table } from "../components/Table.js";
import { JobActions } from "../components/JobActions.js";
import { ParamValues } from "../components/ParamValues.js";
import { RunDialog } from "../components/RunDialog.js";
import { LogView } from "./LogView.js";
import { CycleRuns } from "./CycleRuns.js";

function Outputs({ run }: { run: RunRecord }) {
  const outputs = useApi<{ outputs: OutputRow[] }>(`api/runs/${seg(run.id)}/outputs`);
  // Outputs are captured as an attempt ends: look again when the status moves.
  const { reload } = outputs;
  const [seen, setSeen] = useState(`${run.status}-${run.attempt}`);
  useEffect(() => {
    const now = `${run.status}-${run.attempt}`;
    if (now !== seen) {
      setSeen(now);
      void reload();
    }
  }, [run.status, run.attempt]);
  return (
    <Loaded state={outputs} what="Loading outputs">
      {({ outputs: rows }) =>
        rows.length === 0 ? (
          <Empty>No outputs captured.</Empty>
        ) : (
          <Table
            columns={[
              { key: "var_name", label: "Variable", render: (o) => <code>{o.var_name}</code> },
              { key: "value", label: "Value", render: (o) => <code class="wrap">{o.value}</code> },
              { key: "created_at", label: "Captured", render: (o) => <Time iso={o.created_at} /> },
            ]}
            rows={rows}
            rowKey={(o) => o.var_name}
            caption="Captured outputs"
          />
        )
      }
    </Loaded>
  );
}

function Record({ run }: { run: RunRecord }) {
  return (
    <KeyValues
      items={[
        ["Job", <a href={href(`/jobs/${seg(run.job_name)}`)}>{run.job_name}</a>],
        ["Status", <RunStatusBadge status={run.status} />],
        ["Exit code", run.exit_code ?? (isTerminal(run.status) ? "none (signal)" : null)],
        ["Duration", fmtDuration(runDuration(run))],
        ["Attempt", run.attempt],
        ["Trigger", run.trigger],
        ["Triggered by", run.triggered_by],
        ["Reason", run.reason],
        ["Params", <ParamValues params={run.params} />],
        // The slot the run is for (SVC_SCHEDULED_AT): scheduled, catch-up, backfill runs and their cycles.
        ["Scheduled at", run.scheduled_at ?? run.scheduled_for ? <Time iso={run.scheduled_at ?? run.scheduled_for} /> : null],
        [
          "Backfill",
          run.backfill_id !== null && run.backfill_id !== undefined ? <a href={href(`/backfills/${run.backfill_id}`)}>backfill #{run.backfill_id}</a> : null,
        ],
        ["Cycle", <code>{run.cycle_id}</code>],
        ["SLA", <SlaBadge breached={run.sla_breached} />],
        ["Healthcheck", <HealthBadge status={run.hc_status} />],
        ["Created", <Time iso={run.created_at} />],
        ["Started", <Time iso={run.started_at} />],
        ["Finished", <Time iso={run.finished_at} />],
        ["Next attempt", run.next_attempt_at ? <Time iso={run.next_attempt_at} /> : null],
        ["Error", run.error ? <span class="err-text">{run.error}</span> : null],
      ]}
    />
  );
}

export function RunView({ id }: { id: number }) {
  const [poll, setPoll] = useState(2000);
  const [again, setAgain] = useState(false);
  const [cycleVersion, setCycleVersion] = useState(0);
  const run = useApi<RunRecord>(`api/runs/${seg(id)}`, poll);
  const data = run.data;
  // Once terminal the record no longer changes: stop polling it.
  useEffect(() => setPoll(isTerminal(data?.status) ? 0 : 2000), [data?.status]);
  // Which run each of the job's operations would act on: retry its newest, skip its oldest PENDING, cancel every active one.
  const jobNow = useApi<JobDetail>(data ? `api/jobs/${seg(data.job_name)}${qs({ runs: 1, next: 0 })}` : null, 5000);
  const pending = (jobNow.data?.active_runs ?? []).filter((a) => a.status === "PENDING").map((a) => a.id);
  const oldestPending = pending.length > 0 ? Math.min(...pending) : null;
  const going = (jobNow.data?.active_runs ?? []).filter((a) => a.status === "RUNNING" || a.status === "RETRYING").length;
  return (
    <section>
      <p class="crumbs">
        <a href="#/">Jobs</a> / {data ? <a href={href(`/jobs/${seg(data.job_name)}`)}>{data.job_name}</a> : "…"} / run #{id}
      </p>
      <Loaded state={run} what={`Loading run #${id}`}>
        {(r) => (
          <>
            <div class="view-head">
              <h1>Run #{r.id}</h1>
              <RunStatusBadge status={r.status} />
              <span class="sub">{r.job_name}</span>
              <div class="head-actions">
                <button type="button" onClick={() => setAgain(true)} title="A new manual run of the job, starting from this run's params">
                  Run again…
                </button>
              </div>
            </div>
            <RunDialog job={again ? r.job_name : null} from={{ id: r.id, params: r.params }} onClose={() => setAgain(false)} />
            <JobActions
              job={r.job_name}
              allowed={{
                // The job's operations act on one run of their own (CONTRACT §3): offered here only when it is this one.
                retry: r.status === "FAILED" && jobNow.data?.runs[0]?.id === r.id,
                cancel: r.status === "RUNNING" || r.status === "RETRYING",
                skip: r.status === "PENDING" && oldestPending === r.id,
              }}
              labels={going > 1 ? { cancel: `Cancel all ${going} runs of ${r.job_name}` } : {}}
              onDone={() => {
                void run.reload();
                void jobNow.reload();
                setCycleVersion((v) => v + 1);
              }}
            />
            <div class="grid2">
              <section class="card">
                <h2>Record</h2>
                <Record run={r} />
              </section>
              <div>
                <section class="card">
                  <h2>Outputs</h2>
                  <Outputs run={r} />
                </section>
                <section class="card">
                  <h2>Same cycle</h2>
                  <CycleRuns run={r} version={cycleVersion} />
                </section>
              </div>
            </div>
            <section class="card">
              <h2>Logs</h2>
              <LogView runId={r.id} onEnd={() => void run.reload()} />
            </section>
          </>
        )}
      </Loaded>
    </section>
  );
}

import { useEffect, useState } from "preact/hooks";
import { api, qs, seg } from "../lib/api.js";
import { useAction, useApi } from "../lib/useApi.js";
import { patchQuery, type Route } from "../lib/router.js";
import type { JobDetail, RunRecord } from "../lib/types.js";
import { notify } from "../lib/notices.js";
import { Loaded, Empty, ErrorBox } from "../components/States.js";
import { KeyValues, JsonBlock } from "../components/KeyValues.js";
import { Badge, PausedBadge, RunStatusBadge } from "../components/StatusBadge.js";
import { Time } from "../components/Time.js";
import { RunsTable } from "../components/RunsTable.js";
import { JobActions } from "../components/JobActions.js";
import { RunDialog } from "../components/RunDialog.js";
import { BackfillDialog } from "../components/BackfillDialog.js";
import { BackfillsTable } from "./Backfill.js";
import { lazy } from "../components/Lazy.js";
import { nowStatus } from "../lib/jobNow.js";

const DurationChart = lazy(() => import("./DurationChart.js"), "the chart");
const UpcomingPanel = lazy(() => import("./upcoming/Panel.js"), "the next runs");
const STEP = 20;
const MAX_RUNS = 500;

function configValue(v: unknown) {
  if (v === null || v === undefined) return null;
  if (Array.isArray(v) && v.every((x) => typeof x !== "object" || x === null)) {
    return v.length ? <code>{v.map(String).join(", ")}</code> : <span class="muted">none</span>;
  }
  if (typeof v === "object") return <JsonBlock value={v} />;
  return <code>{String(v)}</code>;
}

function Config({ job }: { job: Record<string, unknown> }) {
  const entries = Object.entries(job).filter(([k]) => k !== "name");
  return <KeyValues items={entries.map(([k, v]) => [k, configValue(v)])} />;
}

/** A job with a schedule (not `manual`, not `after:`): the only kind a backfill can run (CONTRACT §7.3). */
function scheduled(job: Record<string, unknown>): boolean {
  const f = job.frequency;
  return typeof f === "string" && f !== "manual" && !f.startsWith("after:");
}

function Health({ runs }: { runs: RunRecord[] }) {
  const breaches = runs.filter((r) => r.sla_breached).length;
  const hc = runs.find((r) => r.hc_status)?.hc_status ?? null;
  const failed = runs.filter((r) => r.status === "FAILED").length;
  return (
    <ul class="summary">
      <li class={failed ? "tone-bad" : ""}>
        <strong>{failed}</strong> failed of {runs.length} shown
      </li>
      <li class={breaches ? "tone-warn" : ""}>
        <strong>{breaches}</strong> SLA breaches
      </li>
      <li>
        Latest healthcheck:{" "}
        {hc ? <Badge tone={hc === "pass" ? "ok" : hc === "fail" ? "bad" : "warn"}>{hc}</Badge> : <span class="muted">none</span>}
      </li>
    </ul>
  );
}

export function JobView({ name, route }: { name: string; route: Route }) {
  const runsWanted = Math.min(MAX_RUNS, Math.max(STEP, Number(route.query.get("runs")) || STEP));
  const detail = useApi<JobDetail>(`api/jobs/${seg(name)}${qs({ runs: runsWanted })}`, 5000);
  // "Load more" was clicked and its answer has not come yet. The page's 5-second polls set
  // detail.loading too, and must not make the button flicker to "Loading…" and back.
  const [moreAsked, setMoreAsked] = useState(false);
  useEffect(() => {
    if (!detail.loading) setMoreAsked(false);
  }, [detail.loading]);
  const [runOpen, setRunOpen] = useState(false);
  const [backfillOpen, setBackfillOpen] = useState(false);
  const pause = useAction(async (verb: "pause" | "resume") => {
    await api.post(`api/jobs/${seg(name)}/${verb}`);
    notify("ok", `${name} ${verb === "pause" ? "paused" : "resumed"}`);
    await detail.reload();
  });

  return (
    <section>
      <p class="crumbs">
        <a href="#/">Jobs</a> / {name}
      </p>
      <Loaded state={detail} what={`Loading ${name}`}>
        {({ job, state, runs, active_runs }) => {
          const latest = runs[0];
          const now = nowStatus(active_runs, latest);
          const paused = !!state?.paused;
          return (
            <>
              <div class="view-head">
                <h1>{name}</h1>
                <PausedBadge paused={paused} />
                {now && <RunStatusBadge status={now} />}
                <div class="head-actions">
                  <button type="button" class="primary" onClick={() => setRunOpen(true)}>
                    Run…
                  </button>
                  {scheduled(job) && (
                    <button type="button" onClick={() => setBackfillOpen(true)}>
                      Backfill…
                    </button>
                  )}
                  <button type="button" disabled={pause.busy} onClick={() => void pause.run(paused ? "resume" : "pause")}>
                    {paused ? "Resume" : "Pause"}
                  </button>
                </div>
              </div>
              {typeof job.description === "string" && <p class="lead">{job.description}</p>}
              {pause.error && <ErrorBox error={pause.error} />}
              <JobActions
                job={name}
                allowed={{
                  retry: latest?.status === "FAILED",
                  // Its active runs, which the newest few runs shown may not hold.
                  cancel: (active_runs ?? runs).some((r) => r.status === "RUNNING" || r.status === "RETRYING"),
                  skip: (active_runs ?? runs).some((r) => r.status === "PENDING"),
                }}
                onDone={() => void detail.reload()}
              />
              <div class="grid2">
                <section class="card">
                  <h2>State</h2>
                  <KeyValues
                    items={[
                      ["Next run", <Time iso={state?.next_run} />],
                      ["Last success", <Time iso={state?.last_success} />],
                      ["Last failure", <Time iso={state?.last_failure} />],
                      ["Lock pid", state?.lock_pid ?? null],
                    ]}
                  />
                  <Health runs={runs} />
                </section>
                <section class="card">
                  <h2>Recent durations</h2>
                  {runs.length === 0 ? <Empty>No runs yet.</Empty> : <DurationChart runs={runs} />}
                </section>
              </div>
              <section class="card" aria-labelledby="upcoming-title">
                <h2 id="upcoming-title">Upcoming (next 7 days)</h2>
                <UpcomingPanel job={name} />
              </section>
              <section class="card">
                <h2>Runs</h2>
                {runs.length === 0 ? (
                  <Empty>This job has not run yet.</Empty>
                ) : (
                  <>
                    <RunsTable runs={runs} cycle caption={`Last ${runs.length} runs of ${name}`} />
                    {(runs.length >= runsWanted || moreAsked) && runsWanted < MAX_RUNS && (
                      <button
                        type="button"
                        class="more"
                        disabled={moreAsked}
                        onClick={() => {
                          setMoreAsked(true);
                          patchQuery(route, { runs: Math.min(MAX_RUNS, runsWanted + STEP) }, true);
                        }}
                      >
                        {moreAsked ? "Loading…" : `Load ${STEP} more`}
                      </button>
                    )}
                  </>
                )}
              </section>
              {scheduled(job) && (
                <section class="card" aria-labelledby="backfills-title">
                  <h2 id="backfills-title">Backfills</h2>
                  <BackfillsTable job={name} />
                </section>
              )}
              <section class="card">
                <h2>Configuration</h2>
                <p class="hint">Environment values are redacted by the daemon.</p>
                <Config job={job} />
              </section>
            </>
          );
        }}
      </Loaded>
      <RunDialog job={runOpen ? name : null} onClose={() => setRunOpen(false)} onStarted={() => void detail.reload()} />
      <BackfillDialog job={backfillOpen ? name : null} onClose={() => setBackfillOpen(false)} />
    </section>
  );
}

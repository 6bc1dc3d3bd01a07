import { useMemo, useRef, useState } from "preact/hooks";
import { api, qs, seg } from "../lib/api.js";
import { useAction, useApi } from "../lib/useApi.js";
import { href, patchQuery, type Route } from "../lib/router.js";
import type { JobSummary } from "../lib/types.js";
import { useJobZones, type ZoneMap } from "../lib/zones.js";
import { notify } from "../lib/notices.js";
import { Badge, PausedBadge, RunStatusBadge } from "../components/StatusBadge.js";
import { Time } from "../components/Time.js";
import { Empty, ErrorBox, Loaded } from "../components/States.js";
import { RunDialog } from "../components/RunDialog.js";
import { TagChips } from "../components/TagChips.js";
import { useWindowedRows } from "../lib/useWindowedRows.js";
import { nowStatus } from "../lib/jobNow.js";

/** Live refresh; a big project's list (≈1 KB a job) is fetched less often. */
const pollMs = (jobs: number) => (jobs > 300 ? 5000 : 3000);

/** What the job is doing now, as text: a running run wins over the paused flag. */
function jobState(j: JobSummary): { tone: "run" | "warn" | "wait" | "ok"; text: string } {
  const s = nowStatus(j.active_runs, j.last_run);
  if (s === "RUNNING") return { tone: "run", text: "running" };
  if (s === "RETRYING") return { tone: "warn", text: "retrying" };
  if (s === "PENDING") return { tone: "wait", text: "pending" };
  if (j.paused) return { tone: "warn", text: "paused" };
  return { tone: "ok", text: "idle" };
}

function JobRow({
  job,
  index,
  zone,
  tag,
  busy,
  onRun,
  onToggle,
}: {
  job: JobSummary;
  index: number;
  zone: string | null;
  tag: string | null;
  busy: boolean;
  onRun: (name: string) => void;
  onToggle: (job: JobSummary) => void;
}) {
  const state = jobState(job);
  const last = job.last_run;
  return (
    <tr data-job={job.name} data-row aria-rowindex={index + 2}>
      <th scope="row">
        <a href={href(`/jobs/${seg(job.name)}`)}>{job.name}</a>
        {job.description && <div class="sub">{job.description}</div>}
      </th>
      <td>
        <Badge tone={state.tone}>{state.text}</Badge>
      </td>
      <td>
        <PausedBadge paused={job.paused} />
      </td>
      <td>
        {last ? (
          <a href={href(`/runs/${last.id}`)} class="run-link" aria-label={`Run ${last.id}: ${last.status}`}>
            <RunStatusBadge status={last.status} />
          </a>
        ) : (
          <RunStatusBadge status={null} />
        )}
        {last && (
          <div class="sub">
            <Time iso={last.finished_at ?? last.started_at ?? last.created_at} relative />
          </div>
        )}
      </td>
      <td>
        {job.next_run ? <Time iso={job.next_run} zone={job.timezone ?? zone} /> : <span class="muted">{job.frequency}</span>}
        {job.next_run && <div class="sub">{job.frequency}</div>}
      </td>
      <td>
        <ul class="chips inline">
          {job.tags.map((t) => (
            <li key={t}>
              <a class={`chip${t === tag ? " on" : ""}`} href={href("/", { tag: t === tag ? null : t })}>
                {t}
              </a>
            </li>
          ))}
        </ul>
      </td>
      <td class="actions">
        <button type="button" onClick={() => onRun(job.name)} aria-label={`Run ${job.name} now`}>
          Run…
        </button>
        <button type="button" onClick={() => onToggle(job)} disabled={busy} aria-label={`${job.paused ? "Resume" : "Pause"} ${job.name}`}>
          {job.paused ? "Resume" : "Pause"}
        </button>
      </td>
    </tr>
  );
}

function JobsTable(props: {
  jobs: JobSummary[];
  zones: ZoneMap;
  tag: string | null;
  busy: Set<string>;
  onRun: (name: string) => void;
  onToggle: (job: JobSummary) => void;
}) {
  const body = useRef<HTMLTableSectionElement>(null);
  const win = useWindowedRows(props.jobs.length, body);
  return (
    <div class="table-wrap">
      <table class={`table jobs${win.windowed ? " windowed" : ""}`} aria-rowcount={props.jobs.length + 1}>
        <caption class="sr-only">Jobs</caption>
        <thead>
          <tr aria-rowindex={1}>
            <th scope="col">Job</th>
            <th scope="col">State</th>
            <th scope="col">Paused</th>
            <th scope="col">Last run</th>
            <th scope="col">Next run (local time)</th>
            <th scope="col">Tags</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody ref={body}>
          {win.padTop > 0 && <tr class="spacer" aria-hidden="true" style={{ height: `${win.padTop}px` }} />}
          {props.jobs.slice(win.start, win.end).map((j, i) => (
            <JobRow
              key={j.name}
              index={win.start + i}
              job={j}
              zone={props.zones(j.name)}
              tag={props.tag}
              busy={props.busy.has(j.name)}
              onRun={props.onRun}
              onToggle={props.onToggle}
            />
          ))}
          {win.padBottom > 0 && <tr class="spacer" aria-hidden="true" style={{ height: `${win.padBottom}px` }} />}
        </tbody>
      </table>
    </div>
  );
}

function Summary({ jobs }: { jobs: JobSummary[] }) {
  let running = 0;
  let failed = 0;
  let paused = 0;
  for (const j of jobs) {
    const now = nowStatus(j.active_runs, j.last_run);
    if (now === "RUNNING" || now === "RETRYING") running++;
    if (j.last_run?.status === "FAILED") failed++;
    if (j.paused) paused++;
  }
  return (
    <ul class="summary" aria-label="Summary">
      <li>
        <strong>{jobs.length}</strong> jobs
      </li>
      <li class="tone-run">
        <strong>{running}</strong> running
      </li>
      <li class="tone-bad">
        <strong>{failed}</strong> last run failed
      </li>
      <li class="tone-warn">
        <strong>{paused}</strong> paused
      </li>
    </ul>
  );
}

export function Overview({ route }: { route: Route }) {
  const tag = route.query.get("tag");
  const listSize = useRef(0);
  const jobs = useApi<{ jobs: JobSummary[] }>(`api/jobs${qs({ tag })}`, pollMs(listSize.current));
  listSize.current = jobs.data?.jobs.length ?? 0;
  const zones = useJobZones(jobs.data?.jobs.some((j) => !j.timezone) ?? false);
  const [filter, setFilter] = useState("");
  const [runJob, setRunJob] = useState<string | null>(null);
  const [busy, setBusy] = useState<Set<string>>(new Set());

  const toggle = useAction(async (job: JobSummary) => {
    const verb = job.paused ? "resume" : "pause";
    setBusy((b) => new Set(b).add(job.name));
    try {
      await api.post(`api/jobs/${seg(job.name)}/${verb}`);
      notify("ok", `${job.name} ${verb === "pause" ? "paused" : "resumed"}`);
      await jobs.reload();
    } finally {
      setBusy((b) => {
        const n = new Set(b);
        n.delete(job.name);
        return n;
      });
    }
  });
  const bulk = useAction(async (verb: "pause" | "resume", t: string) => {
    await api.post(`api/jobs/${verb}`, { tag: t });
    notify("ok", `Every job tagged ${t} ${verb === "pause" ? "paused" : "resumed"}`);
    await jobs.reload();
  });

  const visible = useMemo(() => {
    const list = jobs.data?.jobs ?? [];
    const f = filter.trim().toLowerCase();
    return f ? list.filter((j) => j.name.toLowerCase().includes(f) || (j.description ?? "").toLowerCase().includes(f)) : list;
  }, [jobs.data, filter]);

  return (
    <section>
      <div class="view-head">
        <h1>Jobs</h1>
        {jobs.data && <Summary jobs={jobs.data.jobs} />}
      </div>
      <div class="toolbar">
        <TagChips active={tag} onPick={(t) => patchQuery(route, { tag: t })} />
        <label class="field inline">
          <span>Find</span>
          <input
            type="search"
            value={filter}
            placeholder="job name or description"
            onInput={(e) => setFilter((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        {tag && (
          <span class="bulk">
            <button type="button" disabled={bulk.busy} onClick={() => void bulk.run("pause", tag)}>
              Pause all tagged {tag}
            </button>
            <button type="button" disabled={bulk.busy} onClick={() => void bulk.run("resume", tag)}>
              Resume all tagged {tag}
            </button>
          </span>
        )}
      </div>
      {toggle.error && <ErrorBox error={toggle.error} title="Pause/resume failed" />}
      {bulk.error && <ErrorBox error={bulk.error} title="Tag-wide pause/resume failed" />}
      <Loaded state={jobs} what="Loading jobs">
        {(data) =>
          data.jobs.length === 0 ? (
            <Empty>{tag ? `No job is tagged ${tag}.` : "No jobs are defined in svc.yaml yet."}</Empty>
          ) : visible.length === 0 ? (
            <Empty>No job matches “{filter}”.</Empty>
          ) : (
            <JobsTable
              jobs={visible}
              zones={zones}
              tag={tag}
              busy={busy}
              onRun={setRunJob}
              onToggle={(j) => void toggle.run(j)}
            />
          )
        }
      </Loaded>
      <RunDialog job={runJob} onClose={() => setRunJob(null)} onStarted={() => void jobs.reload()} />
    </section>
  );
}

import { useEffect, useState } from "preact/hooks";
import { api, qs, seg } from "../lib/api.js";
import { useAction, useApi } from "../lib/useApi.js";
import { href, patchQuery, type Route } from "../lib/router.js";
import { notify } from "../lib/notices.js";
import type { BackfillRecord, RunRecord, RunStatus } from "../lib/types.js";
import { Empty, ErrorBox, Loaded } from "../components/States.js";
import { KeyValues } from "../components/KeyValues.js";
import { Badge } from "../components/StatusBadge.js";
import { Time } from "../components/Time.js";
import { RunsTable } from "../components/RunsTable.js";
import { Pager, Table } from "../components/Table.js";
import { ParamValues } from "../components/ParamValues.js";
import { ConfirmDialog } from "../components/ConfirmDialog.js";
import { pageFromQuery } from "../components/FilterForm.js";

const STATUS_ORDER: RunStatus[] = ["SUCCESS", "FAILED", "SKIPPED", "RUNNING", "RETRYING", "PENDING"];

/** How many of its slot runs have ended (SUCCESS, FAILED, SKIPPED). */
export function finished(b: BackfillRecord): number {
  return (b.by_status.SUCCESS ?? 0) + (b.by_status.FAILED ?? 0) + (b.by_status.SKIPPED ?? 0);
}

/** running / done / cancelled / failed, with text as well as colour. */
export function BackfillStateBadge({ b }: { b: BackfillRecord }) {
  if (b.cancelled && b.done) return <Badge tone="muted">cancelled</Badge>;
  if (b.cancelled) return <Badge tone="warn">cancelling</Badge>;
  if (!b.done) return <Badge tone="run">running</Badge>;
  return (b.by_status.FAILED ?? 0) > 0 ? <Badge tone="bad">done with failures</Badge> : <Badge tone="ok">done</Badge>;
}

/** A native <progress> (read by screen readers) and the counts by status. */
export function BackfillProgress({ b }: { b: BackfillRecord }) {
  const done = finished(b);
  return (
    <div class="backfill-progress">
      <progress max={Math.max(1, b.total)} value={done} aria-label={`backfill #${b.id} progress`} />
      <span class="num" data-progress>
        {done}/{b.total} finished
      </span>
      <ul class="summary" aria-label="runs by status">
        {STATUS_ORDER.filter((s) => (b.by_status[s] ?? 0) > 0).map((s) => (
          <li key={s} data-status={s}>
            <strong>{b.by_status[s]}</strong> {s}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** The backfills of one job (or all), newest first: a table on the job page and at #/backfills. */
export function BackfillsTable({ job, limit = 20 }: { job?: string; limit?: number }) {
  const list = useApi<{ backfills: BackfillRecord[]; total: number }>(`api/backfills${qs({ job, limit })}`, 5000);
  return (
    <Loaded state={list} what="Loading backfills">
      {({ backfills, total }) =>
        backfills.length === 0 ? (
          <Empty>No backfill{job ? ` of ${job}` : ""} yet.</Empty>
        ) : (
          <>
            <Table
              columns={[
                { key: "id", label: "Backfill", render: (b) => <a href={href(`/backfills/${b.id}`)}>#{b.id}</a> },
                ...(job ? [] : [{ key: "job", label: "Job", render: (b: BackfillRecord) => <a href={href(`/jobs/${seg(b.job)}`)}>{b.job}</a> }]),
                { key: "from", label: "From", render: (b) => <Time iso={b.from} /> },
                { key: "to", label: "To", render: (b) => <Time iso={b.to} /> },
                { key: "state", label: "State", render: (b) => <BackfillStateBadge b={b} /> },
                { key: "progress", label: "Progress", class: "num", render: (b) => `${finished(b)}/${b.total}` },
                { key: "created_at", label: "Created", render: (b) => <Time iso={b.created_at} /> },
                { key: "created_by", label: "By" },
              ]}
              rows={backfills}
              rowKey={(b) => b.id}
              caption={job ? `Backfills of ${job}` : "Backfills"}
            />
            {total > backfills.length && (
              <p class="hint">
                {backfills.length} newest of {total}.
              </p>
            )}
          </>
        )
      }
    </Loaded>
  );
}

export function BackfillsView() {
  return (
    <section>
      <div class="view-head">
        <h1>Backfills</h1>
      </div>
      <BackfillsTable limit={100} />
    </section>
  );
}

interface AuditPage {
  runs: RunRecord[];
  total: number;
}

/** A backfill's own page (CONTRACT §7.3): range, progress, its runs (slot runs and their cycles' dependency runs), cancel. */
export function BackfillView({ id, route }: { id: number; route: Route }) {
  const [poll, setPoll] = useState(2000);
  const backfill = useApi<BackfillRecord>(`api/backfills/${seg(id)}`, poll);
  const { page, pageSize } = pageFromQuery(route.query);
  const runs = useApi<AuditPage>(`api/audit${qs({ backfill_id: id, limit: pageSize, offset: (page - 1) * pageSize })}`, poll);
  const done = backfill.data?.done ?? false;
  // A finished backfill no longer changes: stop polling it.
  useEffect(() => setPoll(done ? 0 : 2000), [done]);
  const [confirm, setConfirm] = useState(false);
  const cancel = useAction(async () => {
    const r = await api.post<{ backfill: BackfillRecord; skipped: number }>(`api/backfills/${seg(id)}/cancel`);
    notify("ok", `Backfill #${id} cancelled: ${r.skipped} waiting run${r.skipped === 1 ? "" : "s"} skipped`);
    setConfirm(false);
    await Promise.all([backfill.reload(), runs.reload()]);
  });
  return (
    <section>
      <p class="crumbs">
        <a href="#/">Jobs</a> / {backfill.data ? <a href={href(`/jobs/${seg(backfill.data.job)}`)}>{backfill.data.job}</a> : "…"} /{" "}
        <a href={href("/backfills")}>backfills</a> / #{id}
      </p>
      <Loaded state={backfill} what={`Loading backfill #${id}`}>
        {(b) => (
          <>
            <div class="view-head">
              <h1>Backfill #{b.id}</h1>
              <BackfillStateBadge b={b} />
              <span class="sub">{b.job}</span>
              <div class="head-actions">
                {!b.done && !b.cancelled && (
                  <button type="button" class="danger" onClick={() => setConfirm(true)}>
                    Cancel backfill…
                  </button>
                )}
                <a href={href("/audit", { backfill_id: b.id })}>
                  Open in audit
                </a>
              </div>
            </div>
            {cancel.error && <ErrorBox error={cancel.error} title="The backfill was not cancelled" />}
            <div class="grid2">
              <section class="card">
                <h2>Progress</h2>
                <BackfillProgress b={b} />
              </section>
              <section class="card">
                <h2>Record</h2>
                <KeyValues
                  items={[
                    ["Job", <a href={href(`/jobs/${seg(b.job)}`)}>{b.job}</a>],
                    ["From (included)", <Time iso={b.from} />],
                    ["To (excluded)", <Time iso={b.to} />],
                    ["Slot runs", b.total],
                    ["At once", b.parallel],
                    ["Rerun existing slots", b.rerun ? "yes" : "no"],
                    ["Ignore exclude", b.ignore_exclude ? "yes" : "no"],
                    ["Params", <ParamValues params={b.params} />],
                    ["Reason", b.reason],
                    ["Created", <Time iso={b.created_at} />],
                    ["Created by", b.created_by],
                    ["Cancelled", b.cancelled_at ? <Time iso={b.cancelled_at} /> : null],
                  ]}
                />
              </section>
            </div>
            <ConfirmDialog
              open={confirm}
              title={`Cancel backfill #${b.id}?`}
              confirmLabel="Cancel backfill"
              danger
              busy={cancel.busy}
              onConfirm={() => void cancel.run()}
              onClose={() => setConfirm(false)}
            >
              <p>
                Its {b.by_status.PENDING ?? 0} waiting runs end SKIPPED (backfill cancelled); runs already running finish.
              </p>
            </ConfirmDialog>
          </>
        )}
      </Loaded>
      <section class="card">
        <h2>Runs</h2>
        <p class="hint">The slot runs and the dependency runs of their cycles, newest first.</p>
        <Loaded state={runs} what="Loading its runs">
          {(r) =>
            r.runs.length === 0 ? (
              <Empty>No run yet.</Empty>
            ) : (
              <>
                <RunsTable runs={r.runs} job cycle caption={`Runs of backfill #${id}`} />
                <Pager
                  page={page}
                  pageSize={pageSize}
                  total={r.total}
                  busy={runs.loading}
                  onPage={(p) => patchQuery(route, { page: p })}
                  onPageSize={(s) => patchQuery(route, { page_size: s, page: null })}
                />
              </>
            )
          }
        </Loaded>
      </section>
    </section>
  );
}

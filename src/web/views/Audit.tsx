import { useMemo } from "preact/hooks";
import { api, qs, type QueryValue } from "../lib/api.js";
import { useAction, useApi } from "../lib/useApi.js";
import { patchQuery, type Route } from "../lib/router.js";
import { AUDIT_CSV_HEADER, download, toCsv } from "../lib/csv.js";
import type { JobSummary, RunRecord } from "../lib/types.js";
import { notify } from "../lib/notices.js";
import { plural } from "../lib/format.js";
import { FilterForm, pageFromQuery, type FilterField } from "../components/FilterForm.js";
import { Pager } from "../components/Table.js";
import { RunsTable } from "../components/RunsTable.js";
import { Empty, ErrorBox, Loaded } from "../components/States.js";

interface AuditPage {
  runs: RunRecord[];
  total: number;
  limit: number;
  offset: number;
}

const FILTERS = ["job", "trigger", "status", "since", "reason", "tag", "param", "backfill_id"] as const;
const EXPORT_BATCH = 1000;

/** Every matching run, page after page, for the CSV export. */
async function fetchAll(filters: Record<string, QueryValue>): Promise<RunRecord[]> {
  const all: RunRecord[] = [];
  for (;;) {
    const page = await api.get<AuditPage>("api/audit", { ...filters, limit: EXPORT_BATCH, offset: all.length });
    all.push(...page.runs);
    if (page.runs.length === 0 || all.length >= page.total) return all;
  }
}

export function AuditView({ route }: { route: Route }) {
  const q = route.query;
  const filters = Object.fromEntries(FILTERS.map((f) => [f, q.get(f)]));
  const { page, pageSize } = pageFromQuery(q);
  const result = useApi<AuditPage>(`api/audit${qs({ ...filters, limit: pageSize, offset: (page - 1) * pageSize })}`);
  const jobs = useApi<{ jobs: JobSummary[] }>("api/jobs");
  const tags = useApi<{ tags: { tag: string }[] }>("api/tags");

  const fields: FilterField[] = useMemo(
    () => [
      { name: "job", label: "Job", type: "select", options: (jobs.data?.jobs ?? []).map((j) => [j.name, j.name]) },
      { name: "trigger", label: "Trigger", type: "select", options: [["manual", "manual"], ["schedule", "schedule"], ["dependency", "dependency"], ["backfill", "backfill"]] },
      { name: "status", label: "Status", type: "select", options: [["failed", "FAILED"], ["success", "SUCCESS"], ["skipped", "SKIPPED"]] },
      { name: "since", label: "Since", type: "date" },
      { name: "reason", label: "Reason contains", type: "search", placeholder: "text in the reason" },
      { name: "tag", label: "Tag", type: "select", options: (tags.data?.tags ?? []).map((t) => [t.tag, t.tag]) },
      // CONTRACT §7.2: runs whose param has this value (secret params never match).
      { name: "param", label: "Param", type: "search", placeholder: "name=value" },
      { name: "backfill_id", label: "Backfill #", type: "number", placeholder: "id" },
    ],
    [jobs.data, tags.data],
  );

  const exporter = useAction(async () => {
    const runs = await fetchAll(filters);
    const stamp = new Date().toISOString().replace(/[:.]/g, "-");
    download(`svc-audit-${stamp}.csv`, toCsv(AUDIT_CSV_HEADER, runs as unknown as Record<string, unknown>[]));
    notify("ok", `Exported ${plural(runs.length, "run")} as CSV`);
  });

  return (
    <section>
      <div class="view-head">
        <h1>Audit</h1>
        <div class="head-actions">
          <button type="button" onClick={() => void exporter.run()} disabled={exporter.busy}>
            {exporter.busy ? "Exporting…" : "Export CSV"}
          </button>
        </div>
      </div>
      <FilterForm fields={fields} route={route} label="Audit filters" />
      {exporter.error && <ErrorBox error={exporter.error} title="Export failed" />}
      <Loaded state={result} what="Searching">
        {(r) => (
          <>
            {r.runs.length === 0 ? (
              <Empty>No run matches these filters.</Empty>
            ) : (
              <RunsTable runs={r.runs} job cycle caption="Audit results" />
            )}
            <Pager
              page={page}
              pageSize={pageSize}
              total={r.total}
              busy={result.loading}
              onPage={(p) => patchQuery(route, { page: p })}
              onPageSize={(s) => patchQuery(route, { page_size: s, page: null })}
            />
          </>
        )}
      </Loaded>
    </section>
  );
}

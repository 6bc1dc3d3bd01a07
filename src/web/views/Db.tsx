import { api, qs } from "../lib/api.js";
import { useAction, useApi } from "../lib/useApi.js";
import { href, patchQuery, type Route } from "../lib/router.js";
import { notify } from "../lib/notices.js";
import type { TableResponse } from "../lib/types.js";
import { FilterForm, nextSort, pageFromQuery, sortFromQuery } from "../components/FilterForm.js";
import { Pager, Table } from "../components/Table.js";
import { Empty, ErrorBox, Loaded } from "../components/States.js";
import { DB_TABLES } from "./dbTables.js";

/** The API query for a table view: its filters, its kind of paging, and the sort. */
function apiQuery(route: Route, paging: "page" | "slice", filterNames: string[]) {
  const q = route.query;
  const { page, pageSize } = pageFromQuery(q);
  const { sort, order } = sortFromQuery(q);
  const filters = Object.fromEntries(filterNames.map((f) => [f, q.get(f)]));
  const paged = paging === "page" ? { page, page_size: pageSize } : { limit: pageSize, offset: (page - 1) * pageSize };
  return qs({ ...filters, ...paged, ...(sort && paging === "page" ? { sort, order } : {}) });
}

export function DbView({ table, route }: { table: string; route: Route }) {
  const def = DB_TABLES.find((t) => t.name === table);
  const path = def ? `api/db/${def.name}${apiQuery(route, def.paging, def.filters.map((f) => f.name))}` : null;
  const result = useApi<TableResponse<Record<string, unknown>>>(path, 5000);
  const action = useAction(async (label: string, target: string) => {
    await api.post(target);
    notify("ok", `${label}: done`);
    await result.reload();
  });
  const { page, pageSize } = pageFromQuery(route.query);

  return (
    <section>
      <div class="view-head">
        <h1>Database</h1>
      </div>
      <nav class="tabs" aria-label="Tables">
        {DB_TABLES.map((t) => (
          <a key={t.name} href={href(`/db/${t.name}`)} aria-current={t.name === table ? "page" : undefined}>
            {t.title} <code>{t.name}</code>
          </a>
        ))}
      </nav>
      {!def ? (
        <Empty>
          No table <code>{table}</code>. Pick one above.
        </Empty>
      ) : (
        <>
          {def.filters.length > 0 && <FilterForm key={def.name} fields={def.filters} route={route} label={`${def.title} filters`} />}
          {def.note && <p class="hint">{def.note}</p>}
          {action.error && <ErrorBox error={action.error} title={action.error.status === 409 ? "Refused: conflict (409)" : "Action failed"} />}
          <Loaded state={result} what={`Loading ${def.name}`}>
            {(r) => (
              <>
                {r.rows.length === 0 ? (
                  <Empty>No rows{def.filters.some((f) => route.query.get(f.name)) ? " match these filters" : ""}.</Empty>
                ) : (
                  <Table
                    columns={def.columns({ post: (l, p) => void action.run(l, p), busy: action.busy })}
                    rows={r.rows}
                    rowKey={def.rowKey}
                    sort={def.paging === "page" ? sortFromQuery(route.query) : undefined}
                    onSort={def.paging === "page" ? (key) => nextSort(route, key) : undefined}
                    caption={def.title}
                  />
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
        </>
      )}
    </section>
  );
}

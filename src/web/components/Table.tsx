import type { ComponentChildren } from "preact";
import { PAGE_SIZES } from "../lib/types.js";

export interface Column<T> {
  key: string;
  label: string;
  /** Server-side sortable (sent as `sort=<key>`). */
  sortable?: boolean;
  render?: (row: T) => ComponentChildren;
  class?: string;
}

export interface SortState {
  sort: string | null;
  order: "asc" | "desc";
}

function cell(v: unknown): ComponentChildren {
  if (v === null || v === undefined || v === "") return <span class="muted">—</span>;
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

/**
 * A data table with sortable column headers (real buttons, aria-sort) and
 * no behaviour of its own: sorting and paging are the caller's, in the URL.
 */
export function Table<T>({
  columns,
  rows,
  rowKey,
  sort,
  onSort,
  caption,
  rowClass,
}: {
  columns: Column<T>[];
  rows: T[];
  rowKey: (row: T, index: number) => string | number;
  sort?: SortState;
  onSort?: (key: string) => void;
  caption?: string;
  rowClass?: (row: T) => string | undefined;
}) {
  return (
    <div class="table-wrap">
      <table class="table">
        {caption && <caption class="sr-only">{caption}</caption>}
        <thead>
          <tr>
            {columns.map((c) => {
              const active = sort?.sort === c.key;
              const ariaSort = active ? (sort?.order === "asc" ? "ascending" : "descending") : undefined;
              return (
                <th key={c.key} scope="col" class={c.class} aria-sort={ariaSort}>
                  {c.sortable && onSort ? (
                    <button type="button" class="sort" onClick={() => onSort(c.key)}>
                      {c.label}
                      <span class="sort-mark" aria-hidden="true">
                        {active ? (sort?.order === "asc" ? " ▲" : " ▼") : " ↕"}
                      </span>
                    </button>
                  ) : (
                    c.label
                  )}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, i) => (
            <tr key={rowKey(row, i)} class={rowClass?.(row)}>
              {columns.map((c) => (
                <td key={c.key} class={c.class}>
                  {c.render ? c.render(row) : cell((row as Record<string, unknown>)[c.key])}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Page navigation plus the 25/50/100 page-size switch. `page` counts from 1. */
export function Pager({
  page,
  pageSize,
  total,
  onPage,
  onPageSize,
  busy,
}: {
  page: number;
  pageSize: number;
  total: number;
  onPage: (page: number) => void;
  onPageSize: (size: number) => void;
  busy?: boolean;
}) {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  const first = total === 0 ? 0 : (page - 1) * pageSize + 1;
  const last = Math.min(total, page * pageSize);
  return (
    <nav class="pager" aria-label="Pages">
      <span class="pager-count" aria-live="polite">
        {first}–{last} of {total}
        {busy && <span class="spinner small" aria-label="loading" />}
      </span>
      <button type="button" onClick={() => onPage(1)} disabled={page <= 1} aria-label="First page">
        «
      </button>
      <button type="button" onClick={() => onPage(page - 1)} disabled={page <= 1}>
        ‹ Prev
      </button>
      <span class="pager-page">
        Page {page} of {pages}
      </span>
      <button type="button" onClick={() => onPage(page + 1)} disabled={page >= pages}>
        Next ›
      </button>
      <button type="button" onClick={() => onPage(pages)} disabled={page >= pages} aria-label="Last page">
        »
      </button>
      <label class="pager-size">
        Rows per page{" "}
        <select
          value={String(pageSize)}
          onChange={(e) => onPageSize(Number((e.currentTarget as HTMLSelectElement).value))}
        >
          {PAGE_SIZES.map((n) => (
            <option key={n} value={String(n)}>
              {n}
            </option>
          ))}
        </select>
      </label>
    </nav>
  );
}

import { useEffect, useRef } from "preact/hooks";
import { patchQuery, type Route } from "../lib/router.js";

export interface FilterField {
  name: string;
  label: string;
  type: "text" | "search" | "select" | "date" | "number";
  /** For selects: [value, label]; an "any" option is added first. */
  options?: [string, string][];
  placeholder?: string;
}

/**
 * Filters that live in the URL query: selects apply at once, text fields on
 * Enter or "Apply". Any change goes back to page 1. The form stays mounted
 * (a keyboard user changing a select with the arrow keys keeps its focus);
 * its fields take the URL's values when the URL changes (Clear, Back).
 */
export function FilterForm({ fields, route, label }: { fields: FilterField[]; route: Route; label: string }) {
  const q = route.query;
  const formRef = useRef<HTMLFormElement>(null);
  const values = fields.map((f) => q.get(f.name) ?? "");
  const fromUrl = values.join("\u0000");
  useEffect(() => {
    const el = formRef.current;
    if (!el) return;
    fields.forEach((f, i) => {
      const input = el.elements.namedItem(f.name);
      if ((input instanceof HTMLInputElement || input instanceof HTMLSelectElement) && input.value !== values[i]) input.value = values[i]!;
    });
    // Only when the URL changes: a field being edited keeps what is typed until then.
  }, [fromUrl]);
  const apply = (form: HTMLFormElement) => {
    const data = new FormData(form);
    const patch: Record<string, string | null> = { page: null, offset: null };
    for (const f of fields) patch[f.name] = String(data.get(f.name) ?? "").trim() || null;
    patchQuery(route, patch);
  };
  const active = fields.some((f) => q.get(f.name));
  return (
    <form
      ref={formRef}
      class="filters"
      aria-label={label}
      onSubmit={(e) => {
        e.preventDefault();
        apply(e.currentTarget as HTMLFormElement);
      }}
    >
      {fields.map((f) => (
        <label key={f.name} class="field">
          <span>{f.label}</span>
          {f.type === "select" ? (
            <select
              name={f.name}
              defaultValue={q.get(f.name) ?? ""}
              onChange={(e) => apply((e.currentTarget as HTMLSelectElement).form as HTMLFormElement)}
            >
              <option value="">any</option>
              {(f.options ?? []).map(([v, l]) => (
                <option key={v} value={v}>
                  {l}
                </option>
              ))}
            </select>
          ) : (
            <input
              type={f.type}
              name={f.name}
              defaultValue={q.get(f.name) ?? ""}
              placeholder={f.placeholder}
              onChange={f.type === "date" ? (e) => apply((e.currentTarget as HTMLInputElement).form as HTMLFormElement) : undefined}
            />
          )}
        </label>
      ))}
      <div class="filter-actions">
        <button type="submit">Apply</button>
        {active && (
          <button
            type="button"
            class="link"
            onClick={() => patchQuery(route, Object.fromEntries([...fields.map((f) => [f.name, null]), ["page", null]]))}
          >
            Clear filters
          </button>
        )}
      </div>
    </form>
  );
}

/** Page and page size from the URL, clamped to what the API accepts. */
export function pageFromQuery(q: URLSearchParams): { page: number; pageSize: number } {
  const size = Number(q.get("page_size"));
  const page = Number(q.get("page"));
  return {
    page: Number.isInteger(page) && page > 0 ? page : 1,
    pageSize: size === 25 || size === 50 || size === 100 ? size : 50,
  };
}

/** Sort from the URL; a click on the active column flips the order, on another starts descending. */
export function sortFromQuery(q: URLSearchParams) {
  const order: "asc" | "desc" = q.get("order") === "asc" ? "asc" : "desc";
  return { sort: q.get("sort"), order };
}

export function nextSort(route: Route, key: string): void {
  const { sort, order } = sortFromQuery(route.query);
  patchQuery(route, { sort: key, order: sort === key && order === "desc" ? "asc" : "desc", page: null });
}

import { useApi } from "../lib/useApi.js";

/** Tag filter chips from `GET /api/tags`: toggle buttons (aria-pressed), "All" clears. */
export function TagChips({ active, onPick }: { active: string | null; onPick: (tag: string | null) => void }) {
  const tags = useApi<{ tags: { tag: string; jobs: number }[] }>("api/tags", 30_000);
  const list = tags.data?.tags ?? [];
  if (list.length === 0) return null;
  return (
    <div class="chips" role="group" aria-label="Filter by tag">
      <button type="button" class={`chip${active ? "" : " on"}`} aria-pressed={!active} onClick={() => onPick(null)}>
        All
      </button>
      {list.map((t) => (
        <button
          key={t.tag}
          type="button"
          class={`chip${active === t.tag ? " on" : ""}`}
          aria-pressed={active === t.tag}
          onClick={() => onPick(active === t.tag ? null : t.tag)}
        >
          {t.tag} <span class="count">{t.jobs}</span>
        </button>
      ))}
    </div>
  );
}

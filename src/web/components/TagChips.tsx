import { useApi } from "../lib/useApi.js";
import { Chips } from "./Chips.js";

/** Tag filter chips from `GET /api/tags`: toggle buttons (aria-pressed), "All" clears, the active tag again clears too. */
export function TagChips({ active, onPick }: { active: string | null; onPick: (tag: string | null) => void }) {
  const tags = useApi<{ tags: { tag: string; jobs: number }[] }>("api/tags", 30_000);
  const list = tags.data?.tags ?? [];
  if (list.length === 0) return null;
  const options = [
    { value: null as string | null, label: "All" },
    ...list.map((t) => ({
      value: t.tag as string | null,
      label: (
        <>
          {t.tag} <span class="count">{t.jobs}</span>
        </>
      ),
    })),
  ];
  return <Chips label="Filter by tag" options={options} value={active} onPick={(t) => onPick(t === active ? null : t)} />;
}

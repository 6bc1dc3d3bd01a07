import type { ComponentChildren } from "preact";
import { patchQuery, type Route } from "../lib/router.js";
import { TagChips } from "./TagChips.js";

/**
 * The tag chips and the job-name search of the views that show many jobs
 * (timeline, upcoming): both live in the URL (`?tag=`, `?q=`, name contains,
 * applied on Enter). `children` go at the end of the same toolbar.
 */
export function JobFilters({ route, children }: { route: Route; children?: ComponentChildren }) {
  const tag = route.query.get("tag");
  const name = route.query.get("q");
  return (
    <div class="toolbar">
      <TagChips active={tag} onPick={(t) => patchQuery(route, { tag: t })} />
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const v = String(new FormData(e.currentTarget as HTMLFormElement).get("q") ?? "").trim();
          patchQuery(route, { q: v || null });
        }}
      >
        <label class="field inline">
          <span>Job name</span>
          <input type="search" name="q" defaultValue={name ?? ""} key={name ?? ""} placeholder="contains…" />
        </label>
      </form>
      {children}
    </div>
  );
}

import { fmtRel, fmtTime, fmtTimeInZone } from "../lib/format.js";

/** A timestamp in the browser's zone; the hover shows the job's zone (or the relative time). */
export function Time({ iso, zone, relative }: { iso: string | null | undefined; zone?: string | null; relative?: boolean }) {
  if (!iso) return <span class="muted">—</span>;
  const inZone = fmtTimeInZone(iso, zone);
  const rel = fmtRel(iso);
  const title = [inZone || null, relative ? fmtTime(iso) : rel].filter(Boolean).join(" · ");
  return (
    <time dateTime={iso} title={title}>
      {relative ? rel : fmtTime(iso)}
    </time>
  );
}

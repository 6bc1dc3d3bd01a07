import { useMemo, useRef } from "preact/hooks";
import { href } from "../../lib/router.js";
import { seg } from "../../lib/api.js";
import { useWindowedRows } from "../../lib/useWindowedRows.js";
import { Badge } from "../../components/StatusBadge.js";
import { buildRows, type UpcomingAnswer, type ZoneMode } from "./model.js";

export const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone;

/**
 * Slots grouped by day: a heading row per day (with the DST change it
 * holds), then a row per slot; excluded slots struck through with the
 * reason, DST-placed ones with the rule that placed them. Long lists are
 * windowed (10,000 jobs over a day).
 */
export function UpcomingTable({ answer, mode, showExcluded, showJob = true, caption }: { answer: UpcomingAnswer; mode: ZoneMode; showExcluded: boolean; showJob?: boolean; caption: string }) {
  const rows = useMemo(() => buildRows(answer, mode, browserZone(), showExcluded), [answer, mode, showExcluded]);
  const body = useRef<HTMLTableSectionElement>(null);
  const win = useWindowedRows(rows.length, body);
  const cols = showJob ? 4 : 3;
  return (
    <div class="table-wrap">
      <table class={`table upcoming${win.windowed ? " windowed" : ""}`} aria-rowcount={rows.length + 1} data-testid="upcoming">
        <caption class="sr-only">{caption}</caption>
        <thead>
          <tr aria-rowindex={1}>
            <th scope="col">Time ({mode === "browser" ? `here, ${browserZone()}` : "the job's zone"})</th>
            {showJob && <th scope="col">Job</th>}
            <th scope="col">Schedule</th>
            <th scope="col">Notes</th>
          </tr>
        </thead>
        <tbody ref={body}>
          {win.padTop > 0 && <tr class="spacer" aria-hidden="true" style={{ height: `${win.padTop}px` }} />}
          {rows.slice(win.start, win.end).map((r, i) =>
            r.kind === "day" ? (
              <tr key={r.key} class="day" data-row data-day={r.key.slice(1)} aria-rowindex={win.start + i + 2}>
                <th scope="rowgroup" colSpan={cols}>
                  {r.label}
                  {r.notes.map((n) => (
                    <span key={n} class="dst-note">
                      <Badge tone="info">DST</Badge> {n}
                    </span>
                  ))}
                </th>
              </tr>
            ) : (
              <tr
                key={r.key}
                class={`slot${r.slot.excluded ? " excluded" : ""}${r.job?.paused ? " paused" : ""}`}
                data-row
                data-job={r.slot.job}
                data-at={r.slot.at}
                aria-rowindex={win.start + i + 2}
              >
                <td class="when">
                  <time dateTime={r.slot.at}>{r.time}</time>
                  {r.also && <span class="sub"> · {r.also}</span>}
                </td>
                {showJob && (
                  <td>
                    <a href={href(`/jobs/${seg(r.slot.job)}`)}>{r.slot.job}</a>
                  </td>
                )}
                <td class="sub">{r.job?.frequency ?? ""}</td>
                <td class="notes">
                  {r.slot.excluded && (
                    <span>
                      <Badge tone="muted">excluded</Badge> {r.slot.excluded}
                    </span>
                  )}
                  {r.slot.note && (
                    <span>
                      <Badge tone="info">DST</Badge> {r.slot.note}
                    </span>
                  )}
                  {r.job?.paused && !r.slot.excluded && (
                    <span>
                      <Badge tone="warn">paused</Badge> will not run unless resumed
                    </span>
                  )}
                </td>
              </tr>
            ),
          )}
          {win.padBottom > 0 && <tr class="spacer" aria-hidden="true" style={{ height: `${win.padBottom}px` }} />}
        </tbody>
      </table>
    </div>
  );
}

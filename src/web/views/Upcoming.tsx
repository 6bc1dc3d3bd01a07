import { qs } from "../lib/api.js";
import { useApi } from "../lib/useApi.js";
import { patchQuery, type Route } from "../lib/router.js";
import { plural } from "../lib/format.js";
import { Empty, Loaded } from "../components/States.js";
import { Chips } from "../components/Chips.js";
import { JobFilters } from "../components/JobFilters.js";
import { browserZone, UpcomingTable } from "./upcoming/UpcomingTable.js";
import type { UpcomingAnswer, ZoneMode } from "./upcoming/model.js";

const DAYS = [1, 2, 3, 7] as const;

/**
 * `#/upcoming`: the next runs of every scheduled job over 1-7 days
 * (`GET /api/upcoming`, the schedule code of `svc next`), by day in this
 * browser's zone or each job's (`?zone=job`), DST changes and excluded slots
 * shown as such. `?from=` starts elsewhere than now (what does the DST
 * weekend in March do?).
 */
export default function UpcomingView({ route }: { route: Route }) {
  const q = route.query;
  const days = DAYS.find((d) => String(d) === q.get("days")) ?? 1;
  const mode: ZoneMode = q.get("zone") === "job" ? "job" : "browser";
  const showExcluded = q.get("excluded") !== "hide";
  const tag = q.get("tag");
  const name = q.get("q");
  const from = q.get("from");
  // A chosen date is sent as the millisecond before its midnight: slots are strictly after `from` (as
  // svc next), and that day's 00:00 slot belongs to it. `start` is the instant the page starts at.
  const start = from === null ? null : Date.parse(from) + 1;
  const data = useApi<UpcomingAnswer>(`api/upcoming${qs({ days, tag, q: name, from, limit: 20_000 })}`, 60_000);

  return (
    <section>
      <div class="view-head">
        <h1>Upcoming</h1>
        {data.data && (
          <p class="sub" role="status" data-testid="upcoming-summary">
            {plural(data.data.slots.filter((s) => !s.excluded).length, "run")} of {plural(data.data.jobs.length, "scheduled job")} from{" "}
            {start !== null ? new Date(start).toLocaleString() : "now"} over {plural(days, "day")} · {data.data.slots.filter((s) => s.excluded).length} excluded ·{" "}
            {plural(data.data.unscheduled, "job")} without a schedule (manual or after:)
          </p>
        )}
      </div>
      <div class="toolbar">
        <Chips label="Days" options={DAYS.map((d) => ({ value: d, label: plural(d, "day") }))} value={days} onPick={(d) => patchQuery(route, { days: d === 1 ? null : d })} />
        <Chips
          label="Times in"
          options={[
            { value: "browser", label: `This browser's zone (${browserZone()})` },
            { value: "job", label: "Each job's zone" },
          ]}
          value={mode}
          onPick={(m) => patchQuery(route, { zone: m === "job" ? "job" : null })}
        />
        <label class="field inline">
          <input type="checkbox" checked={showExcluded} onChange={(e) => patchQuery(route, { excluded: (e.currentTarget as HTMLInputElement).checked ? null : "hide" }, true)} />
          <span>Show excluded slots</span>
        </label>
        <form
          class="tl-range"
          aria-label="Start"
          onSubmit={(e) => {
            e.preventDefault();
            const v = String(new FormData(e.currentTarget as HTMLFormElement).get("start") ?? "");
            // A date: its midnight in this browser's zone (less 1 ms: slots strictly after it).
            patchQuery(route, { from: v ? new Date(new Date(`${v}T00:00`).getTime() - 1).toISOString() : null });
          }}
        >
          <label class="field inline">
            <span>Starting</span>
            <input type="date" name="start" key={from ?? ""} defaultValue={start !== null ? new Date(start).toLocaleDateString("sv") : ""} />
          </label>
          <button type="submit">Show</button>
          {from && (
            <button type="button" class="link" onClick={() => patchQuery(route, { from: null })}>
              From now
            </button>
          )}
        </form>
      </div>
      <JobFilters route={route} />
      <Loaded state={data} what="Computing the next runs">
        {(a) =>
          a.slots.length === 0 ? (
            <Empty>{a.jobs.length === 0 ? "No scheduled job matches (manual and after: jobs have no slots)." : `No slot in the next ${plural(days, "day")}.`}</Empty>
          ) : (
            <>
              {a.truncated && <p class="state warn-text">Only the first {a.slots.length.toLocaleString()} slots are listed: filter by tag or name.</p>}
              {a.jobs.some((j) => j.more) && (
                <p class="hint">
                  {a.jobs
                    .filter((j) => j.more)
                    .map((j) => j.name)
                    .join(", ")}{" "}
                  run more often than listed (the first 100 slots of each job are shown).
                </p>
              )}
              <UpcomingTable answer={a} mode={mode} showExcluded={showExcluded} caption={`Upcoming runs over ${plural(days, "day")}`} />
            </>
          )
        }
      </Loaded>
      <p class="hint">
        Computed by the same schedule code as <code>svc next</code>: a time that does not exist on a spring-forward night runs at the end of the gap,
        an ambiguous one once, at its first occurrence; periodic schedules (hourly, every:, cron with * minutes or hours) follow the wall clock. Jitter
        is not applied. Paused jobs are listed but do not run until resumed.
      </p>
    </section>
  );
}

import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { patchQuery, type Route } from "../lib/router.js";
import { plural } from "../lib/format.js";
import { ErrorBox, Loading } from "../components/States.js";
import { Chips } from "../components/Chips.js";
import { JobFilters } from "../components/JobFilters.js";
import { Chart } from "./timeline/Chart.js";
import { buildRows, isActive, liveView, pan, PRESETS, runEnd, zoom, type Preset, type Status, type View } from "./timeline/model.js";
import { covers, loadRange, useTimeline } from "./timeline/useTimeline.js";

const toIso = (ms: number) => new Date(ms).toISOString();
/** `<input type="datetime-local">` value in the browser's zone, and back. */
const toLocalInput = (ms: number) => {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
};
const fromLocalInput = (v: string) => (v ? new Date(v).getTime() : Number.NaN);

function fixedView(q: URLSearchParams): View | null {
  const from = Date.parse(q.get("from") ?? "");
  const to = Date.parse(q.get("to") ?? "");
  return Number.isNaN(from) || Number.isNaN(to) || from >= to ? null : { from, to };
}

function presetOf(q: URLSearchParams): Preset {
  const r = q.get("range");
  return r !== null && r in PRESETS ? (r as Preset) : "24h";
}

/** Redraws while something on screen moves with time: about one pixel per tick, between 0.2 and 5 s. */
function useNow(now: () => number, moving: boolean, msPerPx: number): number {
  const [t, setT] = useState(now);
  useEffect(() => {
    if (!moving) return;
    const every = Math.min(5000, Math.max(200, msPerPx));
    const id = setInterval(() => setT(now()), every);
    setT(now());
    return () => clearInterval(id);
  }, [moving, msPerPx, now]);
  return moving ? t : now();
}

const LEGEND: [Status, string][] = [
  ["SUCCESS", "succeeded"],
  ["FAILED", "failed (hatched)"],
  ["RUNNING", "running (grows)"],
  ["RETRYING", "waiting to retry (dashed)"],
  ["PENDING", "waiting to start (dotted)"],
  ["SKIPPED", "skipped"],
];

function Legend() {
  return (
    <ul class="legend tl-legend" aria-label="Legend">
      {LEGEND.map(([s, text]) => (
        <li key={s}>
          <span class={`tl-sample tl-bar st-${s}`} aria-hidden="true" />
          {text}
        </li>
      ))}
      <li>
        <span class="tl-sample has-segments tl-bar st-SUCCESS" aria-hidden="true">
          <span class="seg seg-attempt-failed" style={{ left: 0, width: "9px" }} />
          <span class="seg seg-wait" style={{ left: "9px", width: "8px" }} />
          <span class="seg seg-attempt" style={{ left: "17px", width: "11px" }} />
        </span>
        retried (one segment per attempt)
      </li>
      <li>
        <span class="tl-sla-sample" aria-hidden="true">
          ▲
        </span>
        SLA breached
      </li>
    </ul>
  );
}

/**
 * `#/timeline`: every run of every job over a window (last 1 h / 6 h / 24 h /
 * 7 d, or from-to), one row per job. The window follows now (the `range`
 * presets) until zoomed or panned, which fixes `from`/`to` in the URL.
 */
export default function TimelineView({ route }: { route: Route }) {
  const q = route.query;
  const tag = q.get("tag");
  const name = q.get("q");
  const hideIdle = q.get("idle") === "hide";
  const fixed = fixedView(q);
  const preset = presetOf(q);
  const filters = useMemo(() => ({ tag, q: name }), [tag, name]);

  // The window shown; the URL follows it (debounced), so a drag or a wheel does not flood history.
  const [view, setView] = useState<View | null>(fixed);
  const fixedKey = fixed ? `${fixed.from}-${fixed.to}` : "";
  useEffect(() => setView(fixed), [fixedKey]);
  const urlTimer = useRef<ReturnType<typeof setTimeout>>();
  const changeView = (v: View) => {
    setView(v);
    clearTimeout(urlTimer.current);
    urlTimer.current = setTimeout(() => patchQuery(route, { from: toIso(v.from), to: toIso(v.to), range: null }, true), 300);
  };
  useEffect(() => () => clearTimeout(urlTimer.current), []);

  // What is loaded: the window plus a margin; loaded again only when the view leaves it.
  const initialNow = Date.now();
  const [range, setRange] = useState<View>(() => loadRange(view ?? liveView(PRESETS[preset], initialNow)));
  const data = useTimeline(range, filters);
  const live = view === null;
  const span = view ? view.to - view.from : PRESETS[preset];
  const chartPx = 1000;
  const activeShown = !!data.data && [...data.data.runs.values()].some((r) => isActive(r.status));
  const now = useNow(data.now, live || activeShown, span / chartPx);
  const shown = view ?? liveView(PRESETS[preset], now);
  useEffect(() => {
    if (covers(range, shown)) return;
    const t = setTimeout(() => setRange(loadRange(shown)), live ? 0 : 250);
    return () => clearTimeout(t);
  }, [shown.from, shown.to, range.from, range.to]);
  const mounted = useRef(false);
  useEffect(() => {
    // A new preset or a typed window (not the first render: its range is loading): load it at once.
    if (mounted.current) setRange(loadRange(fixed ?? liveView(PRESETS[preset], Date.now())));
    mounted.current = true;
  }, [fixedKey, preset]);

  const rows = useMemo(
    () => (data.data ? buildRows(data.data.jobs, data.data.runs.values(), data.data.loaded, now, hideIdle) : []),
    [data.data, hideIdle],
  );
  const summary = useMemo(() => {
    let runs = 0;
    const counts: Partial<Record<Status, number>> = {};
    let sla = 0;
    for (const r of data.data?.runs.values() ?? []) {
      if (r.start >= shown.to || runEnd(r, now) < shown.from) continue;
      runs++;
      counts[r.status] = (counts[r.status] ?? 0) + 1;
      if (r.sla) sla++;
    }
    return { runs, counts, sla };
  }, [data.data, shown.from, shown.to, now]);

  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  useEffect(() => {
    setFrom(toLocalInput(shown.from));
    setTo(toLocalInput(Math.min(shown.to, now)));
  }, [fixedKey, preset]);

  return (
    <section class="timeline-view">
      <div class="view-head">
        <h1>Timeline</h1>
        <p class="sub" role="status" data-testid="tl-summary">
          {plural(summary.runs, "run")} in view · {summary.counts.RUNNING ?? 0} running · {summary.counts.FAILED ?? 0} failed ·{" "}
          {summary.sla} SLA {summary.sla === 1 ? "breach" : "breaches"}
          {data.conn === "reconnecting" ? " · reconnecting…" : live ? " · live" : ""}
        </p>
      </div>
      <div class="toolbar tl-toolbar">
        <Chips
          label="Window"
          options={(Object.keys(PRESETS) as Preset[]).map((p) => ({ value: p as Preset | null, label: `Last ${p}` }))}
          value={live ? preset : null}
          onPick={(p) => patchQuery(route, { range: p, from: null, to: null })}
        />
        <form
          class="tl-range"
          aria-label="Window from-to"
          onSubmit={(e) => {
            e.preventDefault();
            const f = fromLocalInput(from);
            const t = fromLocalInput(to);
            if (Number.isNaN(f) || Number.isNaN(t) || f >= t) return;
            patchQuery(route, { from: toIso(f), to: toIso(t), range: null });
          }}
        >
          <label class="field inline">
            <span>From</span>
            <input type="datetime-local" value={from} onInput={(e) => setFrom((e.currentTarget as HTMLInputElement).value)} />
          </label>
          <label class="field inline">
            <span>To</span>
            <input type="datetime-local" value={to} onInput={(e) => setTo((e.currentTarget as HTMLInputElement).value)} />
          </label>
          <button type="submit">Show</button>
        </form>
        <div class="tl-nav" role="group" aria-label="Zoom and pan">
          <button type="button" onClick={() => changeView(pan(shown, -0.5))} aria-label="Earlier">
            ◀
          </button>
          <button type="button" onClick={() => changeView(zoom(shown, 2))} aria-label="Zoom out">
            −
          </button>
          <button type="button" onClick={() => changeView(zoom(shown, 0.5))} aria-label="Zoom in">
            +
          </button>
          <button type="button" onClick={() => changeView(pan(shown, 0.5))} aria-label="Later">
            ▶
          </button>
          <button type="button" disabled={live} onClick={() => patchQuery(route, { range: preset, from: null, to: null })}>
            Now
          </button>
        </div>
      </div>
      <JobFilters route={route}>
        <label class="field inline">
          <input type="checkbox" checked={hideIdle} onChange={(e) => patchQuery(route, { idle: (e.currentTarget as HTMLInputElement).checked ? "hide" : null }, true)} />
          <span>Hide jobs without runs</span>
        </label>
      </JobFilters>
      {data.error && <ErrorBox error={data.error} onRetry={data.reload} title={data.data ? "Refresh failed (showing the last data)" : "Could not load the timeline"} />}
      {data.data?.truncated && (
        <p class="state warn-text" role="note">
          More than {data.data.limit.toLocaleString()} runs overlap this window: the earliest are not shown. Narrow the window or filter by tag or name.
        </p>
      )}
      {!data.data ? (
        !data.error && <Loading what="Loading the timeline" />
      ) : rows.length === 0 ? (
        <p class="state empty">{tag || name ? "No job matches these filters." : hideIdle ? "No job ran in this window." : "No jobs are defined in svc.yaml yet."}</p>
      ) : (
        <Chart rows={rows} view={shown} now={now} onView={changeView} />
      )}
      <Legend />
      <p class="hint">
        Bars run from a run's start to its end; colour, pattern and glyph tell its status (legend above), and runs too close together to tell apart
        are grouped: select a group to zoom into it. Zoom with + and −, Ctrl + wheel or the buttons; pan by dragging, Shift + wheel or Shift + ← →. In the chart each row is one Tab stop: ← → move
        between runs, ↑ ↓ between jobs, Enter opens the run, G its cycle's graph.
      </p>
    </section>
  );
}

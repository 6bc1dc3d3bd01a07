import { memo } from "preact/compat";
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { href } from "../../lib/router.js";
import { api, seg } from "../../lib/api.js";
import { navigate } from "../../lib/router.js";
import { notify } from "../../lib/notices.js";
import {
  describeAttempts,
  describeRun,
  isActive,
  layoutRow,
  pan,
  ticks,
  zoom,
  type Item,
  type Row,
  type Status,
  type TLRun,
  type View,
} from "./model.js";

const ROW_H = 30;
const OVERSCAN = 6;
const MIN_LABEL_W = 140;

const timeFmt = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
const secFmt = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });
const dayFmt = new Intl.DateTimeFormat(undefined, { weekday: "short", day: "numeric", month: "short" });
const fullFmt = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
export const fmtInstant = (ms: number) => fullFmt.format(new Date(ms));
const localOffset = (t: number) => -new Date(t).getTimezoneOffset() * 60_000;

const GLYPH: Record<Status, string> = { SUCCESS: "✓", FAILED: "✕", RUNNING: "▶", RETRYING: "!", PENDING: "…", SKIPPED: "–" };
/** A cluster takes the tone of its most telling run. */
const RANK: Status[] = ["FAILED", "RUNNING", "RETRYING", "PENDING", "SUCCESS", "SKIPPED"];

const itemKey = (it: Item) => (it.kind === "bar" ? `b${it.run.id}` : `c${it.runs[0]!.id}`);

function clusterLabel(runs: TLRun[], from: number, to: number): { status: Status; text: string } {
  const counts = new Map<Status, number>();
  for (const r of runs) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
  const status = RANK.find((s) => counts.has(s)) ?? "SUCCESS";
  const parts = RANK.filter((s) => counts.has(s)).map((s) => `${counts.get(s)} ${s.toLowerCase()}`);
  return { status, text: `${runs.length} runs of ${runs[0]!.job} from ${secFmt.format(from)} to ${secFmt.format(to)} (${parts.join(", ")}): zoom in` };
}

interface Hover {
  run: TLRun;
  left: number;
  top: number;
}

interface LaneProps {
  row: Row;
  index: number;
  from: number;
  to: number;
  width: number;
  /** Only rows with an active run depend on now: the others are not re-rendered as it moves. */
  now: number;
  focusKey: string | null;
  onFocusItem: (job: string, key: string) => void;
  onHover: (h: Hover | null) => void;
  onZoomTo: (v: View) => void;
  onKey: (e: KeyboardEvent, row: number, items: Item[], key: string) => void;
}

const Lane = memo(function Lane({ row, index, from, to, width, now, focusKey, onFocusItem, onHover, onZoomTo, onKey }: LaneProps) {
  const items = useMemo(() => layoutRow(row.runs, { from, to }, width, now), [row.runs, from, to, width, now]);
  // The row's one tab stop: the item it last had, else its latest item.
  const tabKey = focusKey !== null && items.some((it) => itemKey(it) === focusKey) ? focusKey : items.length ? itemKey(items[items.length - 1]!) : null;
  const show = (run: TLRun, el: HTMLElement) => {
    const box = el.getBoundingClientRect();
    const chart = el.closest(".tl")!.getBoundingClientRect();
    onHover({ run, left: box.left - chart.left + Math.min(box.width, 40), top: box.bottom - chart.top + 4 });
  };
  return (
    <div class="tl-row" role="listitem" style={{ top: `${index * ROW_H}px` }} data-job={row.job}>
      <a class={`tl-label${row.configured ? "" : " gone"}`} href={href(`/jobs/${seg(row.job)}`)} title={row.configured ? row.job : `${row.job} (no longer in svc.yaml)`}>
        {row.job}
      </a>
      <div class="tl-lane" role="group" aria-label={`Runs of ${row.job}`}>
        {items.map((it) => {
          const key = itemKey(it);
          const common = {
            key,
            "data-key": key,
            tabIndex: key === tabKey ? 0 : -1,
            style: { left: `${it.x}px`, width: `${it.w}px` },
            onFocus: () => onFocusItem(row.job, key),
            onKeyDown: (e: KeyboardEvent) => onKey(e, index, items, key),
          };
          if (it.kind === "cluster") {
            const { status, text } = clusterLabel(it.runs, it.from, it.to);
            const span = Math.max(it.to - it.from, 60_000);
            return (
              <button
                type="button"
                class={`tl-cluster st-${status}`}
                aria-label={text}
                title={text}
                onClick={() => onZoomTo({ from: it.from - span * 0.1, to: it.to + span * 0.1 })}
                {...common}
              >
                {it.w >= 24 ? it.runs.length : ""}
              </button>
            );
          }
          const r = it.run;
          const label = describeRun(r, now, (t) => secFmt.format(t));
          const attempts = describeAttempts(r, now);
          return (
            <a
              class={`tl-bar st-${r.status}${it.segments.length > 1 ? " has-segments" : ""}${r.sla ? " sla" : ""}`}
              href={href(`/runs/${r.id}`)}
              aria-label={attempts ? `${label}; ${attempts}` : label}
              data-run={r.id}
              data-status={r.status}
              onMouseEnter={(e) => show(r, e.currentTarget as HTMLElement)}
              onMouseLeave={() => onHover(null)}
              onFocusIn={(e: FocusEvent) => show(r, e.currentTarget as HTMLElement)}
              onBlur={() => onHover(null)}
              {...common}
            >
              {it.segments.length > 1 &&
                it.segments.map((s, i) => <span key={i} class={`seg seg-${s.kind}`} style={{ left: `${s.x}px`, width: `${Math.max(1, s.w)}px` }} />)}
              {it.w >= 18 && (
                <span class="glyph" aria-hidden="true">
                  {GLYPH[r.status]}
                </span>
              )}
              {r.sla && (
                <span class="tl-sla" aria-hidden="true">
                  ▲
                </span>
              )}
            </a>
          );
        })}
      </div>
    </div>
  );
});

/** The hover card: the run's summary and its attempts. */
function Card({ hover, now }: { hover: Hover; now: number }) {
  const r = hover.run;
  const attempts = describeAttempts(r, now);
  return (
    <div class="tl-card" role="tooltip" id="tl-card" style={{ left: `${hover.left}px`, top: `${hover.top}px` }} data-testid="tl-card">
      <strong>
        #{r.id} {r.job}
      </strong>{" "}
      <span class={`badge tone-${toneOf(r.status)}`}>
        <span class="glyph" aria-hidden="true">
          {GLYPH[r.status]}
        </span>
        {r.status}
      </span>
      <p>{describeRun(r, now, fmtInstant)}</p>
      {attempts && <p class="sub">{attempts}</p>}
      <p class="sub">Click (or Enter) opens the run; G shows its cycle's graph{isActive(r.status) ? "; the bar grows while it runs" : ""}.</p>
    </div>
  );
}

export const toneOf = (s: Status) => ({ SUCCESS: "ok", FAILED: "bad", RUNNING: "run", RETRYING: "warn", PENDING: "wait", SKIPPED: "muted" })[s];

/** Room a tick's label needs ("Wed, Nov 25", "12:00 PM" at 0.75rem). */
const TICK_LABEL_PX = 80;

function Axis({ view, width, now }: { view: View; width: number; now: number }) {
  const list = ticks(view, width, localOffset);
  const scale = width / (view.to - view.from);
  const nowX = (now - view.from) * scale;
  return (
    <div class="tl-axis" aria-hidden="true">
      {list.map(({ at, step }) => {
        const midnight = new Date(at).getHours() === 0 && new Date(at).getMinutes() === 0;
        const x = (at - view.from) * scale;
        return (
          <span key={at} class={`tl-tick${midnight ? " day" : ""}`} style={{ left: `${x}px` }}>
            {/* A label that would be cut at the right edge is left out; its tick line stays. */}
            {x > width - TICK_LABEL_PX ? "" : step >= 86_400_000 || midnight ? dayFmt.format(at) : step < 60_000 ? secFmt.format(at) : timeFmt.format(at)}
          </span>
        );
      })}
      {nowX >= 0 && nowX <= width && (
        <span class="tl-now-label" style={{ left: `${nowX}px` }}>
          now
        </span>
      )}
    </div>
  );
}

/**
 * The chart: one row per job (only the rows in the scrolled viewport are in
 * the DOM), each run a link whose bar spans its start to its end, retries as
 * segments, an SLA breach as a triangle; a now line. Zoom: the buttons,
 * Ctrl + wheel, + and -; pan: drag, Shift + wheel, Shift + arrows. Keyboard:
 * each row is one tab stop; arrows move between runs and rows; Enter opens
 * the focused run.
 */
export function Chart({ rows, view, now, onView }: { rows: Row[]; view: View; now: number; onView: (v: View) => void }) {
  const wrap = useRef<HTMLDivElement>(null);
  const scroll = useRef<HTMLDivElement>(null);
  const [size, setSize] = useState({ width: 900, height: 480 });
  const [scrollTop, setScrollTop] = useState(0);
  const [hover, setHover] = useState<Hover | null>(null);
  const focus = useRef(new Map<string, string>());
  const [, setFocusVersion] = useState(0);
  const pending = useRef<{ row: number; x: number; edge?: "first" | "last" } | null>(null);
  const drag = useRef<{ x: number; view: View } | null>(null);

  useLayoutEffect(() => {
    const el = wrap.current;
    if (!el) return;
    const measure = () => setSize({ width: el.clientWidth, height: scroll.current?.clientHeight ?? 480 });
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  const labelW = Math.max(MIN_LABEL_W, Math.min(260, Math.round(size.width * 0.2)));
  const width = Math.max(200, size.width - labelW - 16);
  const first = Math.max(0, Math.floor(scrollTop / ROW_H) - OVERSCAN);
  const last = Math.min(rows.length, Math.ceil((scrollTop + size.height) / ROW_H) + OVERSCAN);
  const scale = width / (view.to - view.from);
  const nowX = (now - view.from) * scale;
  const at = (clientX: number) => view.from + (clientX - (scroll.current?.getBoundingClientRect().left ?? 0) - labelW) / scale;

  // Focus moved to another row by the keyboard: focus its nearest item once it is rendered.
  useEffect(() => {
    const p = pending.current;
    if (!p) return;
    const rowEl = scroll.current?.querySelector<HTMLElement>(`.tl-row[data-job="${CSS.escape(rows[p.row]?.job ?? "")}"]`);
    if (!rowEl) return;
    pending.current = null;
    const els = [...rowEl.querySelectorAll<HTMLElement>("[data-key]")];
    if (els.length === 0) return;
    const pick =
      p.edge === "first"
        ? els[0]!
        : p.edge === "last"
          ? els[els.length - 1]!
          : els.reduce((best, el) => (Math.abs(el.offsetLeft + el.offsetWidth / 2 - p.x) < Math.abs(best.offsetLeft + best.offsetWidth / 2 - p.x) ? el : best));
    pick.focus();
  });

  // The lanes are memoised: they get handlers that never change, which read the latest state here.
  const latest = useRef({ view, rows, width, scale, onView });
  latest.current = { view, rows, width, scale, onView };
  const handlers = useMemo(
    () => ({
      onFocusItem: (job: string, key: string) => onFocusItemRef.current(job, key),
      onKey: (e: KeyboardEvent, row: number, items: Item[], key: string) => onKeyRef.current(e, row, items, key),
      onZoomTo: (v: View) => latest.current.onView(v),
    }),
    [],
  );
  const onFocusItemRef = useRef<(job: string, key: string) => void>(() => {});
  const onKeyRef = useRef<(e: KeyboardEvent, row: number, items: Item[], key: string) => void>(() => {});

  const onFocusItem = (job: string, key: string) => {
    if (focus.current.get(job) !== key) {
      focus.current.set(job, key);
      setFocusVersion((n) => n + 1);
    }
  };

  const onKey = (e: KeyboardEvent, rowIndex: number, items: Item[], key: string) => {
    const i = items.findIndex((it) => itemKey(it) === key);
    const item = items[i];
    const lane = (e.currentTarget as HTMLElement).parentElement!;
    const focusIn = (k: string) => lane.querySelector<HTMLElement>(`[data-key="${k}"]`)?.focus();
    const toRow = (r: number, x: number) => {
      if (r < 0 || r >= rows.length) return;
      const top = r * ROW_H;
      const sc = scroll.current!;
      if (top < sc.scrollTop) sc.scrollTop = top;
      else if (top + ROW_H > sc.scrollTop + sc.clientHeight) sc.scrollTop = top + ROW_H - sc.clientHeight;
      pending.current = { row: r, x };
      setFocusVersion((n) => n + 1);
    };
    const center = item ? item.x + item.w / 2 : 0;
    switch (e.key) {
      case "ArrowLeft":
      case "ArrowRight":
        if (e.shiftKey) onView(pan(view, e.key === "ArrowLeft" ? -0.25 : 0.25));
        else {
          const next = items[i + (e.key === "ArrowLeft" ? -1 : 1)];
          if (next) focusIn(itemKey(next));
          else onView(pan(view, e.key === "ArrowLeft" ? -0.5 : 0.5));
        }
        break;
      case "ArrowUp":
        toRow(rowIndex - 1, center);
        break;
      case "ArrowDown":
        toRow(rowIndex + 1, center);
        break;
      case "Home":
        if (items[0]) focusIn(itemKey(items[0]));
        break;
      case "End":
        if (items.length) focusIn(itemKey(items[items.length - 1]!));
        break;
      case "+":
      case "=":
        onView(zoom(view, 0.5, item ? view.from + center / scale : undefined));
        break;
      case "-":
        onView(zoom(view, 2, item ? view.from + center / scale : undefined));
        break;
      case "g":
      case "G": {
        // The hint says "G" (Shift or Caps Lock give "G"); Ctrl+G and the like are the browser's.
        if (e.ctrlKey || e.metaKey || e.altKey) return;
        // The focused run's cycle, as a graph (the timeline's rows do not carry the cycle id).
        if (item?.kind !== "bar") break;
        const id = item.run.id;
        void api.get<{ cycle_id: string }>(`api/runs/${id}`).then(
          (r) => navigate("/graph", { cycle: r.cycle_id }),
          (err: unknown) => notify("error", `Cannot open run #${id}'s cycle: ${err instanceof Error ? err.message : String(err)}`),
        );
        break;
      }
      default:
        return;
    }
    e.preventDefault();
  };

  onFocusItemRef.current = onFocusItem;
  onKeyRef.current = onKey;

  const onWheel = (e: WheelEvent) => {
    if (e.ctrlKey || e.metaKey) {
      e.preventDefault();
      onView(zoom(view, Math.exp(e.deltaY / 300), at(e.clientX)));
    } else if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
      e.preventDefault();
      const d = e.shiftKey ? e.deltaY || e.deltaX : e.deltaX;
      onView(pan(view, d / width));
    }
  };

  return (
    <div class="tl" ref={wrap} style={{ "--tl-label-w": `${labelW}px` }}>
      <div class="tl-head">
        <span class="tl-head-label">Job</span>
        <Axis view={view} width={width} now={now} />
      </div>
      <div
        class="tl-scroll"
        ref={scroll}
        style={{ height: `${rows.length * ROW_H + 1}px` }}
        onScroll={(e) => setScrollTop((e.currentTarget as HTMLElement).scrollTop)}
        onWheel={onWheel}
        onMouseDown={(e) => {
          if (e.button !== 0 || (e.target as HTMLElement).closest("a, button")) return;
          drag.current = { x: e.clientX, view };
          e.preventDefault();
        }}
        onMouseMove={(e) => {
          const d = drag.current;
          if (!d) return;
          onView(pan(d.view, -(e.clientX - d.x) / width));
        }}
        onMouseUp={() => (drag.current = null)}
        onMouseLeave={() => (drag.current = null)}
      >
        <div class="tl-inner" role="list" aria-label={`Runs by job: ${rows.length} jobs`} style={{ height: `${rows.length * ROW_H}px` }}>
          {nowX >= 0 && nowX <= width && <div class="tl-now" style={{ left: `${labelW + nowX}px` }} aria-hidden="true" />}
          {rows.slice(first, last).map((row, k) => (
            <Lane
              key={row.job}
              row={row}
              index={first + k}
              from={view.from}
              to={view.to}
              width={width}
              now={row.runs.some((r) => isActive(r.status)) ? now : 0}
              focusKey={focus.current.get(row.job) ?? null}
              onFocusItem={handlers.onFocusItem}
              onHover={setHover}
              onZoomTo={handlers.onZoomTo}
              onKey={handlers.onKey}
            />
          ))}
        </div>
      </div>
      {hover && <Card hover={hover} now={now} />}
    </div>
  );
}

import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { useApi } from "../lib/useApi.js";
import { href } from "../lib/router.js";
import type { Route } from "../lib/router.js";
import { seg } from "../lib/api.js";
import { fmtDuration, plural, runDuration, shortId } from "../lib/format.js";
import { latestByJob, loadCycle, type CycleData } from "../lib/cycle.js";
import { nowStatus } from "../lib/jobNow.js";
import { isTerminal, type DagResponse, type JobSummary, type OutputRow, type RunRecord } from "../lib/types.js";
import { Empty, ErrorBox, Loaded, Loading } from "../components/States.js";
import { Time } from "../components/Time.js";
import { ApiError } from "../lib/api.js";
import { layout, NODE_H, NODE_W, visible, type Laid, type Point } from "./graph/layout.js";

const TONE: Record<string, string> = {
  SUCCESS: "ok",
  FAILED: "bad",
  RUNNING: "run",
  RETRYING: "warn",
  PENDING: "wait",
  SKIPPED: "muted",
};
const GLYPH: Record<string, string> = { SUCCESS: "✓", FAILED: "✕", RUNNING: "▶", RETRYING: "!", PENDING: "…", SKIPPED: "–" };
/** Drawn around the viewport so a scroll does not show blank space before the next frame. */
const OVERSCAN_PX = 400;

function path(points: Point[]): string {
  return points.map((p, i) => `${i === 0 ? "M" : "L"}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(" ");
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** What one node shows: its job's last run (whole graph) or its run in the cycle. */
interface NodeState {
  status: string | null;
  /** Second line of the node. */
  detail: string;
  label: string;
  href: string;
}

interface EdgeCard {
  from: string;
  to: string;
  outputs: OutputRow[];
  x: number;
  y: number;
}

function outputsText(outputs: OutputRow[]): string {
  return outputs.length === 0 ? "no outputs captured" : outputs.map((o) => `${o.var_name} = ${clip(o.value, 60)}`).join(", ");
}

/**
 * The laid-out graph. Only the nodes and edges near the scrolled viewport
 * are in the DOM (10,000 jobs are 40,000 SVG elements otherwise). With
 * `edgeOutputs` (a cycle), each edge is focusable and its hover or focus
 * shows what the upstream captured in the cycle.
 */
function DagSvg({ laid, state, edgeOutputs, label }: { laid: Laid; state: (job: string) => NodeState; edgeOutputs?: (from: string) => OutputRow[]; label: string }) {
  const wrap = useRef<HTMLDivElement>(null);
  const [box, setBox] = useState({ left: 0, top: 0, right: 1600, bottom: 1200 });
  const [card, setCard] = useState<EdgeCard | null>(null);
  useLayoutEffect(() => {
    const el = wrap.current;
    if (!el) return;
    let frame = 0;
    const update = () => {
      frame = 0;
      setBox({ left: el.scrollLeft - OVERSCAN_PX, top: el.scrollTop - OVERSCAN_PX, right: el.scrollLeft + el.clientWidth + OVERSCAN_PX, bottom: el.scrollTop + el.clientHeight + OVERSCAN_PX });
    };
    update();
    const onScroll = () => (frame ||= requestAnimationFrame(update));
    el.addEventListener("scroll", onScroll, { passive: true });
    const ro = new ResizeObserver(onScroll);
    ro.observe(el);
    return () => {
      cancelAnimationFrame(frame);
      el.removeEventListener("scroll", onScroll);
      ro.disconnect();
    };
  }, []);
  const shown = useMemo(() => visible(laid, box), [laid, box.left, box.top, box.right, box.bottom]);
  const focusableEdges = edgeOutputs !== undefined && laid.edges.length <= 300;
  const showCard = (e: Laid["edges"][number]) => {
    if (!edgeOutputs) return;
    const mid = e.points[Math.floor(e.points.length / 2)] ?? e.points[0]!;
    setCard({ from: e.from, to: e.to, outputs: edgeOutputs(e.from), x: mid.x - (wrap.current?.scrollLeft ?? 0), y: mid.y - (wrap.current?.scrollTop ?? 0) });
  };
  return (
    <div class="graph-box">
      <div class="graph-wrap" ref={wrap} tabIndex={-1}>
        <svg
          class="graph"
          width={laid.width}
          height={laid.height}
          viewBox={`0 0 ${laid.width} ${laid.height}`}
          role="group"
          aria-label={label}
          data-nodes={laid.nodes.length}
          data-engine={laid.engine}
        >
          <defs>
            <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="10" markerHeight="10" orient="auto-start-reverse">
              <path d="M0,0 L10,5 L0,10 z" class="arrow-head" />
            </marker>
          </defs>
          {shown.edges.map((e) => {
            const outputs = edgeOutputs?.(e.from);
            const text = `${e.from} → ${e.to} (${e.kind})${outputs ? `: ${outputsText(outputs)}` : ""}`;
            return (
              <g
                key={`${e.from}>${e.to}`}
                class={`edge-g${outputs && outputs.length > 0 ? " passes" : ""}`}
                data-edge={`${e.from}>${e.to}`}
                tabIndex={focusableEdges ? 0 : undefined}
                role={focusableEdges ? "img" : undefined}
                aria-label={focusableEdges ? text : undefined}
                onMouseEnter={() => showCard(e)}
                onMouseLeave={() => setCard(null)}
                onFocus={() => showCard(e)}
                onBlur={() => setCard(null)}
              >
                <title>{text}</title>
                <path d={path(e.points)} class={`edge edge-${e.kind}`} marker-end="url(#arrow)" />
                {edgeOutputs && <path d={path(e.points)} class="edge-hit" />}
                {outputs && outputs.length > 0 && <EdgeLabel points={e.points} text={plural(outputs.length, "output")} />}
              </g>
            );
          })}
          {shown.nodes.map((n) => {
            const s = state(n.name);
            const tone = s.status ? (TONE[s.status] ?? "muted") : "none";
            return (
              <a key={n.name} href={s.href} class={`node tone-${tone}`} aria-label={s.label} data-job={n.name} data-status={s.status ?? ""}>
                <title>{s.label}</title>
                <rect x={n.x - NODE_W / 2} y={n.y - NODE_H / 2} width={NODE_W} height={NODE_H} rx={8} />
                <text x={n.x} y={n.y - 5} class="node-name">
                  {clip(n.name, 22)}
                </text>
                <text x={n.x} y={n.y + 13} class="node-status">
                  {s.status ? `${GLYPH[s.status] ?? ""} ` : ""}
                  {s.detail}
                </text>
              </a>
            );
          })}
        </svg>
      </div>
      {card && (
        <div class="graph-card" role="tooltip" data-testid="edge-card" style={{ left: `${card.x + 12}px`, top: `${card.y + 12}px` }}>
          <strong>
            {card.from} → {card.to}
          </strong>
          {card.outputs.length === 0 ? (
            <p class="sub">{card.from} captured no outputs in this cycle.</p>
          ) : (
            <>
              <p class="sub">Outputs {card.from} captured in this cycle:</p>
              <dl class="kv">
                {card.outputs.map((o) => (
                  <div key={o.var_name} class="kv-item">
                    <dt>
                      <code>{o.var_name}</code>
                    </dt>
                    <dd>
                      <code>{clip(o.value, 120)}</code>
                    </dd>
                  </div>
                ))}
              </dl>
            </>
          )}
        </div>
      )}
    </div>
  );
}

/** A small tag at an edge's middle: how many outputs its upstream passed (and something to point at). */
function EdgeLabel({ points, text }: { points: Point[]; text: string }) {
  // The middle point of an odd polyline (dagre's), the middle of the middle segment otherwise.
  const a = points[Math.floor((points.length - 1) / 2)]!;
  const b = points.length % 2 === 1 ? a : (points[points.length / 2] ?? a);
  const x = (a.x + b.x) / 2;
  const y = (a.y + b.y) / 2;
  const w = text.length * 6.2 + 10;
  return (
    <g class="edge-label">
      <rect x={x - w / 2} y={y - 9} width={w} height={18} rx={9} />
      <text x={x} y={y + 4}>
        {text}
      </text>
    </g>
  );
}

function Legend({ cycle }: { cycle: boolean }) {
  return (
    <ul class="legend" aria-label="Legend">
      {["SUCCESS", "FAILED", "RUNNING", "RETRYING", "PENDING", "SKIPPED"].map((s) => (
        <li key={s} class={`tone-${TONE[s]}`}>
          <span class="swatch" aria-hidden="true" />
          {GLYPH[s]} {s}
        </li>
      ))}
      <li class="tone-none">
        <span class="swatch dashed" aria-hidden="true" />
        {cycle ? "not in this cycle" : "never run"}
      </li>
      <li>
        <span class="edge-sample dashed" aria-hidden="true" /> after:
      </li>
    </ul>
  );
}

/** The whole graph: each node coloured and labelled by what its job is doing now (an active run), else its last run. */
function WholeGraph({ dag }: { dag: DagResponse }) {
  const jobs = useApi<{ jobs: JobSummary[] }>("api/jobs", dag.nodes.length > 300 ? 15_000 : 5000);
  const byName = useMemo(() => new Map((jobs.data?.jobs ?? []).map((j) => [j.name, j])), [jobs.data]);
  const laid = useMemo(() => layout(dag), [dag]);
  const state = (name: string): NodeState => {
    const job = byName.get(name);
    const status = (job && nowStatus(job.active_runs, job.last_run)) ?? null;
    const detail = `${status ?? "never run"}${job?.paused ? " · paused" : ""}`;
    const what = status === null ? "never run" : (job?.active_runs ?? []).length > 0 ? `now ${status}` : `last run ${status}`;
    return { status, detail, label: `${name}: ${what}${job?.paused ? ", paused" : ""}`, href: href(`/jobs/${seg(name)}`) };
  };
  return (
    <>
      {jobs.error && <ErrorBox error={jobs.error} title="Job states unavailable" />}
      <DagSvg laid={laid} state={state} label={`Dependency graph: ${dag.nodes.length} jobs, ${dag.edges.length} edges`} />
      <p class="hint">
        Arrows point from an upstream job to the job that depends on it. Select a job to open it. To see one cycle (one trigger chain) coloured by its own
        runs, open it from a run (“Show this cycle's graph”) or from a job's runs table (the Cycle column).
      </p>
    </>
  );
}

function cycleState(runs: Map<string, RunRecord>, name: string): NodeState {
  const r = runs.get(name);
  if (!r) return { status: null, detail: "not in this cycle", label: `${name}: not in this cycle`, href: href(`/jobs/${seg(name)}`) };
  const took = r.started_at ? fmtDuration(runDuration(r)) : null;
  const detail = `${r.status}${took ? ` · ${took}` : ""}`;
  const label = `${name}: run #${r.id} ${r.status}${took ? `, ${isTerminal(r.status) ? "took" : "running for"} ${took}` : ""}${r.attempt > 1 ? `, attempt ${r.attempt}` : ""}${r.error ? `, ${r.error}` : ""}`;
  return { status: r.status, detail, label, href: href(`/runs/${r.id}`) };
}

/** One cycle: each node coloured by its run in the cycle, with its duration; edges show the outputs passed. */
function CycleGraph({ dag, cycleId }: { dag: DagResponse; cycleId: string }) {
  const [data, setData] = useState<CycleData | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = () =>
      loadCycle(cycleId).then(
        (d) => {
          if (!live) return;
          setData(d);
          setError(null);
          // While a run of the cycle is live, look again; a finished cycle no longer changes.
          if (d.runs.some((r) => !isTerminal(r.status))) timer = setTimeout(load, 2000);
        },
        (e: unknown) => {
          if (!live) return;
          setError(e instanceof ApiError ? e : new ApiError(0, "client", String(e)));
          // A failed load (the daemon restarting, a dropped connection) is tried again, less often.
          timer = setTimeout(load, 5000);
        },
      );
    void load();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [cycleId]);
  // Running durations move between loads.
  useEffect(() => {
    if (!data?.runs.some((r) => r.status === "RUNNING")) return;
    const id = setInterval(() => setTick((n) => n + 1), 1000);
    return () => clearInterval(id);
  }, [data]);
  const laid = useMemo(() => layout(dag), [dag]);
  const latest = useMemo(() => latestByJob(data?.runs ?? []), [data]);
  const outputsBy = useMemo(() => {
    const m = new Map<string, OutputRow[]>();
    for (const o of data?.outputs ?? []) {
      const list = m.get(o.job_name) ?? [];
      // One value per variable: the latest capture (a retried run captures again).
      const i = list.findIndex((x) => x.var_name === o.var_name);
      if (i >= 0) list[i] = o.created_at > list[i]!.created_at ? o : list[i]!;
      else list.push(o);
      m.set(o.job_name, list);
    }
    return m;
  }, [data]);
  if (error && !data) return <ErrorBox error={error} />;
  if (!data) return <Loading what="Loading the cycle" />;
  if (data.runs.length === 0) return <Empty>No run belongs to cycle {cycleId}. It may have been removed by retention.</Empty>;
  const counts = new Map<string, number>();
  for (const r of latest.values()) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
  const first = data.runs[0]!;
  return (
    <>
      {error && <ErrorBox error={error} title="The cycle's runs could not be refreshed (trying again)" />}
      <div class="cycle-head card">
        <p>
          Cycle <code title={cycleId}>{shortId(cycleId)}</code>, started <Time iso={first.created_at} /> by {first.trigger} ({first.job_name}
          {first.triggered_by ? `, ${first.triggered_by}` : ""}): {plural(latest.size, "job")} ran —{" "}
          {[...counts].map(([s, n]) => `${n} ${s.toLowerCase()}`).join(", ")}.
        </p>
        <p class="sub">Select a node to open its run in this cycle; hover or focus an edge to see the outputs its upstream captured.</p>
      </div>
      <DagSvg
        laid={laid}
        state={(name) => cycleState(latest, name)}
        edgeOutputs={(from) => outputsBy.get(from) ?? []}
        label={`Cycle ${shortId(cycleId)}: ${latest.size} of ${dag.nodes.length} jobs ran`}
      />
    </>
  );
}

/**
 * `#/graph`: `GET /api/dag` laid out left to right; `#/graph?cycle=<id>` the
 * same graph for one cycle (from a run page or a job's runs table).
 */
export default function GraphView({ route }: { route: Route }) {
  const cycle = route.query.get("cycle");
  const dag = useApi<DagResponse>("api/dag", 30_000);
  return (
    <section>
      <div class="view-head">
        <h1>{cycle ? "Cycle graph" : "Dependency graph"}</h1>
        {cycle && (
          <a href={href("/graph")} class="sub">
            Whole graph
          </a>
        )}
        <Legend cycle={cycle !== null} />
      </div>
      <Loaded state={dag} what="Loading the graph">
        {(d) => (d.nodes.length === 0 ? <Empty>No jobs to draw.</Empty> : cycle ? <CycleGraph dag={d} cycleId={cycle} /> : <WholeGraph dag={d} />)}
      </Loaded>
    </section>
  );
}

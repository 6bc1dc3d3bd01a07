import { useMemo } from "preact/hooks";
import dagre from "@dagrejs/dagre";
import { useApi } from "../lib/useApi.js";
import { href } from "../lib/router.js";
import { seg } from "../lib/api.js";
import type { DagResponse, JobSummary } from "../lib/types.js";
import { Empty, ErrorBox, Loaded } from "../components/States.js";

const NODE_W = 180;
const NODE_H = 48;

const TONE: Record<string, string> = {
  SUCCESS: "ok",
  FAILED: "bad",
  RUNNING: "run",
  RETRYING: "warn",
  PENDING: "wait",
  SKIPPED: "muted",
};

interface Laid {
  width: number;
  height: number;
  nodes: { name: string; x: number; y: number; frequency: string }[];
  edges: { from: string; to: string; kind: string; points: { x: number; y: number }[] }[];
}

function layout(dag: DagResponse): Laid {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: "LR", nodesep: 24, ranksep: 64, marginx: 16, marginy: 16 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of dag.nodes) g.setNode(n.name, { width: NODE_W, height: NODE_H });
  for (const e of dag.edges) g.setEdge(e.from, e.to);
  dagre.layout(g);
  const kinds = new Map(dag.edges.map((e) => [`${e.from}\u0000${e.to}`, e.kind]));
  const graph = g.graph();
  return {
    width: graph.width ?? 0,
    height: graph.height ?? 0,
    nodes: dag.nodes.map((n) => {
      const p = g.node(n.name);
      return { name: n.name, x: p.x, y: p.y, frequency: n.frequency };
    }),
    edges: g.edges().map((e) => ({
      from: e.v,
      to: e.w,
      kind: kinds.get(`${e.v}\u0000${e.w}`) ?? "depends_on",
      points: g.edge(e).points ?? [],
    })),
  };
}

function path(points: { x: number; y: number }[]): string {
  return points.map((p, i) => `${i === 0 ? "M" : "L"}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(" ");
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

function DagSvg({ dag, jobs }: { dag: DagResponse; jobs: Map<string, JobSummary> }) {
  const laid = useMemo(() => layout(dag), [dag]);
  return (
    <div class="graph-wrap" tabIndex={-1}>
      <svg
        class="graph"
        width={laid.width}
        height={laid.height}
        viewBox={`0 0 ${laid.width} ${laid.height}`}
        role="group"
        aria-label={`Dependency graph: ${dag.nodes.length} jobs, ${dag.edges.length} edges`}
      >
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M0,0 L10,5 L0,10 z" class="arrow-head" />
          </marker>
        </defs>
        {laid.edges.map((e) => (
          <path key={`${e.from}>${e.to}`} d={path(e.points)} class={`edge edge-${e.kind}`} marker-end="url(#arrow)">
            <title>
              {e.from} → {e.to} ({e.kind})
            </title>
          </path>
        ))}
        {laid.nodes.map((n) => {
          const job = jobs.get(n.name);
          const status = job?.last_run?.status ?? null;
          const tone = status ? TONE[status] ?? "muted" : "none";
          const label = `${n.name}: ${status ? `last run ${status}` : "never run"}${job?.paused ? ", paused" : ""}`;
          return (
            <a key={n.name} href={href(`/jobs/${seg(n.name)}`)} class={`node tone-${tone}`} aria-label={label}>
              <title>{label}</title>
              <rect x={n.x - NODE_W / 2} y={n.y - NODE_H / 2} width={NODE_W} height={NODE_H} rx={8} />
              <text x={n.x} y={n.y - 5} class="node-name">
                {clip(n.name, 22)}
              </text>
              <text x={n.x} y={n.y + 13} class="node-status">
                {status ?? "never run"}
                {job?.paused ? " · paused" : ""}
              </text>
            </a>
          );
        })}
      </svg>
    </div>
  );
}

/** `GET /api/dag` laid out by dagre; nodes coloured (and labelled) by their last run's status. */
export default function GraphView() {
  const dag = useApi<DagResponse>("api/dag", 30_000);
  const jobs = useApi<{ jobs: JobSummary[] }>("api/jobs", 5000);
  const byName = useMemo(() => new Map((jobs.data?.jobs ?? []).map((j) => [j.name, j])), [jobs.data]);
  return (
    <section>
      <div class="view-head">
        <h1>Dependency graph</h1>
        <ul class="legend" aria-label="Legend">
          {["SUCCESS", "FAILED", "RUNNING", "RETRYING", "PENDING", "SKIPPED"].map((s) => (
            <li key={s} class={`tone-${TONE[s]}`}>
              <span class="swatch" aria-hidden="true" />
              {s}
            </li>
          ))}
          <li>
            <span class="edge-sample dashed" aria-hidden="true" /> after:
          </li>
        </ul>
      </div>
      {jobs.error && <ErrorBox error={jobs.error} title="Job states unavailable" />}
      <Loaded state={dag} what="Loading the graph">
        {(d) => (d.nodes.length === 0 ? <Empty>No jobs to draw.</Empty> : <DagSvg dag={d} jobs={byName} />)}
      </Loaded>
      <p class="hint">Arrows point from an upstream job to the job that depends on it. Select a job to open it.</p>
    </section>
  );
}

import dagre from "@dagrejs/dagre";

/**
 * Where the graph view draws its nodes and edges. dagre (crossing
 * minimisation, routed edges) for graphs it lays out quickly; above
 * DAGRE_MAX_NODES a plain layered layout (rank = longest path from a root,
 * order in a rank by the upstreams' mean position), which is linear in the
 * graph: dagre takes tens of seconds on 10,000 jobs. Pure: no DOM.
 */

export const NODE_W = 180;
export const NODE_H = 48;
const RANK_GAP = 100;
const NODE_GAP = 24;
const MARGIN = 16;
export const DAGRE_MAX_NODES = 400;

export interface DagInput {
  nodes: { name: string; frequency: string }[];
  edges: { from: string; to: string; kind: string }[];
  /** Topological order, upstreams first (GET /api/dag). */
  order: string[];
}

export interface Point {
  x: number;
  y: number;
}

export interface Laid {
  width: number;
  height: number;
  /** Centre of each node. */
  nodes: { name: string; x: number; y: number; frequency: string }[];
  edges: { from: string; to: string; kind: string; points: Point[] }[];
  engine: "dagre" | "layered";
}

export function layout(dag: DagInput): Laid {
  return dag.nodes.length <= DAGRE_MAX_NODES ? dagreLayout(dag) : layered(dag);
}

function dagreLayout(dag: DagInput): Laid {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: "LR", nodesep: NODE_GAP, ranksep: RANK_GAP, marginx: MARGIN, marginy: MARGIN });
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
    edges: g.edges().map((e: { v: string; w: string }) => ({
      from: e.v,
      to: e.w,
      kind: kinds.get(`${e.v}\u0000${e.w}`) ?? "depends_on",
      points: g.edge(e).points ?? [],
    })),
    engine: "dagre",
  };
}

/** Left to right: a node's rank is the longest path to it from a root; within a rank, nodes sit near their upstreams. */
export function layered(dag: DagInput): Laid {
  const ups = new Map<string, string[]>();
  for (const e of dag.edges) {
    let l = ups.get(e.to);
    if (!l) ups.set(e.to, (l = []));
    l.push(e.from);
  }
  const rank = new Map<string, number>();
  const known = new Set(dag.nodes.map((n) => n.name));
  const ordered = new Set(dag.order);
  const order = [...dag.order.filter((n) => known.has(n)), ...dag.nodes.map((n) => n.name).filter((n) => !ordered.has(n))];
  for (const name of order) {
    let r = 0;
    for (const u of ups.get(name) ?? []) r = Math.max(r, (rank.get(u) ?? 0) + 1);
    rank.set(name, r);
  }
  const ranks: string[][] = [];
  for (const name of order) (ranks[rank.get(name)!] ??= []).push(name);
  const slot = new Map<string, number>();
  ranks.forEach((names, r) => {
    const key = (n: string) => {
      const us = ups.get(n) ?? [];
      return r === 0 || us.length === 0 ? Number.POSITIVE_INFINITY : us.reduce((s, u) => s + (slot.get(u) ?? 0), 0) / us.length;
    };
    const keyed = names.map((n, i) => ({ n, k: key(n), i }));
    keyed.sort((a, b) => a.k - b.k || a.i - b.i);
    keyed.forEach(({ n }, i) => slot.set(n, i));
    ranks[r] = keyed.map(({ n }) => n);
  });
  const pos = new Map<string, Point>();
  for (const [name, r] of rank) {
    pos.set(name, { x: MARGIN + r * (NODE_W + RANK_GAP) + NODE_W / 2, y: MARGIN + slot.get(name)! * (NODE_H + NODE_GAP) + NODE_H / 2 });
  }
  const tallest = Math.max(0, ...ranks.map((r) => r?.length ?? 0));
  return {
    width: MARGIN * 2 + ranks.length * (NODE_W + RANK_GAP) - RANK_GAP,
    height: MARGIN * 2 + tallest * (NODE_H + NODE_GAP) - NODE_GAP,
    nodes: dag.nodes.map((n) => ({ name: n.name, ...pos.get(n.name)!, frequency: n.frequency })),
    edges: dag.edges.map((e) => {
      const a = pos.get(e.from)!;
      const b = pos.get(e.to)!;
      return { ...e, points: [{ x: a.x + NODE_W / 2, y: a.y }, { x: b.x - NODE_W / 2, y: b.y }] };
    }),
    engine: "layered",
  };
}

export interface Box {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/** Nodes and edges that touch `box` (the scrolled viewport plus a margin): only those are drawn. */
export function visible(laid: Laid, box: Box): { nodes: Laid["nodes"]; edges: Laid["edges"] } {
  const hit = (l: number, t: number, r: number, b: number) => r >= box.left && l <= box.right && b >= box.top && t <= box.bottom;
  const nodes = laid.nodes.filter((n) => hit(n.x - NODE_W / 2, n.y - NODE_H / 2, n.x + NODE_W / 2, n.y + NODE_H / 2));
  const edges = laid.edges.filter((e) => {
    let l = Infinity;
    let t = Infinity;
    let r = -Infinity;
    let b = -Infinity;
    for (const p of e.points) {
      l = Math.min(l, p.x);
      t = Math.min(t, p.y);
      r = Math.max(r, p.x);
      b = Math.max(b, p.y);
    }
    return hit(l, t, r, b);
  });
  return { nodes, edges };
}

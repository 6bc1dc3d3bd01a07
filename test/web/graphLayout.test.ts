/**
 * The graph view's layout (src/web/views/graph/layout.ts): dagre for small
 * graphs, the linear layered layout for big ones, and the viewport culling.
 */
import { describe, expect, it } from "vitest";
import { DAGRE_MAX_NODES, layered, layout, NODE_H, NODE_W, visible, type DagInput } from "../../src/web/views/graph/layout.js";

function dag(edges: [string, string][], extra: string[] = []): DagInput {
  const names = [...new Set([...edges.flat(), ...extra])];
  // Kahn's order, upstreams first (as GET /api/dag gives it).
  const indeg = new Map(names.map((n) => [n, 0]));
  for (const [, to] of edges) indeg.set(to, indeg.get(to)! + 1);
  const downs = new Map<string, string[]>();
  for (const [from, to] of edges) downs.set(from, [...(downs.get(from) ?? []), to]);
  const order: string[] = names.filter((n) => indeg.get(n) === 0);
  for (let i = 0; i < order.length; i++) {
    for (const to of downs.get(order[i]!) ?? []) if (indeg.set(to, indeg.get(to)! - 1).get(to) === 0) order.push(to);
  }
  return { nodes: names.map((name) => ({ name, frequency: "manual" })), edges: edges.map(([from, to]) => ({ from, to, kind: "after" })), order };
}

const at = (l: ReturnType<typeof layered>, name: string) => l.nodes.find((n) => n.name === name)!;

describe("layered layout", () => {
  it("puts each node one rank right of its furthest upstream, nodes never overlap, edges go right", () => {
    const l = layered(dag([["a", "b"], ["b", "c"], ["a", "c"], ["x", "c"]], ["lone"]));
    expect(at(l, "a").x).toBe(at(l, "x").x);
    expect(at(l, "b").x).toBeGreaterThan(at(l, "a").x);
    expect(at(l, "c").x).toBeGreaterThan(at(l, "b").x);
    for (const p of l.nodes) for (const q of l.nodes) {
      if (p === q) continue;
      expect(Math.abs(p.x - q.x) >= NODE_W || Math.abs(p.y - q.y) >= NODE_H).toBe(true);
    }
    for (const e of l.edges) expect(e.points[0]!.x).toBeLessThan(e.points.at(-1)!.x);
    expect(l.width).toBeGreaterThanOrEqual(Math.max(...l.nodes.map((n) => n.x + NODE_W / 2)));
    expect(l.height).toBeGreaterThanOrEqual(Math.max(...l.nodes.map((n) => n.y + NODE_H / 2)));
  });

  it("lays out 10,000 jobs in groups of ten with the layered layout, each group's leaves beside its root", () => {
    const edges: [string, string][] = [];
    for (let i = 0; i < 10_000; i++) if (i % 10 !== 0) edges.push([`job-${i - (i % 10)}`, `job-${i}`]);
    const input = dag(edges);
    expect(input.nodes).toHaveLength(10_000);
    const l = layout(input);
    expect(l.engine).toBe("layered");
    // Downstreams sit beside their upstream's row band: the first group's leaves are in the first rows.
    expect(at(l, "job-1").y).toBeLessThan(at(l, "job-9999").y);
  });

  it("uses dagre up to DAGRE_MAX_NODES", () => {
    expect(layout(dag([["a", "b"]])).engine).toBe("dagre");
    const many = dag([], Array.from({ length: DAGRE_MAX_NODES + 1 }, (_, i) => `n${i}`));
    expect(layout(many).engine).toBe("layered");
  });
});

describe("visible", () => {
  it("keeps the nodes and edges that touch the box", () => {
    const l = layered(dag([["a", "b"], ["c", "d"]]));
    const a = at(l, "a");
    const box = { left: a.x - 10, top: a.y - 10, right: a.x + 10, bottom: a.y + 10 };
    const v = visible(l, box);
    expect(v.nodes.map((n) => n.name)).toEqual(["a"]);
    expect(v.edges.map((e) => `${e.from}>${e.to}`)).toEqual([]);
    const wide = visible(l, { left: 0, top: 0, right: l.width, bottom: a.y + 1 });
    expect(wide.nodes.map((n) => n.name).sort()).toEqual(["a", "b"]);
    expect(wide.edges.map((e) => `${e.from}>${e.to}`)).toEqual(["a>b"]);
  });
});

import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { DepGraph, type GraphNodeInput } from "./depGraph.js";
import { dagJson, renderDagTree } from "./dagView.js";

const job = (name: string, dependsOn: string[] = [], after: string | null = null): GraphNodeInput => ({
  name,
  dependsOn,
  after,
});

describe("DepGraph", () => {
  it("builds edges of both kinds, one per pair", () => {
    const g = new DepGraph([
      job("extract"),
      job("transform", [], "extract"),
      job("load", ["transform", "extract"], "transform"),
    ]);
    expect(g.edges).toEqual([
      { from: "extract", to: "transform", kind: "after" },
      { from: "transform", to: "load", kind: "after" },
      { from: "extract", to: "load", kind: "depends_on" },
    ]);
    expect(g.upstreams("load")).toEqual(["transform", "extract"]);
    expect(g.downstreams("extract")).toEqual(["transform", "load"]);
    expect(g.cycle).toBeNull();
  });

  it("orders upstreams first and keeps file order among independent jobs", () => {
    const g = new DepGraph([job("report", ["load"]), job("b"), job("load", ["a"]), job("a")]);
    expect(g.order).toEqual(["b", "a", "load", "report"]);
  });

  it("returns descendants and ancestors transitively in file order", () => {
    const g = new DepGraph([job("a"), job("b", ["a"]), job("c", ["b"]), job("d", ["a", "c"]), job("x")]);
    expect(g.descendants("a")).toEqual(["b", "c", "d"]);
    expect(g.descendants("c")).toEqual(["d"]);
    expect(g.descendants("x")).toEqual([]);
    expect(g.ancestors("d")).toEqual(["a", "b", "c"]);
    expect(g.upstreams("nope")).toEqual([]);
  });

  it("ignores edges to unknown jobs (the loader reports them)", () => {
    const g = new DepGraph([job("a", ["ghost"], "phantom")]);
    expect(g.edges).toEqual([]);
    expect(g.order).toEqual(["a"]);
  });

  it("reports the full cycle path, upstream to downstream", () => {
    const g = new DepGraph([job("a", ["c"]), job("b", ["a"]), job("c", [], "b"), job("free")]);
    expect(g.cycle).toEqual(["a", "b", "c", "a"]);
    expect(g.order).toEqual([]);
  });

  it("reports a self-dependency as a one-job cycle", () => {
    expect(new DepGraph([job("a", ["a"])]).cycle).toEqual(["a", "a"]);
  });

  it("finds a cycle that sits downstream of acyclic jobs", () => {
    const g = new DepGraph([job("root"), job("x", ["root", "y"]), job("y", ["x"]), job("tail", ["y"])]);
    expect(g.cycle).toEqual(["x", "y", "x"]);
  });

  it("handles a 10,000-job chain without recursion", () => {
    const jobs = Array.from({ length: 10_000 }, (_, i) => job(`j${i}`, i === 0 ? [] : [`j${i - 1}`]));
    const g = new DepGraph(jobs);
    expect(g.order.length).toBe(10_000);
    expect(g.descendants("j0").length).toBe(9_999);
    const cyclic = new DepGraph([job("j0", ["j9999"]), ...jobs.slice(1)]);
    expect(cyclic.cycle?.length).toBe(10_001);
  });

  it("property: order is a permutation where every edge goes forward, or a real cycle is named", () => {
    const arb = fc
      .integer({ min: 1, max: 12 })
      .chain((n) =>
        fc.tuple(
          fc.constant(n),
          fc.array(fc.tuple(fc.nat(n - 1), fc.nat(n - 1)), { maxLength: 30 }),
          fc.array(fc.option(fc.nat(n - 1)), { minLength: n, maxLength: n }),
        ),
      );
    fc.assert(
      fc.property(arb, ([n, pairs, afters]) => {
        const jobs = Array.from({ length: n }, (_, i) =>
          job(
            `j${i}`,
            pairs.filter(([, to]) => to === i).map(([from]) => `j${from}`),
            afters[i] == null ? null : `j${afters[i]}`,
          ),
        );
        const g = new DepGraph(jobs);
        if (g.cycle === null) {
          expect([...g.order].sort()).toEqual([...g.nodes].sort());
          const pos = new Map(g.order.map((name, i) => [name, i]));
          for (const e of g.edges) expect(pos.get(e.from)!).toBeLessThan(pos.get(e.to)!);
        } else {
          expect(g.cycle[0]).toBe(g.cycle[g.cycle.length - 1]);
          for (let i = 0; i + 1 < g.cycle.length; i++) {
            expect(g.edge(g.cycle[i]!, g.cycle[i + 1]!)).toBeDefined();
          }
        }
      }),
    );
  });
});

describe("dag views", () => {
  const g = new DepGraph([
    job("extract"),
    job("transform", [], "extract"),
    job("audit", ["extract"]),
    job("load", ["audit"], "transform"),
  ]);
  const info = (name: string) => ({ frequency: name === "extract" ? "daily" : "after", tags: ["etl"] });

  it("dagJson has CONTRACT's shape", () => {
    expect(dagJson(g, info)).toEqual({
      nodes: [
        { name: "extract", frequency: "daily", tags: ["etl"] },
        { name: "transform", frequency: "after", tags: ["etl"] },
        { name: "audit", frequency: "after", tags: ["etl"] },
        { name: "load", frequency: "after", tags: ["etl"] },
      ],
      edges: [
        { from: "extract", to: "transform", kind: "after" },
        { from: "extract", to: "audit", kind: "depends_on" },
        { from: "audit", to: "load", kind: "depends_on" },
        { from: "transform", to: "load", kind: "after" },
      ],
      order: ["extract", "transform", "audit", "load"],
    });
  });

  it("renders a tree that prints shared subtrees once", () => {
    expect(renderDagTree(g, (n) => n.toUpperCase())).toBe(
      [
        "EXTRACT",
        "├── TRANSFORM",
        "│   └── LOAD",
        "└── AUDIT  [depends_on]",
        "    └── load  [depends_on]  (see above)",
      ].join("\n"),
    );
  });
});

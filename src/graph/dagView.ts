import type { DagEdge, DepGraph } from "./depGraph.js";

/** The `GET /api/dag` and `svc dag --json` document (CONTRACT §4). */
export interface DagJson {
  nodes: { name: string; frequency: string; tags: string[] }[];
  edges: DagEdge[];
  order: string[];
}

export interface NodeInfo {
  frequency: string;
  tags: readonly string[];
}

export function dagJson(graph: DepGraph, describe: (job: string) => NodeInfo): DagJson {
  return {
    nodes: graph.nodes.map((name) => {
      const info = describe(name);
      return { name, frequency: info.frequency, tags: [...info.tags] };
    }),
    edges: graph.edges.map((e) => ({ from: e.from, to: e.to, kind: e.kind })),
    order: [...graph.order],
  };
}

/**
 * A readable tree: roots (jobs without upstreams) in file order, each job's
 * downstreams below it. A job with several upstreams appears under each of
 * them; its subtree is printed only the first time, later mentions point up.
 *
 *   extract  daily 02:30 Europe/Berlin
 *   └── transform  after:extract
 *       └── load  after:transform
 */
export function renderDagTree(graph: DepGraph, label: (job: string) => string): string {
  const lines: string[] = [];
  const expanded = new Set<string>();
  const walk = (job: string, prefix: string, branch: string, kind: string | null): void => {
    const suffix = kind === "depends_on" ? "  [depends_on]" : "";
    if (expanded.has(job)) {
      lines.push(`${prefix}${branch}${job}${suffix}  (see above)`);
      return;
    }
    expanded.add(job);
    lines.push(`${prefix}${branch}${label(job)}${suffix}`);
    const children = graph.downstreams(job);
    const childPrefix = prefix + (branch === "" ? "" : branch === "└── " ? "    " : "│   ");
    children.forEach((child, i) => {
      const last = i === children.length - 1;
      walk(child, childPrefix, last ? "└── " : "├── ", graph.edge(job, child)?.kind ?? null);
    });
  };
  for (const job of graph.nodes) {
    if (graph.upstreams(job).length === 0) walk(job, "", "", null);
  }
  return lines.join("\n");
}

/**
 * The dependency DAG between jobs. Pure: no I/O, no clock.
 *
 * Edge direction is data flow: `from` is the upstream, `to` the downstream
 * (`extract -> transform` means transform waits for extract). Node order is
 * the file order of the jobs; every list this module returns is stable with
 * respect to it, so output never depends on hash-map iteration quirks.
 */

export type EdgeKind = "depends_on" | "after";

export interface DagEdge {
  from: string;
  to: string;
  kind: EdgeKind;
}

/** What the graph needs to know about one job. */
export interface GraphNodeInput {
  name: string;
  /** `depends_on` as written. */
  dependsOn: readonly string[];
  /** The job named by `frequency: after:<job>`, or null. */
  after: string | null;
}

export class DepGraph {
  /** Job names in file order. */
  readonly nodes: readonly string[];
  /**
   * One edge per (upstream, downstream) pair, in file order of the downstream
   * job and then declaration order. A pair declared both ways (`after:x` and
   * `depends_on: [x]`) is one edge of kind `after`: that edge also triggers.
   */
  readonly edges: readonly DagEdge[];
  /** Topological order, upstreams first; ties broken by file order. Empty when cyclic. */
  readonly order: readonly string[];
  /** The first cycle found (`[a, b, c, a]`, upstream to downstream), or null. */
  readonly cycle: readonly string[] | null;

  private readonly index: ReadonlyMap<string, number>;
  private readonly up: ReadonlyMap<string, readonly string[]>;
  private readonly down: ReadonlyMap<string, readonly string[]>;

  constructor(jobs: Iterable<GraphNodeInput>) {
    const nodes: string[] = [];
    const index = new Map<string, number>();
    const inputs: GraphNodeInput[] = [];
    for (const job of jobs) {
      if (index.has(job.name)) continue; // duplicate names are a config error reported elsewhere
      index.set(job.name, nodes.length);
      nodes.push(job.name);
      inputs.push(job);
    }

    const edges: DagEdge[] = [];
    const up = new Map<string, string[]>();
    const down = new Map<string, string[]>();
    for (const name of nodes) {
      up.set(name, []);
      down.set(name, []);
    }
    for (const job of inputs) {
      const kinds = new Map<string, EdgeKind>();
      for (const u of job.dependsOn) if (!kinds.has(u)) kinds.set(u, "depends_on");
      if (job.after !== null) kinds.set(job.after, "after");
      for (const [from, kind] of kinds) {
        // Edges to unknown jobs are left out; the loader reports them with their location.
        if (!index.has(from)) continue;
        edges.push({ from, to: job.name, kind });
        up.get(job.name)!.push(from);
        down.get(from)!.push(job.name);
      }
    }
    const byFileOrder = (a: string, b: string) => index.get(a)! - index.get(b)!;
    for (const list of down.values()) if (list.length > 1) list.sort(byFileOrder);

    this.nodes = nodes;
    this.edges = edges;
    this.index = index;
    this.up = up;
    this.down = down;
    const order = topoOrder(nodes, index, up, down);
    this.order = order.length === nodes.length ? order : [];
    this.cycle = order.length === nodes.length ? null : findCycle(nodes, down, new Set(order));
    Object.freeze(this);
  }

  has(job: string): boolean {
    return this.index.has(job);
  }

  /** Direct upstreams of `job` (depends_on plus after:), in declaration order. */
  upstreams(job: string): readonly string[] {
    return this.up.get(job) ?? [];
  }

  /** Direct downstreams of `job`, in file order. */
  downstreams(job: string): readonly string[] {
    return this.down.get(job) ?? [];
  }

  /** Every job reachable downstream of `job` (transitively), excluding itself, in file order. */
  descendants(job: string): string[] {
    return this.reach(job, this.down);
  }

  /** Every job `job` transitively depends on, excluding itself, in file order. */
  ancestors(job: string): string[] {
    return this.reach(job, this.up);
  }

  /** The edge from `from` to `to`, if any. */
  edge(from: string, to: string): DagEdge | undefined {
    return this.edges.find((e) => e.from === from && e.to === to);
  }

  private reach(start: string, next: ReadonlyMap<string, readonly string[]>): string[] {
    const seen = new Set<string>();
    const stack = [...(next.get(start) ?? [])];
    while (stack.length > 0) {
      const n = stack.pop()!;
      if (seen.has(n) || n === start) continue;
      seen.add(n);
      for (const m of next.get(n) ?? []) if (!seen.has(m)) stack.push(m);
    }
    return [...seen].sort((a, b) => this.index.get(a)! - this.index.get(b)!);
  }
}

/**
 * Kahn's algorithm with a min-heap on file index: among the jobs whose
 * upstreams are all placed, the earliest in the file goes next. Returns fewer
 * than all nodes when there is a cycle.
 */
function topoOrder(
  nodes: readonly string[],
  index: ReadonlyMap<string, number>,
  up: ReadonlyMap<string, readonly string[]>,
  down: ReadonlyMap<string, readonly string[]>,
): string[] {
  const pending = new Map<string, number>();
  const heap = new MinHeap();
  for (const n of nodes) {
    const count = up.get(n)!.length;
    pending.set(n, count);
    if (count === 0) heap.push(index.get(n)!);
  }
  const order: string[] = [];
  while (heap.size > 0) {
    const n = nodes[heap.pop()]!;
    order.push(n);
    for (const d of down.get(n)!) {
      const left = pending.get(d)! - 1;
      pending.set(d, left);
      if (left === 0) heap.push(index.get(d)!);
    }
  }
  return order;
}

/**
 * A cycle among the nodes Kahn's algorithm could not place, found by an
 * iterative depth-first search (a 10,000-job chain must not overflow the stack).
 */
function findCycle(
  nodes: readonly string[],
  down: ReadonlyMap<string, readonly string[]>,
  placed: ReadonlySet<string>,
): string[] {
  const state = new Map<string, 1 | 2>(); // 1 = on the current path, 2 = finished
  for (const root of nodes) {
    if (placed.has(root) || state.has(root)) continue;
    const path: string[] = [root];
    const cursor: number[] = [0];
    state.set(root, 1);
    while (path.length > 0) {
      const n = path[path.length - 1]!;
      const next = down.get(n)!;
      const i = cursor[cursor.length - 1]!;
      if (i >= next.length) {
        state.set(n, 2);
        path.pop();
        cursor.pop();
        continue;
      }
      cursor[cursor.length - 1] = i + 1;
      const m = next[i]!;
      if (placed.has(m)) continue;
      const s = state.get(m);
      if (s === 1) return [...path.slice(path.indexOf(m)), m];
      if (s === undefined) {
        state.set(m, 1);
        path.push(m);
        cursor.push(0);
      }
    }
  }
  return []; // unreachable when called with an incomplete order
}

class MinHeap {
  private readonly items: number[] = [];

  get size(): number {
    return this.items.length;
  }

  push(v: number): void {
    const a = this.items;
    a.push(v);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p]! <= v) break;
      a[i] = a[p]!;
      i = p;
    }
    a[i] = v;
  }

  pop(): number {
    const a = this.items;
    const top = a[0]!;
    const last = a.pop()!;
    if (a.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= a.length) break;
        const r = l + 1;
        const c = r < a.length && a[r]! < a[l]! ? r : l;
        if (a[c]! >= last) break;
        a[i] = a[c]!;
        i = c;
      }
      a[i] = last;
    }
    return top;
  }
}

export { DepGraph } from "./depGraph.js";
export type { DagEdge, EdgeKind, GraphNodeInput } from "./depGraph.js";
export { dagJson, renderDagTree } from "./dagView.js";
export type { DagJson, NodeInfo } from "./dagView.js";

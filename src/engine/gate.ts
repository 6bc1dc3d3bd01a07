import type { RunRecord } from "../store/types.js";

/**
 * CONTRACT §3's gate, as an explanation: a PENDING run dispatches when every
 * upstream has a SUCCESS run in the same cycle; an upstream with no run in
 * the cycle counts when its most recent finished run is SUCCESS. Pure; the
 * caller reads the cycle's runs and each upstream's last finished run.
 * (The dispatcher's gateOpen() is the same rule as a boolean.)
 */
export interface GateBlocker {
  /** The upstream job that holds the gate closed. */
  job: string;
  /**
   * `active`: it has a PENDING/RUNNING/RETRYING run in the cycle (the gate may open).
   * `ended`: its runs in the cycle all ended without SUCCESS (only a retry of it opens the gate).
   * `absent`: no run in the cycle and its last finished run is not SUCCESS (or it never ran).
   */
  kind: "active" | "ended" | "absent";
  /** The upstream's newest run in the cycle, else its last finished run, else null. */
  run: RunRecord | null;
  /** `transform FAILED in this cycle (run 41)`, `extract never ran`. */
  text: string;
}

export function gateBlockers(
  upstreams: readonly string[],
  inCycle: readonly RunRecord[],
  lastFinished: (job: string) => RunRecord | null,
): GateBlocker[] {
  const out: GateBlocker[] = [];
  for (const up of upstreams) {
    const ups = inCycle.filter((r) => r.job_name === up);
    if (ups.some((r) => r.status === "SUCCESS")) continue;
    const newest = ups[ups.length - 1];
    if (newest) {
      const active = ups.some((r) => r.status === "PENDING" || r.status === "RUNNING" || r.status === "RETRYING");
      out.push({ job: up, kind: active ? "active" : "ended", run: newest, text: `${up} is ${newest.status} in this cycle (run ${newest.id})` });
      continue;
    }
    const last = lastFinished(up);
    if (last?.status === "SUCCESS") continue;
    out.push({
      job: up,
      kind: "absent",
      run: last,
      text: last ? `${up} has no run in this cycle and its last run (${last.id}) is ${last.status}` : `${up} has no run in this cycle and never ran`,
    });
  }
  return out;
}

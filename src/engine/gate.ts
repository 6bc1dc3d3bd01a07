import type { RunRecord } from "../store/types.js";

/**
 * CONTRACT §3's gate, as an explanation: a PENDING run dispatches when every
 * upstream has a SUCCESS run in the same cycle; an upstream with no run in
 * the cycle counts when its most recent finished run is SUCCESS. Pure; the
 * caller reads the cycle's runs and each upstream's last finished run.
 * One rule, two answers: `gateIsOpen` for the dispatcher, `gateBlockers`
 * (who holds it closed, and why) for `svc why` and the cycle view.
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

/** What an upstream holds the gate closed with (a GateBlocker without its text); null when it lets it open. */
function holding(
  up: string,
  inCycle: readonly RunRecord[],
  lastFinished: (job: string) => RunRecord | null,
): { kind: GateBlocker["kind"]; run: RunRecord | null } | null {
  let newest: RunRecord | undefined;
  let active = false;
  for (const r of inCycle) {
    if (r.job_name !== up) continue;
    if (r.status === "SUCCESS") return null;
    newest = r;
    if (r.status === "PENDING" || r.status === "RUNNING" || r.status === "RETRYING") active = true;
  }
  if (newest) return { kind: active ? "active" : "ended", run: newest };
  const last = lastFinished(up);
  return last?.status === "SUCCESS" ? null : { kind: "absent", run: last };
}

/**
 * The gate as the dispatcher asks it: open when no upstream holds it closed.
 * Stops at the first that does (no text is built), and reads an upstream's
 * last finished run only when it has no run in the cycle.
 */
export function gateIsOpen(upstreams: readonly string[], inCycle: readonly RunRecord[], lastFinished: (job: string) => RunRecord | null): boolean {
  for (const up of upstreams) if (holding(up, inCycle, lastFinished) !== null) return false;
  return true;
}

/** Every upstream that holds the gate closed, with why (`svc why`, the cycle view). */
export function gateBlockers(
  upstreams: readonly string[],
  inCycle: readonly RunRecord[],
  lastFinished: (job: string) => RunRecord | null,
): GateBlocker[] {
  const out: GateBlocker[] = [];
  for (const up of upstreams) {
    const h = holding(up, inCycle, lastFinished);
    if (h === null) continue;
    const text =
      h.kind !== "absent"
        ? `${up} is ${h.run!.status} in this cycle (run ${h.run!.id})`
        : h.run
          ? `${up} has no run in this cycle and its last run (${h.run.id}) is ${h.run.status}`
          : `${up} has no run in this cycle and never ran`;
    out.push({ job: up, kind: h.kind, run: h.run, text });
  }
  return out;
}

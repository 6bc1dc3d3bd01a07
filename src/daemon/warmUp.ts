import type { DaemonConfig } from "../config/types.js";
import { startProcess } from "../executor/index.js";
import type { Logger } from "../shared/logger.js";
import { toError } from "../shared/toError.js";
import type { RunRecord, Store } from "../store/index.js";

/**
 * Warms the dispatch path once at startup, invisibly, so that svcd's first
 * scheduled dispatch is not much slower than later ones (issue 24; figures in
 * docs/perf/FIXES.md, "Warming the dispatch path at startup"). Nothing here
 * creates a run, emits an event or writes a row:
 *
 * - spawn: one `<executor.shell> -c :` through the executor's own start path
 *   (posix_spawn binding, pipes, line splitter, /proc start time), waited
 *   for; nobody hears of it;
 * - store: the engine's reads (a job's last finished run, a cycle's runs,
 *   a job's newest run) on a job name no job can have, and
 *   the RUNNING / SUCCESS / FAILED updates on run id -1 (they match no row),
 *   so their statements are prepared and SQLite's pages of job_runs' indexes
 *   are in the cache; a RunRecord through JSON.
 *
 * What it moves, and what stays cold (the run:status listeners that hear a
 * run's PENDING before its spawn, which only a rehearsal run would warm):
 * docs/perf/FIXES.md, "Warming the dispatch path at startup".
 *
 * `SVC_WARMUP` (benchmarks only): `0` turns it off, or a comma list of the
 * parts to run (`spawn,store`). Returns when done; never throws.
 */
export async function warmUp(deps: { store: Store; daemonConfig: DaemonConfig; cwd: string; log: Logger }): Promise<void> {
  const which = process.env.SVC_WARMUP;
  if (which === "0") return;
  const parts = which === undefined || which === "" ? ["spawn", "store"] : which.split(",");
  const t0 = performance.now();
  try {
    if (parts.includes("store")) warmStore(deps.store);
    if (parts.includes("spawn")) await warmSpawn(deps.daemonConfig, deps.cwd);
    deps.log.debug({ ms: Math.round(performance.now() - t0), parts }, "dispatch path warmed");
  } catch (e) {
    deps.log.debug({ err: toError(e).message }, "dispatch path warm-up failed (harmless)");
  }
}

/** No job has this name (job names match [a-z0-9_-]). */
const NOBODY = "\u0000warm-up";

function warmStore(store: Store): void {
  store.runs.lastFinished(NOBODY);
  store.runs.inCycle(NOBODY);
  store.runs.recent(NOBODY, 1);
  // (The PENDING queue is read by recovery just before: not read twice.)
  const at = new Date().toISOString();
  // A RunRecord's shape through JSON, as every run:status listener sends it; built here, not read: the
  // newest run through runs.audit would count every row of job_runs on the event loop at startup.
  const record: RunRecord = {
    id: 0, job_name: NOBODY, status: "PENDING", attempt: 1, trigger: "schedule", triggered_by: "scheduler", reason: null,
    cycle_id: NOBODY, tags: [], scheduled_for: at, created_at: at, started_at: null, finished_at: null, exit_code: null,
    sla_breached: 0, hc_status: null, pid: null, pid_start: null, error: null, duration_ms: null, next_attempt_at: null,
    scheduled_at: at, backfill_id: null, params: {},
  };
  JSON.parse(JSON.stringify(record));
  // The shapes of the engine's start and end updates (dispatcher.ts writeStarts, outcomes.ts ended); on
  // id -1 they change nothing and end in NotFoundError. A shape that drifts only loses its warm-up.
  const tries: [Parameters<Store["runs"]["transition"]>[1], Parameters<Store["runs"]["transition"]>[2], Parameters<Store["runs"]["transition"]>[3]][] = [
    ["RUNNING", { attempt: 1, started_at: at, pid: 1, pid_start: "1", next_attempt_at: null, error: null, exit_code: null }, "PENDING"],
    ["SUCCESS", { exit_code: 0, hc_status: null, finished_at: at, duration_ms: 0, pid: null, error: null }, "RUNNING"],
    ["FAILED", { exit_code: 1, hc_status: null, finished_at: at, duration_ms: 0, pid: null, error: "x" }, "RUNNING"],
  ];
  for (const [to, patch, from] of tries) {
    try {
      store.runs.transition(-1, to, patch, from);
    } catch {
      // NotFoundError: expected, nothing was written
    }
  }
}

function warmSpawn(cfg: DaemonConfig, cwd: string): Promise<void> {
  const handle = startProcess(
    { command: ":", shell: cfg.executor.shell, cwd, env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } },
    { killGraceMs: 1_000, onLine: () => {} },
  );
  const timeout = new Promise<void>((r) => setTimeout(r, 5_000).unref());
  return Promise.race([handle.exited.then(() => undefined), timeout]);
}

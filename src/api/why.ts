import type { JobConfig, ProjectConfig } from "../config/types.js";
import type { Engine } from "../engine/engine.js";
import { gateBlockers } from "../engine/gate.js";
import { slotsBetween, type Slot } from "../schedule/nextRun.js";
import type { ReadStore } from "../store/api.js";
import type { NonRunRow, RunRecord } from "../store/types.js";

/**
 * `GET /api/jobs/:name/why` (`svc why JOB`): why the job is not running, or
 * did not run when expected, from what the daemon already recorded: its
 * unfinished runs and their gates, paused, the traces of runs that did not
 * happen (non_runs: paused or excluded or missed slots, cycles it was not
 * triggered in), the runs of its upstreams in their latest cycle, its
 * skipped runs, and when the daemon and its config were started and loaded.
 * Read-only.
 */
export interface WhyReason {
  /** Stable token: running, retrying, waiting_upstream, waiting_slot, paused, excluded, missed, daemon_down, upstream_failed, upstream_skipped, upstream_running, never_triggered, never_scheduled, concurrency, skipped, ran, no_slot_yet, config_loaded_later, unknown. */
  code: string;
  text: string;
  /** What a person can do about it, as a command. */
  hint: string | null;
  at: string | null;
  run_id: number | null;
  cycle_id: string | null;
}

export interface WhyAnswer {
  job: string;
  frequency: string;
  paused: boolean;
  /** The first reason's text: the answer in one line. */
  summary: string;
  reasons: WhyReason[];
  last_run: RunRecord | null;
  next_run: string | null;
  /** The job's newest traces of runs that did not happen. */
  non_runs: NonRunRow[];
}

export interface WhyDeps {
  project(): ProjectConfig;
  store: ReadStore;
  engine: Engine;
  /** Epoch ms the daemon started. */
  startedAt: number;
  /** Epoch ms the config was last loaded, when known. */
  configLoadedAt: number | null;
  frequencyLabel(job: JobConfig): string;
}

const RECENT_RUNS = 50;
const RECENT_TRACES = 50;
/** Windows searched, smallest first, for the job's latest slot before now. */
const SLOT_WINDOWS_MS = [10 * 60_000, 2 * 3_600_000, 86_400_000, 8 * 86_400_000, 32 * 86_400_000, 400 * 86_400_000];

export function explainJob(deps: WhyDeps, job: JobConfig, now: number): WhyAnswer {
  const { store } = deps;
  const reasons: WhyReason[] = [];
  const add = (r: Partial<WhyReason> & Pick<WhyReason, "code" | "text">) =>
    reasons.push({ hint: null, at: null, run_id: null, cycle_id: null, ...r });
  const state = store.jobState.get(job.name);
  const paused = state?.paused === 1;
  const recent = store.runs.recent(job.name, RECENT_RUNS);
  const traces = store.nonRuns.search({ job: job.name }, RECENT_TRACES, 0).rows;
  const iso = (ms: number) => new Date(ms).toISOString();

  activeReasons(deps, job, add);
  if (paused) {
    const since = traces.find((t) => t.reason === "paused");
    add({
      code: "paused",
      text: `${job.name} is paused: no scheduled or dependency-triggered runs until it is resumed${since ? ` (runs skipped since ${since.first_at})` : ""}`,
      hint: `svc resume ${job.name}`,
      at: since?.first_at ?? null,
    });
  }

  const kind = job.schedule.frequency;
  if (kind === "manual") {
    add({
      code: "never_scheduled",
      text: `${job.name} has frequency manual: it runs only when started by hand${recent.length === 0 ? ", and it never was" : ""}${job.upstreams.length > 0 ? ` (its upstreams ${job.upstreams.join(", ")} only gate it)` : ""}`,
      hint: `svc run ${job.name}`,
    });
  } else if (job.dependencyTriggered) {
    dependencyReasons(deps, job, traces, add);
  } else {
    slotReasons(deps, job, now, recent, traces, add, iso);
  }

  // A recent run refused or dropped says so too (concurrency forbid, pipeline stopped, upstream skipped, skipped by hand).
  const skipped = recent.slice(0, 5).find((r) => r.status === "SKIPPED");
  if (skipped && !reasons.some((r) => r.run_id === skipped.id)) {
    const forbid = skipped.error?.startsWith("concurrency forbid") === true;
    add({
      code: forbid ? "concurrency" : "skipped",
      text: forbid
        ? `run ${skipped.id} (${skipped.created_at}) was SKIPPED: another run of ${job.name} was still running (concurrency: forbid)`
        : `run ${skipped.id} (${skipped.created_at}) was SKIPPED${skipped.error ? `: ${skipped.error}` : ""}`,
      at: skipped.created_at,
      run_id: skipped.id,
      cycle_id: skipped.cycle_id,
    });
  }
  if (reasons.length === 0) add({ code: "unknown", text: `no record explains a missing run of ${job.name}` });
  return {
    job: job.name,
    frequency: deps.frequencyLabel(job),
    paused,
    summary: reasons[0]!.text,
    reasons,
    last_run: recent[0] ?? null,
    next_run: deps.engine.nextRun(job.name)?.utc ?? null,
    non_runs: traces.slice(0, 10),
  };
}

type Add = (r: Partial<WhyReason> & Pick<WhyReason, "code" | "text">) => void;

/** What the job's unfinished runs are doing: running, waiting to retry, or PENDING behind a gate or a full pool. */
function activeReasons(deps: WhyDeps, job: JobConfig, add: Add): void {
  const { store } = deps;
  for (const r of store.runs.byStatus(["RUNNING", "RETRYING", "PENDING"])) {
    if (r.job_name !== job.name) continue;
    if (r.status === "RUNNING") {
      add({ code: "running", text: `run ${r.id} is running (since ${r.started_at ?? r.created_at})`, at: r.started_at, run_id: r.id, cycle_id: r.cycle_id });
    } else if (r.status === "RETRYING") {
      add({
        code: "retrying",
        text: `run ${r.id} failed attempt ${r.attempt}${r.error ? ` (${r.error})` : ""} and retries at ${r.next_attempt_at ?? "its retry delay"}`,
        at: r.next_attempt_at,
        run_id: r.id,
        cycle_id: r.cycle_id,
      });
    } else {
      const blockers = gateBlockers(job.upstreams, store.runs.inCycle(r.cycle_id), (j) => store.runs.lastFinished(j));
      if (blockers.length > 0) {
        const fix = blockers.find((b) => b.kind !== "active");
        add({
          code: "waiting_upstream",
          text: `run ${r.id} is PENDING, waiting for its upstreams: ${blockers.map((b) => b.text).join("; ")}`,
          hint: fix ? (fix.kind === "ended" ? `svc retry ${fix.job}` : `svc run ${fix.job} --cycle ${r.cycle_id.slice(0, 8)}`) : null,
          at: r.created_at,
          run_id: r.id,
          cycle_id: r.cycle_id,
        });
      } else {
        const { running, waiting } = deps.engine.counts();
        add({
          code: "waiting_slot",
          text: `run ${r.id} is PENDING, waiting for a free slot (${running} running, ${waiting} waiting; executor.pool_size and scheduler.max_concurrent_jobs bound them)`,
          at: r.created_at,
          run_id: r.id,
          cycle_id: r.cycle_id,
        });
      }
    }
  }
}

/**
 * A time-scheduled job: its latest slot before now, and what became of it: a
 * run, a trace (paused, excluded, missed), the daemon not running then, or the
 * config loaded after it.
 */
function slotReasons(deps: WhyDeps, job: JobConfig, now: number, recent: RunRecord[], traces: NonRunRow[], add: Add, iso: (ms: number) => string): void {
  const slot = lastSlot(job, now);
  if (slot === null) {
    add({ code: "no_slot_yet", text: `no slot of ${job.name} has come in the last 400 days` });
    return;
  }
  const ran = recent.find((r) => r.scheduled_for === slot.utc);
  if (ran) {
    add({ code: "ran", text: `its latest slot (${slot.local}) made run ${ran.id}: ${ran.status}${ran.error ? ` (${ran.error})` : ""}`, at: slot.utc, run_id: ran.id, cycle_id: ran.cycle_id });
    return;
  }
  if (slot.excluded !== null) {
    add({ code: "excluded", text: `its latest slot (${slot.local}) is excluded: ${slot.excluded}`, at: slot.utc });
    return;
  }
  const trace = traces.find((t) => t.first_slot !== null && t.last_slot !== null && t.first_slot <= slot.utc && slot.utc <= t.last_slot) ??
    traces.find((t) => t.first_slot === slot.utc);
  if (trace) {
    add({
      code: trace.reason,
      text: `its latest slot (${slot.local}) made no run: ${trace.detail}${trace.count > 1 ? ` (${trace.count} slots from ${trace.first_slot} to ${trace.last_slot})` : ""}`,
      hint: trace.reason === "paused" ? `svc resume ${job.name}` : trace.reason === "missed" ? `svc run ${job.name}` : null,
      at: slot.utc,
    });
    return;
  }
  if (slot.at < deps.startedAt) {
    add({
      code: "daemon_down",
      text: `its latest slot (${slot.local}) came before the daemon started (${iso(deps.startedAt)}): nothing ran it${job.catchup ? "" : "; catchup is false, so a missed slot is not run later"}`,
      hint: `svc run ${job.name}`,
      at: slot.utc,
    });
    return;
  }
  if (deps.configLoadedAt !== null && slot.at < deps.configLoadedAt) {
    add({
      code: "config_loaded_later",
      text: `its latest slot (${slot.local}) came before svc.yaml was last loaded (${iso(deps.configLoadedAt)}): the job or its schedule may not have been there yet`,
      at: slot.utc,
    });
    return;
  }
  add({ code: "unknown", text: `its latest slot (${slot.local}) made no run, and no record says why`, at: slot.utc });
}

/** The job's latest slot at or before `now` (excluded ones too), or null. */
function lastSlot(job: JobConfig, now: number): Slot | null {
  for (const w of SLOT_WINDOWS_MS) {
    const { slots } = slotsBetween(job.schedule, now - w, now + 1, 10_000);
    if (slots.length > 0) return slots[slots.length - 1]!;
  }
  return null;
}

/**
 * A dependency-triggered job: the latest cycle one of its upstreams ran in,
 * and what happened there: it ran, a trace (paused, upstream failed), or its
 * upstreams' state in that cycle.
 */
function dependencyReasons(deps: WhyDeps, job: JobConfig, traces: NonRunRow[], add: Add): void {
  const { store } = deps;
  const newestUp = job.upstreams
    .map((u) => store.runs.recent(u, 1)[0])
    .filter((r): r is RunRecord => r !== undefined)
    .sort((a, b) => b.id - a.id)[0];
  if (!newestUp) {
    const several = job.upstreams.length > 1;
    add({
      code: "never_triggered",
      text: `${job.name} runs when ${job.upstreams.join(", ")} succeed${several ? "" : "s"}, and ${several ? "none of them has ever" : "it has never"} run`,
      hint: `svc why ${job.upstreams[0]}`,
    });
    return;
  }
  const cycle = newestUp.cycle_id;
  const inCycle = store.runs.inCycle(cycle);
  const own = inCycle.filter((r) => r.job_name === job.name);
  const ownLast = own[own.length - 1];
  if (ownLast) {
    add({
      code: "ran",
      text: `in the latest cycle of its upstreams (${cycle}) it made run ${ownLast.id}: ${ownLast.status}${ownLast.error ? ` (${ownLast.error})` : ""}`,
      at: ownLast.created_at,
      run_id: ownLast.id,
      cycle_id: cycle,
    });
    return;
  }
  const trace = traces.find((t) => t.cycle_id === cycle);
  if (trace) {
    add({
      code: trace.reason,
      text: `it did not run in cycle ${cycle}: ${trace.detail}`,
      hint: trace.reason === "upstream_failed" && trace.upstream ? `svc retry ${trace.upstream}` : trace.reason === "paused" ? `svc resume ${job.name}` : null,
      at: trace.first_at,
      run_id: trace.upstream_run_id,
      cycle_id: cycle,
    });
    return;
  }
  for (const u of job.upstreams) {
    const ups = inCycle.filter((r) => r.job_name === u);
    const last = ups[ups.length - 1];
    if (!last) continue;
    if (last.status === "FAILED" || last.status === "SKIPPED") {
      add({
        code: last.status === "FAILED" ? "upstream_failed" : "upstream_skipped",
        text: `it did not run in cycle ${cycle}: upstream ${u} ${last.status} (run ${last.id}${last.error ? `: ${last.error}` : ""})`,
        hint: last.status === "FAILED" ? `svc retry ${u}` : null,
        at: last.finished_at,
        run_id: last.id,
        cycle_id: cycle,
      });
      return;
    }
    if (last.status !== "SUCCESS") {
      add({
        code: "upstream_running",
        text: `upstream ${u} is ${last.status} in cycle ${cycle} (run ${last.id}): ${job.name} follows when it succeeds`,
        hint: `svc logs ${u} -f`,
        run_id: last.id,
        cycle_id: cycle,
      });
      return;
    }
  }
  if (deps.configLoadedAt !== null && newestUp.finished_at !== null && Date.parse(newestUp.finished_at) < deps.configLoadedAt) {
    add({
      code: "config_loaded_later",
      text: `its upstream ${newestUp.job_name} succeeded in cycle ${cycle} before svc.yaml was last loaded: ${job.name} may not have depended on it then`,
      cycle_id: cycle,
    });
    return;
  }
  add({ code: "unknown", text: `its upstreams succeeded in cycle ${cycle} but no record says why ${job.name} did not run there`, cycle_id: cycle });
}

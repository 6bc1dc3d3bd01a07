import { statSync } from "node:fs";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { ProjectConfig } from "../config/types.js";
import type { Engine } from "../engine/engine.js";
import type { EventBus } from "../engine/events.js";
import type { ReadStore } from "../store/api.js";
import type { LogStream, RunRecord } from "../store/types.js";

/**
 * Prometheus metrics (CONTRACT §7.4), on a registry of our own (never
 * prom-client's global one).
 *
 * Nothing here runs on the engine's tick. Counters and histograms are fed by
 * the event bus (an increment per event, no I/O); gauges are computed when
 * Prometheus scrapes, from the engine's in-memory maps, the job_state table
 * (one row per job) and a stat of the database file: a scrape never reads
 * job_runs, so its cost does not grow with the run history.
 *
 * Counters start at zero with each daemon (Prometheus handles resets); what
 * must survive a restart is a gauge read from the database (last success,
 * next run, paused). The job label is `job_name`: Prometheus puts its own
 * `job` label on every scraped series.
 */
export interface Metrics {
  /** The exposition, in the Prometheus text format. */
  render(): Promise<string>;
  readonly contentType: string;
  /** Counts a reload: `success` or `failure` (rejected config). */
  reloaded(ok: boolean): void;
  /** Unsubscribes from the bus. Safe to call twice. */
  close(): void;
}

export interface MetricsDeps {
  bus: EventBus;
  store: ReadStore;
  engine: Engine;
  project(): ProjectConfig;
  /** The database file; its size (plus the -wal file) is `svc_db_size_bytes`. */
  databasePath: string;
  version: string;
}

/** Run durations: 100 ms to 6 h. */
export const DURATION_BUCKETS = [0.1, 0.5, 1, 5, 15, 30, 60, 300, 900, 1800, 3600, 7200, 21600];
/** Start minus scheduled instant: 5 ms to 5 min. */
export const DISPATCH_DELAY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

const JOB = "job_name";
const LINT_FAILING_DEFAULTS = ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"];

export function createMetrics(deps: MetricsDeps): Metrics {
  const { bus, store, engine, project } = deps;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // Gauges whose names end in _total, which `promtool check metrics` rejects (a _total is a counter);
  // nodejs_active_handles, _requests and _resources (by type) say the same.
  for (const name of LINT_FAILING_DEFAULTS) registry.removeSingleMetric(name);

  const runs = new Counter({
    name: "svc_runs_total",
    help: "Runs that reached their final status (SUCCESS, FAILED, SKIPPED) since svcd started, by job, status and trigger.",
    labelNames: [JOB, "status", "trigger"],
    registers: [registry],
  });
  const duration = new Histogram({
    name: "svc_run_duration_seconds",
    help: "Duration of finished runs that started (first start to end, retries included), by job.",
    labelNames: [JOB],
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const dispatchDelay = new Histogram({
    name: "svc_dispatch_delay_seconds",
    help: "Start of a scheduled run minus its scheduled instant (first attempt; catch-up and backfill runs excluded).",
    buckets: DISPATCH_DELAY_BUCKETS,
    registers: [registry],
  });
  const sla = new Counter({
    name: "svc_sla_breaches_total",
    help: "Runs that passed their job's sla while running, by job.",
    labelNames: [JOB],
    registers: [registry],
  });
  const alerts = new Counter({
    name: "svc_alerts_total",
    help: "Notifications that reached a final status (delivered, failed), by provider.",
    labelNames: ["provider", "status"],
    registers: [registry],
  });
  const logLines = new Counter({
    name: "svc_log_lines_total",
    help: "Job log lines written to the database, by stream.",
    labelNames: ["stream"],
    registers: [registry],
  });
  const reloads = new Counter({
    name: "svc_config_reloads_total",
    help: "Config reloads (SIGHUP, svc reload, POST /api/daemon/reload), by result: success or failure (rejected, old config kept).",
    labelNames: ["result"],
    registers: [registry],
  });
  for (const result of ["success", "failure"]) reloads.inc({ result }, 0);
  for (const stream of ["stdout", "stderr", "healthcheck"] satisfies LogStream[]) logLines.inc({ stream }, 0);

  // Gauges, computed at scrape time.
  const running = new Gauge({ name: "svc_runs_running", help: "Runs RUNNING now, by job.", labelNames: [JOB], registers: [registry] });
  const pending = new Gauge({ name: "svc_runs_pending", help: "Runs PENDING (waiting for a pool slot or their upstreams).", registers: [registry] });
  const retrying = new Gauge({ name: "svc_runs_retrying", help: "Runs RETRYING (waiting out a retry delay).", registers: [registry] });
  const lastSuccess = new Gauge({
    name: "svc_job_last_success_timestamp_seconds",
    help: "When the job's last successful run finished (Unix time); absent for a job that never succeeded.",
    labelNames: [JOB],
    registers: [registry],
  });
  const nextRun = new Gauge({
    name: "svc_job_next_run_timestamp_seconds",
    help: "The job's next scheduled instant (Unix time); absent for manual and after: jobs.",
    labelNames: [JOB],
    registers: [registry],
  });
  const paused = new Gauge({ name: "svc_job_paused", help: "1 when the job is paused, else 0.", labelNames: [JOB], registers: [registry] });
  const dbSize = new Gauge({ name: "svc_db_size_bytes", help: "Size of the SQLite database file plus its -wal file.", registers: [registry] });
  const info = new Gauge({ name: "svc_info", help: "Always 1; the version label is svcd's.", labelNames: ["version"], registers: [registry] });
  info.set({ version: deps.version }, 1);

  /** Job label sets seen by each per-job counter and histogram, so a job removed by reload drops them. */
  const seen = new Map<string, { runs: Set<string>; duration: boolean; sla: boolean }>();
  const seenFor = (job: string) => {
    let s = seen.get(job);
    if (!s) seen.set(job, (s = { runs: new Set(), duration: false, sla: false }));
    return s;
  };

  /** FAILED is final only when no retry (FAILED -> RETRYING) or skip (FAILED -> SKIPPED) follows in the same turn. */
  const failedInTurn = new Map<number, RunRecord>();

  function countFinal(run: RunRecord): void {
    if (!project().jobs.has(run.job_name)) return; // removed by a reload: its series are gone
    const s = seenFor(run.job_name);
    runs.inc({ [JOB]: run.job_name, status: run.status, trigger: run.trigger });
    s.runs.add(`${run.status}\u0000${run.trigger}`);
    if (run.duration_ms !== null) {
      duration.observe({ [JOB]: run.job_name }, run.duration_ms / 1000);
      s.duration = true;
    }
  }

  const unsubscribe = [
    bus.on("run:status", ({ run, from }) => {
      if (run.status === "RUNNING" && from === "PENDING") observeDispatch(run);
      else if (run.status === "SUCCESS") countFinal(run);
      else if (run.status === "SKIPPED") {
        failedInTurn.delete(run.id);
        countFinal(run);
      } else if (run.status === "RETRYING") failedInTurn.delete(run.id);
      else if (run.status === "FAILED") {
        // The engine decides on a retry synchronously after recording FAILED: look once this turn's work is done.
        failedInTurn.set(run.id, run);
        queueMicrotask(() => {
          const failed = failedInTurn.get(run.id);
          if (failed === undefined) return;
          failedInTurn.delete(run.id);
          countFinal(failed);
        });
      }
    }),
    bus.on("run:notify", ({ event, run }) => {
      if (event !== "on_sla_breach" || !project().jobs.has(run.job_name)) return;
      sla.inc({ [JOB]: run.job_name });
      seenFor(run.job_name).sla = true;
    }),
    bus.on("run:logs", ({ lines }) => {
      let out = 0;
      let err = 0;
      let hc = 0;
      for (const l of lines) {
        if (l.stream === "stdout") out++;
        else if (l.stream === "stderr") err++;
        else hc++;
      }
      if (out > 0) logLines.inc({ stream: "stdout" }, out);
      if (err > 0) logLines.inc({ stream: "stderr" }, err);
      if (hc > 0) logLines.inc({ stream: "healthcheck" }, hc);
    }),
    bus.on("alert:finished", ({ provider, status }) => alerts.inc({ provider, status })),
    bus.on("config:reloaded", () => dropRemovedJobs()),
  ];

  function observeDispatch(run: RunRecord): void {
    if (run.trigger !== "schedule" || run.triggered_by === "catchup" || run.attempt !== 1) return;
    const slot = run.scheduled_at ?? run.scheduled_for;
    if (slot === null || run.started_at === null) return;
    const delay = (Date.parse(run.started_at) - Date.parse(slot)) / 1000;
    if (Number.isFinite(delay)) dispatchDelay.observe(Math.max(0, delay));
  }

  function dropRemovedJobs(): void {
    const jobs = project().jobs;
    for (const [job, s] of seen) {
      if (jobs.has(job)) continue;
      for (const key of s.runs) {
        const [status, trigger] = key.split("\u0000");
        runs.remove({ [JOB]: job, status, trigger });
      }
      if (s.duration) duration.remove({ [JOB]: job });
      if (s.sla) sla.remove({ [JOB]: job });
      seen.delete(job);
    }
  }

  /** The gauges, from memory and one read of job_state (no job_runs query). */
  function refresh(): void {
    const jobs = project().jobs;
    const live = engine.liveRuns();
    running.reset();
    for (const name of jobs.keys()) running.set({ [JOB]: name }, live.runningByJob.get(name) ?? 0);
    pending.set(live.pending);
    retrying.set(live.retrying);

    lastSuccess.reset();
    paused.reset();
    const pausedJobs = new Set<string>();
    for (const state of store.jobState.all()) {
      if (!jobs.has(state.job_name)) continue;
      if (state.paused === 1) pausedJobs.add(state.job_name);
      const at = state.last_success === null ? Number.NaN : Date.parse(state.last_success);
      if (Number.isFinite(at)) lastSuccess.set({ [JOB]: state.job_name }, at / 1000);
    }
    nextRun.reset();
    for (const name of jobs.keys()) {
      paused.set({ [JOB]: name }, pausedJobs.has(name) ? 1 : 0);
      const slot = engine.nextRun(name);
      if (slot) nextRun.set({ [JOB]: name }, slot.at / 1000);
    }
    dbSize.set(fileSize(deps.databasePath) + fileSize(`${deps.databasePath}-wal`));
  }

  let closed = false;
  return {
    contentType: registry.contentType,
    async render() {
      refresh();
      return registry.metrics();
    },
    reloaded(ok) {
      reloads.inc({ result: ok ? "success" : "failure" });
    },
    close() {
      if (closed) return;
      closed = true;
      for (const u of unsubscribe) u();
      registry.clear();
    },
  };
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

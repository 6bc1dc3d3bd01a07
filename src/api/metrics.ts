import { statSync } from "node:fs";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { ProjectConfig } from "../config/types.js";
import type { Engine } from "../engine/engine.js";
import type { EventBus } from "../engine/events.js";
import type { ReadStore } from "../store/api.js";
import type { LogStream, RunRecord } from "../store/types.js";
import { JobSeries } from "./jobSeries.js";

/**
 * Prometheus metrics (CONTRACT §7.4), on a registry of our own (never
 * prom-client's global one).
 *
 * Nothing here runs on the engine's tick. Counters and histograms are fed by
 * the event bus (an increment per event, no I/O); gauges are computed when
 * Prometheus scrapes, from the engine's in-memory maps, job_state (the names
 * of the paused jobs; the last success of the jobs that succeeded since the
 * last scrape, see readLastSuccess) and a stat of the database file: a
 * scrape never reads job_runs, so its cost does not grow with the run
 * history.
 *
 * Counters start at zero with each daemon (Prometheus handles resets); what
 * must survive a restart is a gauge read from the database (last success,
 * next run, paused). The job label is `job_name`: Prometheus puts its own
 * `job` label on every scraped series.
 */
export interface Metrics {
  /** The exposition, in the Prometheus text format (UTF-8). */
  render(): Promise<Buffer>;
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

const LINT_FAILING_DEFAULTS = ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"];

export function createMetrics(deps: MetricsDeps): Metrics {
  const { bus, store, engine, project } = deps;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // Gauges whose names end in _total, which `promtool check metrics` rejects (a _total is a counter);
  // nodejs_active_handles, _requests and _resources (by type) say the same.
  for (const name of LINT_FAILING_DEFAULTS) registry.removeSingleMetric(name);

  const dispatchDelay = new Histogram({
    name: "svc_dispatch_delay_seconds",
    help: "Start of a scheduled run minus its scheduled instant (first attempt; catch-up and backfill runs excluded).",
    buckets: DISPATCH_DELAY_BUCKETS,
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
  const pending = new Gauge({ name: "svc_runs_pending", help: "Runs PENDING (waiting for a pool slot or their upstreams).", registers: [registry] });
  const retrying = new Gauge({ name: "svc_runs_retrying", help: "Runs RETRYING (waiting out a retry delay).", registers: [registry] });
  const dbSize = new Gauge({ name: "svc_db_size_bytes", help: "Size of the SQLite database file plus its -wal file.", registers: [registry] });
  const info = new Gauge({ name: "svc_info", help: "Always 1; the version label is svcd's.", labelNames: ["version"], registers: [registry] });
  info.set({ version: deps.version }, 1);

  const perJob = new JobSeries(DURATION_BUCKETS);

  /**
   * svc_job_last_success_timestamp_seconds, from job_state: every row once,
   * then on each scrape only the rows of the jobs that had a SUCCESS since
   * (the run's outcome writes last_success in the same transaction as the
   * status), and every row again after a reload and at least every
   * FULL_READ_MS. Unix seconds, or null.
   */
  const lastSuccess = new Map<string, number | null>();
  const successSince = new Set<string>();
  let fullReadAt = Number.NEGATIVE_INFINITY;
  /** FAILED is final only when no retry (FAILED -> RETRYING) or skip (FAILED -> SKIPPED) follows in the same turn. */
  const failedInTurn = new Map<number, RunRecord>();

  function countFinal(run: RunRecord): void {
    if (!project().jobs.has(run.job_name)) return; // removed by a reload: its series are gone
    perJob.run(run.job_name, run.status, run.trigger, run.duration_ms === null ? null : run.duration_ms / 1000);
  }

  const unsubscribe = [
    bus.on("run:status", ({ run, from }) => {
      if (run.status === "RUNNING" && from === "PENDING") observeDispatch(run);
      else if (run.status === "SUCCESS") {
        successSince.add(run.job_name);
        countFinal(run);
      } else if (run.status === "SKIPPED") {
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
      perJob.slaBreach(run.job_name);
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
    bus.on("config:reloaded", () => {
      perJob.retain(project().jobs);
      fullReadAt = Number.NEGATIVE_INFINITY;
    }),
  ];

  function observeDispatch(run: RunRecord): void {
    if (run.trigger !== "schedule" || run.triggered_by === "catchup" || run.attempt !== 1) return;
    const slot = run.scheduled_at ?? run.scheduled_for;
    if (slot === null || run.started_at === null) return;
    const delay = (Date.parse(run.started_at) - Date.parse(slot)) / 1000;
    if (Number.isFinite(delay)) dispatchDelay.observe(Math.max(0, delay));
  }

  function readLastSuccess(): void {
    const now = Date.now();
    if (now - fullReadAt >= FULL_READ_MS || now < fullReadAt) {
      fullReadAt = now;
      successSince.clear();
      lastSuccess.clear();
      for (const state of store.jobState.all()) lastSuccess.set(state.job_name, unixSeconds(state.last_success));
      return;
    }
    for (const job of successSince) lastSuccess.set(job, unixSeconds(store.jobState.get(job)?.last_success ?? null));
    successSince.clear();
  }

  /** The per-job gauges, from the engine's maps and job_state (no job_runs query). */
  function perJobText(): string[] {
    const jobs = project().jobs;
    const live = engine.liveRuns();
    pending.set(live.pending);
    retrying.set(live.retrying);
    dbSize.set(fileSize(deps.databasePath) + fileSize(`${deps.databasePath}-wal`));
    readLastSuccess();
    // Paused jobs are few: their names, rather than every row.
    const paused = new Set(store.jobState.pausedJobs());
    return perJob.render(jobs.keys(), (name, g) => {
      const slot = engine.nextRun(name);
      g.running = live.runningByJob.get(name) ?? 0;
      g.lastSuccess = lastSuccess.get(name) ?? null;
      g.nextRun = slot ? slot.at / 1000 : null;
      g.paused = paused.has(name);
    });
  }

  let closed = false;
  return {
    contentType: registry.contentType,
    async render() {
      const parts = perJobText();
      const text = await registry.metrics();
      return toBuffer(text.endsWith("\n") ? text : `${text}\n`, parts);
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

/** How often the last-success gauges are read from every job_state row, whatever the events said. */
const FULL_READ_MS = 60_000;

function unixSeconds(iso: string | null): number | null {
  const at = iso === null ? Number.NaN : Date.parse(iso);
  return Number.isFinite(at) ? at / 1000 : null;
}

/**
 * prom-client's text, then the per-job pieces, in one buffer: one copy of
 * each piece, and nothing for fastify to encode. The pieces are ASCII (job
 * names match JOB_NAME_PATTERN; statuses, triggers and numbers), so their
 * length is their size in bytes.
 */
function toBuffer(head: string, parts: readonly string[]): Buffer {
  let size = Buffer.byteLength(head);
  for (const p of parts) size += p.length;
  const buf = Buffer.allocUnsafe(size);
  let at = buf.write(head, 0, "utf8");
  for (const p of parts) at += buf.write(p, at);
  return buf;
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

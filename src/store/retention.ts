import type { RetentionOptions, RetentionResult } from "./api.js";
import type { FtsIndexer } from "./ftsIndexer.js";
import type { Db, Stmt } from "./sql.js";

/** Runs chosen per step; their logs are then deleted LOG_BATCH lines per transaction. */
const RUN_BATCH = 500;
const LOG_BATCH = 5_000;
/** non_runs rows, and alerts without a run, deleted per statement. */
const ROW_BATCH = 5_000;

/**
 * Retention (SPEC rule 12): runs older than max_age (by finished_at, or
 * created_at for a run that never finished), then, per job, every completed
 * run beyond the max_runs_per_job most recent. Only SUCCESS, FAILED and
 * SKIPPED runs are candidates, so PENDING, RUNNING and RETRYING are never
 * pruned; nor is a completed run while its cycle has a run not over (the
 * downstream still to run reads its outputs, a retry in the cycle too) or
 * while its backfill has one (its progress counts it). Logs (with their full-text entries), outputs and alerts go with
 * their run; run_tags rows cascade. Alerts go through their foreign key,
 * which sets run_id to NULL: each pass ends by deleting the final alerts
 * without a run, so one still pending (its delivery under way) goes at a
 * later pass, once final, and the table is bounded by the runs kept.
 * max_age also deletes the traces of runs that did not happen (non_runs,
 * `svc why`) last extended before the cutoff: a row that a paused job still
 * extends stays, however old its first slot.
 *
 * The work is a generator of small steps, each one short transaction: the
 * synchronous `vacuum` runs them back to back, `vacuumAsync` yields to the
 * event loop between them, so a prune of millions of lines never blocks the
 * daemon for more than one step. Every statement re-checks the status, so a
 * run that left the completed states between steps is kept.
 */
export class Retention {
  private readonly st: Record<
    | "byAge"
    | "activeBackfills"
    | "jobs"
    | "nthFinished"
    | "byCap"
    | "spans"
    | "deleteLines"
    | "linesByStream"
    | "uncount"
    | "deleteSpan"
    | "trimSpan"
    | "count"
    | "deleteOutputs"
    | "deleteOrphanAlerts"
    | "deleteCounts"
    | "deleteRuns"
    | "deleteNonRuns",
    Stmt
  >;
  private readonly deleteLogBatch: (runIds: string) => { deleted: number; maxId: number };
  private readonly deleteRunBatch: (runIds: string) => { runs: number; outputs: number };

  constructor(
    private readonly db: Db,
    private readonly indexer: FtsIndexer,
  ) {
    const active = "('PENDING', 'RUNNING', 'RETRYING')";
    // Completed, and its cycle is over: a run still to come in the cycle (a downstream PENDING or
    // RETRYING, a retry started in it) reads the cycle's outputs and gates on its runs (cycle_id index).
    const done = `status IN ('SUCCESS', 'FAILED', 'SKIPPED')
      AND NOT EXISTS (SELECT 1 FROM job_runs live WHERE live.cycle_id = job_runs.cycle_id AND live.status IN ${active})`;
    // Not of a backfill still going: its progress (and `svc backfill --wait`'s exit code) counts its runs.
    const notInActiveBackfill = "(backfill_id IS NULL OR backfill_id NOT IN (SELECT value FROM json_each(?)))";
    const ids = "SELECT value FROM json_each(?)";
    this.st = {
      // created_at <= finished_at, so the created_at index bounds the scan.
      byAge: db
        .prepare(
          `SELECT id FROM job_runs WHERE created_at < ? AND coalesce(finished_at, created_at) < ? AND ${done} AND ${notInActiveBackfill}
           ORDER BY created_at LIMIT ${RUN_BATCH}`,
        )
        .pluck(),
      // Distinct job names by skipping through the job index, O(jobs * log runs).
      jobs: db
        .prepare(
          `WITH RECURSIVE j (name) AS (
             SELECT min(job_name) FROM job_runs
             UNION ALL SELECT (SELECT min(job_name) FROM job_runs WHERE job_name > j.name) FROM j WHERE j.name IS NOT NULL)
           SELECT name FROM j WHERE name IS NOT NULL`,
        )
        .pluck(),
      // Backfills with a run not over (through the status index: the unfinished runs are few, or a
      // backfill's own). Read before each choice of runs: a backfill's runs are all created with it,
      // unfinished, so one created later has nothing to choose yet.
      activeBackfills: db
        .prepare(`SELECT DISTINCT backfill_id FROM job_runs INDEXED BY job_runs_status WHERE status IN ${active} AND backfill_id IS NOT NULL`)
        .pluck(),
      // The N most recent completed runs are kept, whether their cycles are over or not.
      nthFinished: db.prepare(`SELECT id FROM job_runs WHERE job_name = ? AND status IN ('SUCCESS', 'FAILED', 'SKIPPED') ORDER BY id DESC LIMIT 1 OFFSET ?`).pluck(),
      byCap: db
        .prepare(`SELECT id FROM job_runs WHERE job_name = ? AND id < ? AND ${done} AND ${notInActiveBackfill} ORDER BY id LIMIT ${RUN_BATCH}`)
        .pluck(),
      spans: db.prepare(
        `SELECT run_id, first_seq, last_seq, first_id FROM run_log_spans
         WHERE run_id IN (SELECT id FROM job_runs WHERE id IN (${ids}) AND ${done}) LIMIT ${LOG_BATCH}`,
      ),
      deleteLines: db.prepare("DELETE FROM run_logs WHERE id BETWEEN ? AND ?"),
      // A run's counts follow its lines batch by batch: a reader mid-pass (or after a pass stopped by a
      // shutdown) gets totals that match the lines still there.
      linesByStream: db.prepare("SELECT stream, count(*) AS n FROM run_logs WHERE id BETWEEN ? AND ? GROUP BY stream"),
      uncount: db.prepare("UPDATE run_log_counts SET lines = max(0, lines - ?) WHERE run_id = ? AND stream = ?"),
      deleteSpan: db.prepare("DELETE FROM run_log_spans WHERE run_id = ? AND first_seq = ?"),
      trimSpan: db.prepare("UPDATE run_log_spans SET first_seq = ?, first_id = ? WHERE run_id = ? AND first_seq = ?"),
      count: db.prepare("UPDATE store_meta SET value = value - ? WHERE key = 'log_lines'"),
      deleteOutputs: db.prepare(`DELETE FROM run_outputs WHERE run_id IN (SELECT id FROM job_runs WHERE id IN (${ids}) AND ${done})`),
      // Final alerts whose run is gone (pruned, in this pass or by a version that kept alerts); a pending one is
      // being delivered (its row is updated after each attempt).
      deleteOrphanAlerts: db.prepare(`DELETE FROM alerts WHERE id IN (SELECT id FROM alerts WHERE run_id IS NULL AND status != 'pending' LIMIT ${ROW_BATCH})`),
      deleteCounts: db.prepare(`DELETE FROM run_log_counts WHERE run_id IN (SELECT id FROM job_runs WHERE id IN (${ids}) AND ${done})`),
      deleteRuns: db.prepare(`DELETE FROM job_runs WHERE id IN (${ids}) AND ${done}`),
      // Oldest first (ids grow with time), so each batch finds its rows at the front of the table.
      deleteNonRuns: db.prepare(`DELETE FROM non_runs WHERE id IN (SELECT id FROM non_runs WHERE last_at < ? ORDER BY id LIMIT ${ROW_BATCH})`),
    };
    // At most LOG_BATCH lines per transaction: whole spans, and the front
    // of a span that is bigger than what is left of the budget.
    this.deleteLogBatch = db.transaction((runIds: string): { deleted: number; maxId: number } => {
      let budget = LOG_BATCH;
      for (const sp of this.st.spans.all(runIds) as SpanRow[]) {
        if (budget === 0) break;
        const size = sp.last_seq - sp.first_seq + 1;
        const k = Math.min(size, budget);
        const lastId = sp.first_id + k - 1;
        this.indexer.forget(sp.first_id, lastId);
        for (const c of this.st.linesByStream.all(sp.first_id, lastId) as { stream: string; n: number }[]) this.st.uncount.run(c.n, sp.run_id, c.stream);
        this.st.deleteLines.run(sp.first_id, lastId);
        if (k === size) this.st.deleteSpan.run(sp.run_id, sp.first_seq);
        else this.st.trimSpan.run(sp.first_seq + k, sp.first_id + k, sp.run_id, sp.first_seq);
        budget -= k;
      }
      const deleted = LOG_BATCH - budget;
      if (deleted === 0) return { deleted, maxId: -1 };
      this.st.count.run(deleted);
      return { deleted, maxId: this.indexer.lowerWithin() };
    });
    this.deleteRunBatch = db.transaction((runIds: string) => {
      this.st.deleteCounts.run(runIds);
      return { outputs: this.st.deleteOutputs.run(runIds).changes, runs: this.st.deleteRuns.run(runIds).changes };
    });
  }

  vacuum(opts: RetentionOptions, nowMs: number): RetentionResult {
    const result = emptyResult();
    for (const _ of this.steps(opts, nowMs, result)) {
      // each step already ran; nothing to wait for
    }
    return result;
  }

  /** Stops early (with the counts so far) if the store is closed while it waits between steps. */
  async vacuumAsync(opts: RetentionOptions, nowMs: number): Promise<RetentionResult> {
    const result = emptyResult();
    const steps = this.steps(opts, nowMs, result);
    for (let step = steps.next(); !step.done; ) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (!this.db.open) break;
      step = steps.next();
    }
    return result;
  }

  private *steps(opts: RetentionOptions, nowMs: number, result: RetentionResult): Generator<void> {
    if (opts.maxAgeMs !== null) {
      if (!(opts.maxAgeMs >= 0)) throw new RangeError(`maxAgeMs must be >= 0, got ${opts.maxAgeMs}`);
      const cutoff = new Date(nowMs - opts.maxAgeMs).toISOString();
      for (;;) {
        const ids = this.st.byAge.all(cutoff, cutoff, this.activeBackfills()) as number[];
        if (ids.length === 0) break;
        yield* this.deleteRuns(ids, result, "runsByAge");
      }
      yield* this.inBatches(this.st.deleteNonRuns, [cutoff], result, "nonRuns");
    }
    if (opts.maxRunsPerJob !== null) {
      const keep = opts.maxRunsPerJob;
      if (!Number.isInteger(keep) || keep < 0) throw new RangeError(`maxRunsPerJob must be an integer >= 0, got ${keep}`);
      for (const job of this.st.jobs.all() as string[]) {
        // Completed runs older than the keep-th most recent one go.
        const bound = keep === 0 ? Number.MAX_SAFE_INTEGER : (this.st.nthFinished.get(job, keep - 1) as number | undefined);
        if (bound === undefined) continue;
        for (;;) {
          const ids = this.st.byCap.all(job, bound, this.activeBackfills()) as number[];
          if (ids.length === 0) break;
          yield* this.deleteRuns(ids, result, "runsByCap");
        }
        yield;
      }
    }
    if (opts.maxAgeMs !== null || opts.maxRunsPerJob !== null) yield* this.inBatches(this.st.deleteOrphanAlerts, [], result, "alerts");
  }

  /** The ids of the backfills still going, as the JSON the choice of runs takes. */
  private activeBackfills(): string {
    return JSON.stringify(this.st.activeBackfills.all());
  }

  /** Runs a DELETE of at most ROW_BATCH rows until it deletes fewer, counting them into `result` before each yield. */
  private *inBatches(stmt: Stmt, params: unknown[], result: RetentionResult, counter: "nonRuns" | "alerts"): Generator<void> {
    for (;;) {
      const n = stmt.run(...params).changes;
      result[counter] += n;
      yield;
      if (n < ROW_BATCH) break;
    }
  }

  /**
   * Deletes the runs' logs in bounded batches, then the outputs and runs,
   * counting each batch into `result` before yielding: a prune stopped at a
   * yield (the store closed) reports exactly what it deleted.
   */
  private *deleteRuns(ids: number[], result: RetentionResult, counter: "runsByAge" | "runsByCap"): Generator<void> {
    const json = JSON.stringify(ids);
    for (;;) {
      const { deleted: n, maxId } = this.deleteLogBatch(json);
      if (n > 0) this.indexer.afterDelete(maxId);
      result.logLines += n;
      yield;
      if (n < LOG_BATCH) break;
    }
    const { runs, outputs } = this.deleteRunBatch(json);
    result[counter] += runs;
    result.outputs += outputs;
    yield;
  }
}

interface SpanRow {
  run_id: number;
  first_seq: number;
  last_seq: number;
  first_id: number;
}

function emptyResult(): RetentionResult {
  return { runsByAge: 0, runsByCap: 0, logLines: 0, outputs: 0, alerts: 0, nonRuns: 0 };
}

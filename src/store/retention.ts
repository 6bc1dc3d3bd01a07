import type { RetentionOptions, RetentionResult } from "./api.js";
import type { FtsIndexer } from "./ftsIndexer.js";
import type { Db, Stmt } from "./sql.js";

/** Runs chosen per step; their logs are then deleted LOG_BATCH lines per transaction. */
const RUN_BATCH = 500;
const LOG_BATCH = 5_000;

/**
 * Retention (SPEC rule 12): runs older than max_age (by finished_at, or
 * created_at for a run that never finished), then, per job, every completed
 * run beyond the max_runs_per_job most recent. Only SUCCESS, FAILED and
 * SKIPPED runs are candidates, so PENDING, RUNNING and RETRYING are never
 * pruned. Logs (with their full-text entries) and outputs go with their run;
 * run_tags rows cascade; alerts keep their history with run_id set to NULL.
 *
 * The work is a generator of small steps, each one short transaction: the
 * synchronous `vacuum` runs them back to back, `vacuumAsync` yields to the
 * event loop between them, so a prune of millions of lines never blocks the
 * daemon for more than one step. Every statement re-checks the status, so a
 * run that left the completed states between steps is kept.
 */
export class Retention {
  private readonly st: Record<
    "byAge" | "jobs" | "nthFinished" | "byCap" | "logIds" | "deleteLogs" | "deleteOutputs" | "deleteRuns",
    Stmt
  >;
  private readonly deleteLogBatch: (runIds: string) => number;
  private readonly deleteRunBatch: (runIds: string) => { runs: number; outputs: number };

  constructor(
    db: Db,
    private readonly indexer: FtsIndexer,
  ) {
    const done = "status IN ('SUCCESS', 'FAILED', 'SKIPPED')";
    const ids = "SELECT value FROM json_each(?)";
    this.st = {
      // created_at <= finished_at, so the created_at index bounds the scan.
      byAge: db
        .prepare(
          `SELECT id FROM job_runs WHERE created_at < ? AND coalesce(finished_at, created_at) < ? AND ${done}
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
      nthFinished: db.prepare(`SELECT id FROM job_runs WHERE job_name = ? AND ${done} ORDER BY id DESC LIMIT 1 OFFSET ?`).pluck(),
      byCap: db
        .prepare(`SELECT id FROM job_runs WHERE job_name = ? AND id < ? AND ${done} ORDER BY id LIMIT ${RUN_BATCH}`)
        .pluck(),
      logIds: db
        .prepare(`SELECT l.id FROM run_logs l WHERE l.run_id IN (SELECT id FROM job_runs WHERE id IN (${ids}) AND ${done}) LIMIT ${LOG_BATCH}`)
        .pluck(),
      deleteLogs: db.prepare(`DELETE FROM run_logs WHERE id IN (${ids})`),
      deleteOutputs: db.prepare(`DELETE FROM run_outputs WHERE run_id IN (SELECT id FROM job_runs WHERE id IN (${ids}) AND ${done})`),
      deleteRuns: db.prepare(`DELETE FROM job_runs WHERE id IN (${ids}) AND ${done}`),
    };
    this.deleteLogBatch = db.transaction((runIds: string): number => {
      const logIds = this.st.logIds.all(runIds) as number[];
      if (logIds.length === 0) return 0;
      this.indexer.forget(logIds);
      return this.st.deleteLogs.run(JSON.stringify(logIds)).changes;
    });
    this.deleteRunBatch = db.transaction((runIds: string) => ({
      outputs: this.st.deleteOutputs.run(runIds).changes,
      runs: this.st.deleteRuns.run(runIds).changes,
    }));
  }

  vacuum(opts: RetentionOptions, nowMs: number): RetentionResult {
    const result = emptyResult();
    for (const _ of this.steps(opts, nowMs, result)) {
      // each step already ran; nothing to wait for
    }
    return result;
  }

  async vacuumAsync(opts: RetentionOptions, nowMs: number): Promise<RetentionResult> {
    const result = emptyResult();
    for (const _ of this.steps(opts, nowMs, result)) await new Promise<void>((resolve) => setImmediate(resolve));
    return result;
  }

  private *steps(opts: RetentionOptions, nowMs: number, result: RetentionResult): Generator<void> {
    if (opts.maxAgeMs !== null) {
      if (!(opts.maxAgeMs >= 0)) throw new RangeError(`maxAgeMs must be >= 0, got ${opts.maxAgeMs}`);
      const cutoff = new Date(nowMs - opts.maxAgeMs).toISOString();
      for (;;) {
        const ids = this.st.byAge.all(cutoff, cutoff) as number[];
        if (ids.length === 0) break;
        result.runsByAge += yield* this.deleteRuns(ids, result);
      }
    }
    if (opts.maxRunsPerJob !== null) {
      const keep = opts.maxRunsPerJob;
      if (!Number.isInteger(keep) || keep < 0) throw new RangeError(`maxRunsPerJob must be an integer >= 0, got ${keep}`);
      for (const job of this.st.jobs.all() as string[]) {
        // Completed runs older than the keep-th most recent one go.
        const bound = keep === 0 ? Number.MAX_SAFE_INTEGER : (this.st.nthFinished.get(job, keep - 1) as number | undefined);
        if (bound === undefined) continue;
        for (;;) {
          const ids = this.st.byCap.all(job, bound) as number[];
          if (ids.length === 0) break;
          result.runsByCap += yield* this.deleteRuns(ids, result);
        }
        yield;
      }
    }
  }

  /** Deletes the runs' logs in bounded batches, then the outputs and runs. Returns runs deleted. */
  private *deleteRuns(ids: number[], result: RetentionResult): Generator<void, number> {
    const json = JSON.stringify(ids);
    for (;;) {
      const n = this.deleteLogBatch(json);
      if (n > 0) this.indexer.afterDelete();
      result.logLines += n;
      yield;
      if (n < LOG_BATCH) break;
    }
    const { runs, outputs } = this.deleteRunBatch(json);
    result.outputs += outputs;
    yield;
    return runs;
  }
}

function emptyResult(): RetentionResult {
  return { runsByAge: 0, runsByCap: 0, logLines: 0, outputs: 0 };
}

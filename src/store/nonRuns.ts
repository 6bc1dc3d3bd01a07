import type { NonRunsStore } from "./api.js";
import type { Db, Stmt } from "./sql.js";
import { checkSlice, count, StatementCache, Where } from "./sql.js";
import type { NewNonRun, NonRunReason, NonRunRow, Slice } from "./types.js";

/** Rows kept per job: the oldest beyond this go when a new one is opened. */
export const NON_RUNS_PER_JOB = 500;

/**
 * non_runs (migration 5): why a run did not happen. A slot entry (no cycle)
 * extends the job's newest row when that row has the same reason and detail
 * and the job has had no run since the row was opened: consecutive skipped
 * slots are one row with a count and the first and last slot.
 */
export class SqliteNonRuns implements NonRunsStore {
  private readonly cache: StatementCache;
  private readonly st: Record<"newest" | "lastRunId" | "insert" | "extend" | "trim" | "get", Stmt>;

  constructor(db: Db) {
    this.cache = new StatementCache(db);
    this.st = {
      newest: db.prepare("SELECT * FROM non_runs WHERE job_name = ? ORDER BY id DESC LIMIT 1"),
      lastRunId: db.prepare("SELECT max(id) FROM job_runs WHERE job_name = ?").pluck(),
      insert: db.prepare(`INSERT INTO non_runs
        (job_name, reason, detail, cycle_id, upstream, upstream_run_id, first_slot, last_slot, first_at, last_at, after_run_id, count)
        VALUES (@job_name, @reason, @detail, @cycle_id, @upstream, @upstream_run_id, @slot, @last_slot, @at, @at, @after_run_id, @count)`),
      extend: db.prepare("UPDATE non_runs SET count = count + ?, last_slot = coalesce(?, last_slot), last_at = ? WHERE id = ?"),
      trim: db.prepare(
        `DELETE FROM non_runs WHERE job_name = ? AND id <= (SELECT id FROM non_runs WHERE job_name = ? ORDER BY id DESC LIMIT 1 OFFSET ${NON_RUNS_PER_JOB})`,
      ),
      get: db.prepare("SELECT * FROM non_runs WHERE id = ?"),
    };
  }

  record(e: NewNonRun): NonRunRow {
    const afterRunId = (this.st.lastRunId.get(e.job_name) as number | null) ?? 0;
    if (e.cycle_id === null || e.cycle_id === undefined) {
      const newest = this.st.newest.get(e.job_name) as NonRunRow | undefined;
      if (newest && newest.cycle_id === null && newest.reason === e.reason && newest.detail === e.detail && newest.after_run_id === afterRunId) {
        this.st.extend.run(e.slots ?? 1, e.lastSlot ?? e.slot ?? null, e.at, newest.id);
        return this.st.get.get(newest.id) as NonRunRow;
      }
    }
    const id = Number(
      this.st.insert.run({
        job_name: e.job_name,
        reason: e.reason,
        detail: e.detail,
        cycle_id: e.cycle_id ?? null,
        upstream: e.upstream ?? null,
        upstream_run_id: e.upstream_run_id ?? null,
        slot: e.slot ?? null,
        last_slot: e.lastSlot ?? e.slot ?? null,
        count: e.slots ?? 1,
        at: e.at,
        after_run_id: afterRunId,
      }).lastInsertRowid,
    );
    this.st.trim.run(e.job_name, e.job_name);
    return this.st.get.get(id) as NonRunRow;
  }

  search(q: { job?: string; reason?: NonRunReason; cycle_id?: string }, limit: number, offset: number): Slice<NonRunRow> {
    checkSlice(limit, offset);
    const w = new Where();
    if (q.job !== undefined) w.add("job_name = ?", q.job);
    if (q.reason !== undefined) w.add("reason = ?", q.reason);
    if (q.cycle_id !== undefined) w.add("cycle_id = ?", q.cycle_id);
    const where = w.sql();
    const total = count(this.cache.get(`SELECT count(*) FROM non_runs${where}`), w.params);
    const rows = offset >= total ? [] : (this.cache.get(`SELECT * FROM non_runs${where} ORDER BY id DESC LIMIT ? OFFSET ?`).all(...w.params, limit, offset) as NonRunRow[]);
    return { rows, total, limit, offset };
  }
}

import type { BackfillsStore } from "./api.js";
import { ConflictError, NotFoundError, sqliteCode } from "./errors.js";
import { paramColumns, toRun, type RunRow, type SqliteRuns } from "./runs.js";
import type { Db, Stmt } from "./sql.js";
import { checkSlice } from "./sql.js";
import {
  RUN_STATUSES,
  SECRET_MASK,
  type BackfillRecord,
  type NewBackfill,
  type NewBackfillRun,
  type ParamValue,
  type RunRecord,
  type RunStatus,
  type Slice,
} from "./types.js";

interface BackfillRow {
  id: number;
  job_name: string;
  from_at: string;
  to_at: string;
  reason: string | null;
  params: string | null;
  secret_params: string | null;
  rerun: 0 | 1;
  ignore_exclude: 0 | 1;
  parallel: number;
  total: number;
  created_by: string;
  created_at: string;
  cancelled_at: string | null;
}

/**
 * `backfills` (CONTRACT §7.3): one row per backfill; its runs are the job_runs
 * rows with its `backfill_id` (the job's slot runs, and the dependency runs of
 * their cycles). `total` is the number of slot runs it created; `by_status`
 * counts them as they are now.
 */
export class SqliteBackfills implements BackfillsStore {
  private readonly st: Record<"insert" | "get" | "counts" | "cancel" | "list" | "listJob" | "total" | "totalJob" | "open" | "slotRuns" | "existing" | "waiting" | "insertRuns" | "insertTags" | "runIds" | "run", Stmt>;

  constructor(
    private readonly db: Db,
    /** The run ids handed out (SqliteRuns): a backfill's runs never take one again. */
    private readonly ids: Pick<SqliteRuns, "keepIdsFresh" | "noteIssued">,
  ) {
    this.st = {
      insert: db.prepare(`INSERT INTO backfills
        (job_name, from_at, to_at, reason, params, secret_params, rerun, ignore_exclude, parallel, total, created_by, created_at)
        VALUES (@job_name, @from_at, @to_at, @reason, @params, @secret_params, @rerun, @ignore_exclude, @parallel, @total, @created_by, @created_at)
        RETURNING *`),
      get: db.prepare("SELECT * FROM backfills WHERE id = ?"),
      counts: db.prepare("SELECT status, count(*) AS n FROM job_runs WHERE backfill_id = ? AND job_name = ? GROUP BY status"),
      cancel: db.prepare("UPDATE backfills SET cancelled_at = ? WHERE id = ? AND cancelled_at IS NULL RETURNING *"),
      list: db.prepare("SELECT * FROM backfills ORDER BY id DESC LIMIT ? OFFSET ?"),
      listJob: db.prepare("SELECT * FROM backfills WHERE job_name = ? ORDER BY id DESC LIMIT ? OFFSET ?"),
      total: db.prepare("SELECT count(*) FROM backfills").pluck(),
      totalJob: db.prepare("SELECT count(*) FROM backfills WHERE job_name = ?").pluck(),
      // Backfills with a slot run not yet finished: what the engine resumes after a restart.
      open: db.prepare(
        `SELECT DISTINCT r.backfill_id FROM job_runs r JOIN backfills b ON b.id = r.backfill_id AND b.job_name = r.job_name
         WHERE r.status IN ('PENDING', 'RUNNING', 'RETRYING') ORDER BY r.backfill_id`,
      ).pluck(),
      slotRuns: db.prepare("SELECT id, status FROM job_runs WHERE backfill_id = ? AND job_name = ? AND status IN ('PENDING', 'RUNNING', 'RETRYING') ORDER BY id"),
      // One statement for all of a backfill's runs: 10,000 single inserts cost several times more.
      insertRuns: db.prepare(`INSERT INTO job_runs
        (job_name, status, attempt, "trigger", triggered_by, reason, cycle_id, tags, scheduled_for, created_at, params, secret_params, scheduled_at, backfill_id)
        SELECT @job_name, 'PENDING', 1, 'backfill', @triggered_by, @reason, value ->> '$[1]', @tags, value ->> '$[2]', @created_at, @params, @secret_params,
               value ->> '$[0]', @backfill_id
        FROM json_each(@slots) ORDER BY key`),
      insertTags: db.prepare(
        "INSERT OR IGNORE INTO run_tags (tag, run_id) SELECT t.value, r.id FROM job_runs r, json_each(@tags) t WHERE r.backfill_id = @backfill_id",
      ),
      runIds: db.prepare("SELECT id, cycle_id, scheduled_at, scheduled_for FROM job_runs WHERE backfill_id = ? AND job_name = ? ORDER BY id"),
      run: db.prepare("SELECT * FROM job_runs WHERE id = ?"),
      waiting: db.prepare("SELECT * FROM job_runs WHERE backfill_id = ? AND status = 'PENDING' ORDER BY id"),
      existing: db.prepare(
        `SELECT scheduled_at, min(id) AS id FROM job_runs
         WHERE job_name = ? AND scheduled_at IN (SELECT value FROM json_each(?)) GROUP BY scheduled_at`,
      ),
    };
  }

  create(b: NewBackfill, runs: readonly NewBackfillRun[] = [], tags: readonly string[] = []): { backfill: BackfillRecord; runs: RunRecord[] } {
    return this.db.transaction(() => {
      const backfill = this.insertBackfill(b);
      if (runs.length === 0) return { backfill, runs: [] };
      const fields = {
        job_name: b.job_name,
        triggered_by: b.created_by,
        reason: b.reason,
        tags: JSON.stringify(tags),
        created_at: b.created_at,
        ...paramColumns(b.params, b.secretParams),
        backfill_id: backfill.id,
        slots: JSON.stringify(runs.map((r) => [r.scheduled_at, r.cycle_id, r.scheduled_for])),
      };
      try {
        this.ids.keepIdsFresh();
        this.st.insertRuns.run(fields);
      } catch (e) {
        if (sqliteCode(e) === "SQLITE_CONSTRAINT_UNIQUE" && /job_runs\.scheduled_for/.test(String(e))) {
          throw new ConflictError(`job ${b.job_name}: a slot of the backfill was claimed by a run meanwhile; try again`);
        }
        throw e;
      }
      if (tags.length > 0) this.st.insertTags.run({ tags: fields.tags, backfill_id: backfill.id });
      const created = this.createdRuns(backfill.id, b.job_name);
      if (created.length > 0) this.ids.noteIssued(created[created.length - 1]!.id);
      return { backfill, runs: created };
    }).immediate();
  }

  /**
   * The records of the runs just written, as `runs.getMany` would read them: the first is read
   * back (every column, defaults included), the others differ from it only in what the INSERT
   * takes per slot (id, cycle_id, scheduled_at, scheduled_for). Reading 10,000 full rows back
   * cost about half of a 10,000-slot backfill's acceptance (docs/PERFORMANCE.md, Backfill).
   */
  private createdRuns(backfillId: number, job: string): RunRecord[] {
    const rows = this.st.runIds.all(backfillId, job) as { id: number; cycle_id: string; scheduled_at: string; scheduled_for: string | null }[];
    if (rows.length === 0) return [];
    const first = toRun(this.st.run.get(rows[0]!.id) as RunRow);
    return rows.map((r) => ({ ...first, id: r.id, cycle_id: r.cycle_id, scheduled_at: r.scheduled_at, scheduled_for: r.scheduled_for, tags: [...first.tags], params: { ...first.params } }));
  }

  private insertBackfill(b: NewBackfill): BackfillRecord {
    const row = this.st.insert.get({
      job_name: b.job_name,
      from_at: b.from,
      to_at: b.to,
      reason: b.reason ?? null,
      ...paramColumns(b.params, b.secretParams),
      rerun: b.rerun ? 1 : 0,
      ignore_exclude: b.ignore_exclude ? 1 : 0,
      parallel: b.parallel,
      total: b.total,
      created_by: b.created_by,
      created_at: b.created_at,
    }) as BackfillRow;
    return this.toRecord(row);
  }

  get(id: number): BackfillRecord | null {
    const row = this.st.get.get(id) as BackfillRow | undefined;
    return row ? this.toRecord(row) : null;
  }

  list(q: { job?: string }, limit: number, offset: number): Slice<BackfillRecord> {
    checkSlice(limit, offset);
    const rows = (q.job === undefined ? this.st.list.all(limit, offset) : this.st.listJob.all(q.job, limit, offset)) as BackfillRow[];
    const total = (q.job === undefined ? this.st.total.get() : this.st.totalJob.get(q.job)) as number;
    return { rows: rows.map((r) => this.toRecord(r)), total, limit, offset };
  }

  markCancelled(id: number, at: string): BackfillRecord {
    const row = this.st.cancel.get(at, id) as BackfillRow | undefined;
    if (row) return this.toRecord(row);
    const current = this.get(id);
    if (!current) throw new NotFoundError("backfill", id);
    return current;
  }

  openIds(): number[] {
    return this.st.open.all() as number[];
  }

  unfinishedSlotRuns(id: number, job: string): { id: number; status: RunStatus }[] {
    return this.st.slotRuns.all(id, job) as { id: number; status: RunStatus }[];
  }

  waitingRuns(id: number): RunRecord[] {
    return (this.st.waiting.all(id) as RunRow[]).map(toRun);
  }

  runsForSlots(job: string, slots: readonly string[]): Map<string, number> {
    const rows = this.st.existing.all(job, JSON.stringify(slots)) as { scheduled_at: string; id: number }[];
    return new Map(rows.map((r) => [r.scheduled_at, r.id]));
  }

  private toRecord(row: BackfillRow): BackfillRecord {
    const byStatus = Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as Record<RunStatus, number>;
    for (const { status, n } of this.st.counts.all(row.id, row.job_name) as { status: RunStatus; n: number }[]) byStatus[status] = n;
    let params: Record<string, ParamValue> = {};
    if (row.params !== null) {
      params = JSON.parse(row.params) as Record<string, ParamValue>;
      if (row.secret_params !== null) for (const name of JSON.parse(row.secret_params) as string[]) if (name in params) params[name] = SECRET_MASK;
    }
    const unfinished = byStatus.PENDING + byStatus.RUNNING + byStatus.RETRYING;
    return {
      id: row.id,
      job: row.job_name,
      from: row.from_at,
      to: row.to_at,
      total: row.total,
      by_status: byStatus,
      done: unfinished === 0,
      created_at: row.created_at,
      created_by: row.created_by,
      cancelled: row.cancelled_at !== null,
      cancelled_at: row.cancelled_at,
      reason: row.reason,
      params,
      rerun: row.rerun === 1,
      ignore_exclude: row.ignore_exclude === 1,
      parallel: row.parallel,
    };
  }
}

import type { AlertsStore } from "./api.js";
import { ConflictError, NotFoundError } from "./errors.js";
import type { Db, Stmt } from "./sql.js";
import { checkSlice, count, normAlertStatus, StatementCache, Where } from "./sql.js";
import type { AlertRow, AlertStatus, Slice } from "./types.js";

/** alerts: one row per dispatched notification (SPEC "Events" rule 3). */
export class SqliteAlerts implements AlertsStore {
  private readonly cache: StatementCache;
  private readonly st: Record<"insert" | "get" | "attempt" | "requeue" | "pending", Stmt>;

  constructor(private readonly db: Db) {
    this.cache = new StatementCache(db);
    this.st = {
      insert: db.prepare(`INSERT INTO alerts (job_name, run_id, event, channel, payload, created_at)
        VALUES (@job_name, @run_id, @event, @channel, @payload, @created_at)`),
      get: db.prepare("SELECT * FROM alerts WHERE id = ?"),
      attempt: db.prepare(
        "UPDATE alerts SET attempts = attempts + 1, last_attempt_at = ?, status = ?, error = ? WHERE id = ?",
      ),
      requeue: db.prepare("UPDATE alerts SET status = 'pending' WHERE id = ? AND status = 'failed'"),
      pending: db.prepare("SELECT * FROM alerts WHERE status = 'pending' ORDER BY id"),
    };
  }

  create(a: Omit<AlertRow, "id" | "attempts" | "last_attempt_at" | "error" | "status">): AlertRow {
    const id = Number(this.st.insert.run(a).lastInsertRowid);
    return this.mustGet(id);
  }

  get(id: number): AlertRow | null {
    return (this.st.get.get(id) as AlertRow | undefined) ?? null;
  }

  recordAttempt(id: number, status: AlertStatus, error: string | null, at: string): AlertRow {
    if (this.st.attempt.run(at, normAlertStatus(status), error, id).changes === 0) throw new NotFoundError("alert", id);
    return this.mustGet(id);
  }

  /** Only a failed alert can be re-dispatched: pending is already on its way, delivered is done (409 for both). */
  requeue(id: number): AlertRow {
    const requeue = this.db.transaction((): AlertRow => {
      if (this.st.requeue.run(id).changes === 0) {
        const a = this.get(id);
        if (!a) throw new NotFoundError("alert", id);
        throw new ConflictError(`alert ${id} is ${a.status}; only a failed alert can be retried`);
      }
      return this.mustGet(id);
    });
    return requeue.immediate();
  }

  pending(): AlertRow[] {
    return this.st.pending.all() as AlertRow[];
  }

  search(q: { job?: string; status?: AlertStatus }, limit: number, offset: number): Slice<AlertRow> {
    checkSlice(limit, offset);
    const w = new Where();
    if (q.job !== undefined) w.add("job_name = ?", q.job);
    if (q.status !== undefined) w.add("status = ?", normAlertStatus(q.status));
    const where = w.sql();
    const total = count(this.cache.get(`SELECT count(*) FROM alerts${where}`), w.params);
    const rows =
      offset >= total
        ? []
        : (this.cache
            .get(`SELECT * FROM alerts${where} ORDER BY id DESC LIMIT ? OFFSET ?`)
            .all(...w.params, limit, offset) as AlertRow[]);
    return { rows, total, limit, offset };
  }

  private mustGet(id: number): AlertRow {
    const a = this.get(id);
    if (!a) throw new NotFoundError("alert", id);
    return a;
  }
}

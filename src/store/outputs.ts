import type { OutputsStore } from "./api.js";
import type { Db, Stmt } from "./sql.js";
import { checkSlice, count, StatementCache, Where } from "./sql.js";
import type { OutputRow, Slice } from "./types.js";

/** run_outputs: values captured from runs, looked up per cycle (SPEC rule 7). */
export class SqliteOutputs implements OutputsStore {
  private readonly cache: StatementCache;
  private readonly st: Record<"insert" | "get" | "forRun" | "lookup", Stmt>;

  constructor(db: Db) {
    this.cache = new StatementCache(db);
    this.st = {
      insert: db.prepare(`INSERT INTO run_outputs (run_id, job_name, var_name, value, cycle_id, created_at)
        VALUES (@run_id, @job_name, @var_name, @value, @cycle_id, @created_at)`),
      get: db.prepare("SELECT * FROM run_outputs WHERE id = ?"),
      forRun: db.prepare("SELECT * FROM run_outputs WHERE run_id = ? ORDER BY id"),
      lookup: db
        .prepare("SELECT value FROM run_outputs WHERE cycle_id = ? AND job_name = ? AND var_name = ? ORDER BY id DESC LIMIT 1")
        .pluck(),
    };
  }

  put(row: Omit<OutputRow, "id">): OutputRow {
    const id = Number(this.st.insert.run(row).lastInsertRowid);
    return this.st.get.get(id) as OutputRow;
  }

  forRun(runId: number): OutputRow[] {
    return this.st.forRun.all(runId) as OutputRow[];
  }

  lookup(cycleId: string, job: string, varName: string): string | null {
    return (this.st.lookup.get(cycleId, job, varName) as string | undefined) ?? null;
  }

  search(
    q: { run_id?: number; job?: string; cycle_id?: string; var_name?: string },
    limit: number,
    offset: number,
  ): Slice<OutputRow> {
    checkSlice(limit, offset);
    const w = new Where();
    if (q.run_id !== undefined) w.add("run_id = ?", q.run_id);
    if (q.job !== undefined) w.add("job_name = ?", q.job);
    if (q.cycle_id !== undefined) w.add("cycle_id = ?", q.cycle_id);
    if (q.var_name !== undefined) w.add("var_name = ?", q.var_name);
    const where = w.sql();
    const total = count(this.cache.get(`SELECT count(*) FROM run_outputs${where}`), w.params);
    const rows =
      offset >= total
        ? []
        : (this.cache
            .get(`SELECT * FROM run_outputs${where} ORDER BY id DESC LIMIT ? OFFSET ?`)
            .all(...w.params, limit, offset) as OutputRow[]);
    return { rows, total, limit, offset };
  }
}

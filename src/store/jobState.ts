import type { JobStateStore, PageRequest } from "./api.js";
import type { Db, Stmt } from "./sql.js";
import { count, pageClause, StatementCache } from "./sql.js";
import type { JobStateRow, Page } from "./types.js";

const FIELDS = ["last_success", "last_failure", "next_run", "lock_pid", "paused"] as const;

/**
 * job_state has no id column: "id" (the default sort of the db views) means
 * the table's key, job_name.
 */
const SORTABLE: Readonly<Record<string, string>> = {
  id: "job_name",
  job_name: "job_name",
  last_success: "last_success",
  last_failure: "last_failure",
  next_run: "next_run",
  lock_pid: "lock_pid",
  paused: "paused",
};

/** job_state: one row per job, created on first write. A missing row reads as "never ran, not paused". */
export class SqliteJobState implements JobStateStore {
  private readonly cache: StatementCache;
  private readonly st: Record<"get" | "all" | "paused" | "locked" | "pause" | "resume", Stmt>;
  private readonly setMany: (jobs: string[], paused: boolean) => number;

  constructor(private readonly db: Db) {
    this.cache = new StatementCache(db);
    this.st = {
      get: db.prepare("SELECT * FROM job_state WHERE job_name = ?"),
      all: db.prepare("SELECT * FROM job_state ORDER BY job_name"),
      paused: db.prepare("SELECT job_name FROM job_state WHERE paused = 1 ORDER BY job_name").pluck(),
      locked: db.prepare("SELECT job_name FROM job_state WHERE lock_pid IS NOT NULL ORDER BY job_name").pluck(),
      pause: db.prepare(
        "INSERT INTO job_state (job_name, paused) VALUES (?, 1) ON CONFLICT (job_name) DO UPDATE SET paused = 1 WHERE paused = 0",
      ),
      resume: db.prepare("UPDATE job_state SET paused = 0 WHERE job_name = ? AND paused = 1"),
    };
    this.setMany = db.transaction((jobs: string[], paused: boolean): number => {
      const st = paused ? this.st.pause : this.st.resume;
      let changed = 0;
      for (const job of new Set(jobs)) changed += st.run(job).changes;
      return changed;
    });
  }

  get(job: string): JobStateRow | null {
    return (this.st.get.get(job) as JobStateRow | undefined) ?? null;
  }

  all(): JobStateRow[] {
    return this.st.all.all() as JobStateRow[];
  }

  pausedJobs(): string[] {
    return this.st.paused.all() as string[];
  }

  lockedJobs(): string[] {
    return this.st.locked.all() as string[];
  }

  upsert(job: string, patch: Partial<Omit<JobStateRow, "job_name">>): JobStateRow {
    const cols = FIELDS.filter((c) => patch[c] !== undefined);
    const params = cols.map((c) => patch[c]);
    const sql =
      cols.length === 0
        ? "INSERT INTO job_state (job_name) VALUES (?) ON CONFLICT (job_name) DO NOTHING"
        : `INSERT INTO job_state (job_name, ${cols.join(", ")}) VALUES (?, ${cols.map(() => "?").join(", ")})
           ON CONFLICT (job_name) DO UPDATE SET ${cols.map((c) => `${c} = excluded.${c}`).join(", ")} RETURNING *`;
    if (cols.length === 0) {
      this.cache.get(sql).run(job);
      return this.get(job)!;
    }
    return this.cache.get(sql).get(job, ...params) as JobStateRow;
  }

  setPaused(jobs: string[], paused: boolean): number {
    return this.setMany(jobs, paused);
  }

  page(p: PageRequest): Page<JobStateRow> {
    const { orderBy, limit, offset } = pageClause(p, SORTABLE, "job_name");
    const total = count(this.cache.get("SELECT count(*) FROM job_state"), []);
    const rows =
      offset >= total
        ? []
        : (this.cache.get(`SELECT * FROM job_state ORDER BY ${orderBy} LIMIT ? OFFSET ?`).all(limit, offset) as JobStateRow[]);
    return { rows, total, page: p.page, page_size: p.page_size };
  }
}

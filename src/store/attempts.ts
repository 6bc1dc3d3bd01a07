import type { Db, Stmt } from "./sql.js";
import type { AttemptSpan, RunStatus } from "./types.js";

/** What a RETRYING row says about its last attempt, read before the row changes. */
export interface RetryingRow {
  id: number;
  attempt: number;
  started_at: string | null;
  finished_at: string | null;
  exit_code: number | null;
  error: string | null;
  next_attempt_at: string | null;
}

/**
 * run_attempts (migration 003): the attempts of runs that retried. Written
 * only when a run leaves RETRYING, inside the transition's transaction: the
 * attempt that failed is closed with the values the row still holds (its
 * end, exit code and error, which the next attempt overwrites), and when the
 * run goes back to RUNNING the new attempt is opened.
 */
export class SqliteAttempts {
  private readonly st: Record<"before" | "closeFirst" | "close" | "open" | "forRuns", Stmt>;

  constructor(db: Db) {
    this.st = {
      before: db.prepare("SELECT id, attempt, started_at, finished_at, exit_code, error, next_attempt_at FROM job_runs WHERE id = ?"),
      // The first attempt has no row yet: it starts where the run does.
      closeFirst: db.prepare(`INSERT INTO run_attempts (run_id, attempt, started_at, finished_at, exit_code, error)
        VALUES (?, 1, ?, ?, ?, ?)
        ON CONFLICT (run_id, attempt) DO UPDATE SET finished_at = excluded.finished_at, exit_code = excluded.exit_code, error = excluded.error`),
      close: db.prepare("UPDATE run_attempts SET finished_at = ?, exit_code = ?, error = ? WHERE run_id = ? AND attempt = ?"),
      open: db.prepare(`INSERT INTO run_attempts (run_id, attempt, started_at) VALUES (?, ?, ?)
        ON CONFLICT (run_id, attempt) DO UPDATE SET started_at = excluded.started_at, finished_at = NULL, exit_code = NULL, error = NULL`),
      forRuns: db.prepare(`SELECT run_id, attempt, started_at, finished_at, exit_code, error FROM run_attempts
        WHERE run_id IN (SELECT value FROM json_each(?)) ORDER BY run_id, attempt`),
    };
  }

  retrying(id: number): RetryingRow | undefined {
    return this.st.before.get(id) as RetryingRow | undefined;
  }

  /**
   * `before` left RETRYING and is now `after`. A run that retried before
   * run_attempts existed has no row for attempts after the first; they stay
   * unknown rather than be guessed.
   */
  leftRetrying(before: RetryingRow, after: { status: RunStatus; attempt: number }, startedAt: string | undefined): void {
    if (before.attempt === 1) {
      if (before.started_at !== null) this.st.closeFirst.run(before.id, before.started_at, before.finished_at, before.exit_code, before.error);
    } else {
      this.st.close.run(before.finished_at, before.exit_code, before.error, before.id, before.attempt);
    }
    if (after.status !== "RUNNING" || after.attempt <= before.attempt) return;
    const at = startedAt ?? before.next_attempt_at;
    if (at !== null) this.st.open.run(before.id, after.attempt, at);
  }

  /** The recorded attempts of these runs, oldest first; runs without rows are absent. */
  forRuns(ids: readonly number[]): Map<number, AttemptSpan[]> {
    const out = new Map<number, AttemptSpan[]>();
    if (ids.length === 0) return out;
    for (const row of this.st.forRuns.all(JSON.stringify(ids)) as (AttemptSpan & { run_id: number })[]) {
      const { run_id, ...span } = row;
      let list = out.get(run_id);
      if (!list) out.set(run_id, (list = []));
      list.push(span);
    }
    return out;
  }
}

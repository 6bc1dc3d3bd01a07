import type { SqliteAttempts } from "./attempts.js";
import type { Db } from "./sql.js";
import { InvalidQueryError } from "./errors.js";
import { normInstant, StatementCache } from "./sql.js";
import type { AttemptSpan, RunRecord, RunStatus, Trigger } from "./types.js";

export const TIMELINE_MAX_RUNS = 50_000;

export interface TimelineQuery {
  /** ISO instants; the window is [from, to). */
  from: string;
  to: string;
  /** Only these jobs (any number; passed as one JSON parameter). */
  jobs?: readonly string[];
  /** Job name contains this (case-insensitive for ASCII). */
  match?: string;
  /** At most this many runs: the latest-starting ones. */
  limit: number;
}

/**
 * A run as the timeline draws it, as one array (10,000 runs are read, sent and
 * parsed several times faster as arrays than as objects with repeated keys):
 * `[id, job_name, status, attempt, trigger, start, end, exit_code,
 * sla_breached, attempts]`. `start` is started_at, or created_at while the
 * run never started and is still waiting, or finished_at for a run that
 * ended without starting (created SKIPPED, a dispatch error: an instant);
 * `end` is finished_at, null while PENDING, RUNNING or RETRYING. `attempts`
 * is set for runs that retried (run_attempts), else null.
 */
export type TimelineRun = [
  id: number,
  job_name: string,
  status: RunStatus,
  attempt: number,
  trigger: Trigger,
  start: string,
  end: string | null,
  exit_code: number | null,
  sla_breached: 0 | 1,
  attempts: AttemptSpan[] | null,
];

export const TIMELINE_COLUMNS = ["id", "job_name", "status", "attempt", "trigger", "start", "end", "exit_code", "sla_breached", "attempts"] as const;

export interface TimelineStore {
  /**
   * Runs whose span [start, end] overlaps [from, to) (an active run's span
   * reaches now), oldest start first. Over `limit` runs: the latest-starting
   * `limit`, and `truncated`.
   */
  range(q: TimelineQuery): { runs: TimelineRun[]; truncated: boolean };
  /** The recorded attempts of these runs (only runs that retried have any). */
  attempts(ids: readonly number[]): Map<number, AttemptSpan[]>;
}

const ACTIVE = "('PENDING', 'RUNNING', 'RETRYING')";
/** Up to this many jobs, a job filter reads each job's runs by (job_name, started_at). */
const FEW_JOBS = 200;
const START = `COALESCE(started_at, CASE WHEN status IN ${ACTIVE} THEN created_at ELSE finished_at END, created_at)`;
const COLUMNS = `id, job_name, status, attempt, "trigger", ${START},
  CASE WHEN status IN ${ACTIVE} THEN NULL ELSE COALESCE(finished_at, started_at, created_at) END, exit_code, sla_breached`;

/**
 * The range query. Overlap with [from, to) is "starts before `to` and ends
 * at or after `from`", which no single index answers on a long history: an
 * index on the start finds every run that started before `to`, all of
 * history for a recent window. The overlapping runs are split into three
 * disjoint sets that indexes do answer, each newest start first and cut at
 * `limit`, then merged:
 *
 * - started in the window: the started_at index (or (job_name, started_at)
 *   for a few jobs) walked from the window's end backwards, reading rows only
 *   until `limit` match: the latest runs of a busy window cost `limit` row
 *   reads, not one per run in the window;
 * - ended in the window without ever starting (instants): a partial index of
 *   those runs only, walked the same way;
 * - started before the window and still in it: finished in the window (the
 *   (finished_at, started_at) index, read without the rows), longer than the
 *   window and around it (duration_ms index: only runs at least that long),
 *   or still active (the (status, created_at) index). These cross the
 *   window's left edge, so there are few of them.
 *
 * Measured in bench/web.bench.ts on 1,000,000 runs (docs/PERFORMANCE.md,
 * Dashboard).
 */
export class SqliteTimeline implements TimelineStore {
  private readonly cache: StatementCache;

  constructor(
    db: Db,
    private readonly attemptsTable: SqliteAttempts,
  ) {
    this.cache = new StatementCache(db, 64);
  }

  range(q: TimelineQuery): { runs: TimelineRun[]; truncated: boolean } {
    const from = normInstant("from", q.from);
    const to = normInstant("to", q.to);
    const span = Date.parse(to) - Date.parse(from);
    if (span <= 0) throw new InvalidQueryError(`from (${from}) must be before to (${to})`);
    if (!Number.isInteger(q.limit) || q.limit < 1 || q.limit > TIMELINE_MAX_RUNS) {
      throw new InvalidQueryError(`limit must be an integer from 1 to ${TIMELINE_MAX_RUNS}, got ${String(q.limit)}`);
    }
    const params: Record<string, unknown> = { from, to, span, limit: q.limit + 1 };
    let jobs = q.jobs;
    if (q.match !== undefined && q.match !== "") {
      // Job names are ASCII (CONTRACT §2); a name filter becomes a list of the names in history.
      const m = q.match.toLowerCase();
      const named = this.jobNames().filter((n) => n.toLowerCase().includes(m));
      jobs = jobs === undefined ? named : named.filter((n) => jobs!.includes(n));
    }
    let filter = "";
    if (jobs !== undefined) {
      filter = " AND job_name IN (SELECT value FROM json_each(@jobs))";
      params.jobs = JSON.stringify(jobs);
    }
    // A few jobs: their own runs, by (job_name, started_at). Many or all: the window's runs newest
    // first, rows read until `limit` match. (No statistics guide SQLite here: the index is named.)
    const byJob = jobs !== undefined && jobs.length <= FEW_JOBS;
    // Raw rows (arrays): the shape the API sends, without an object per row in between.
    const read = (sql: string) => this.cache.get(sql).raw(true).all(params) as TimelineRun[];
    const started = read(
      `SELECT ${COLUMNS} FROM job_runs INDEXED BY ${byJob ? "job_runs_job_started" : "job_runs_started"}
       WHERE started_at >= @from AND started_at < @to${filter} ORDER BY started_at DESC, id DESC LIMIT @limit`,
    );
    const instants = read(
      `SELECT ${COLUMNS} FROM job_runs INDEXED BY job_runs_instants
       WHERE started_at IS NULL AND finished_at >= @from AND finished_at < @to${filter} ORDER BY finished_at DESC, id DESC LIMIT @limit`,
    );
    // The first two terms read only their index's columns. An active run in a later attempt still
    // has its previous attempt's finished_at and may match the first: it is active anyway, and IN
    // ignores repeats.
    const before = read(
      `SELECT ${COLUMNS} FROM job_runs WHERE id IN (
         SELECT id FROM job_runs INDEXED BY job_runs_finished WHERE finished_at >= @from AND finished_at < @to AND started_at < @from
         UNION ALL SELECT id FROM job_runs INDEXED BY job_runs_duration
           WHERE duration_ms >= @span AND started_at < @from AND finished_at >= @to
         UNION ALL SELECT id FROM job_runs WHERE status IN ${ACTIVE} AND created_at < @to AND (started_at < @from OR started_at IS NULL))${filter}
       ORDER BY 6 DESC, id DESC LIMIT @limit`,
    );
    const rows = mergeByStart(mergeByStart(started, instants), before);
    const truncated = rows.length > q.limit;
    if (truncated) rows.length = q.limit;
    rows.reverse();
    const retried: number[] = [];
    for (const r of rows) if (r[3] > 1) retried.push(r[0]);
    const attempts = this.attemptsTable.forRuns(retried);
    for (const r of rows) r[9] = attempts.get(r[0]) ?? null;
    return { runs: rows, truncated };
  }

  attempts(ids: readonly number[]): Map<number, AttemptSpan[]> {
    return this.attemptsTable.forRuns(ids);
  }

  /** Distinct job names in history, by skipping through the (job_name, id) index: O(jobs * log runs). */
  private jobNames(): string[] {
    return this.cache
      .get(
        `WITH RECURSIVE j (name) AS (
           SELECT min(job_name) FROM job_runs
           UNION ALL SELECT (SELECT min(job_name) FROM job_runs WHERE job_name > j.name) FROM j WHERE j.name IS NOT NULL)
         SELECT name FROM j WHERE name IS NOT NULL`,
      )
      .pluck()
      .all() as string[];
  }
}

const isActive = (s: RunStatus) => s === "PENDING" || s === "RUNNING" || s === "RETRYING";

/** A run record in the timeline's shape: START and the end column of the query above, in TypeScript. */
export function toTimelineRun(run: RunRecord, attempts: AttemptSpan[] | null): TimelineRun {
  const active = isActive(run.status);
  const start = run.started_at ?? (active ? run.created_at : run.finished_at) ?? run.created_at;
  const end = active ? null : (run.finished_at ?? run.started_at ?? run.created_at);
  return [run.id, run.job_name, run.status, run.attempt, run.trigger, start, end, run.exit_code, run.sla_breached, attempts];
}

/** Two lists sorted by start (then id), newest first, merged in that order. */
function mergeByStart(a: TimelineRun[], b: TimelineRun[]): TimelineRun[] {
  if (b.length === 0) return a;
  const out: TimelineRun[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const x = a[i];
    const y = b[j];
    if (y === undefined || (x !== undefined && (x[5] > y[5] || (x[5] === y[5] && x[0] > y[0])))) {
      out.push(x!);
      i++;
    } else {
      out.push(y);
      j++;
    }
  }
  return out;
}

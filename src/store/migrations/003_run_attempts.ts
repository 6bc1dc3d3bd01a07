import type { Migration } from "./migrate.js";

/**
 * Where each attempt of a retried run began and ended. A run keeps all its
 * attempts on one job_runs row (CONTRACT §3), whose started_at is the first
 * attempt's start and whose finished_at/exit_code/error are overwritten by
 * each attempt, so the row alone cannot say when attempt 2 ran. Rows are
 * written only for runs that retry (runs.ts, when a run leaves RETRYING):
 * a run that succeeds or fails on its first attempt costs nothing here.
 *
 * A row with finished_at NULL is the run's current or last attempt; its end
 * is the run's finished_at once the run is over. Runs that retried before
 * this migration have no rows (the timeline draws them as one bar).
 *
 * Indexes for the timeline's range query (timeline.ts): the finished_at
 * index also carries started_at, so "finished in the window but started
 * before it" is answered from the index alone (it replaces the one-column
 * index, which it serves too); (job_name, started_at) finds one job's runs
 * in a window without reading everyone else's; and the runs that ended
 * without starting (created SKIPPED, dispatch errors) get a small partial
 * index of their own, by end.
 */
export const runAttempts: Migration = {
  version: 3,
  name: "run_attempts_and_timeline",
  up(db) {
    db.exec(`
CREATE TABLE run_attempts (
  run_id      INTEGER NOT NULL REFERENCES job_runs (id) ON DELETE CASCADE,
  attempt     INTEGER NOT NULL CHECK (attempt >= 1),
  started_at  TEXT    NOT NULL,
  finished_at TEXT,
  exit_code   INTEGER,
  error       TEXT,
  PRIMARY KEY (run_id, attempt)
) WITHOUT ROWID;
DROP INDEX job_runs_finished;
CREATE INDEX job_runs_finished ON job_runs (finished_at, started_at);
CREATE INDEX job_runs_job_started ON job_runs (job_name, started_at);
CREATE INDEX job_runs_instants ON job_runs (finished_at, job_name) WHERE started_at IS NULL;
`);
  },
};

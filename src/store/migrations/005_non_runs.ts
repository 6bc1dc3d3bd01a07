import type { Migration } from "./migrate.js";

/**
 * `non_runs`: the traces of runs that did not happen (issue 25, `svc why`).
 * A slot skipped because the job was paused, excluded, or missed while the
 * daemon was down, and a dependency-triggered job not triggered because its
 * upstream failed or it was paused, leave a row here, so that an operator
 * (and `svc why`) can see why a job did not run when expected; a log line is
 * gone with the log. Consecutive slot skips of one job for one reason are
 * one row (`count`, `first_slot`..`last_slot`) until the job runs again: a
 * paused `every:1s` job writes one row, not 86,400 a day.
 */
export const nonRuns: Migration = {
  version: 5,
  name: "non_runs",
  up(db) {
    db.exec(`
CREATE TABLE non_runs (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  job_name        TEXT    NOT NULL,
  reason          TEXT    NOT NULL CHECK (reason IN ('paused', 'upstream_failed', 'missed', 'excluded')),
  detail          TEXT    NOT NULL,
  cycle_id        TEXT,    -- the cycle a dependency-triggered job did not run in
  upstream        TEXT,    -- the upstream job whose end it followed
  upstream_run_id INTEGER,
  first_slot      TEXT,    -- scheduled slots that made no run: the first and last of this row
  last_slot       TEXT,
  count           INTEGER NOT NULL DEFAULT 1 CHECK (count >= 1),
  first_at        TEXT    NOT NULL, -- when the first and last of them were recorded
  last_at         TEXT    NOT NULL,
  after_run_id    INTEGER NOT NULL DEFAULT 0 -- the job's newest run id when the row was opened
);
CREATE INDEX non_runs_job   ON non_runs (job_name, id);
CREATE INDEX non_runs_cycle ON non_runs (cycle_id) WHERE cycle_id IS NOT NULL;
`);
  },
};

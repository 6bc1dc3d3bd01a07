import type { Migration } from "./migrate.js";

/**
 * The core tables. Statuses are stored upper case, triggers, streams and
 * alert statuses lower case (CONTRACT §4); CHECK constraints keep it so.
 *
 * Run, output and alert ids use AUTOINCREMENT so that an id is never
 * reused after retention deletes the newest rows: they are shown to users
 * and written to the audit log. run_logs does not (it costs ~6 % of the
 * insert rate); retention lowers the full-text watermark instead when it
 * deletes the newest lines (see ftsIndexer.ts), and spans of live runs
 * never point at reused ids because only whole runs are deleted.
 */
export const core: Migration = {
  version: 1,
  name: "core",
  up(db) {
    db.exec(`
CREATE TABLE store_meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE job_runs (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  job_name        TEXT    NOT NULL,
  status          TEXT    NOT NULL
                  CHECK (status IN ('PENDING','RUNNING','SUCCESS','FAILED','RETRYING','SKIPPED')),
  attempt         INTEGER NOT NULL DEFAULT 1 CHECK (attempt >= 1),
  "trigger"       TEXT    NOT NULL CHECK ("trigger" IN ('manual','schedule','dependency')),
  triggered_by    TEXT    NOT NULL DEFAULT 'scheduler',
  reason          TEXT    CHECK (reason IS NULL OR length(reason) <= 500),
  cycle_id        TEXT    NOT NULL,
  tags            TEXT    NOT NULL DEFAULT '[]', -- JSON array; run_tags is the searchable copy
  scheduled_for   TEXT,
  created_at      TEXT    NOT NULL,
  started_at      TEXT,
  finished_at     TEXT,
  exit_code       INTEGER,
  sla_breached    INTEGER NOT NULL DEFAULT 0 CHECK (sla_breached IN (0, 1)),
  hc_status       TEXT    CHECK (hc_status IN ('pass','fail','warn')),
  pid             INTEGER,
  pid_start       TEXT,
  error           TEXT,
  duration_ms     INTEGER,
  next_attempt_at TEXT
);
-- a schedule slot is triggered at most once per job
CREATE UNIQUE INDEX job_runs_slot ON job_runs (job_name, scheduled_for) WHERE scheduled_for IS NOT NULL;
-- filters of /api/db/job_runs and /api/audit, and the engine's queries;
-- each ends in id so that the default "id desc" order needs no sort
CREATE INDEX job_runs_job     ON job_runs (job_name, id);
CREATE INDEX job_runs_job_created ON job_runs (job_name, created_at);
CREATE INDEX job_runs_job_status ON job_runs (job_name, status, id);
CREATE INDEX job_runs_status  ON job_runs (status, id);
CREATE INDEX job_runs_status_created ON job_runs (status, created_at);
CREATE INDEX job_runs_trigger ON job_runs ("trigger", id);
CREATE INDEX job_runs_created ON job_runs (created_at);
CREATE INDEX job_runs_cycle   ON job_runs (cycle_id);
CREATE INDEX job_runs_sla     ON job_runs (id) WHERE sla_breached = 1;
CREATE INDEX job_runs_reason  ON job_runs (id) WHERE reason IS NOT NULL;
CREATE INDEX job_runs_job_reason ON job_runs (job_name, id) WHERE reason IS NOT NULL;
-- sortable columns people sort a big table by
CREATE INDEX job_runs_started  ON job_runs (started_at);
CREATE INDEX job_runs_finished ON job_runs (finished_at);
CREATE INDEX job_runs_duration ON job_runs (duration_ms);

CREATE TABLE run_tags (
  tag    TEXT    NOT NULL,
  run_id INTEGER NOT NULL REFERENCES job_runs (id) ON DELETE CASCADE,
  PRIMARY KEY (tag, run_id)
) WITHOUT ROWID;
CREATE INDEX run_tags_run ON run_tags (run_id);

CREATE TABLE job_state (
  job_name     TEXT PRIMARY KEY,
  last_success TEXT,
  last_failure TEXT,
  next_run     TEXT,
  lock_pid     INTEGER,
  paused       INTEGER NOT NULL DEFAULT 0 CHECK (paused IN (0, 1))
);

-- The hot table: it has no secondary index and no constraint beyond NOT
-- NULL, because each costs insert rate (measured: a UNIQUE (run_id, seq)
-- index -35 %, a CHECK on stream -30 %). The writer validates stream, and
-- (run_id, seq) is unique by construction: seq is assigned in memory per
-- run and run_log_spans maps it to ids. No foreign key to job_runs either:
-- one bad run id must not fail a batch; logs.append checks the run exists
-- when it first sees it, and retention deletes lines with their runs.
CREATE TABLE run_logs (
  id       INTEGER PRIMARY KEY,
  run_id   INTEGER NOT NULL,
  seq      INTEGER NOT NULL,
  ts       TEXT    NOT NULL,
  stream   TEXT    NOT NULL, -- stdout | stderr | healthcheck
  line     TEXT    NOT NULL,
  job_name TEXT    NOT NULL
);
-- Where a run's lines are: each span is a block of consecutive run_logs ids
-- holding the consecutive seqs first_seq..last_seq of one run, so the line
-- with seq n of the span is at id first_id + (n - first_seq). The writer
-- groups each flushed batch by run, giving one span per run per flush (or
-- extending the run's previous span). Reading a run is a few rowid range
-- scans; there is one index entry per span instead of one per line.
CREATE TABLE run_log_spans (
  run_id    INTEGER NOT NULL,
  first_seq INTEGER NOT NULL,
  last_seq  INTEGER NOT NULL,
  first_id  INTEGER NOT NULL,
  PRIMARY KEY (run_id, first_seq)
) WITHOUT ROWID;
-- Lines per run and stream, so totals under a stream filter need no scan.
CREATE TABLE run_log_counts (
  run_id INTEGER NOT NULL,
  stream TEXT    NOT NULL,
  lines  INTEGER NOT NULL,
  PRIMARY KEY (run_id, stream)
) WITHOUT ROWID;
-- run_logs has no cheap count(*): the writer and retention keep it here.
INSERT INTO store_meta (key, value) VALUES ('log_lines', '0');

CREATE TABLE run_outputs (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id     INTEGER NOT NULL REFERENCES job_runs (id) ON DELETE CASCADE,
  job_name   TEXT    NOT NULL,
  var_name   TEXT    NOT NULL,
  value      TEXT    NOT NULL,
  cycle_id   TEXT    NOT NULL,
  created_at TEXT    NOT NULL
);
CREATE INDEX run_outputs_cycle ON run_outputs (cycle_id, job_name, var_name, id);
CREATE INDEX run_outputs_run   ON run_outputs (run_id);
CREATE INDEX run_outputs_job   ON run_outputs (job_name, id);

CREATE TABLE alerts (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  job_name        TEXT    NOT NULL,
  run_id          INTEGER REFERENCES job_runs (id) ON DELETE SET NULL,
  event           TEXT    NOT NULL,
  channel         TEXT    NOT NULL,
  status          TEXT    NOT NULL DEFAULT 'pending' CHECK (status IN ('pending','delivered','failed')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  last_attempt_at TEXT,
  error           TEXT,
  payload         TEXT    NOT NULL,
  created_at      TEXT    NOT NULL
);
CREATE INDEX alerts_job    ON alerts (job_name, id);
CREATE INDEX alerts_status ON alerts (status, id);
CREATE INDEX alerts_run    ON alerts (run_id);

CREATE TABLE integration_status (
  name              TEXT PRIMARY KEY,
  provider          TEXT NOT NULL,
  credential_status TEXT NOT NULL,
  last_test_result  TEXT,
  last_test_at      TEXT
);
`);
  },
};

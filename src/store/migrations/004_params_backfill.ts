import type Database from "better-sqlite3";
import type { Migration } from "./migrate.js";

/**
 * Run parameters, the logical time of a run and backfills (CONTRACT §7.2,
 * §7.3). job_runs gets:
 * - `params`: the run's parameter values, a JSON object (NULL: none);
 * - `secret_params`: a JSON array of the names declared `secret: true` when
 *   the run was created (NULL: none), so the run is redacted by what was true
 *   then, whatever the config says later;
 * - `scheduled_at`: the slot of a scheduled, catch-up or backfill run, the
 *   cycle root's for a dependency-triggered one, NULL for manual runs. Not
 *   unique: a backfill `rerun` and a manual retry make more runs of one slot.
 *   `scheduled_for` stays what it was, the claim of a slot by its one
 *   scheduled run (unique per job), so the scheduler still fires a slot once;
 * - `backfill_id`: the backfill that created the run (or whose cycle it is in);
 * and the trigger `backfill`, with the `backfills` table.
 *
 * The trigger's CHECK only gets a value more. SQLite cannot alter a CHECK, and
 * rebuilding job_runs took 75 s at a million runs on this machine (copy, 15
 * indexes, references). SQLite documents a procedure for changes that touch no
 * stored row, like removing a CHECK (https://www.sqlite.org/lang_altertable.html,
 * section 7): rewrite the table's text in sqlite_schema and bump the schema
 * version, in the upgrade transaction. A CHECK that allows one more value holds
 * for every row that held before. The text is changed only where it is exactly
 * what migration 1 wrote; anything else aborts the upgrade.
 */
export const paramsBackfill: Migration = {
  version: 4,
  name: "params_backfill",
  up(db) {
    allowTrigger(db, "backfill");
    db.exec(`
ALTER TABLE job_runs ADD COLUMN params        TEXT;
ALTER TABLE job_runs ADD COLUMN secret_params TEXT;
ALTER TABLE job_runs ADD COLUMN scheduled_at  TEXT;
ALTER TABLE job_runs ADD COLUMN backfill_id   INTEGER;
UPDATE job_runs SET scheduled_at = scheduled_for WHERE scheduled_for IS NOT NULL;
UPDATE job_runs SET scheduled_at =
  (SELECT s.scheduled_for FROM job_runs s WHERE s.cycle_id = job_runs.cycle_id AND s.scheduled_for IS NOT NULL ORDER BY s.id LIMIT 1)
  WHERE "trigger" = 'dependency';
-- "does this slot of the job have a run?" (backfill) and the runs of a slot
CREATE INDEX job_runs_scheduled ON job_runs (job_name, scheduled_at) WHERE scheduled_at IS NOT NULL;
-- a backfill's runs, in slot order
CREATE INDEX job_runs_backfill ON job_runs (backfill_id, id) WHERE backfill_id IS NOT NULL;

CREATE TABLE backfills (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  job_name       TEXT    NOT NULL,
  from_at        TEXT    NOT NULL, -- [from_at, to_at): ISO UTC instants
  to_at          TEXT    NOT NULL,
  reason         TEXT    CHECK (reason IS NULL OR length(reason) <= 500),
  params         TEXT,
  secret_params  TEXT,
  rerun          INTEGER NOT NULL DEFAULT 0 CHECK (rerun IN (0, 1)),
  ignore_exclude INTEGER NOT NULL DEFAULT 0 CHECK (ignore_exclude IN (0, 1)),
  parallel       INTEGER NOT NULL DEFAULT 1 CHECK (parallel >= 1),
  total          INTEGER NOT NULL, -- slots in the range
  created_by     TEXT    NOT NULL,
  created_at     TEXT    NOT NULL,
  cancelled_at   TEXT
);
CREATE INDEX backfills_job ON backfills (job_name, id);
`);
  },
};

const TRIGGERS_V1 = "(\"trigger\" IN ('manual','schedule','dependency'))";

/** Adds a value to job_runs' trigger CHECK in place (see above). */
function allowTrigger(db: Database.Database, value: string): void {
  const sql = db.prepare("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'job_runs'").pluck().get() as string;
  if (sql.split(TRIGGERS_V1).length !== 2) throw new Error(`job_runs has an unexpected definition; expected one CHECK ${TRIGGERS_V1}`);
  const next = sql.replace(TRIGGERS_V1, TRIGGERS_V1.replace("'dependency')", `'dependency','${value}')`));
  const version = db.pragma("schema_version", { simple: true }) as number;
  // better-sqlite3 keeps SQLite's defensive mode on, which forbids writing sqlite_schema.
  db.unsafeMode(true);
  try {
    db.pragma("writable_schema = ON");
    db.prepare("UPDATE sqlite_schema SET sql = ? WHERE type = 'table' AND name = 'job_runs'").run(next);
    db.pragma(`schema_version = ${version + 1}`);
  } finally {
    db.pragma("writable_schema = OFF");
    db.unsafeMode(false);
  }
  const check = db.pragma("quick_check", { simple: true });
  if (check !== "ok") throw new Error(`job_runs after adding trigger ${value}: quick_check says ${String(check)}`);
}

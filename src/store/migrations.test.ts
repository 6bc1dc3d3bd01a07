import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { MIGRATIONS, migrate, schemaVersion, SchemaTooNewError, SVC_APPLICATION_ID } from "./migrations/index.js";
import type { Migration } from "./migrations/index.js";
import { newRun, open, tempDir, waitFor } from "./testkit.js";
import type { TempDir } from "./testkit.js";

let tmp: TempDir;
afterEach(() => tmp?.remove());

const NOW = "2026-11-21T10:00:00.000Z";
const names = (db: Database.Database, type: string): string[] =>
  db.prepare("SELECT name FROM sqlite_schema WHERE type = ? AND name NOT LIKE 'sqlite_%' ORDER BY name").pluck().all(type) as string[];

describe("migrations", () => {
  it("numbers migrations 1, 2, 3... in order", () => {
    expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
  });

  it("builds the whole schema from an empty file", () => {
    tmp = tempDir();
    open(tmp.file()).close();
    const db = new Database(tmp.file(), { readonly: true });
    expect(schemaVersion(db)).toBe(MIGRATIONS.length);
    expect(db.pragma("application_id", { simple: true })).toBe(SVC_APPLICATION_ID);
    expect(db.prepare("SELECT version, name FROM schema_migrations ORDER BY version").all()).toEqual([
      { version: 1, name: "core" },
      { version: 2, name: "log_search" },
      { version: 3, name: "run_attempts_and_timeline" },
      { version: 4, name: "params_backfill" },
      { version: 5, name: "non_runs" },
    ]);
    expect(names(db, "table")).toEqual(
      expect.arrayContaining(["job_runs", "run_tags", "job_state", "run_logs", "run_log_spans", "run_logs_fts", "run_outputs", "alerts", "integration_status", "store_meta", "run_attempts", "non_runs"]),
    );
    expect(names(db, "index")).toEqual(
      expect.arrayContaining(["job_runs_slot", "job_runs_job", "job_runs_status", "job_runs_created", "run_outputs_cycle", "alerts_status"]),
    );
    db.close();
  });

  it("upgrades a version-1 database with rows, and indexes its existing log lines", async () => {
    tmp = tempDir();
    const v1 = new Database(tmp.file());
    migrate(v1, MIGRATIONS.slice(0, 1), NOW);
    expect(schemaVersion(v1)).toBe(1);
    v1.prepare(
      `INSERT INTO job_runs (job_name, status, "trigger", triggered_by, cycle_id, tags, created_at) VALUES ('old', 'SUCCESS', 'schedule', 'scheduler', 'c1', '["etl"]', ?)`,
    ).run(NOW);
    v1.prepare("INSERT INTO run_tags (tag, run_id) VALUES ('etl', 1)").run();
    const line = v1.prepare("INSERT INTO run_logs (run_id, seq, ts, stream, line, job_name) VALUES (1, ?, ?, 'stdout', ?, 'old')");
    for (let i = 1; i <= 3; i++) line.run(i, NOW, `legacy line ${i} written before search existed`);
    v1.prepare("INSERT INTO run_log_spans (run_id, first_seq, last_seq, first_id) VALUES (1, 1, 3, 1)").run();
    v1.prepare("UPDATE store_meta SET value = 3 WHERE key = 'log_lines'").run();
    v1.prepare("INSERT INTO run_log_counts (run_id, stream, lines) VALUES (1, 'stdout', 3)").run();
    v1.close();

    const store = open(tmp.file(), { ftsIntervalMs: 10 });
    expect(store.schemaVersion).toBe(MIGRATIONS.length);
    expect(store.runs.get(1)).toMatchObject({ job_name: "old", status: "SUCCESS", tags: ["etl"] });
    expect(store.runs.audit({ tag: "etl" }, 10, 0).total).toBe(1);
    expect(store.logs.ftsLag()).toBe(3);
    await waitFor(() => store.logs.ftsLag() === 0, 2_000);
    expect(store.logs.search({ q: "legacy" }, 10, 0).rows.map((r) => r.seq)).toEqual([3, 2, 1]);
    // seq continues after the lines that were already there
    expect(store.logs.append(1, "stdout", "new", NOW).seq).toBe(4);
    store.close();
  });

  it("applies all pending migrations in one transaction: a failing step leaves the database as it was", () => {
    tmp = tempDir();
    const db = new Database(tmp.file());
    migrate(db, MIGRATIONS.slice(0, 1), NOW);
    const broken: Migration = {
      version: MIGRATIONS.length + 1,
      name: "broken",
      up: (d) => d.exec("CREATE TABLE half_done (x); SELECT no_such_function();"),
    };
    expect(() => migrate(db, [...MIGRATIONS, broken], NOW)).toThrow(/no_such_function/);
    expect(schemaVersion(db)).toBe(1);
    expect(names(db, "table")).not.toContain("run_logs_fts");
    expect(names(db, "table")).not.toContain("half_done");
    db.close();
  });

  it("4 adds the trigger backfill in place: ids, the id sequence, every reference and their cascades kept; fills scheduled_at", () => {
    tmp = tempDir();
    const v2 = new Database(tmp.file());
    migrate(v2, MIGRATIONS.slice(0, 3), NOW);
    const insert = v2.prepare(
      `INSERT INTO job_runs (id, job_name, status, "trigger", triggered_by, cycle_id, tags, scheduled_for, created_at) VALUES (?, ?, 'SUCCESS', ?, 'x', ?, '["etl"]', ?, ?)`,
    );
    insert.run(1, "extract", "schedule", "c1", "2026-11-01T02:30:00.000Z", NOW);
    insert.run(2, "transform", "dependency", "c1", null, NOW);
    insert.run(3, "extract", "manual", "c2", null, NOW);
    insert.run(9, "extract", "manual", "c3", null, NOW);
    v2.prepare("DELETE FROM job_runs WHERE id = 9").run(); // retention took the newest: 9 must never come back
    for (const id of [1, 2, 3]) v2.prepare("INSERT INTO run_tags (tag, run_id) VALUES ('etl', ?)").run(id);
    v2.prepare("INSERT INTO run_outputs (run_id, job_name, var_name, value, cycle_id, created_at) VALUES (1, 'extract', 'rows', '42', 'c1', ?)").run(NOW);
    v2.prepare("INSERT INTO alerts (job_name, run_id, event, channel, payload, created_at) VALUES ('extract', 3, 'on_failure', 'x:y', '{}', ?)").run(NOW);
    v2.close();

    const store = open(tmp.file());
    expect(store.runs.get(1)).toMatchObject({ scheduled_for: "2026-11-01T02:30:00.000Z", scheduled_at: "2026-11-01T02:30:00.000Z", params: {}, backfill_id: null });
    expect(store.runs.get(2)).toMatchObject({ trigger: "dependency", scheduled_at: "2026-11-01T02:30:00.000Z" });
    expect(store.runs.get(3)).toMatchObject({ trigger: "manual", scheduled_at: null });
    expect(store.runs.audit({ tag: "etl" }, 10, 0).total).toBe(3);
    expect(store.outputs.lookup("c1", "extract", "rows")).toBe("42");
    expect(store.runs.create(newRun({ trigger: "backfill" })).id).toBe(10);
    store.close();

    const db = new Database(tmp.file());
    db.pragma("foreign_keys = ON");
    expect(db.prepare("SELECT count(*) FROM pragma_foreign_key_check").pluck().get()).toBe(0);
    // the references still point at job_runs and still act: deleting runs cascades and nulls
    db.prepare("DELETE FROM job_runs WHERE id IN (1, 3)").run();
    expect(db.prepare("SELECT count(*) FROM run_tags").pluck().get()).toBe(1);
    expect(db.prepare("SELECT count(*) FROM run_outputs").pluck().get()).toBe(0);
    expect(db.prepare("SELECT run_id FROM alerts").pluck().get()).toBeNull();
    expect(() => db.prepare(`UPDATE job_runs SET "trigger" = 'bogus' WHERE id = 2`).run()).toThrow(/CHECK/);
    expect(() => db.prepare("INSERT INTO job_runs (job_name, status, \"trigger\", cycle_id, scheduled_for, created_at) VALUES ('extract', 'PENDING', 'schedule', 'c9', '2026-11-01T02:30:00.000Z', 'x')").run()).not.toThrow();
    expect(() => db.prepare("INSERT INTO job_runs (job_name, status, \"trigger\", cycle_id, scheduled_for, created_at) VALUES ('extract', 'PENDING', 'schedule', 'c9', '2026-11-01T02:30:00.000Z', 'x')").run()).toThrow(/UNIQUE/);
    expect(db.pragma("foreign_keys", { simple: true })).toBe(1);
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    db.close();
  });

  it("refuses a newer schema and rejects a gap in the numbering", () => {
    tmp = tempDir();
    const db = new Database(tmp.file());
    migrate(db, MIGRATIONS, NOW);
    expect(() => migrate(db, MIGRATIONS.slice(0, 1), NOW)).toThrow(SchemaTooNewError);
    expect(() => migrate(db, [MIGRATIONS[1]!], NOW)).toThrow("expected 1");
    db.close();
  });
});

import type Database from "better-sqlite3";
import { SvcError } from "../../shared/svcError.js";

export interface Migration {
  /** 1, 2, 3...: the schema version after this migration. */
  version: number;
  name: string;
  /** Runs inside the upgrade transaction; throw to abort the whole upgrade. */
  up(db: Database.Database): void;
}

/** `PRAGMA application_id` of an svc database ("svc1"), to tell it from other SQLite files. */
export const SVC_APPLICATION_ID = 0x73766331;

export interface MigrateResult {
  from: number;
  to: number;
}

/** The database was written by a newer svc: refuse rather than guess. */
export class SchemaTooNewError extends SvcError {
  constructor(
    readonly found: number,
    readonly supported: number,
  ) {
    super("internal", `schema version ${found} is newer than this svc supports (${supported})`);
    this.name = "SchemaTooNewError";
  }
}

export function schemaVersion(db: Database.Database): number {
  return db.pragma("user_version", { simple: true }) as number;
}

/**
 * Brings the database up to the last of `migrations` in one IMMEDIATE
 * transaction: either every pending migration applies or none does.
 * `PRAGMA user_version` is the version (it is part of the transaction);
 * schema_migrations keeps the history of when each step ran.
 */
export function migrate(db: Database.Database, migrations: readonly Migration[], nowIso: string): MigrateResult {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`migration ${m.name} has version ${m.version}, expected ${i + 1}`);
  });
  const latest = migrations.length;
  const apply = db.transaction((): MigrateResult => {
    const from = schemaVersion(db);
    if (from > latest) throw new SchemaTooNewError(from, latest);
    if (from === latest) return { from, to: from };
    db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
  version    INTEGER PRIMARY KEY,
  name       TEXT NOT NULL,
  applied_at TEXT NOT NULL
)`);
    const record = db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)");
    for (const m of migrations.slice(from)) {
      m.up(db);
      record.run(m.version, m.name, nowIso);
    }
    db.pragma(`application_id = ${SVC_APPLICATION_ID}`);
    db.pragma(`user_version = ${latest}`);
    return { from, to: latest };
  });
  return apply.immediate();
}

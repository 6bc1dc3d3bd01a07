import type { IntegrationStatusStore } from "./api.js";
import { NotFoundError } from "./errors.js";
import type { Db, Stmt } from "./sql.js";
import type { IntegrationStatusRow } from "./types.js";

/** integration_status: credential status from the config, plus the last live test. */
export class SqliteIntegrations implements IntegrationStatusStore {
  private readonly st: Record<"all" | "get" | "upsert" | "test" | "names" | "remove", Stmt>;
  private readonly syncAll: (rows: { name: string; provider: string; credential_status: string }[]) => void;

  constructor(db: Db) {
    this.st = {
      all: db.prepare("SELECT * FROM integration_status ORDER BY name"),
      get: db.prepare("SELECT * FROM integration_status WHERE name = ?"),
      upsert: db.prepare(`INSERT INTO integration_status (name, provider, credential_status) VALUES (@name, @provider, @credential_status)
        ON CONFLICT (name) DO UPDATE SET provider = excluded.provider, credential_status = excluded.credential_status`),
      test: db.prepare("UPDATE integration_status SET last_test_result = ?, last_test_at = ? WHERE name = ?"),
      names: db.prepare("SELECT name FROM integration_status").pluck(),
      remove: db.prepare("DELETE FROM integration_status WHERE name = ?"),
    };
    // The rows mirror the loaded config: integrations removed from it are dropped.
    this.syncAll = db.transaction((rows: { name: string; provider: string; credential_status: string }[]) => {
      const keep = new Set(rows.map((r) => r.name));
      for (const name of this.st.names.all() as string[]) if (!keep.has(name)) this.st.remove.run(name);
      for (const r of rows) this.st.upsert.run({ name: r.name, provider: r.provider, credential_status: r.credential_status });
    });
  }

  all(): IntegrationStatusRow[] {
    return this.st.all.all() as IntegrationStatusRow[];
  }

  get(name: string): IntegrationStatusRow | null {
    return (this.st.get.get(name) as IntegrationStatusRow | undefined) ?? null;
  }

  sync(rows: { name: string; provider: string; credential_status: string }[]): void {
    this.syncAll(rows);
  }

  recordTest(name: string, result: string, at: string): void {
    if (this.st.test.run(result, at, name).changes === 0) throw new NotFoundError("integration", name);
  }
}

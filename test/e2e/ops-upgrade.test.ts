/**
 * Upgrades (docs/DEPLOY.md): the built svcd opens a database made by each
 * earlier release (test/fixtures/releases/svc-<version>.db, written by that
 * release's store and never regenerated), migrates it forward at start and
 * serves every run, log line, output and job state it holds. A database from
 * a newer svc is refused with a clear message and left as it was.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { MIGRATIONS } from "../../src/store/migrations/index.js";
import { cleanup, project, runDaemonOnce, startDaemon, until } from "../helpers/daemonKit.js";
import { parseExposition, sampleValue } from "../helpers/promText.js";

const FIXTURES = join(import.meta.dirname, "..", "fixtures", "releases");
const releases = readdirSync(FIXTURES).filter((f) => /^svc-\d+\.\d+\.\d+\.db$/.test(f)).sort();

const yaml = `
jobs:
  extract:
    command: "echo extracted"
  transform:
    command: "true"
    depends_on: [extract]
  load:
    command: "true"
    depends_on: [transform]
`;

function userVersion(file: string): number {
  const db = new Database(file, { readonly: true });
  try {
    return db.pragma("user_version", { simple: true }) as number;
  } finally {
    db.close();
  }
}

describe("upgrading from an earlier release's database", () => {
  it("has at least one release fixture", () => {
    expect(releases.length).toBeGreaterThan(0);
  });

  for (const release of releases) {
    it(`${release}: migrated forward at start, every record served`, async () => {
      const dir = project(yaml);
      try {
        mkdirSync(join(dir, ".svc"), { mode: 0o700 });
        const db = join(dir, ".svc", "svc.db");
        copyFileSync(join(FIXTURES, release), db);
        const from = userVersion(db);
        expect(from).toBeLessThanOrEqual(MIGRATIONS.length);

        const d = await startDaemon(dir);
        try {
          const audit = await d.api<{ total: number; runs: { id: number; status: string }[] }>("GET", "/api/audit?limit=100");
          expect(audit.status).toBe(200);
          expect(audit.body.total).toBe(12);
          expect(audit.body.runs.filter((r) => r.status === "SUCCESS")).toHaveLength(10);
          expect((await d.api<{ status: string; error: string }>("GET", "/api/runs/8")).body).toMatchObject({ status: "FAILED", error: "exit code 3" });
          const logs = await d.api<{ lines: { seq: number; stream: string; line: string }[] }>("GET", "/api/runs/1/logs");
          expect(logs.body.lines.map((l) => [l.seq, l.stream, l.line])).toEqual([
            [1, "stdout", "--- attempt 1 ---"],
            [2, "stdout", "extract cycle 0: processed 100 rows"],
            [3, "stderr", "extract warning: slow upstream"],
          ]);
          expect((await d.api<{ outputs: { var_name: string; value: string }[] }>("GET", "/api/runs/1/outputs")).body.outputs).toMatchObject([{ var_name: "rows", value: "100" }]);
          const state = await d.api<{ rows: { job_name: string; paused: boolean | number }[] }>("GET", "/api/db/state");
          expect(state.body.rows.find((r) => r.job_name === "load")?.paused).toBeTruthy();
          // Gauges read from the database are right from the first scrape after a (re)start.
          const metrics = parseExposition((await d.api<string>("GET", "/metrics")).body);
          const extract = state.body.rows.find((r) => r.job_name === "extract") as unknown as { last_success: string };
          expect(sampleValue(metrics, "svc_job_last_success_timestamp_seconds", { job_name: "extract" })).toBe(Date.parse(extract.last_success) / 1000);
          expect(sampleValue(metrics, "svc_job_paused", { job_name: "load" })).toBe(1);
          expect(sampleValue(metrics, "svc_runs_total", { job_name: "extract", status: "SUCCESS", trigger: "schedule" })).toBeUndefined(); // counters start at zero
          // The lines the old daemon had not indexed yet become searchable.
          await until("the old lines to be searchable", async () => (await d.api<{ total: number }>("GET", "/api/db/run_logs?q=slow")).body.total === 11, 20_000);

          // And the upgraded database takes new runs, continuing the ids and each run's log sequence.
          const run = await d.api<{ run_id: number }>("POST", "/api/jobs/extract/run");
          expect(run.body.run_id).toBe(13);
          await until("the new run to succeed", async () => (await d.api<{ status: string }>("GET", "/api/runs/13")).body.status === "SUCCESS");
        } finally {
          expect(await d.stop()).toBe(0);
        }
        expect(userVersion(db)).toBe(MIGRATIONS.length);
      } finally {
        cleanup(dir);
      }
    }, 60_000);
  }

  it("refuses a database from a newer svc at start, with a message that says what to do, and leaves it as it was", async () => {
    const dir = project(yaml);
    try {
      mkdirSync(join(dir, ".svc"), { mode: 0o700 });
      const db = join(dir, ".svc", "svc.db");
      copyFileSync(join(FIXTURES, releases[releases.length - 1]!), db);
      const w = new Database(db);
      w.pragma(`user_version = ${MIGRATIONS.length + 1}`);
      w.close();
      const before = readFileSync(db);
      const r = await runDaemonOnce(dir);
      expect(r.code).toBe(1);
      expect(r.output).toContain(
        `svcd: ${db} was written by a newer svc (schema version ${MIGRATIONS.length + 1}, this svc knows up to ${MIGRATIONS.length}): upgrade svc, or move it away or set storage.sqlite.path`,
      );
      expect(readFileSync(db).equals(before)).toBe(true);
    } finally {
      cleanup(dir);
    }
  });
});

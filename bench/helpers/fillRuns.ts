/**
 * `runs` finished runs written straight into the store's schema with SQL
 * (through runs.create and transitions they take minutes; that rate is
 * measured on its own in store.bench.ts). Jobs `job-<i % jobs>` by default
 * (`jobName`: an SQL expression of `i`), a year of history; per job 80 %
 * SUCCESS, 10 % FAILED, 10 % SKIPPED, 2 % manual with a reason; 1 % SLA
 * breaches; a third tagged `nightly`. Secondary indexes are dropped for the
 * load and built again. The file must be an svc database already (openStore
 * once, then close).
 */
import Database from "better-sqlite3";

export function fillRuns(file: string, runs: number, jobs: number, jobName = `'job-' || (i % ${jobs})`): void {
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("cache_size = -65536");
  const indexes = db
    .prepare("SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN ('job_runs', 'run_tags')")
    .all() as { name: string; sql: string }[];
  for (const ix of indexes) db.exec(`DROP INDEX ${ix.name}`);
  const start = Date.parse("2025-11-21T00:00:00.000Z");
  const step = (365 * 86_400_000) / runs;
  const insert = db.prepare(
    `WITH RECURSIVE n (i) AS (SELECT CAST(? AS INTEGER) UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?),
     r AS (SELECT i, ? + i * ? AS t,
             CASE (i / ${jobs}) % 10 WHEN 8 THEN 'FAILED' WHEN 9 THEN 'SKIPPED' ELSE 'SUCCESS' END AS st,
             (i / ${jobs}) % 50 = 0 AS manual,
             1000 + (i * 7919) % 600000 AS dur FROM n)
     INSERT INTO job_runs (job_name, status, attempt, "trigger", triggered_by, reason, cycle_id, tags, created_at,
                           started_at, finished_at, exit_code, sla_breached, duration_ms)
     SELECT ${jobName}, st, 1,
            CASE WHEN manual THEN 'manual' ELSE 'schedule' END,
            CASE WHEN manual THEN 'cli' ELSE 'scheduler' END,
            CASE WHEN manual THEN 'backfill after incident ' || (i % 97) END,
            'cycle-' || (i / 4),
            CASE WHEN i % 3 = 0 THEN '["etl","nightly"]' ELSE '["etl"]' END,
            strftime('%Y-%m-%dT%H:%M:%fZ', t / 1000.0, 'unixepoch'),
            CASE WHEN st <> 'SKIPPED' THEN strftime('%Y-%m-%dT%H:%M:%fZ', (t + 1000) / 1000.0, 'unixepoch') END,
            strftime('%Y-%m-%dT%H:%M:%fZ', (t + 1000 + CASE WHEN st = 'SKIPPED' THEN 0 ELSE dur END) / 1000.0, 'unixepoch'),
            CASE st WHEN 'SUCCESS' THEN 0 WHEN 'FAILED' THEN 1 END,
            CASE WHEN i % 101 = 0 THEN 1 ELSE 0 END,
            CASE WHEN st <> 'SKIPPED' THEN dur END
     FROM r`,
  );
  const chunk = db.transaction((from: number, to: number) => insert.run(from, to, start, step));
  for (let i = 0; i < runs; i += 100_000) chunk(i, Math.min(runs, i + 100_000));
  db.exec(`INSERT INTO run_tags (tag, run_id) SELECT 'etl', id FROM job_runs;
           INSERT INTO run_tags (tag, run_id) SELECT 'nightly', id FROM job_runs WHERE (id - 1) % 3 = 0;`);
  for (const ix of indexes) db.exec(ix.sql);
  db.close();
}

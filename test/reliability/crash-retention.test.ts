/**
 * SIGKILL while retention prunes (SPEC rule 12): a database with many old
 * and many surplus runs, a daemon with `storage.retention`, killed at a
 * random moment once the prune has visibly started. After each kill:
 * integrity_check, the line counter equals the lines stored, every run's
 * log spans describe exactly its lines, and a restart works. At the end a
 * vacuum finishes the job: nothing older than max_age, at most
 * max_runs_per_job completed runs per job, and the newest runs are intact.
 * Default: 1 kill; full: 5.
 */
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/shared/logger.js";
import { openStore } from "../../src/store/index.js";
import { seeded } from "../helpers/seed.js";
import { Owned, checkDatabase, dbPathOf, pick, report, settled, sleep, until } from "./helpers/relKit.js";

const own = new Owned();
afterEach(() => own.dispose());
/** When each kill comes after the prune has started: printed, and replayed with SVC_SEED. */
const rand = seeded(import.meta.filename);

const KILLS = pick(1, 5);
const JOBS = ["a", "b", "c"];
const OLD_PER_JOB = pick(1_500, 3_000);
const RECENT_PER_JOB = 120;
const LINES_PER_RUN = 40;
const CAP = 20;
const DAY = 86_400_000;

/** Old runs (10 days) and surplus recent runs (1 hour), each with log lines and an output. */
function prefill(dir: string): { newest: Map<string, number[]> } {
  const store = openStore({ path: dbPathOf(dir), busyTimeoutMs: 5_000, walAutocheckpoint: 1_000, logger: silentLogger });
  const newest = new Map<string, number[]>();
  try {
    const now = Date.now();
    for (const job of JOBS) {
      const ids: number[] = [];
      for (const [count, age] of [[OLD_PER_JOB, 10 * DAY], [RECENT_PER_JOB, 3_600_000]] as const) {
        store.tx(() => {
          for (let i = 0; i < count; i++) {
            const at = new Date(now - age + i * 1000).toISOString();
            const run = store.runs.create({ job_name: job, trigger: "manual", triggered_by: "cli", cycle_id: `c-${job}-${age}-${i}`, tags: [], created_at: at });
            store.runs.transition(run.id, "RUNNING", { started_at: at });
            store.runs.transition(run.id, i % 7 === 0 ? "FAILED" : "SUCCESS", { finished_at: at });
            for (let l = 0; l < LINES_PER_RUN; l++) store.logs.append(run.id, "stdout", `${job} run ${run.id} line ${l}`, at);
            store.outputs.put({ run_id: run.id, job_name: job, var_name: "n", value: String(i), cycle_id: run.cycle_id, created_at: at });
            ids.push(run.id);
          }
        });
        store.logs.flush();
      }
      newest.set(job, ids.slice(-CAP));
    }
  } finally {
    store.close();
  }
  return { newest };
}

function runCount(path: string): number {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare("SELECT COUNT(*) FROM job_runs").pluck().get() as number;
  } finally {
    db.close();
  }
}

/** The stored line counter, and each run's spans against its lines. */
function checkLogBookkeeping(path: string): void {
  const db = new Database(path, { readonly: true });
  try {
    const counted = Number(db.prepare("SELECT value FROM store_meta WHERE key = 'log_lines'").pluck().get());
    const actual = db.prepare("SELECT COUNT(*) FROM run_logs").pluck().get() as number;
    expect(counted, "store_meta.log_lines").toBe(actual);
    const bad = db
      .prepare(
        `SELECT s.run_id FROM run_log_spans s
         WHERE (SELECT COUNT(*) FROM run_logs l WHERE l.id BETWEEN s.first_id AND s.first_id + s.last_seq - s.first_seq AND l.run_id = s.run_id) != s.last_seq - s.first_seq + 1
         LIMIT 5`,
      )
      .all();
    expect(bad, "spans that do not match their lines").toEqual([]);
    const unspanned = db
      .prepare("SELECT COUNT(*) FROM run_logs l WHERE NOT EXISTS (SELECT 1 FROM run_log_spans s WHERE s.run_id = l.run_id AND l.seq BETWEEN s.first_seq AND s.last_seq)")
      .pluck()
      .get() as number;
    expect(unspanned, "lines outside every span").toBe(0);
  } finally {
    db.close();
  }
}

describe("crash during retention", () => {
  it(`survives ${KILLS} SIGKILL(s) in the middle of a prune (seed ${rand.seed})`, { timeout: 120_000 + KILLS * 60_000 }, async () => {
    const t0 = Date.now();
    const yaml = `jobs:\n${JOBS.map((j) => `  ${j}:\n    command: "echo ${j}"\n`).join("")}`;
    const dir = own.project(yaml, { daemon: `storage:\n  retention:\n    max_age: 7d\n    max_runs_per_job: ${CAP}\n` });
    const { newest } = prefill(dir);
    const before = runCount(dbPathOf(dir));
    let killedMidway = 0;
    for (let k = 0; k < KILLS; k++) {
      const d = await own.daemon(dir);
      await settled(d, []);
      const start = runCount(dbPathOf(dir));
      // Retention starts ~30 s after startup; kill once it has visibly begun.
      await until("retention to start", () => runCount(dbPathOf(dir)) < start, 60_000);
      await sleep(rand.int(0, 299));
      await d.stop("SIGKILL");
      const left = runCount(dbPathOf(dir));
      if (left > JOBS.length * CAP) killedMidway++;
      checkDatabase(dbPathOf(dir));
      checkLogBookkeeping(dbPathOf(dir));
      if (left <= JOBS.length * CAP) break; // nothing left to prune: later kills would not land mid-prune
    }
    // A clean start and stop after the last kill, then finish the prune.
    const d = await own.daemon(dir);
    await settled(d, []);
    expect(await d.stop()).toBe(0);
    const store = openStore({ path: dbPathOf(dir), busyTimeoutMs: 5_000, walAutocheckpoint: 1_000, logger: silentLogger });
    try {
      store.vacuum({ maxAgeMs: 7 * DAY, maxRunsPerJob: CAP }, Date.now());
      for (const job of JOBS) {
        const kept = store.runs.recent(job, 1_000).map((r) => r.id).sort((a, b) => a - b);
        expect(kept, `runs kept for ${job}`).toEqual(newest.get(job));
        for (const id of kept) expect(store.logs.forRun(id, { limit: 100, offset: 0 }).total).toBe(LINES_PER_RUN);
      }
      expect(store.integrityCheck()).toBe("ok");
    } finally {
      store.close();
    }
    checkLogBookkeeping(dbPathOf(dir));
    expect(killedMidway).toBeGreaterThan(0);
    report("crash during retention", { kills: KILLS, killed_mid_prune: killedMidway, runs_before: before, runs_after: JOBS.length * CAP, lines_before: before * LINES_PER_RUN, seconds: (Date.now() - t0) / 1000 });
  });
});

import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import type { Store } from "./api.js";
import { newRun, open, runTo, tempDir, waitFor } from "./testkit.js";
import type { TempDir } from "./testkit.js";
import type { RunRecord, RunStatus } from "./types.js";

const DAY = 86_400_000;
const NOW = Date.parse("2026-11-21T12:00:00.000Z");
const ago = (days: number) => new Date(NOW - days * DAY).toISOString();

let tmp: TempDir;
let store: Store;
afterEach(() => {
  store?.close();
  tmp?.remove();
});

function fresh(): Store {
  tmp = tempDir();
  store = open(tmp.file(), { ftsIntervalMs: 5 });
  return store;
}

/** A run created `days` ago in `status`, with `lines` log lines and one output. */
function aged(job: string, status: RunStatus, days: number, lines = 3): RunRecord {
  const created = ago(days);
  const run = runTo(store, status, { job_name: job, created_at: created });
  for (let i = 0; i < lines; i++) store.logs.append(run.id, "stdout", `${job} ${status} line ${i} marker${run.id}`, created);
  store.outputs.put({ run_id: run.id, job_name: job, var_name: "rows", value: String(run.id), cycle_id: run.cycle_id, created_at: created });
  return run;
}

const ids = (runs: RunRecord[]) => runs.map((r) => r.id).sort((a, b) => a - b);
const remaining = () => ids(store.runs.audit({}, 10_000, 0).rows);
const ftsRows = () => {
  const db = new Database(store.path, { readonly: true });
  const n = db.prepare("SELECT count(*) FROM run_logs_fts").pluck().get() as number;
  db.close();
  return n;
};

describe("retention", () => {
  it("deletes runs older than max_age (finished_at, else created_at) with their logs, search entries and outputs", async () => {
    fresh();
    const old = [aged("a", "SUCCESS", 40), aged("a", "FAILED", 31), aged("b", "SKIPPED", 35)];
    const young = [aged("a", "SUCCESS", 5), aged("b", "FAILED", 29)];
    // created long ago but finished recently: its age counts from finished_at
    const late = runTo(store, "SUCCESS", { job_name: "c", created_at: ago(45) }, { finished_at: ago(1) });
    store.logs.flush();
    await waitFor(() => store.logs.ftsLag() === 0, 2_000);
    expect(store.logs.search({ q: `marker${old[0]!.id}` }, 10, 0).total).toBe(3);

    const result = store.vacuum({ maxAgeMs: 30 * DAY, maxRunsPerJob: null }, NOW);
    expect(result).toEqual({ runsByAge: 3, runsByCap: 0, logLines: 9, outputs: 3, alerts: 0, nonRuns: 0 });
    expect(remaining()).toEqual(ids([...young, late]));
    for (const r of old) {
      expect(store.runs.get(r.id)).toBeNull();
      expect(store.logs.forRun(r.id, { limit: 10, offset: 0 }).total).toBe(0);
      expect(store.outputs.forRun(r.id)).toEqual([]);
      expect(store.logs.search({ q: `marker${r.id}` }, 10, 0).total).toBe(0);
    }
    expect(ftsRows()).toBe(6); // only the young runs' lines are still indexed
    expect(store.outputs.forRun(young[0]!.id)).toHaveLength(1);
    expect(store.runs.audit({ tag: "x" }, 10, 0).total).toBe(0);
    expect(store.integrityCheck()).toBe("ok");
  });

  it("deletes the traces of runs that did not happen (non_runs) last extended before max_age, in batches", async () => {
    fresh();
    const paused = (job: string, days: number) => ({ job_name: job, reason: "paused" as const, detail: "paused: scheduled slot skipped", slot: ago(days), at: ago(days) });
    store.nonRuns.record(paused("gone", 60));
    store.nonRuns.record(paused("gone", 40)); // the same row, extended 40 days ago
    store.nonRuns.record(paused("still", 60));
    store.nonRuns.record(paused("still", 1)); // first slot 60 days ago, extended yesterday: kept
    store.nonRuns.record({ job_name: "chain", reason: "upstream_failed", detail: "upstream x FAILED (run 1)", cycle_id: "c-old", upstream: "x", upstream_run_id: 1, at: ago(35) });
    store.nonRuns.record({ job_name: "chain", reason: "upstream_failed", detail: "upstream x FAILED (run 2)", cycle_id: "c-new", upstream: "x", upstream_run_id: 2, at: ago(5) });
    const rows = () => store.nonRuns.search({}, 100, 0).rows.map((r) => [r.job_name, r.count, r.first_at, r.last_at]);
    expect(rows()).toHaveLength(4);

    expect(store.vacuum({ maxAgeMs: null, maxRunsPerJob: 1 }, NOW).nonRuns).toBe(0); // the per-job cap is for runs only
    expect(rows()).toHaveLength(4);
    const result = store.vacuum({ maxAgeMs: 30 * DAY, maxRunsPerJob: null }, NOW);
    expect(result).toEqual({ runsByAge: 0, runsByCap: 0, logLines: 0, outputs: 0, alerts: 0, nonRuns: 2 });
    expect(rows()).toEqual([
      ["chain", 1, ago(5), ago(5)],
      ["still", 2, ago(60), ago(1)],
    ]);

    // More old rows than one statement deletes (5,000), across jobs: all go, the young one stays.
    store.tx(() => {
      for (let j = 0; j < 25; j++) {
        for (let i = 0; i < 480; i++) {
          store.nonRuns.record({ job_name: `j${j}`, reason: "upstream_failed", detail: `run ${i}`, cycle_id: `c${i}`, upstream: "x", upstream_run_id: i, at: ago(100 - i / 100) });
        }
      }
    });
    expect(store.nonRuns.search({}, 1, 0).total).toBe(12_002);
    expect((await store.vacuumAsync({ maxAgeMs: 30 * DAY, maxRunsPerJob: null }, NOW)).nonRuns).toBe(12_000);
    expect(rows()).toEqual([
      ["chain", 1, ago(5), ago(5)],
      ["still", 2, ago(60), ago(1)],
    ]);
  });

  it("keeps only the N most recent completed runs per job", () => {
    fresh();
    const a = [5, 4, 3, 2, 1].map((d) => aged("a", d % 2 ? "SUCCESS" : "FAILED", d));
    const b = [aged("b", "SKIPPED", 3), aged("b", "SUCCESS", 1)];
    const result = store.vacuum({ maxAgeMs: null, maxRunsPerJob: 2 }, NOW);
    expect(result).toEqual({ runsByAge: 0, runsByCap: 3, logLines: 9, outputs: 3, alerts: 0, nonRuns: 0 });
    expect(remaining()).toEqual(ids([a[3]!, a[4]!, ...b]));
    expect(store.vacuum({ maxAgeMs: null, maxRunsPerJob: 0 }, NOW).runsByCap).toBe(4);
  });

  it("never prunes PENDING, RUNNING or RETRYING runs, by age or by cap", () => {
    fresh();
    const active = (["PENDING", "RUNNING", "RETRYING"] as const).map((s) => aged("a", s, 100));
    const done = [aged("a", "SUCCESS", 100), aged("a", "FAILED", 2), aged("a", "SUCCESS", 1)];
    const result = store.vacuum({ maxAgeMs: 30 * DAY, maxRunsPerJob: 1 }, NOW);
    expect(result).toMatchObject({ runsByAge: 1, runsByCap: 1 });
    expect(remaining()).toEqual(ids([...active, done[2]!]));
    for (const r of active) expect(store.logs.forRun(r.id, { limit: 10, offset: 0 }).total).toBe(3);
  });

  it("keeps a completed run while its cycle has a run not over (a downstream to come reads its outputs), then prunes it", () => {
    fresh();
    // extract ended long ago; load, in the same cycle, is still RETRYING.
    const extract = aged("extract", "SUCCESS", 100);
    const load = runTo(store, "RETRYING", { job_name: "load", cycle_id: extract.cycle_id, trigger: "dependency", created_at: ago(99) });
    const newer = [3, 2, 1].map((d) => aged("extract", "SUCCESS", d));
    expect(store.vacuum({ maxAgeMs: 30 * DAY, maxRunsPerJob: 1 }, NOW)).toMatchObject({ runsByAge: 0, runsByCap: 2 });
    expect(remaining()).toEqual(ids([extract, load, newer[2]!]));
    expect(store.outputs.forRun(extract.id).map((o) => o.value)).toEqual([String(extract.id)]);
    // The cycle ends: its runs go at the next pass.
    store.runs.transition(load.id, "RUNNING", { started_at: ago(1) });
    store.runs.transition(load.id, "SUCCESS", { finished_at: ago(1) });
    expect(store.vacuum({ maxAgeMs: 30 * DAY, maxRunsPerJob: 1 }, NOW)).toMatchObject({ runsByAge: 1, runsByCap: 0 });
    expect(remaining()).toEqual(ids([load, newer[2]!]));
  });

  it("keeps the finished runs of a backfill still going (its progress counts them), by age and by cap; once it is over they go", () => {
    fresh();
    const slots = ["2026-01-01T00:00:00.000Z", "2026-01-01T01:00:00.000Z", "2026-01-01T02:00:00.000Z"];
    const { runs } = store.backfills.create(
      {
        job_name: "bf",
        from: slots[0]!,
        to: "2026-01-01T03:00:00.000Z",
        reason: null,
        params: {},
        secretParams: [],
        rerun: false,
        ignore_exclude: false,
        parallel: 1,
        total: slots.length,
        created_by: "t",
        created_at: ago(100),
      },
      slots.map((s, i) => ({ scheduled_at: s, cycle_id: `bf-${i}`, scheduled_for: s })),
    );
    for (const r of runs.slice(0, 2)) {
      store.runs.transition(r.id, "RUNNING", { started_at: ago(100) });
      store.runs.transition(r.id, "SUCCESS", { finished_at: ago(100) });
    }
    const later = [2, 1].map((d) => aged("bf", "SUCCESS", d));
    expect(store.vacuum({ maxAgeMs: 30 * DAY, maxRunsPerJob: 1 }, NOW)).toMatchObject({ runsByAge: 0, runsByCap: 1 });
    expect(remaining()).toEqual(ids([...runs, later[1]!]));
    store.runs.transition(runs[2]!.id, "SKIPPED", {});
    expect(store.vacuum({ maxAgeMs: 30 * DAY, maxRunsPerJob: 1 }, NOW)).toMatchObject({ runsByAge: 3, runsByCap: 0 });
    expect(remaining()).toEqual(ids([later[1]!]));
  });

  it("does nothing without limits, and rejects nonsense limits", () => {
    fresh();
    aged("a", "SUCCESS", 400);
    expect(store.vacuum({ maxAgeMs: null, maxRunsPerJob: null }, NOW)).toEqual({ runsByAge: 0, runsByCap: 0, logLines: 0, outputs: 0, alerts: 0, nonRuns: 0 });
    expect(() => store.vacuum({ maxAgeMs: -1, maxRunsPerJob: null }, NOW)).toThrow(RangeError);
    expect(() => store.vacuum({ maxAgeMs: null, maxRunsPerJob: 1.5 }, NOW)).toThrow(RangeError);
  });

  it("deletes the final alerts of pruned runs with them (by age and by cap) and keeps those of kept runs", () => {
    fresh();
    const alertOf = (run: RunRecord, days: number) => {
      const a = store.alerts.create({ job_name: run.job_name, run_id: run.id, event: "on_failure", channel: "chat:#ops", payload: "{}", created_at: ago(days) });
      return store.alerts.recordAttempt(a.id, "delivered", null, ago(days)).id;
    };
    const old = aged("a", "FAILED", 90);
    const young = aged("a", "FAILED", 2);
    const capped = [aged("b", "FAILED", 3), aged("b", "FAILED", 2), aged("b", "FAILED", 1)];
    const oldAlerts = [alertOf(old, 90), alertOf(old, 90)]; // two channels
    const youngAlert = alertOf(young, 2);
    const cappedAlerts = capped.map((r, i) => alertOf(r, 3 - i));
    const result = store.vacuum({ maxAgeMs: 30 * DAY, maxRunsPerJob: 2 }, NOW);
    expect(result).toMatchObject({ runsByAge: 1, runsByCap: 1, alerts: 3 });
    for (const id of [...oldAlerts, cappedAlerts[0]!]) expect(store.alerts.get(id)).toBeNull();
    for (const id of [youngAlert, ...cappedAlerts.slice(1)]) expect(store.alerts.get(id)).not.toBeNull();
    expect(store.alerts.search({}, 100, 0).total).toBe(3);
  });

  it("keeps a pending alert of a pruned run until its delivery is final, then deletes it", () => {
    fresh();
    const run = aged("a", "FAILED", 90);
    const pending = store.alerts.create({ job_name: "a", run_id: run.id, event: "on_failure", channel: "chat:#ops", payload: "{}", created_at: ago(90) });
    expect(store.vacuum({ maxAgeMs: 30 * DAY, maxRunsPerJob: null }, NOW)).toMatchObject({ runsByAge: 1, alerts: 0 });
    expect(store.alerts.get(pending.id)).toMatchObject({ run_id: null, status: "pending" });
    store.alerts.recordAttempt(pending.id, "failed", "HTTP 500", ago(0));
    // The next pass (either limit) finds it final and without a run.
    expect(store.vacuum({ maxAgeMs: null, maxRunsPerJob: 100 }, NOW)).toMatchObject({ runsByCap: 0, alerts: 1 });
    expect(store.alerts.get(pending.id)).toBeNull();
  });

  it("deletes alerts left without a run by earlier versions, more than one statement's batch (5,000)", async () => {
    fresh();
    const db = new Database(store.path);
    db.prepare(
      `WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 6000)
       INSERT INTO alerts (job_name, run_id, event, channel, status, payload, created_at) SELECT 'a', NULL, 'on_failure', 'chat:#ops', 'delivered', '{}', ? FROM n`,
    ).run(ago(10));
    db.close();
    const run = aged("a", "FAILED", 1);
    const kept = store.alerts.create({ job_name: "a", run_id: run.id, event: "on_failure", channel: "chat:#ops", payload: "{}", created_at: ago(1) });
    expect((await store.vacuumAsync({ maxAgeMs: null, maxRunsPerJob: 10 }, NOW)).alerts).toBe(6_000);
    expect(store.alerts.search({}, 10, 0).rows.map((a) => a.id)).toEqual([kept.id]);
    // Without a limit, retention does nothing at all.
    expect(store.vacuum({ maxAgeMs: null, maxRunsPerJob: null }, NOW).alerts).toBe(0);
  });

  it("prunes a big backlog in bounded steps, yielding to the event loop (vacuumAsync)", async () => {
    fresh();
    store.tx(() => {
      for (let i = 0; i < 1_200; i++) {
        const run = runTo(store, "SUCCESS", { job_name: `j${i % 3}`, created_at: ago(60) });
        for (let k = 0; k < 10; k++) store.logs.append(run.id, "stdout", `old ${k}`, ago(60));
      }
    });
    store.logs.flush();
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    const result = await store.vacuumAsync({ maxAgeMs: 30 * DAY, maxRunsPerJob: null }, NOW);
    clearInterval(timer);
    expect(result).toEqual({ runsByAge: 1_200, runsByCap: 0, logLines: 12_000, outputs: 0, alerts: 0, nonRuns: 0 });
    expect(ticks).toBeGreaterThan(2); // the loop turned between steps
    expect(remaining()).toEqual([]);
  });

  it("a run's line counts follow its lines batch by batch: stopped mid-pass, its totals are what is left", async () => {
    fresh();
    const run = runTo(store, "SUCCESS", { job_name: "big", created_at: ago(60) });
    store.tx(() => {
      for (let k = 0; k < 12_000; k++) store.logs.append(run.id, k % 3 === 0 ? "stderr" : "stdout", `line ${k}`, ago(60));
    });
    store.logs.flush();
    const total = (stream: "stdout" | "stderr") => store.logs.forRun(run.id, { limit: 1, offset: 0, streams: [stream] }).total;
    expect([total("stdout"), total("stderr")]).toEqual([8_000, 4_000]);
    const lines = () => {
      const db = new Database(store.path, { readonly: true });
      try {
        return db.prepare("SELECT stream, count(*) AS n FROM run_logs WHERE run_id = ? GROUP BY stream ORDER BY stream").all(run.id) as { stream: string; n: number }[];
      } finally {
        db.close();
      }
    };
    const pending = store.vacuumAsync({ maxAgeMs: 30 * DAY, maxRunsPerJob: null }, NOW);
    // Stopped after the first batch of lines (5,000), as a shutdown would.
    while (lines().reduce((a, l) => a + l.n, 0) === 12_000) await new Promise((r) => setImmediate(r));
    store.close();
    await pending;
    store = open(tmp.file());
    const left = Object.fromEntries(lines().map((l) => [l.stream, l.n])) as Record<"stdout" | "stderr", number>;
    expect(left.stdout + left.stderr).toBe(7_000);
    expect([total("stdout"), total("stderr")]).toEqual([left.stdout, left.stderr]);
    expect(store.runs.get(run.id)?.status).toBe("SUCCESS");
  });

  it("keeps new lines searchable after the newest lines were deleted (ids restart below the old watermark)", async () => {
    fresh();
    const old = aged("a", "SUCCESS", 90, 50);
    store.logs.flush();
    await waitFor(() => store.logs.ftsLag() === 0, 2_000);
    store.vacuum({ maxAgeMs: 30 * DAY, maxRunsPerJob: null }, NOW);
    expect(store.runs.get(old.id)).toBeNull();
    const run = runTo(store, "RUNNING", { created_at: ago(0) }).id;
    store.logs.append(run, "stdout", "reborn line", ago(0));
    store.logs.flush();
    await waitFor(() => store.logs.ftsLag() === 0, 2_000);
    expect(store.logs.search({ q: "reborn" }, 10, 0).total).toBe(1);
    expect(ftsRows()).toBe(1);
  });

  it("lowers the stored watermark in the commit that deletes the newest lines, and heals one left above them", async () => {
    fresh();
    aged("a", "SUCCESS", 90, 50);
    store.logs.flush();
    await waitFor(() => store.logs.ftsLag() === 0, 2_000);
    store.vacuum({ maxAgeMs: 30 * DAY, maxRunsPerJob: null }, NOW);
    const stored = () => {
      const db = new Database(tmp.file(), { readonly: true });
      try {
        return Number(db.prepare("SELECT value FROM store_meta WHERE key = 'fts_indexed_id'").pluck().get());
      } finally {
        db.close();
      }
    };
    expect(stored()).toBe(0); // no line left
    // A watermark left above every line (its lowering lost after the delete committed, as before this fix):
    store.close();
    const raw = new Database(tmp.file());
    raw.prepare("UPDATE store_meta SET value = '50' WHERE key = 'fts_indexed_id'").run();
    raw.close();
    store = open(tmp.file());
    expect(stored()).toBe(0); // corrected at open, before any line is indexed
    const run = runTo(store, "RUNNING", { created_at: ago(0) }).id;
    store.logs.append(run, "stdout", "healed line", ago(0));
    store.logs.flush();
    await waitFor(() => store.logs.search({ q: "healed" }, 10, 0).total === 1, 2_000);
    expect(ftsRows()).toBe(1);
  });
});

describe("retention and the engine's run lifecycle", () => {
  it("counts a run created SKIPPED as completed", () => {
    fresh();
    const skipped = store.runs.create(newRun({ job_name: "s", status: "SKIPPED", created_at: ago(50), error: "concurrency forbid" }));
    expect(store.vacuum({ maxAgeMs: 30 * DAY, maxRunsPerJob: null }, NOW).runsByAge).toBe(1);
    expect(store.runs.get(skipped.id)).toBeNull();
  });
});

describe("retention while the store closes", () => {
  it("stops between steps when the store is closed, keeping what it did", async () => {
    fresh();
    store.tx(() => {
      for (let i = 0; i < 1_500; i++) runTo(store, "SUCCESS", { job_name: "c", created_at: ago(60) });
    });
    const count = () => store.runs.audit({}, 1, 0).total;
    const pending = store.vacuumAsync({ maxAgeMs: 30 * DAY, maxRunsPerJob: null }, NOW);
    // One step per turn of the event loop: close right after the first batch of runs (500) went.
    while (count() === 1_500) await new Promise((r) => setImmediate(r));
    store.close();
    const result = await pending;
    expect(result).toEqual({ runsByAge: 500, runsByCap: 0, logLines: 0, outputs: 0, alerts: 0, nonRuns: 0 });
    store = open(tmp.file());
    expect(count()).toBe(1_000);
  });
});

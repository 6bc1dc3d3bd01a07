/**
 * What job_runs' writes cost a run, and what they would cost with in-flight runs kept apart from
 * the history (docs/perf/NOTES.md, "In-flight runs apart from the history"). On a real store file
 * (the real migrations) holding `--history` runs:
 *
 * - today: the engine's three writes of job_runs a run, each with RETURNING: the INSERT of a
 *   PENDING run, its RUNNING update and its SUCCESS update;
 * - apart: in-flight runs in a small table of their own (the id taken from job_runs' sequence),
 *   job_runs written once, as the run ends (the final row inserted from the live one, which is
 *   deleted in the same commit);
 * - batched: as apart, but a run's end is written to its live row, and the ended rows move to
 *   job_runs `--move-every` runs at a time, in one INSERT ... SELECT (and one DELETE) inside the
 *   commit of the run that reaches the count.
 *
 * `--per-commit N` runs of one phase share a commit (4: ~0.75 commits a run, the engine's rate
 * through engine.trigger). Rounds alternate ABBA; the medians of µs a run are printed.
 *
 *   npx tsx bench/liveRuns.ts [--per-commit 4] [--history 200000] [--rounds 10] [--move-every 64]
 *
 * Not part of `npm run bench`: it measures a schema choice not built, not svcd.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type Database from "better-sqlite3";
import { openStore } from "../src/store/index.js";
import { median } from "./helpers/stats.js";

const { values } = parseArgs({
  options: {
    "per-commit": { type: "string", default: "4" },
    history: { type: "string", default: "200000" },
    rounds: { type: "string", default: "10" },
    "move-every": { type: "string", default: "64" },
  },
});
const N = Number(values["per-commit"]);
const HISTORY = Number(values.history);
const ROUNDS = Number(values.rounds);
const MOVE_EVERY = Number(values["move-every"]);
const RUNS_A_BLOCK = 1_200;

const dir = mkdtempSync(join(tmpdir(), "svc-bench-live-"));
const store = openStore({ path: join(dir, "svc.db"), busyTimeoutMs: 5_000, walAutocheckpoint: 1_000 });
const db = (store.runs as unknown as { db: Database.Database }).db;
db.exec(`CREATE TABLE live (id INTEGER PRIMARY KEY, job_name TEXT NOT NULL, status TEXT NOT NULL, attempt INTEGER, "trigger" TEXT,
  triggered_by TEXT, cycle_id TEXT, tags TEXT, created_at TEXT, started_at TEXT, pid INTEGER, pid_start TEXT, finished_at TEXT, exit_code INTEGER, duration_ms INTEGER);
  CREATE INDEX live_job ON live (job_name, id);`);

const iso = () => new Date().toISOString();
const today = {
  create: db.prepare(`INSERT INTO job_runs (job_name, status, attempt, "trigger", triggered_by, cycle_id, tags, created_at)
    VALUES (?, 'PENDING', 1, 'manual', 'bench', ?, '[]', ?) RETURNING *`),
  start: db.prepare("UPDATE job_runs SET status = 'RUNNING', started_at = ?, pid = ?, pid_start = ? WHERE id = ? AND status = 'PENDING' RETURNING *"),
  end: db.prepare("UPDATE job_runs SET status = 'SUCCESS', finished_at = ?, exit_code = 0, duration_ms = 1, pid = NULL WHERE id = ? AND status = 'RUNNING' RETURNING *"),
};
const apart = {
  nextId: db.prepare("UPDATE sqlite_sequence SET seq = seq + 1 WHERE name = 'job_runs' RETURNING seq").pluck(),
  create: db.prepare(`INSERT INTO live (id, job_name, status, attempt, "trigger", triggered_by, cycle_id, tags, created_at)
    VALUES (?, ?, 'PENDING', 1, 'manual', 'bench', ?, '[]', ?) RETURNING *`),
  start: db.prepare("UPDATE live SET status = 'RUNNING', started_at = ?, pid = ?, pid_start = ? WHERE id = ? AND status = 'PENDING' RETURNING *"),
  end: db.prepare(`INSERT INTO job_runs (id, job_name, status, attempt, "trigger", triggered_by, cycle_id, tags, created_at, started_at, finished_at, exit_code, duration_ms)
    SELECT id, job_name, 'SUCCESS', attempt, "trigger", triggered_by, cycle_id, tags, created_at, started_at, ?, 0, 1 FROM live WHERE id = ? RETURNING *`),
  drop: db.prepare("DELETE FROM live WHERE id = ?"),
};

/** One design's writes of a run, phase by phase. */
interface Design {
  create(): number;
  start(id: number): void;
  end(id: number): void;
}

const batched = {
  end: db.prepare("UPDATE live SET status = 'SUCCESS', finished_at = ?, exit_code = 0, duration_ms = 1, pid = NULL WHERE id = ? AND status = 'RUNNING' RETURNING *"),
  move: db.prepare(`INSERT INTO job_runs (id, job_name, status, attempt, "trigger", triggered_by, cycle_id, tags, created_at, started_at, finished_at, exit_code, duration_ms)
    SELECT id, job_name, status, attempt, "trigger", triggered_by, cycle_id, tags, created_at, started_at, finished_at, exit_code, duration_ms FROM live WHERE status = 'SUCCESS' ORDER BY id`),
  drop: db.prepare("DELETE FROM live WHERE status = 'SUCCESS'"),
};
let ended = 0;

/** A live row of a new PENDING run, its id taken from job_runs' sequence (apart and batched). */
function createLive(): number {
  const id = apart.nextId.get() as number;
  apart.create.get(id, "t", randomUUID(), iso());
  return id;
}
const startLive = (id: number) => apart.start.get(iso(), 1234, "x", id);

type Kind = "today" | "apart" | "batched";
const KINDS: readonly Kind[] = ["today", "apart", "batched"];
const designs: Record<Kind, Design> = {
  today: {
    create: () => (today.create.get("t", randomUUID(), iso()) as { id: number }).id,
    start: (id) => today.start.get(iso(), 1234, "x", id),
    end: (id) => today.end.get(iso(), id),
  },
  apart: {
    create: createLive,
    start: startLive,
    end: (id) => {
      apart.end.get(iso(), id);
      apart.drop.run(id);
    },
  },
  batched: {
    create: createLive,
    start: startLive,
    end: (id) => {
      batched.end.get(iso(), id);
      if (++ended % MOVE_EVERY === 0) {
        batched.move.run();
        batched.drop.run();
      }
    },
  },
};

/** `n` runs through `d`'s writes, `per` runs of a phase a commit. */
function runs(d: Design, n: number, per = N): void {
  for (let done = 0; done < n; done += per) {
    const ids = store.tx(() => Array.from({ length: per }, () => d.create()));
    store.tx(() => ids.forEach((id) => d.start(id)));
    store.tx(() => ids.forEach((id) => d.end(id)));
  }
}

try {
  // The history first, written as svcd writes it (8 runs of a phase a commit): its tables and
  // indexes at that size, their pages as many small commits leave them.
  runs(designs.today, HISTORY, 8);
  const us: Record<Kind, number[]> = { today: [], apart: [], batched: [] };
  const block = (kind: Kind) => {
    const t0 = performance.now();
    runs(designs[kind], RUNS_A_BLOCK);
    us[kind].push(((performance.now() - t0) * 1_000) / RUNS_A_BLOCK);
  };
  for (const kind of KINDS) block(kind);
  for (const kind of KINDS) us[kind].length = 0;
  for (let r = 0; r < ROUNDS; r++) for (const kind of r % 2 ? [...KINDS].reverse() : KINDS) block(kind);
  const line = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(" ");
  console.log(`job_runs' writes a run, ${N} runs of a phase a commit, ${HISTORY} runs in history (µs a run, median of ${ROUNDS}):`);
  for (const kind of KINDS) console.log(`  ${kind}${kind === "batched" ? ` (moved ${MOVE_EVERY} at a time)` : ""}  ${median(us[kind]).toFixed(1)}  (${line(us[kind])})`);
} finally {
  store.close();
  rmSync(dir, { recursive: true, force: true });
}

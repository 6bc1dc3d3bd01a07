/**
 * Test fixtures for the store: real database files in a temp directory,
 * removed afterwards. Used only by *.test.ts.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { silentLogger } from "../shared/logger.js";
import type { OpenStoreOptions, Store } from "./api.js";
import { openStore } from "./store.js";
import type { Db } from "./sql.js";
import type { NewRun, RunPatch, RunRecord, RunStatus } from "./types.js";

export interface TempDir {
  dir: string;
  file(name?: string): string;
  remove(): void;
}

export function tempDir(prefix = "svc-store-"): TempDir {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return {
    dir,
    file: (name = "svc.db") => path.join(dir, name),
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

export function open(file: string, opts: Partial<OpenStoreOptions> = {}): Store {
  return openStore({ path: file, busyTimeoutMs: 5_000, walAutocheckpoint: 1_000, logger: silentLogger, ...opts });
}

let cycle = 0;

export function newRun(over: Partial<NewRun> = {}): NewRun {
  return {
    job_name: "extract",
    trigger: "schedule",
    triggered_by: "scheduler",
    cycle_id: `cycle-${++cycle}`,
    tags: [],
    created_at: "2026-11-01T10:00:00.000Z",
    ...over,
  };
}

/** Drives a new run through allowed transitions to `status` (PENDING, RUNNING, or a finished state). */
export function runTo(store: Store, status: RunStatus, over: Partial<NewRun> = {}, patch: RunPatch = {}): RunRecord {
  let run = store.runs.create(newRun(over));
  if (status === "PENDING") return run;
  if (status === "SKIPPED") return store.runs.transition(run.id, "SKIPPED", patch);
  run = store.runs.transition(run.id, "RUNNING", { started_at: run.created_at });
  if (status === "RUNNING") return run;
  if (status === "RETRYING") {
    store.runs.transition(run.id, "FAILED", {});
    return store.runs.transition(run.id, "RETRYING", patch);
  }
  return store.runs.transition(run.id, status, { finished_at: run.created_at, ...patch });
}

export async function waitFor(cond: () => boolean, timeoutMs: number, stepMs = 10): Promise<number> {
  const start = performance.now();
  while (!cond()) {
    if (performance.now() - start > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
  return performance.now() - start;
}

/**
 * Makes the next `store.tx` fail at its COMMIT, for real: at the end of the
 * transaction foreign keys are deferred to the commit and one row points at a
 * run that does not exist, so SQLite refuses the COMMIT
 * (SQLITE_CONSTRAINT_FOREIGNKEY) and better-sqlite3 rolls everything back.
 * `failed()` says how many commits it failed (0 or 1).
 */
export function failNextCommit(store: Store): { failed(): number } {
  const db = (store as unknown as { db: Db }).db;
  const real = store.tx.bind(store);
  let failed = 0;
  store.tx = <T>(fn: () => T): T =>
    real(() => {
      const result = fn();
      if (failed === 0) {
        failed++;
        db.pragma("defer_foreign_keys = ON");
        db.prepare("INSERT INTO run_attempts (run_id, attempt, started_at) VALUES (-1, 1, '')").run();
      }
      return result;
    });
  return { failed: () => failed };
}

import fs from "node:fs";
import pathModule from "node:path";
import type { Logger } from "../shared/logger.js";
import type {
  OpenStoreOptions,
  RetentionOptions,
  RetentionResult,
  Store,
  StoreExport,
} from "./api.js";
import { SqliteAlerts } from "./alerts.js";
import { backupTo, type BackupResult } from "./backup.js";
import { Checkpointer, realOrSame } from "./checkpointer.js";
import { InvalidQueryError } from "./errors.js";
import { SqliteAttempts } from "./attempts.js";
import { SqliteBackfills } from "./backfills.js";
import { FtsIndexer } from "./ftsIndexer.js";
import { SqliteIntegrations } from "./integrations.js";
import { SqliteJobState } from "./jobState.js";
import { LogWriter } from "./logWriter.js";
import { SqliteLogs } from "./logs.js";
import { openDatabase } from "./open.js";
import { SqliteNonRuns } from "./nonRuns.js";
import { SqliteOutputs } from "./outputs.js";
import { Retention } from "./retention.js";
import { SqliteRuns, toRun } from "./runs.js";
import type { RunRow } from "./runs.js";
import type { Transaction } from "better-sqlite3";
import type { Db } from "./sql.js";
import { SqliteTimeline } from "./timeline.js";
import type { AlertRow, IntegrationStatusRow, JobStateRow, OutputRow } from "./types.js";

export const STORE_DEFAULTS = {
  busyTimeoutMs: 5_000,
  walAutocheckpoint: 1_000,
  logFlushLines: 1_000,
  logFlushMs: 5,
  ftsIntervalMs: 200,
  ftsSliceBudgetMs: 25,
} as const;

/** One line per entry on stderr: the default when the daemon passes no logger. */
const stderrLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: (a: object | string, b?: string) => process.stderr.write(`svc store: ${line(a, b)}\n`),
  error: (a: object | string, b?: string) => process.stderr.write(`svc store: ${line(a, b)}\n`),
};

function line(a: object | string, b?: string): string {
  if (typeof a === "string") return a;
  const err = (a as { err?: unknown }).err;
  return `${b ?? ""}${err instanceof Error ? `: ${err.message}` : ""}`;
}

/**
 * Opens the svc database (creating and migrating it as needed) and returns
 * the Store. Throws StoreOpenError with a one-line message on any problem.
 */
export function openStore(opts: OpenStoreOptions): Store {
  const opened = openDatabase({
    path: opts.path,
    busyTimeoutMs: opts.busyTimeoutMs ?? STORE_DEFAULTS.busyTimeoutMs,
    walAutocheckpoint: opts.walAutocheckpoint ?? STORE_DEFAULTS.walAutocheckpoint,
    nowIso: new Date().toISOString(),
  });
  return new SqliteStore(opened.db, opened.path, opened.schemaVersion, opts);
}

export class SqliteStore implements Store {
  readonly runs: SqliteRuns;
  readonly logs: SqliteLogs;
  readonly outputs: SqliteOutputs;
  readonly jobState: SqliteJobState;
  readonly alerts: SqliteAlerts;
  readonly integrations: SqliteIntegrations;
  readonly timeline: SqliteTimeline;
  readonly backfills: SqliteBackfills;

  readonly nonRuns: SqliteNonRuns;
  private readonly writer: LogWriter;
  private readonly indexer: FtsIndexer;
  private readonly retention: Retention;
  private readonly checkpointer: Checkpointer;
  /**
   * One transaction function for every `tx` call, given the work as its argument: better-sqlite3's
   * `db.transaction(fn)` builds a new wrapper (four variants) each time it is called.
   */
  private readonly runInTx: Transaction<(fn: () => unknown) => unknown>;
  private closed = false;

  constructor(
    private readonly db: Db,
    readonly path: string,
    readonly schemaVersion: number,
    opts: OpenStoreOptions,
  ) {
    this.runInTx = db.transaction((fn: () => unknown) => fn());
    const logger = opts.logger ?? stderrLogger;
    this.indexer = new FtsIndexer(db, {
      intervalMs: opts.ftsIntervalMs ?? STORE_DEFAULTS.ftsIntervalMs,
      sliceBudgetMs: opts.ftsSliceBudgetMs ?? STORE_DEFAULTS.ftsSliceBudgetMs,
      logger,
    });
    this.writer = new LogWriter(db, {
      flushLines: positive("logFlushLines", opts.logFlushLines ?? STORE_DEFAULTS.logFlushLines),
      flushMs: Math.max(0, opts.logFlushMs ?? STORE_DEFAULTS.logFlushMs),
      logger,
      onCommitted: (lastId) => this.indexer.noteWritten(lastId),
    });
    const attempts = new SqliteAttempts(db);
    this.runs = new SqliteRuns(db, attempts, (id, job) => this.writer.created(id, job));
    this.timeline = new SqliteTimeline(db, attempts);
    this.logs = new SqliteLogs(db, this.writer, this.indexer);
    this.outputs = new SqliteOutputs(db);
    this.jobState = new SqliteJobState(db);
    this.alerts = new SqliteAlerts(db);
    this.integrations = new SqliteIntegrations(db);
    this.backfills = new SqliteBackfills(db, this.runs);

    this.nonRuns = new SqliteNonRuns(db);
    this.retention = new Retention(db, this.indexer);
    this.checkpointer = new Checkpointer(db, path, {
      pages: opts.walAutocheckpoint ?? STORE_DEFAULTS.walAutocheckpoint,
      logger,
    });
    if (opts.checkpointThread !== false) this.checkpointer.start();
  }

  tx<T>(fn: () => T): T {
    return this.runInTx.immediate(fn) as T;
  }

  get inTransaction(): boolean {
    return this.db.inTransaction;
  }

  vacuum(opts: RetentionOptions, nowMs: number): RetentionResult {
    this.writer.flush();
    return this.retention.vacuum(opts, nowMs);
  }

  vacuumAsync(opts: RetentionOptions, nowMs: number): Promise<RetentionResult> {
    this.writer.flush();
    return this.retention.vacuumAsync(opts, nowMs);
  }

  exportAll(): StoreExport {
    this.writer.flush();
    const all = <T>(sql: string): T[] => this.db.prepare(sql).all() as T[];
    return {
      exported_at: new Date().toISOString(),
      schema_version: this.schemaVersion,
      job_runs: all<RunRow>("SELECT * FROM job_runs ORDER BY id").map(toRun),
      job_state: all<JobStateRow>("SELECT * FROM job_state ORDER BY job_name"),
      run_outputs: all<OutputRow>("SELECT * FROM run_outputs ORDER BY id"),
      alerts: all<AlertRow>("SELECT * FROM alerts ORDER BY id"),
      integrations: all<IntegrationStatusRow>("SELECT * FROM integration_status ORDER BY name"),
      run_logs_count: this.db.prepare("SELECT count(*) FROM run_logs").pluck().get() as number,
    };
  }

  saveCopy(path: string): void {
    this.writer.flush();
    const tmp = `${path}.saving`;
    fs.rmSync(tmp, { force: true });
    this.db.prepare("VACUUM INTO ?").run(tmp);
    fs.chmodSync(tmp, 0o600);
    fs.renameSync(tmp, path);
  }

  backup(dest: string): Promise<BackupResult> {
    const target = pathModule.resolve(dest);
    // Through a symbolic link to its directory too: the copy's rename would replace the live file.
    const live = realOrSame(this.path);
    const named = pathModule.join(realOrSame(pathModule.dirname(target)), pathModule.basename(target));
    if ([live, `${live}-wal`, `${live}-shm`].includes(named)) {
      return Promise.reject(new InvalidQueryError(`${target} is the live database: give another path for the backup`));
    }
    return backupTo(this.db, target, () => this.writer.flush());
  }

  integrityCheck(): string {
    const rows = this.db.prepare("PRAGMA integrity_check").pluck().all() as string[];
    return rows.join("\n");
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.indexer.stop();
    try {
      this.writer.flush();
    } finally {
      this.writer.stop();
      this.checkpointer.close();
      try {
        this.db.close();
      } finally {
        this.checkpointer.release(); // after the connection: see checkpointer.ts on the -shm locks
      }
    }
  }
}

function positive(name: string, n: number): number {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`${name} must be an integer >= 1, got ${n}`);
  return n;
}

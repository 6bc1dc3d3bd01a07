import type { Logger } from "../shared/logger.js";
import type { BackupResult } from "./backup.js";
import type {
  AlertRow,
  BackfillRecord,
  NewBackfill,
  NewBackfillRun,
  AlertStatus,
  IntegrationStatusRow,
  JobStateRow,
  NewNonRun,
  NonRunReason,
  NonRunRow,
  LogLine,
  LogStream,
  NewRun,
  OutputRow,
  Page,
  PageRequest,
  RunPatch,
  RunRecord,
  RunStatus,
  ParamValue,
  Slice,
  Trigger,
} from "./types.js";
import type { TimelineStore } from "./timeline.js";

/**
 * The storage interface the engine, API and CLI use. `store/` is the only
 * place with SQL; a second engine (postgres) could implement this later.
 * All calls are synchronous (better-sqlite3); log appends are buffered.
 */
export interface Store {
  readonly path: string;
  /** Schema version after migrations (`PRAGMA user_version`). */
  readonly schemaVersion: number;
  readonly runs: RunsStore;
  readonly logs: LogsStore;
  readonly outputs: OutputsStore;
  readonly jobState: JobStateStore;
  readonly alerts: AlertsStore;
  readonly integrations: IntegrationStatusStore;
  readonly backfills: BackfillsStore;
  /** The dashboard's timeline: runs overlapping a time window (timeline.ts). */
  readonly timeline: TimelineStore;
  /** Why runs did not happen (non_runs, `svc why`). */
  readonly nonRuns: NonRunsStore;
  /** Runs fn in one IMMEDIATE transaction (nested calls join the outer one). */
  tx<T>(fn: () => T): T;
  /**
   * Whether a transaction is open. After an error in a nested tx it may not be: SQLite rolls the
   * whole transaction back by itself on some errors (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM), and
   * a caller that goes on would write outside it.
   */
  readonly inTransaction: boolean;
  /** Retention (SPEC rule 12). Returns the counts deleted. */
  vacuum(opts: RetentionOptions, nowMs: number): RetentionResult;
  /**
   * Same as vacuum, in short transactions with a yield to the event loop
   * between them: what the daemon should call, so that a big prune never
   * blocks it for long.
   */
  vacuumAsync(opts: RetentionOptions, nowMs: number): Promise<RetentionResult>;
  /** Full state snapshot for `svc export --format=json`. */
  exportAll(): StoreExport;
  /** `PRAGMA integrity_check` result, "ok" when healthy. */
  integrityCheck(): string;
  /**
   * Writes a consistent copy of the open database (pending log lines
   * included) to `path`, replacing it atomically, mode 0600. The daemon puts
   * back a database file removed under it this way.
   */
  saveCopy(path: string): void;
  /**
   * Online backup (CONTRACT §7.4) to `path`, replaced atomically, mode 0600:
   * pending log lines are written first, then SQLite's backup API copies the
   * database in steps while the daemon goes on; the copy is checked
   * (integrity_check, in a worker thread) before it takes the name.
   */
  backup(path: string): Promise<BackupResult>;
  /** Flushes pending log lines and closes the database. Safe to call twice. */
  close(): void;
}

/**
 * The store as api/ and cli/ see it: reads only, plus a log flush (lines the
 * engine already accepted become readable) and an online backup (a copy:
 * nothing changes). Every change of state goes through the engine (runs,
 * job_state) or the notifier (alerts, integration tests): STYLE's "engine/
 * owns run state", checked by the type checker.
 */
export interface ReadStore {
  readonly path: string;
  readonly schemaVersion: number;
  readonly runs: Pick<RunsStore, "get" | "getMany" | "recent" | "lastFinished" | "byStatus" | "inCycle" | "page" | "audit">;
  readonly logs: Omit<LogsStore, "append" | "flushWithin">;
  readonly outputs: Omit<OutputsStore, "put">;
  readonly jobState: Pick<JobStateStore, "get" | "all" | "pausedJobs" | "lockedJobs" | "page">;
  readonly alerts: Pick<AlertsStore, "get" | "pending" | "search">;
  readonly integrations: Pick<IntegrationStatusStore, "all" | "get">;
  readonly timeline: TimelineStore;
  readonly backfills: Pick<BackfillsStore, "get" | "list">;

  readonly nonRuns: Pick<NonRunsStore, "search">;
  exportAll(): StoreExport;
  integrityCheck(): string;
  backup(path: string): Promise<BackupResult>;
}

export interface OpenStoreOptions {
  path: string;
  busyTimeoutMs: number; // default 5000
  walAutocheckpoint: number; // default 1000 pages
  /** Run those checkpoints on a worker thread instead of in the committing call (checkpointer.ts). Default true. */
  checkpointThread?: boolean;
  /** Log batching: flush after this many buffered lines... */
  logFlushLines?: number; // default 1000
  /** ...or this long after the first buffered line. */
  logFlushMs?: number; // default 5
  /** Where the store reports background failures (log writes, indexing). Default: one line on stderr. */
  logger?: Logger;
  /** Full-text indexer: wait this long after lines commit before indexing them. */
  ftsIntervalMs?: number; // default 200
  /** Full-text indexer: target duration of one indexing slice (event-loop time). */
  ftsSliceBudgetMs?: number; // default 25
}

/** A run's parameter values as stored, and the names among them that are secret. */
export interface RunParams {
  values: Record<string, ParamValue>;
  secret: string[];
}

export interface RunQuery {
  job?: string;
  jobs?: string[]; // job_name IN (...)
  status?: RunStatus;
  statuses?: RunStatus[];
  trigger?: Trigger;
  since?: string; // created_at >= (ISO)
  until?: string; // created_at < (ISO)
  sla_breached?: 0 | 1;
  reason?: string; // substring, case-insensitive
  tag?: string; // runs whose tag snapshot holds this tag
  cycle_id?: string;
  /** Runs whose param `name` has this value (as text: "5" matches 5, "true" matches true); secret params never match. */
  params?: { name: string; value: string }[];
  backfill_id?: number;
}

// PageRequest lives in types.ts (sql.ts needs it without importing this interface module).
export type { PageRequest } from "./types.js";

export interface RunsStore {
  /** Inserts a run (PENDING unless `status: SKIPPED`). Throws DuplicateSlotError for a repeated (job, scheduled_for). */
  create(run: NewRun): RunRecord;
  get(id: number): RunRecord | null;
  /**
   * The run's parameter values as stored, secret ones included (null: none). Only the engine
   * reads them (to start the run, to retry it); every view uses the masked `RunRecord.params`.
   */
  paramValues(id: number): RunParams | null;
  /** The runs of these ids that exist, in one query (in no particular order). */
  getMany(ids: readonly number[]): RunRecord[];
  /**
   * Moves a run to `to`, checking the transition table against the stored
   * status (and against `from` when given), and applies `patch`. Returns the
   * updated record. Throws TransitionError when not allowed.
   */
  transition(id: number, to: RunStatus, patch?: RunPatch, from?: RunStatus): RunRecord;
  /** Sets fields without a status change (sla_breached, pid, ...). */
  update(id: number, patch: RunPatch): RunRecord;
  /** Most recent runs of a job, newest first. */
  recent(job: string, limit: number): RunRecord[];
  /**
   * The gate's "most recent finished run" of a job: of its newest SUCCESS and newest FAILED run, the
   * one that finished last. SKIPPED runs never ran (a forbid refusal, a failure policy's skip).
   */
  lastFinished(job: string): RunRecord | null;
  /** The status of the job's newest run that ran to an end (SUCCESS or FAILED; a SKIPPED one never ran), or null. */
  lastCompletedStatus(job: string): RunStatus | null;
  /** Runs in these statuses, oldest id first (PENDING queue, RUNNING on startup, ...). */
  byStatus(statuses: RunStatus[]): RunRecord[];
  /** All runs of one cycle, oldest first. */
  inCycle(cycleId: string): RunRecord[];
  /** Up to `limit` distinct cycle ids that start with `prefix` (a cycle named by its first characters). */
  cyclesStartingWith(prefix: string, limit: number): string[];
  /** `/api/db/job_runs`. */
  page(q: RunQuery, p: PageRequest): Page<RunRecord>;
  /** `/api/audit`: newest first. */
  audit(q: RunQuery, limit: number, offset: number): Slice<RunRecord>;
}

export interface BackfillsStore {
  /**
   * The backfill and its runs (PENDING, trigger backfill, in the order given, ids increasing),
   * in one transaction. Throws ConflictError when a slot it claims was claimed meanwhile.
   */
  /** Writes the backfill and its runs in one transaction; `runs` are their records as stored, in id order. */
  create(b: NewBackfill, runs?: readonly NewBackfillRun[], tags?: readonly string[]): { backfill: BackfillRecord; runs: RunRecord[] };
  get(id: number): BackfillRecord | null;
  /** Newest first. */
  list(q: { job?: string }, limit: number, offset: number): Slice<BackfillRecord>;
  /** Sets cancelled_at once; returns the record (as it was when already cancelled). Throws NotFoundError. */
  markCancelled(id: number, at: string): BackfillRecord;
  /** Backfills with a slot run PENDING, RUNNING or RETRYING, oldest first (resumed after a restart). */
  openIds(): number[];
  /** Its job's runs of the backfill that are PENDING, RUNNING or RETRYING, in slot (id) order. */
  unfinishedSlotRuns(id: number, job: string): { id: number; status: RunStatus }[];
  /** Its PENDING runs (slot runs and dependency runs of its cycles), oldest first. */
  waitingRuns(id: number): RunRecord[];
  /** For each of these slots (ISO UTC) that has a run of the job: the oldest such run's id. */
  runsForSlots(job: string, slots: readonly string[]): Map<string, number>;
}

/** Lines written inside a caller's transaction (LogsStore.flushWithin): what to do once it ends. */
export interface LinesWritten {
  committed(): void;
  rolledBack(): void;
}

export interface LogsStore {
  /**
   * Buffers a line; seq is assigned here (per run, from 1, no gaps, also
   * across daemon restarts). The line is durable once `onFlushed` listeners
   * have been called with it.
   */
  append(runId: number, stream: LogStream, line: string, ts: string): LogLine;
  /**
   * Writes buffered lines now (one transaction). Called inside `Store.tx`,
   * the write happens just after that transaction ends (a microtask), so
   * lines never commit or roll back with someone else's transaction.
   */
  flush(): void;
  /**
   * Writes the buffered lines inside the caller's open transaction, so they commit with its own
   * writes (one commit for both; the engine records a run's end this way). Once that transaction
   * has committed the caller calls `committed()`: only then are the lines durable and announced.
   * After a rollback it calls `rolledBack()` and the lines stay buffered for the next flush.
   * Null when nothing is buffered.
   */
  flushWithin(): LinesWritten | null;
  /** Called after each flush with the lines just made durable, in order. */
  onFlushed(listener: (lines: LogLine[]) => void): () => void;
  /** Lines of one run in seq order (streams filter optional). */
  forRun(
    runId: number,
    opts: { afterSeq?: number; limit: number; offset: number; streams?: LogStream[] },
  ): { lines: LogLine[]; total: number };
  /** `/api/db/run_logs`. `q` is full-text (FTS5). */
  search(
    q: { run_id?: number; job?: string; stream?: LogStream; q?: string },
    limit: number,
    offset: number,
  ): Slice<LogLine & { id: number; job_name: string }>;
  /** Last N lines of a run (stdout+stderr unless streams given), for attach_logs. */
  tail(runId: number, n: number, streams?: LogStream[]): LogLine[];
  /**
   * The last lines (at most n) whose text fits in `maxChars` (newest kept), in order. Read newest
   * first and no further than that: a run of 10,000 lines of 64 KiB is not loaded to keep 1 MiB.
   */
  tailWithin(runId: number, n: number, maxChars: number, streams?: LogStream[]): LogLine[];
  /**
   * Lines durable but not yet in the full-text index. The index is fed in
   * batches off the write path and trails during bursts; `q` searches find
   * a line once it is indexed.
   */
  ftsLag(): number;
}

export interface OutputsStore {
  put(row: Omit<OutputRow, "id">): OutputRow;
  forRun(runId: number): OutputRow[];
  /** The latest value of job.var in a cycle, or null. */
  lookup(cycleId: string, job: string, varName: string): string | null;
  search(
    q: { run_id?: number; job?: string; cycle_id?: string; var_name?: string },
    limit: number,
    offset: number,
  ): Slice<OutputRow>;
}

export interface JobStateStore {
  get(job: string): JobStateRow | null;
  all(): JobStateRow[];
  /** Names of the jobs whose row says paused (cheaper than all() on 10,000 rows). */
  pausedJobs(): string[];
  /** Names of the jobs whose row holds a lock pid. */
  lockedJobs(): string[];
  /** Creates the row when missing, then applies the patch. */
  upsert(job: string, patch: Partial<Omit<JobStateRow, "job_name">>): JobStateRow;
  /** Sets paused for many jobs at once; returns how many rows changed. */
  setPaused(jobs: string[], paused: boolean): number;
  page(p: PageRequest): Page<JobStateRow>;
}

export interface AlertsStore {
  create(a: Omit<AlertRow, "id" | "attempts" | "last_attempt_at" | "error" | "status">): AlertRow;
  get(id: number): AlertRow | null;
  /** Records one delivery attempt: attempts + 1, last_attempt_at, status, error. */
  recordAttempt(id: number, status: AlertStatus, error: string | null, at: string): AlertRow;
  /** Puts a failed alert back to pending for a re-dispatch (attempts kept). */
  requeue(id: number): AlertRow;
  pending(): AlertRow[];
  search(q: { job?: string; status?: AlertStatus }, limit: number, offset: number): Slice<AlertRow>;
}

export interface NonRunsStore {
  /** Records a run that did not happen; a slot extends the job's newest row of the same reason and detail until the job runs again. */
  record(e: NewNonRun): NonRunRow;
  /** Newest first. */
  search(q: { job?: string; reason?: NonRunReason; cycle_id?: string }, limit: number, offset: number): Slice<NonRunRow>;
}

export interface IntegrationStatusStore {
  all(): IntegrationStatusRow[];
  get(name: string): IntegrationStatusRow | null;
  /** Upserts provider and credential status (at load), keeping the last test. */
  sync(rows: { name: string; provider: string; credential_status: string }[]): void;
  recordTest(name: string, result: string, at: string): void;
}

export interface RetentionOptions {
  maxAgeMs: number | null;
  maxRunsPerJob: number | null;
}

export interface RetentionResult {
  runsByAge: number;
  runsByCap: number;
  logLines: number;
  outputs: number;
  /** Final alerts without a run (pruned in this pass or earlier); a pending one waits for a later pass. */
  alerts: number;
  /** non_runs rows (svc why) last extended before max_age. */
  nonRuns: number;
}

export interface StoreExport {
  exported_at: string;
  schema_version: number;
  job_runs: RunRecord[];
  job_state: JobStateRow[];
  run_outputs: OutputRow[];
  alerts: AlertRow[];
  integrations: IntegrationStatusRow[];
  /** Log lines are counted, not exported (use `svc logs`). */
  run_logs_count: number;
}

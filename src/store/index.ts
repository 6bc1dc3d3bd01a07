export { openStore, STORE_DEFAULTS } from "./store.js";
export type {
  AlertsStore,
  IntegrationStatusStore,
  JobStateStore,
  LogsStore,
  OpenStoreOptions,
  OutputsStore,
  PageRequest,
  ReadStore,
  RetentionOptions,
  RetentionResult,
  RunQuery,
  RunsStore,
  Store,
  StoreExport,
} from "./api.js";
export type * from "./types.js";
export type { TimelineQuery, TimelineRun, TimelineStore } from "./timeline.js";
export { TIMELINE_COLUMNS, TIMELINE_MAX_RUNS, toTimelineRun } from "./timeline.js";
export { LOG_STREAMS, RUN_STATUSES, TRIGGERS } from "./types.js";
export {
  ConflictError,
  describeStorageError,
  DuplicateSlotError,
  InvalidQueryError,
  isTransientStorageError,
  NotFoundError,
  SchemaTooNewError,
  StoreOpenError,
  TransitionError,
} from "./errors.js";
export { assertTransition, canTransition, isActive, isTerminal } from "./runStatus.js";
export { backupFile, checkDatabaseFile, restoreFrom } from "./backup.js";
export type { BackupResult, DatabaseFileCheck, RestoreResult } from "./backup.js";

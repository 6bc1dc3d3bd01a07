import type { Migration } from "./migrate.js";
import { core } from "./001_core.js";
import { logSearch } from "./002_log_search.js";
import { runAttempts } from "./003_run_attempts.js";
import { paramsBackfill } from "./004_params_backfill.js";
import { nonRuns } from "./005_non_runs.js";

/**
 * Every migration, in order. To change the schema, add `00N_name.ts` that
 * exports a Migration with the next version and append it here; never edit
 * a migration that has shipped.
 */
export const MIGRATIONS: readonly Migration[] = [core, logSearch, runAttempts, paramsBackfill, nonRuns];

export { migrate, schemaVersion, SchemaTooNewError, SVC_APPLICATION_ID } from "./migrate.js";
export type { Migration, MigrateResult } from "./migrate.js";

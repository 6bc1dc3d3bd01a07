import type { FastifyInstance } from "fastify";
import type { PageRequest, RunQuery } from "../../store/api.js";
import type { AlertStatus, LogStream, NonRunReason, RunStatus, Trigger } from "../../store/types.js";
import type { ApiDeps } from "../deps.js";
import { badRequest } from "../errors.js";
import {
  alertRowSchema,
  dateSchema,
  jobNameSchema,
  jobStateSchema,
  logLineSchema,
  nonRunSchema,
  outputRowSchema,
  pageOf,
  pageQuery,
  runIdSchema,
  runRecordSchema,
  runStatusSchema,
  sliceOf,
  sliceQuery,
  streamSchema,
  triggerSchema,
} from "../schemas.js";
import { definedOnly } from "../query.js";
import type { ViewCache } from "../viewCache.js";
import { stateRows, type StateRow } from "../views.js";

const tags = ["database"];

/** limit/offset tables (SPEC names limit and offset for them). */
export const DB_LIMIT_DEFAULT = 50;
export const DB_LIMIT_MAX = 1000;

type PageQ = { page: number; page_size: 25 | 50 | 100; sort?: string; order?: "asc" | "desc" };

function pageRequest(q: PageQ, defaultSort: string, defaultOrder: "asc" | "desc"): PageRequest {
  // `order` defaults to the table's own (docs/API.md: desc for job_runs), whatever column it is sorted by.
  return { page: q.page, page_size: q.page_size, sort: q.sort ?? defaultSort, order: q.order ?? defaultOrder };
}

const uuid = { type: "string", pattern: "^[0-9a-fA-F-]{1,64}$", description: "cycle UUID" } as const;

const stateRowSchema = {
  ...jobStateSchema,
  required: [...jobStateSchema.required, "paused", "running_run_ids", "next_run_local"],
  properties: {
    ...jobStateSchema.properties,
    paused: { type: "boolean" },
    running_run_ids: { type: "array", items: { type: "integer" } },
    next_run_local: { type: ["string", "null"], description: "next_run in the job's zone, with offset and abbreviation" },
    in_config: { type: "boolean", description: "false for a row of a job no longer in svc.yaml" },
  },
} as const;

export function dbRoutes(app: FastifyInstance, deps: ApiDeps, views: ViewCache): void {
  const { store } = deps;

  app.get<{
    Querystring: PageQ & { job?: string; status?: RunStatus; trigger?: Trigger; since?: string; until?: string; sla_breached?: 0 | 1; cycle_id?: string; backfill_id?: number };
  }>(
    "/api/db/job_runs",
    {
      schema: {
        summary: "The job_runs table, filtered, sorted and paged",
        description: "`cycle_id` is an addition beyond CONTRACT §4 (the dashboard's cycle view).",
        tags,
        querystring: {
          type: "object",
          properties: {
            job: jobNameSchema,
            status: runStatusSchema,
            trigger: triggerSchema,
            since: dateSchema,
            until: dateSchema,
            sla_breached: { type: "integer", enum: [0, 1] },
            cycle_id: uuid,
            backfill_id: { type: "integer", minimum: 1, description: "runs of one backfill (and the dependency runs of its cycles)" },
            ...pageQuery,
          },
        },
        response: { 200: pageOf(runRecordSchema) },
      },
    },
    async (request) => {
      const { page, page_size, sort, order, ...filters } = request.query;
      return store.runs.page(definedOnly<RunQuery>(filters), pageRequest({ page, page_size, sort, order }, "id", "desc"));
    },
  );

  app.get<{ Querystring: PageQ }>(
    "/api/db/job_state",
    {
      schema: {
        summary: "The whole job_state table, paged",
        tags,
        querystring: { type: "object", properties: pageQuery },
        response: { 200: pageOf(jobStateSchema) },
      },
    },
    async (request) => store.jobState.page(pageRequest(request.query, "job_name", "asc")),
  );

  app.post<{ Params: { job: string } }>(
    "/api/db/job_state/:job/clear_lock",
    {
      schema: {
        summary: "Set lock_pid to null; 409 while the job has a RUNNING or RETRYING run",
        tags,
        params: { type: "object", required: ["job"], properties: { job: jobNameSchema } },
        response: { 200: { type: "object", required: ["row"], properties: { row: jobStateSchema } } },
      },
    },
    async (request) => {
      const row = deps.engine.clearLock(request.params.job);
      views.invalidate();
      return { row };
    },
  );

  app.get<{ Querystring: { run_id?: number; job?: string; stream?: LogStream; q?: string; limit: number; offset: number } }>(
    "/api/db/run_logs",
    {
      schema: {
        summary: "Log lines across runs, newest first; `q` is a full-text search",
        tags,
        querystring: {
          type: "object",
          properties: {
            run_id: runIdSchema,
            job: jobNameSchema,
            stream: streamSchema,
            q: { type: "string", maxLength: 500, description: "full-text query (words; FTS5)" },
            ...sliceQuery(DB_LIMIT_DEFAULT, DB_LIMIT_MAX),
          },
        },
        response: {
          200: sliceOf({
            ...logLineSchema,
            properties: { ...logLineSchema.properties, id: { type: "integer" }, run_id: { type: "integer" }, job_name: { type: "string" } },
          }),
        },
      },
    },
    async (request) => {
      const { limit, offset, ...q } = request.query;
      return store.logs.search(definedOnly(q), limit, offset);
    },
  );

  app.get<{ Querystring: { run_id?: number; job?: string; cycle_id?: string; var_name?: string; limit: number; offset: number } }>(
    "/api/db/run_outputs",
    {
      schema: {
        summary: "Captured output variables, newest first",
        tags,
        querystring: {
          type: "object",
          properties: {
            run_id: runIdSchema,
            job: jobNameSchema,
            cycle_id: uuid,
            var_name: { type: "string", maxLength: 200 },
            ...sliceQuery(DB_LIMIT_DEFAULT, DB_LIMIT_MAX),
          },
        },
        response: { 200: sliceOf(outputRowSchema) },
      },
    },
    async (request) => {
      const { limit, offset, ...q } = request.query;
      return store.outputs.search(definedOnly(q), limit, offset);
    },
  );

  app.get<{ Querystring: { job?: string; status?: AlertStatus; limit: number; offset: number } }>(
    "/api/db/alerts",
    {
      schema: {
        summary: "Notification alerts, newest first",
        tags,
        querystring: {
          type: "object",
          properties: {
            job: jobNameSchema,
            status: { type: "string", enum: ["pending", "delivered", "failed"] },
            ...sliceQuery(DB_LIMIT_DEFAULT, DB_LIMIT_MAX),
          },
        },
        response: { 200: sliceOf(alertRowSchema) },
      },
    },
    async (request) => {
      const { limit, offset, ...q } = request.query;
      return store.alerts.search(definedOnly(q), limit, offset);
    },
  );

  app.get<{ Querystring: { job?: string; reason?: NonRunReason; cycle_id?: string; limit: number; offset: number } }>(
    "/api/db/non_runs",
    {
      schema: {
        summary: "Traces of runs that did not happen (paused, excluded or missed slots; cycles a job was not triggered in), newest first",
        description: "Beyond CONTRACT §4 (issue 25, `svc why`). Consecutive skipped slots of one job for one reason are one row with `count`, `first_slot` and `last_slot`.",
        tags,
        querystring: {
          type: "object",
          properties: {
            job: jobNameSchema,
            reason: { type: "string", enum: ["paused", "upstream_failed", "missed", "excluded"] },
            cycle_id: uuid,
            ...sliceQuery(DB_LIMIT_DEFAULT, DB_LIMIT_MAX),
          },
        },
        response: { 200: sliceOf(nonRunSchema) },
      },
    },
    async (request) => {
      const { limit, offset, ...q } = request.query;
      return store.nonRuns.search(definedOnly(q), limit, offset);
    },
  );

  app.post<{ Params: { id: number } }>(
    "/api/db/alerts/:id/retry",
    {
      schema: {
        summary: "Re-dispatch a stored alert without re-running the job; 404 unknown, 409 while pending",
        tags,
        params: { type: "object", required: ["id"], properties: { id: { type: "integer", minimum: 1, description: "alert id" } } },
        response: { 200: { type: "object", required: ["alert"], properties: { alert: alertRowSchema } } },
      },
    },
    async (request) => ({ alert: deps.notifier.retryAlert(request.params.id) }),
  );

  app.get<{ Querystring: PageQ }>(
    "/api/db/state",
    {
      schema: {
        summary: "job_state joined with live scheduler state (paused, running run ids, next run in the job's zone)",
        tags,
        querystring: { type: "object", properties: pageQuery },
        response: { 200: pageOf(stateRowSchema) },
      },
    },
    async (request) => {
      const { page, page_size } = request.query;
      const sort = request.query.sort ?? "job_name";
      const rows = stateRows(deps.project(), store, deps.engine).map((r) => ({ ...r, paused: r.paused === 1 }));
      if (!Object.hasOwn(SORTABLE_STATE, sort)) {
        throw badRequest(`cannot sort by "${sort}": sortable columns are ${Object.keys(SORTABLE_STATE).join(", ")}`, [
          { in: "querystring", field: "sort", message: "is not a sortable column" },
        ]);
      }
      const dir = (request.query.order ?? "asc") === "asc" ? 1 : -1;
      rows.sort((a, b) => dir * compare(a[sort as keyof typeof a], b[sort as keyof typeof b]) || (a.job_name < b.job_name ? -1 : 1));
      const start = (page - 1) * page_size;
      return { rows: rows.slice(start, start + page_size), total: rows.length, page, page_size };
    },
  );
}

const SORTABLE_STATE: Record<keyof StateRow, true> = {
  job_name: true,
  last_success: true,
  last_failure: true,
  next_run: true,
  lock_pid: true,
  paused: true,
  running_run_ids: true,
  next_run_local: true,
  in_config: true,
};

/** Nulls last; arrays by length. */
function compare(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  if (Array.isArray(a) && Array.isArray(b)) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

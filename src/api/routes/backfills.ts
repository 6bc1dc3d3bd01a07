import type { FastifyInstance } from "fastify";
import { MAX_BACKFILL_PARALLEL } from "../../engine/backfill.js";
import { MAX_REASON_LENGTH } from "../../engine/engine.js";
import type { ApiDeps } from "../deps.js";
import { notFound } from "../errors.js";
import { triggeredBy } from "../principal.js";
import { jobNameSchema, jobParams, RUN_STATUS_COUNTS, sliceQuery } from "../schemas.js";

const tags = ["backfills"];
const str = { type: "string" } as const;
const strOrNull = { type: ["string", "null"] } as const;

export const backfillSchema = {
  type: "object",
  required: ["id", "job", "from", "to", "total", "by_status", "done", "created_at", "cancelled"],
  properties: {
    id: { type: "integer" },
    job: str,
    from: { ...str, description: "start of the range (ISO UTC), included" },
    to: { ...str, description: "end of the range (ISO UTC), excluded" },
    total: { type: "integer", description: "slot runs it created" },
    by_status: RUN_STATUS_COUNTS,
    done: { type: "boolean", description: "no slot run is PENDING, RUNNING or RETRYING" },
    created_at: str,
    created_by: str,
    cancelled: { type: "boolean" },
    cancelled_at: strOrNull,
    reason: strOrNull,
    params: { type: "object", description: "the params every run got; secret ones read ***" },
    rerun: { type: "boolean" },
    ignore_exclude: { type: "boolean" },
    parallel: { type: "integer" },
  },
} as const;

const plannedSlotSchema = {
  type: "object",
  required: ["utc", "local", "note", "excluded", "existing_run", "will_run"],
  properties: {
    utc: str,
    local: { ...str, description: "local time with offset and zone abbreviation, as svc next prints it" },
    note: { ...strOrNull, description: "where a DST rule decided the instant" },
    excluded: { ...strOrNull, description: "why exclude removes the slot (it runs only with ignore_exclude)" },
    existing_run: { type: ["integer", "null"], description: "the job's oldest run for this slot" },
    will_run: { type: "boolean" },
  },
} as const;

interface BackfillBody {
  from: string;
  to: string;
  reason?: string;
  params?: unknown;
  rerun?: boolean;
  parallel?: number;
  dry_run?: boolean;
  ignore_exclude?: boolean;
}

/**
 * Backfills (CONTRACT §7.3). POST /api/backfills/:id/cancel is allowed to
 * whoever may POST under /api/jobs/** (auth gate, `rbacAliases`).
 */
export function backfillRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const { engine, store } = deps;

  app.post<{ Params: { name: string }; Body: BackfillBody }>(
    "/api/jobs/:name/backfill",
    {
      schema: {
        summary: "Backfill the job's scheduled slots in [from, to): one run per slot, oldest first (dry_run: only list them)",
        tags,
        params: jobParams,
        body: {
          type: "object",
          required: ["from", "to"],
          additionalProperties: false,
          properties: {
            from: { type: "string", maxLength: 64, description: "ISO 8601 date or instant with a zone; included" },
            to: { type: "string", maxLength: 64, description: "ISO 8601 date or instant with a zone; excluded" },
            reason: { type: "string", maxLength: MAX_REASON_LENGTH },
            params: { description: "param name -> value for every run (checked like a manual run's)" },
            rerun: { type: "boolean", default: false, description: "also run the slots that already have a run" },
            parallel: { type: "integer", default: 1, description: `runs of the backfill at once, 1-${MAX_BACKFILL_PARALLEL}` },
            dry_run: { type: "boolean", default: false, description: "answer the slots, create nothing" },
            ignore_exclude: { type: "boolean", default: false, description: "also run the slots that exclude removes" },
          },
        },
        response: {
          200: {
            type: "object",
            required: ["job", "timezone", "from", "to", "slots", "runs"],
            properties: {
              job: str,
              timezone: str,
              from: str,
              to: str,
              slots: { type: "array", items: plannedSlotSchema },
              runs: { type: "integer", description: "how many runs it would create" },
              after_now: { type: "integer", description: "slots of [from, to) after now: left to the scheduler, not in slots (counted up to 10,000)" },
            },
          },
          202: {
            type: "object",
            required: ["backfill_id", "slots", "runs"],
            properties: {
              backfill_id: { type: "integer" },
              slots: { type: "integer", description: "slots in the range (excluded ones included)" },
              runs: { type: "integer", description: "runs created" },
              existing: { type: "integer", description: "slots left alone: they have a run (without rerun)" },
              excluded: { type: "integer", description: "slots exclude removes (without ignore_exclude)" },
              after_now: { type: "integer", description: "slots of [from, to) after now: left to the scheduler (counted up to 10,000)" },
              backfill: backfillSchema,
            },
          },
        },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const { plan, backfill } = engine.backfill(request.params.name, {
        from: b.from,
        to: b.to,
        reason: b.reason ?? null,
        params: b.params,
        rerun: b.rerun,
        parallel: b.parallel,
        ignoreExclude: b.ignore_exclude,
        dryRun: b.dry_run,
        triggeredBy: triggeredBy(request),
      });
      if (!backfill) {
        const { params: _values, ...shown } = plan;
        return shown;
      }
      const existing = plan.slots.filter((s) => !s.will_run && s.existing_run !== null && !(s.excluded !== null && !b.ignore_exclude)).length;
      const excluded = b.ignore_exclude ? 0 : plan.slots.filter((s) => s.excluded !== null).length;
      return reply.code(202).send({ backfill_id: backfill.id, slots: plan.slots.length, runs: plan.runs, existing, excluded, after_now: plan.after_now, backfill });
    },
  );

  app.get<{ Querystring: { job?: string; limit: number; offset: number } }>(
    "/api/backfills",
    {
      schema: {
        summary: "Backfills, newest first",
        tags,
        querystring: { type: "object", properties: { job: jobNameSchema, ...sliceQuery(100, 1000) } },
        response: {
          200: {
            type: "object",
            required: ["backfills", "total", "limit", "offset"],
            properties: { backfills: { type: "array", items: backfillSchema }, total: { type: "integer" }, limit: { type: "integer" }, offset: { type: "integer" } },
          },
        },
      },
    },
    async (request) => {
      const { job, limit, offset } = request.query;
      const slice = store.backfills.list(job === undefined || job === "" ? {} : { job }, limit, offset);
      return { backfills: slice.rows, total: slice.total, limit: slice.limit, offset: slice.offset };
    },
  );

  const idParams = { type: "object", required: ["id"], properties: { id: { type: "integer", minimum: 1 } } } as const;

  app.get<{ Params: { id: number } }>(
    "/api/backfills/:id",
    { schema: { summary: "One backfill: its range, progress by status, cancelled or not", tags, params: idParams, response: { 200: backfillSchema } } },
    async (request) => {
      const b = store.backfills.get(request.params.id);
      if (!b) throw notFound(`backfill ${request.params.id} not found (GET /api/backfills lists them)`);
      return b;
    },
  );

  app.post<{ Params: { id: number } }>(
    "/api/backfills/:id/cancel",
    {
      schema: {
        summary: "Cancel a backfill: its waiting runs end SKIPPED (backfill cancelled), running ones finish",
        tags,
        params: idParams,
        response: { 200: { type: "object", required: ["backfill", "skipped"], properties: { backfill: backfillSchema, skipped: { type: "integer" } } } },
      },
    },
    async (request) => engine.cancelBackfill(request.params.id, { by: triggeredBy(request) }),
  );
}

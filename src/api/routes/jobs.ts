import type { FastifyInstance, FastifyRequest } from "fastify";
import { MAX_REASON_LENGTH } from "../../engine/engine.js";
import type { RunRecord } from "../../store/types.js";
import { jobConfigView } from "../configAccess.js";
import type { ApiDeps } from "../deps.js";
import { badRequest, notFound } from "../errors.js";
import { triggeredBy } from "../principal.js";
import {
  jobParams,
  jobStateSchema,
  runRecordSchema,
  startedRunSchema,
  TAG_PATTERN,
} from "../schemas.js";
import type { ViewCache } from "../viewCache.js";
import { emptyState, jobSummaries } from "../views.js";

const TAG = { type: "string", pattern: TAG_PATTERN, description: "tag (lowercase letters, digits, hyphens; at most 32)" } as const;
const tags = ["jobs"];

const jobSummarySchema = {
  type: "object",
  required: ["name", "description", "frequency", "tags", "paused", "next_run", "last_run", "state"],
  properties: {
    name: { type: "string" },
    description: { type: ["string", "null"] },
    frequency: { type: "string" },
    timezone: { type: "string" },
    tags: { type: "array", items: { type: "string" } },
    paused: { type: "boolean" },
    next_run: { type: ["string", "null"] },
    last_run: { anyOf: [runRecordSchema, { type: "null" }] },
    state: jobStateSchema,
  },
} as const;

const jobNames = { type: "object", required: ["jobs"], properties: { jobs: { type: "array", items: { type: "string" } } } } as const;

type NameParams = { Params: { name: string } };

export function jobRoutes(app: FastifyInstance, deps: ApiDeps, views: ViewCache): void {
  const { engine, store } = deps;

  const started = (run: RunRecord) => ({ run_id: run.id, cycle_id: run.cycle_id, status: run.status });

  app.get<{ Querystring: { tag?: string } }>(
    "/api/jobs",
    {
      schema: {
        summary: "All jobs with their current state, sorted by name",
        tags,
        querystring: { type: "object", properties: { tag: TAG } },
        response: { 200: { type: "object", required: ["jobs"], properties: { jobs: { type: "array", items: jobSummarySchema } } } },
      },
    },
    async (request, reply) => {
      const tag = request.query.tag;
      // Serialized and encoded once per change: dashboards poll this, and at 1,000 jobs it is ~700 KB.
      const body = views.get(`jobs:${tag ?? ""}`, () => {
        const jobs = jobSummaries(deps.project(), store, engine, tag);
        // Stale once the earliest slot passes (a paused job's slot moves on without an event).
        let expiresAt = Infinity;
        for (const j of jobs) if (j.next_run) expiresAt = Math.min(expiresAt, Date.parse(j.next_run));
        return { value: Buffer.from(JSON.stringify({ jobs })), expiresAt };
      });
      return reply.type("application/json; charset=utf-8").send(body);
    },
  );

  app.get<NameParams & { Querystring: { runs: number } }>(
    "/api/jobs/:name",
    {
      schema: {
        summary: "One job: its config (env redacted), state and last N runs",
        tags,
        params: jobParams,
        querystring: { type: "object", properties: { runs: { type: "integer", minimum: 0, maximum: 500, default: 20, description: "how many recent runs (max 500)" } } },
        response: {
          200: {
            type: "object",
            required: ["job", "state", "runs"],
            properties: {
              job: { type: "object", description: "the job's effective config; env values read ***" },
              state: jobStateSchema,
              runs: { type: "array", items: runRecordSchema },
            },
          },
        },
      },
    },
    async (request) => {
      const { name } = request.params;
      const job = jobConfigView(deps.project(), name);
      if (!job) throw notFound(`unknown job "${name}": it is not in svc.yaml (see GET /api/jobs)`);
      const state = store.jobState.get(name) ?? emptyState(name);
      return {
        job,
        state: { ...state, paused: state.paused === 1 },
        runs: request.query.runs === 0 ? [] : store.runs.recent(name, request.query.runs),
      };
    },
  );

  app.post<NameParams & { Body: { reason?: string; params?: unknown } | undefined }>(
    "/api/jobs/:name/run",
    {
      schema: {
        summary: "Trigger a manual run (a new cycle)",
        tags,
        params: jobParams,
        body: {
          type: ["object", "null"],
          additionalProperties: false,
          properties: {
            reason: { type: "string", maxLength: MAX_REASON_LENGTH, description: "why (free text, max 500)" },
            // Any JSON here: the engine checks it against the job's declaration and answers
            // 422 validation_failed with a `params.NAME` path per problem (CONTRACT §7.2).
            params: { description: "param name -> value (typed JSON: 5, true, \"2026-11-01\"), checked against the job's params" },
          },
        },
        response: { 202: startedRunSchema },
      },
    },
    async (request, reply) => {
      const run = engine.runNow(request.params.name, {
        reason: request.body?.reason ?? null,
        params: request.body?.params,
        triggeredBy: triggeredBy(request),
      });
      return reply.code(202).send(started(run));
    },
  );

  app.post<NameParams>(
    "/api/jobs/:name/retry",
    {
      schema: {
        summary: "Retry the job's most recent run, which must be FAILED (same cycle, attempt + 1)",
        tags,
        params: jobParams,
        response: { 202: startedRunSchema },
      },
    },
    async (request, reply) => {
      const run = engine.retry(request.params.name, { triggeredBy: triggeredBy(request) });
      return reply.code(202).send(started(run));
    },
  );

  app.post<NameParams>(
    "/api/jobs/:name/cancel",
    {
      schema: {
        summary: "Cancel every RUNNING or RETRYING run of the job (409 when none)",
        tags,
        params: jobParams,
        response: {
          200: {
            type: "object",
            required: ["job", "cancelled"],
            properties: { job: { type: "string" }, cancelled: { type: "array", items: { type: "integer" } }, runs: { type: "array", items: runRecordSchema } },
          },
        },
      },
    },
    async (request) => {
      const runs = engine.cancel(request.params.name);
      return { job: request.params.name, cancelled: runs.map((r) => r.id), runs };
    },
  );

  app.post<NameParams>(
    "/api/jobs/:name/skip",
    {
      schema: {
        summary: "Mark the job's oldest PENDING run SKIPPED (409 when none)",
        tags,
        params: jobParams,
        response: { 200: { type: "object", required: ["run"], properties: { run: runRecordSchema } } },
      },
    },
    async (request) => {
      return { run: engine.skip(request.params.name, { by: triggeredBy(request) }) };
    },
  );

  for (const verb of ["pause", "resume"] as const) {
    app.post<NameParams>(
      `/api/jobs/:name/${verb}`,
      {
        schema: {
          summary: verb === "pause" ? "Pause the job (its schedule stops firing)" : "Resume the job",
          tags,
          params: jobParams,
          response: {
            200: { type: "object", required: ["job", "paused"], properties: { job: { type: "string" }, paused: { type: "boolean" } } },
          },
        },
      },
      async (request) => {
          if (verb === "pause") engine.pause(request.params.name);
        else engine.resume(request.params.name);
        views.invalidate();
        return { job: request.params.name, paused: verb === "pause" };
      },
    );

    app.post<{ Body: { tag?: string } | undefined; Querystring: { tag?: string } }>(
      `/api/jobs/${verb}`,
      {
        schema: {
          summary: `${verb === "pause" ? "Pause" : "Resume"} every job with a tag (404 when no job has it)`,
          tags,
          querystring: { type: "object", properties: { tag: TAG } },
          body: { type: ["object", "null"], additionalProperties: false, properties: { tag: TAG } },
          response: {
            200: {
              type: "object",
              required: ["tag", "jobs", "paused"],
              properties: { tag: { type: "string" }, paused: { type: "boolean" }, jobs: jobNames.properties.jobs },
            },
          },
        },
      },
      async (request: FastifyRequest<{ Body: { tag?: string } | undefined; Querystring: { tag?: string } }>) => {
        const tag = request.body?.tag ?? request.query.tag;
        if (tag === undefined) throw badRequest('body field "tag" is required', [{ in: "body", field: "tag", message: "is required" }]);
        const jobs = verb === "pause" ? engine.pauseTag(tag) : engine.resumeTag(tag);
        views.invalidate();
        return { tag, jobs, paused: verb === "pause" };
      },
    );
  }
}

import type { FastifyInstance, FastifyRequest } from "fastify";
import { MAX_REASON_LENGTH } from "../../engine/engine.js";
import { frequencyLabel } from "../../config/index.js";
import type { RunRecord } from "../../store/types.js";
import { planTagRun } from "../../engine/tagRun.js";
import { jobConfigView } from "../configAccess.js";
import type { ApiDeps } from "../deps.js";
import { badRequest, notFound } from "../errors.js";
import { triggeredBy } from "../principal.js";
import {
  alertRowSchema,
  nonRunSchema,
  jobParams,
  jobStateSchema,
  runRecordSchema,
  startedRunSchema,
  TAG_PATTERN,
} from "../schemas.js";
import type { ViewCache } from "../viewCache.js";
import { activeRunsOf, emptyState, jobSummaries, upcoming } from "../views.js";
import { explainJob } from "../why.js";

const REASON = { type: "string", maxLength: MAX_REASON_LENGTH, description: "why (free text, max 500)" } as const;
const TAG = { type: "string", pattern: TAG_PATTERN, description: "tag (lowercase letters, digits, hyphens; at most 32)" } as const;
const tags = ["jobs"];

const activeRunsSchema = {
  type: "array",
  description: "the job's PENDING, RUNNING and RETRYING runs, oldest first",
  items: {
    type: "object",
    required: ["id", "status"],
    properties: { id: { type: "integer" }, status: { type: "string", enum: ["PENDING", "RUNNING", "RETRYING"] } },
  },
} as const;

const slotSchema = {
  type: "object",
  required: ["utc", "local", "note"],
  properties: {
    utc: { type: "string" },
    local: { type: "string", description: "in the job's zone: 2027-03-14T03:00:00-04:00 EDT" },
    note: { type: ["string", "null"], description: "set where a DST rule moved the slot" },
  },
} as const;

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
    next_run_local: { type: ["string", "null"], description: "next_run in the job's zone, with offset and abbreviation" },
    last_run: { anyOf: [runRecordSchema, { type: "null" }] },
    active_runs: activeRunsSchema,
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

  app.get<NameParams & { Querystring: { runs: number; next: number } }>(
    "/api/jobs/:name",
    {
      schema: {
        summary: "One job: its config (env redacted), state and last N runs",
        tags,
        params: jobParams,
        querystring: {
          type: "object",
          properties: {
            runs: { type: "integer", minimum: 0, maximum: 500, default: 20, description: "how many recent runs (max 500)" },
            next: { type: "integer", minimum: 0, maximum: 100, default: 5, description: "how many upcoming slots in next_runs (max 100)" },
          },
        },
        response: {
          200: {
            type: "object",
            required: ["job", "state", "runs"],
            properties: {
              job: { type: "object", description: "the job's effective config; env values read ***" },
              state: jobStateSchema,
              runs: { type: "array", items: runRecordSchema },
              active_runs: activeRunsSchema,
              next_runs: {
                type: "array",
                description: "the job's upcoming slots (empty for manual and after: jobs); a paused job's slots are skipped until it is resumed",
                items: slotSchema,
              },
              last_alert: { anyOf: [alertRowSchema, { type: "null" }], description: "the job's newest notification" },
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
        active_runs: activeRunsOf(store, name),
        next_runs: upcoming(deps, name, request.query.next),
        last_alert: store.alerts.search({ job: name }, 1, 0).rows[0] ?? null,
      };
    },
  );

  app.get<NameParams>(
    "/api/jobs/:name/why",
    {
      schema: {
        summary: "Why the job is not running, or did not run when expected, from the records the daemon has (svc why)",
        tags,
        params: jobParams,
        response: {
          200: {
            type: "object",
            required: ["job", "frequency", "paused", "summary", "reasons", "last_run", "next_run", "non_runs"],
            properties: {
              job: { type: "string" },
              frequency: { type: "string" },
              paused: { type: "boolean" },
              summary: { type: "string", description: "the first reason, in one line" },
              reasons: {
                type: "array",
                items: {
                  type: "object",
                  required: ["code", "text", "hint", "at", "run_id", "cycle_id"],
                  properties: {
                    code: { type: "string" },
                    text: { type: "string" },
                    hint: { type: ["string", "null"] },
                    at: { type: ["string", "null"] },
                    run_id: { type: ["integer", "null"] },
                    cycle_id: { type: ["string", "null"] },
                  },
                },
              },
              last_run: { anyOf: [runRecordSchema, { type: "null" }] },
              next_run: { type: ["string", "null"] },
              non_runs: { type: "array", items: nonRunSchema },
            },
          },
        },
      },
    },
    async (request) => {
      const { name } = request.params;
      const job = deps.project().jobs.get(name);
      if (!job) throw notFound(`unknown job "${name}": it is not in svc.yaml (see GET /api/jobs)`);
      const loaded = deps.configLoaded?.();
      return explainJob(
        { project: deps.project, store, engine, startedAt: deps.startedAt, configLoadedAt: loaded?.at ?? null, frequencyLabel },
        job,
        Date.now(),
      );
    },
  );

  app.post<NameParams & { Body: { reason?: string; params?: unknown; cycle_id?: string } | undefined }>(
    "/api/jobs/:name/run",
    {
      schema: {
        summary: "Trigger a manual run (a new cycle, or joining an earlier one with cycle_id)",
        tags,
        params: jobParams,
        body: {
          type: ["object", "null"],
          additionalProperties: false,
          properties: {
            reason: REASON,
            // Any JSON here: the engine checks it against the job's declaration and answers
            // 422 validation_failed with a `params.NAME` path per problem (CONTRACT §7.2).
            params: { description: "param name -> value (typed JSON: 5, true, \"2026-11-01\"), checked against the job's params" },
            cycle_id: {
              type: "string",
              pattern: "^[0-9a-fA-F-]{4,36}$",
              description: "join this earlier cycle (its id, or a unique prefix of at least 4 characters): the run's gate and outputs read that cycle; 404 when no run was recorded in it",
            },
          },
        },
        response: { 202: startedRunSchema },
      },
    },
    async (request, reply) => {
      // Created with the other triggers of this loop turn in one commit; answered once it is committed.
      const run = await engine.trigger(request.params.name, {
        reason: request.body?.reason ?? null,
        params: request.body?.params,
        triggeredBy: triggeredBy(request),
        ...(request.body?.cycle_id !== undefined ? { cycleId: request.body.cycle_id } : {}),
      });
      return reply.code(202).send(started(run));
    },
  );

  app.post<{ Body: { tag: string; reason?: string } }>(
    "/api/jobs/run",
    {
      schema: {
        summary: "Run a tag: trigger its root jobs (no upstream inside the tag) in one new cycle; the rest follow by dependency triggering",
        tags,
        body: { type: "object", required: ["tag"], additionalProperties: false, properties: { tag: TAG, reason: REASON } },
        response: {
          202: {
            type: "object",
            required: ["tag", "cycle_id", "runs", "follow", "not_triggered"],
            properties: {
              tag: { type: "string" },
              cycle_id: { type: "string" },
              runs: { type: "array", items: { ...startedRunSchema, required: [...startedRunSchema.required, "job"], properties: { ...startedRunSchema.properties, job: { type: "string" } } } },
              follow: { type: "array", items: { type: "string" }, description: "jobs that follow the roots in the cycle, upstreams first" },
              not_triggered: {
                type: "array",
                description: "tagged jobs this does not run, and why",
                items: { type: "object", required: ["job", "why"], properties: { job: { type: "string" }, why: { type: "string" } } },
              },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const { tag, reason } = request.body;
      const plan = planTagRun(deps.project(), tag, (job) => store.jobState.get(job)?.paused === 1);
      if (plan.roots.length === 0) throw notFound(`no job has the tag "${tag}" (see GET /api/tags)`);
      // All roots are created in this one turn, before any of them can end: a job downstream of two
      // roots finds both in the cycle and waits for both.
      const runs: (ReturnType<typeof started> & { job: string })[] = [];
      let cycleId: string | undefined;
      // Every root is checked first (a required param without a default): all of them start, or none.
      for (const name of plan.roots) engine.checkManualRun(name, { reason: reason ?? null, triggeredBy: triggeredBy(request) });
      for (const name of plan.roots) {
        const run = engine.runNow(name, { reason: reason ?? null, triggeredBy: triggeredBy(request), ...(cycleId ? { cycleId } : {}) });
        cycleId ??= run.cycle_id;
        runs.push({ job: name, ...started(run) });
      }
      return reply.code(202).send({ tag, cycle_id: cycleId, runs, follow: plan.follow, not_triggered: plan.notTriggered });
    },
  );

  app.post<NameParams>(
    "/api/jobs/:name/retry",
    {
      schema: {
        summary: "Retry the job's most recent run, which must be FAILED (same cycle, attempt + 1)",
        tags,
        params: jobParams,
        response: {
          202: {
            ...startedRunSchema,
            properties: { ...startedRunSchema.properties, retry_of: { type: "integer", description: "the FAILED run this one retries" } },
          },
        },
      },
    },
    async (request, reply) => {
      // The run engine.retry() retries: read in the same turn, so it is the one it saw.
      const retried = store.runs.recent(request.params.name, 1)[0];
      const run = engine.retry(request.params.name, { triggeredBy: triggeredBy(request) });
      return reply.code(202).send({ ...started(run), ...(retried ? { retry_of: retried.id } : {}) });
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
